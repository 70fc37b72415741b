r"""Maximum a posteriori (MAP) estimation with conjugate priors.

Derived in ``chapters/04_map.md``. With a conjugate prior the posterior has the prior's form with
the data counts added to the prior's pseudo-counts, and the MAP estimate is its mode:

* Bernoulli likelihood, :math:`\mathrm{Beta}(a, b)` prior: the posterior is
  :math:`\mathrm{Beta}(N_1 + a, N_0 + b)` and
  :math:`\hat\theta_{\mathrm{MAP}} = \frac{N_1 + a - 1}{N + a + b - 2}`; :math:`a = b = 2` is
  add-one (Laplace) smoothing, :math:`a = b = 1` (uniform prior) gives back the MLE.
* Categorical likelihood, :math:`\mathrm{Dir}(\alpha)` prior: the posterior is
  :math:`\mathrm{Dir}(z + \alpha)` and
  :math:`\hat\theta_k = \frac{z_k + \alpha_k - 1}{N + \sum_j \alpha_j - K}`.

The MAP depends on the parametrisation: maximising the posterior density of the log-odds
:math:`\eta = \log\frac{\theta}{1-\theta}` instead of :math:`\theta` gives
:math:`\frac{N_1 + a}{N + a + b}` (:func:`beta_bernoulli_log_odds_map`).

The posterior means :math:`\frac{N_1 + a}{N + a + b}` and :math:`\frac{z_k + \alpha_k}{N + \sum_j
\alpha_j}` are provided too: unlike the mode, they exist for every prior.

**When the MAP is not defined.** The mode formula is the maximiser of the posterior density only
when every posterior pseudo-count is at least 1 (:math:`N_1 + a \ge 1`, :math:`N_0 + b \ge 1`,
resp. :math:`z_k + \alpha_k \ge 1`) and not all of them equal 1. If a pseudo-count is below 1,
the density grows without bound towards the boundary :math:`\theta_k = 0`, so it has no
maximiser (with two such pseudo-counts it is even U-shaped); if all equal 1 the posterior is
uniform and every point is a mode. In both cases the functions raise ``ValueError`` rather than
return the meaningless value of the formula. A pseudo-count exactly 1 is fine: the mode then lies
on the boundary (e.g. a uniform prior with no heads gives :math:`\hat\theta = 0`).

All functions are vectorised: counts and prior parameters broadcast against each other, so the
book can smooth every word of every class in one call.
"""

from __future__ import annotations

import numpy as np

from ._validation import as_float_array

__all__ = [
    "beta_bernoulli_map",
    "beta_bernoulli_log_odds_map",
    "beta_bernoulli_posterior_mean",
    "dirichlet_categorical_map",
    "dirichlet_categorical_posterior_mean",
]


def _nonnegative(value, name: str) -> np.ndarray:
    arr = as_float_array(value, name)
    if np.any(arr < 0):
        raise ValueError(f"{name} must be counts >= 0; got {int(np.sum(arr < 0))} negative value(s)")
    return arr


def _positive_prior(value, name: str) -> np.ndarray:
    arr = as_float_array(value, name)
    if np.any(arr <= 0):
        raise ValueError(
            f"{name} is a prior parameter and must be > 0; got {int(np.sum(arr <= 0))} value(s) <= 0"
        )
    return arr


def _broadcast(**arrays) -> list[np.ndarray]:
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        detail = ", ".join(f"{k} {v.shape}" for k, v in arrays.items())
        raise ValueError(f"arguments must broadcast together; got shapes {detail}") from None


def _scalar_or_array(arr: np.ndarray):
    return float(arr) if np.ndim(arr) == 0 else arr


def _beta_inputs(n_ones, n_zeros, a, b):
    n1 = _nonnegative(n_ones, "n_ones")
    n0 = _nonnegative(n_zeros, "n_zeros")
    a_ = _positive_prior(a, "a")
    b_ = _positive_prior(b, "b")
    return _broadcast(n_ones=n1, n_zeros=n0, a=a_, b=b_)


def beta_bernoulli_map(n_ones, n_zeros, a, b):
    r"""MAP estimate of a Bernoulli parameter under a :math:`\mathrm{Beta}(a, b)` prior.

    The posterior is :math:`\mathrm{Beta}(N_1 + a, N_0 + b)`; its mode is

    .. math::

        \hat\theta_{\mathrm{MAP}} = \frac{N_1 + a - 1}{N_1 + N_0 + a + b - 2}.

    With :math:`a = b = 2` this is add-one (Laplace) smoothing, :math:`\frac{N_1 + 1}{N + 2}`;
    with :math:`a = b = 1` it is the MLE :math:`N_1 / N`.

    Parameters
    ----------
    n_ones : float or array_like
        Number of ones (heads, documents containing the word, ...), >= 0.
    n_zeros : float or array_like
        Number of zeros, >= 0. Broadcast against ``n_ones``.
    a, b : float or array_like
        Beta prior parameters, > 0, broadcast against the counts.

    Returns
    -------
    theta : float or ndarray of the broadcast shape of the arguments
        A float when every argument is a scalar. Lies in :math:`[0, 1]`; it is exactly 0 or 1 when
        a posterior pseudo-count equals 1 (the mode is then on the boundary).

    Raises
    ------
    ValueError
        If an argument is NaN/inf, a count is negative, ``a`` or ``b`` is <= 0, the shapes do not
        broadcast, or the MAP is not defined for some entry: :math:`N_1 + a < 1` or
        :math:`N_0 + b < 1` (the posterior density is unbounded near 0 or 1, so it has no
        maximiser), or :math:`N_1 + a = N_0 + b = 1` (uniform posterior: every
        :math:`\theta` is a mode). Use the posterior mean or a prior with ``a, b >= 1`` instead.

    Examples
    --------
    >>> beta_bernoulli_map(55, 45, a=1, b=1)   # uniform prior: the MLE
    0.55
    >>> beta_bernoulli_map(0, 3, a=2, b=2)     # add-one smoothing: (0 + 1) / (3 + 2)
    0.2
    >>> beta_bernoulli_map([0, 1, 5], 5, 2, 2)
    array([0.14285714, 0.25      , 0.5       ])
    """
    n1, n0, a_, b_ = _beta_inputs(n_ones, n_zeros, a, b)
    alpha_post = n1 + a_
    beta_post = n0 + b_
    below = (alpha_post < 1) | (beta_post < 1)
    if np.any(below):
        idx = np.unravel_index(np.argmax(below), below.shape) if below.ndim else ()
        raise ValueError(
            f"the MAP estimate is not defined for {int(below.sum())} entr(y/ies) (first at index "
            f"{idx}): a posterior pseudo-count n_ones + a = {float(alpha_post[idx]):g} or "
            f"n_zeros + b = {float(beta_post[idx]):g} is < 1, so the posterior density is unbounded "
            "at the boundary and has no maximiser; use a, b >= 1 or the posterior mean"
        )
    flat = (alpha_post == 1) & (beta_post == 1)
    if np.any(flat):
        idx = np.unravel_index(np.argmax(flat), flat.shape) if flat.ndim else ()
        raise ValueError(
            f"the MAP estimate is not defined for {int(flat.sum())} entr(y/ies) (first at index "
            f"{idx}): n_ones + a = n_zeros + b = 1 makes the posterior uniform (denominator "
            "n_ones + n_zeros + a + b - 2 = 0), so every theta is a mode"
        )
    theta = (alpha_post - 1) / (alpha_post + beta_post - 2)
    return _scalar_or_array(theta)


def beta_bernoulli_posterior_mean(n_ones, n_zeros, a, b):
    r"""Posterior mean of a Bernoulli parameter under a :math:`\mathrm{Beta}(a, b)` prior.

    .. math::

        \mathbb E[\theta \mid \mathcal D] = \frac{N_1 + a}{N_1 + N_0 + a + b}.

    Defined for every prior with :math:`a, b > 0`; :math:`a = b = 1` gives Laplace's rule of
    succession :math:`\frac{N_1 + 1}{N + 2}`.

    Parameters
    ----------
    n_ones, n_zeros : float or array_like
        Counts of ones and zeros, >= 0.
    a, b : float or array_like
        Beta prior parameters, > 0. All arguments broadcast together.

    Returns
    -------
    mean : float or ndarray of the broadcast shape of the arguments
        In :math:`(0, 1)`.

    Raises
    ------
    ValueError
        If an argument is NaN/inf, a count is negative, ``a`` or ``b`` is <= 0, or the shapes do
        not broadcast.

    Examples
    --------
    >>> beta_bernoulli_posterior_mean(3, 1, a=1, b=1)   # (3 + 1) / (4 + 2)
    0.6666666666666666
    """
    n1, n0, a_, b_ = _beta_inputs(n_ones, n_zeros, a, b)
    return _scalar_or_array((n1 + a_) / (n1 + n0 + a_ + b_))


def beta_bernoulli_log_odds_map(n_ones, n_zeros, a, b):
    r"""The MAP estimate in the log-odds parametrisation, returned as a probability.

    With :math:`\eta = \log\frac{\theta}{1-\theta}` and :math:`\theta = \sigma(\eta)`, the prior
    :math:`\mathrm{Beta}(a, b)` on :math:`\theta` is the density
    :math:`p_\eta(\eta) = p_\theta(\sigma(\eta))\,\sigma'(\eta)` on :math:`\eta`, and
    :math:`\sigma'(\eta) = \theta(1-\theta)` adds one to each exponent of the posterior:

    .. math::

        p(\eta \mid \mathcal D) \propto \theta^{N_1 + a}(1-\theta)^{N_0 + b}, \qquad
        \hat\eta_{\mathrm{MAP}} = \log\frac{N_1 + a}{N_0 + b}, \qquad
        \sigma(\hat\eta_{\mathrm{MAP}}) = \frac{N_1 + a}{N_1 + N_0 + a + b}.

    This is the posterior mean of :math:`\theta`, not the mode
    :math:`\frac{N_1 + a - 1}{N + a + b - 2}` that :func:`beta_bernoulli_map` returns for the same
    prior. It exists for every :math:`a, b > 0`.

    Parameters
    ----------
    n_ones, n_zeros : float or array_like
        Counts of ones and zeros, >= 0.
    a, b : float or array_like
        Beta prior parameters on :math:`\theta`, > 0. All arguments broadcast together.

    Returns
    -------
    theta : float or ndarray of the broadcast shape of the arguments
        :math:`\sigma(\hat\eta_{\mathrm{MAP}})`, in :math:`(0, 1)`.

    Raises
    ------
    ValueError
        If an argument is NaN/inf, a count is negative, ``a`` or ``b`` is <= 0, or the shapes do
        not broadcast.

    Examples
    --------
    >>> beta_bernoulli_map(0, 17, a=2, b=2)            # mode in theta: 1 / 19
    0.05263157894736842
    >>> beta_bernoulli_log_odds_map(0, 17, a=2, b=2)   # mode in log-odds: 2 / 21
    0.09523809523809523
    """
    n1, n0, a_, b_ = _beta_inputs(n_ones, n_zeros, a, b)
    # sigma(log((n1 + a) / (n0 + b))), written without the round trip through the logarithm
    return _scalar_or_array((n1 + a_) / (n1 + n0 + a_ + b_))


def _dirichlet_inputs(counts, alpha):
    z = _nonnegative(counts, "counts")
    if z.ndim == 0:
        raise ValueError(
            "counts must have at least one axis, the categories along the last axis; got a scalar"
        )
    al = _positive_prior(alpha, "alpha")
    z, al = _broadcast(counts=z, alpha=al)
    if z.shape[-1] < 1:
        raise ValueError("counts has no categories along its last axis")
    return z, al


def dirichlet_categorical_map(counts, alpha):
    r"""MAP estimate of categorical probabilities under a :math:`\mathrm{Dir}(\alpha)` prior.

    The posterior is :math:`\mathrm{Dir}(z + \alpha)`; maximising its density on the simplex
    (a Lagrange multiplier for :math:`\sum_k \theta_k = 1`) gives

    .. math::

        \hat\theta_k = \frac{z_k + \alpha_k - 1}{N + \sum_{j=1}^K \alpha_j - K},
        \qquad N = \sum_k z_k .

    :math:`\alpha_k = 2` is add-one smoothing :math:`\frac{z_k + 1}{N + K}`; :math:`\alpha_k = 1`
    gives the MLE :math:`z_k / N`.

    Parameters
    ----------
    counts : array_like of shape (..., n_categories)
        Counts :math:`z_k \ge 0` along the last axis, e.g. ``(n_classes, n_categories)`` for
        per-class counts.
    alpha : float or array_like broadcastable to ``counts``
        Dirichlet parameters, > 0: a scalar (symmetric prior) or a vector of shape
        ``(n_categories,)``.

    Returns
    -------
    theta : ndarray of the broadcast shape of ``counts`` and ``alpha``
        Each slice along the last axis is non-negative and sums to 1.

    Raises
    ------
    ValueError
        If an argument is NaN/inf, ``counts`` is a scalar or has a negative entry, ``alpha`` is
        <= 0, the shapes do not broadcast, or the MAP is not defined: some
        :math:`z_k + \alpha_k < 1` (negative numerator; the posterior density is unbounded as
        :math:`\theta_k \to 0`, so it has no maximiser in the interior or anywhere), or every
        :math:`z_k + \alpha_k = 1` (zero denominator; uniform posterior, every point is a mode).
        This happens e.g. with ``alpha < 1`` and a category never observed; use ``alpha >= 1`` or
        :func:`dirichlet_categorical_posterior_mean`.

    Examples
    --------
    >>> dirichlet_categorical_map([3, 0, 1], alpha=2)   # add-one: (z + 1) / (4 + 3)
    array([0.57142857, 0.14285714, 0.28571429])
    >>> dirichlet_categorical_map([[3, 0, 1], [0, 2, 2]], alpha=1)   # per-class MLE
    array([[0.75, 0.  , 0.25],
           [0.  , 0.5 , 0.5 ]])
    """
    z, al = _dirichlet_inputs(counts, alpha)
    numerator = z + al - 1.0
    negative = numerator < 0
    if np.any(negative):
        idx = np.unravel_index(np.argmax(negative), negative.shape)
        raise ValueError(
            f"the MAP estimate is not defined: {int(negative.sum())} numerator(s) counts + alpha - 1 "
            f"are negative (first at index {idx}: counts={float(z[idx]):g}, alpha={float(al[idx]):g}), "
            "so the posterior density is unbounded towards that face of the simplex and has no "
            "maximiser in the interior; use alpha >= 1 or the posterior mean"
        )
    denominator = numerator.sum(axis=-1, keepdims=True)
    zero = denominator[..., 0] == 0
    if np.any(zero):
        idx = np.unravel_index(np.argmax(zero), zero.shape) if zero.ndim else ()
        raise ValueError(
            f"the MAP estimate is not defined for {int(zero.sum())} slice(s) (first at index {idx}): "
            "the denominator N + sum(alpha) - K is 0 (all counts are 0 and alpha = 1), so the "
            "posterior is uniform on the simplex and every point is a mode"
        )
    return numerator / denominator


def dirichlet_categorical_posterior_mean(counts, alpha):
    r"""Posterior mean of categorical probabilities under a :math:`\mathrm{Dir}(\alpha)` prior.

    .. math::

        \mathbb E[\theta_k \mid \mathcal D] = \frac{z_k + \alpha_k}{N + \sum_{j=1}^K \alpha_j}.

    Defined for every :math:`\alpha_k > 0`.

    Parameters
    ----------
    counts : array_like of shape (..., n_categories)
        Counts :math:`z_k \ge 0` along the last axis.
    alpha : float or array_like broadcastable to ``counts``
        Dirichlet parameters, > 0.

    Returns
    -------
    mean : ndarray of the broadcast shape of ``counts`` and ``alpha``
        Each slice along the last axis is positive and sums to 1.

    Raises
    ------
    ValueError
        If an argument is NaN/inf, ``counts`` is a scalar or has a negative entry, ``alpha`` is
        <= 0, or the shapes do not broadcast.

    Examples
    --------
    >>> dirichlet_categorical_posterior_mean([3, 0, 1], alpha=1)   # (z + 1) / (4 + 3)
    array([0.57142857, 0.14285714, 0.28571429])
    """
    z, al = _dirichlet_inputs(counts, alpha)
    post = z + al
    return post / post.sum(axis=-1, keepdims=True)
