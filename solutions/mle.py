r"""Maximum-likelihood estimation for the course's basic models.

Derived in ``chapters/03_mle.md``. Every estimator maximises the log-likelihood
:math:`\ell(\theta) = \sum_{n=1}^N \log p(x_n \mid \theta)` of i.i.d. data:

* Bernoulli (coin flips): :math:`\hat\theta = N_H / N`.
* Gaussian: :math:`\hat\mu = \bar x`, :math:`\hat\sigma^2 = \frac1N \sum_n (x_n - \hat\mu)^2`
  (the biased, :math:`1/N`, variance).
* Categorical: :math:`\hat\theta_k = z_k / N`, the fraction of labels equal to :math:`k`
  (the Lagrange-multiplier solution on the probability simplex).
* Gamma with shape :math:`a` and rate :math:`b`: no closed form; the rate is profiled out,
  :math:`\hat b = a / \bar x`, and Newton's method solves the remaining equation in :math:`a`.
* Poisson (counts): :math:`\hat\lambda = \bar x`.

The log-likelihood functions broadcast over their parameters so that the book can draw
:math:`\ell` on a grid of parameter values; they compute with sufficient statistics, so a grid
never costs ``grid size x N`` memory.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import digamma, gammaln, polygamma, xlog1py, xlogy

from ._validation import ConvergenceWarning, as_1d_float, as_float_array, check_int, check_positive

__all__ = [
    "ConvergenceWarning",
    "bernoulli_mle",
    "bernoulli_log_likelihood",
    "gaussian_mle",
    "gaussian_log_likelihood",
    "categorical_mle",
    "gamma_mle",
    "gamma_log_likelihood",
    "gamma_score",
    "poisson_mle",
    "poisson_log_likelihood",
]


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _as_binary(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a 1-D float array of 0/1 values, refusing anything else."""
    arr = as_1d_float(x, name)
    bad = (arr != 0) & (arr != 1)
    if np.any(bad):
        first = arr[bad][0]
        raise ValueError(
            f"{name} must contain only 0 and 1 (tails/heads); found {int(bad.sum())} other "
            f"value(s), e.g. {first!r}"
        )
    return arr


def _positive_array(value, name: str) -> np.ndarray:
    """Return ``value`` as a finite float array (any shape) whose entries are all > 0."""
    arr = as_float_array(value, name)
    if np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0; got {int(np.sum(arr <= 0))} value(s) <= 0")
    return arr


def _check_broadcast(n1: str, a1: np.ndarray, n2: str, a2: np.ndarray) -> None:
    """Raise ``ValueError`` unless parameter arrays ``a1`` (named ``n1``) and ``a2`` broadcast."""
    try:
        np.broadcast_shapes(a1.shape, a2.shape)
    except ValueError:
        raise ValueError(
            f"{n1} and {n2} must broadcast together; got shapes {a1.shape} and {a2.shape}"
        ) from None


def _scalar_or_array(arr: np.ndarray):
    """Return a Python float for a 0-d result, the array otherwise."""
    return float(arr) if np.ndim(arr) == 0 else arr


# --------------------------------------------------------------------------------------------
# Bernoulli
# --------------------------------------------------------------------------------------------


def bernoulli_mle(x) -> float:
    r"""Maximum-likelihood estimate of the heads probability of a coin.

    .. math::

        \hat\theta = \frac{N_H}{N}, \qquad N_H = \sum_{n=1}^N x_n .

    The function takes the individual flips. Working from counts needs no function:
    :math:`\hat\theta` is ``n_heads / (n_heads + n_tails)``.

    Parameters
    ----------
    x : array_like of shape (n_flips,)
        The flips, 1 for heads and 0 for tails (booleans are accepted).

    Returns
    -------
    theta : float
        The fraction of heads, in :math:`[0, 1]`.

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D, contains NaN/inf or a value other than 0 and 1.

    Examples
    --------
    >>> x = [1] * 55 + [0] * 45
    >>> bernoulli_mle(x)
    0.55
    """
    arr = _as_binary(x)
    return float(arr.sum() / arr.size)


def bernoulli_log_likelihood(theta, x):
    r"""Bernoulli log-likelihood of the flips ``x``, vectorised over ``theta``.

    .. math::

        \ell(\theta) = N_H \log\theta + N_T \log(1 - \theta),

    with the convention :math:`0 \log 0 = 0` (``scipy.special.xlogy`` / ``xlog1py``), so that
    :math:`\ell(0) = -\infty` unless there are no heads (then :math:`\ell(0) = 0`), and likewise
    at :math:`\theta = 1`.

    Parameters
    ----------
    theta : float or array_like of any shape
        Heads probability (or a grid of them), each in :math:`[0, 1]`.
    x : array_like of shape (n_flips,)
        The flips, 1 for heads and 0 for tails.

    Returns
    -------
    log_likelihood : float or ndarray of the shape of ``theta``
        A float when ``theta`` is a scalar. Values may be ``-inf``.

    Raises
    ------
    ValueError
        If ``theta`` lies outside :math:`[0, 1]` or is NaN, or ``x`` is not a valid set of flips.

    Examples
    --------
    >>> x = [1] * 55 + [0] * 45
    >>> round(bernoulli_log_likelihood(0.5, x), 2)   # 100 log 0.5
    -69.31
    >>> bernoulli_log_likelihood([0.0, 1.0], [0, 0, 0])
    array([  0., -inf])
    """
    th = as_float_array(theta, "theta")
    if np.any((th < 0) | (th > 1)):
        raise ValueError(
            f"theta must lie in [0, 1]; got {int(np.sum((th < 0) | (th > 1)))} value(s) outside"
        )
    arr = _as_binary(x)
    n_heads = arr.sum()
    n_tails = arr.size - n_heads
    out = xlogy(n_heads, th) + xlog1py(n_tails, -th)
    return _scalar_or_array(out)


# --------------------------------------------------------------------------------------------
# Gaussian
# --------------------------------------------------------------------------------------------


def gaussian_mle(x) -> tuple[float, float]:
    r"""Maximum-likelihood mean and standard deviation of a univariate Gaussian.

    .. math::

        \hat\mu = \frac1N \sum_{n=1}^N x_n, \qquad
        \hat\sigma^2 = \frac1N \sum_{n=1}^N (x_n - \hat\mu)^2 .

    Note the :math:`1/N`: this is ``np.std(x)`` (``ddof=0``), smaller than the unbiased
    ``np.std(x, ddof=1)``.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Observations.

    Returns
    -------
    mu : float
        Sample mean.
    sigma : float
        Square root of the :math:`1/N` sample variance (a standard deviation, not a variance).

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D, contains NaN/inf, or all its values are equal: then
        :math:`\hat\sigma = 0` and the likelihood grows without bound as :math:`\sigma \to 0`,
        so there is no Gaussian MLE with :math:`\sigma > 0`.

    Examples
    --------
    >>> temps = [-2.5, -9.9, -12.1, -8.9, -6.0, -4.8, 2.4]   # Toronto, March
    >>> mu, sigma = gaussian_mle(temps)
    >>> round(mu, 4), round(sigma, 4)
    (-5.9714, 4.5525)
    """
    arr = as_1d_float(x)
    mu = arr.mean()
    sigma = np.sqrt(np.mean((arr - mu) ** 2))
    if not sigma > 0:
        raise ValueError(
            f"x has {arr.size} value(s), all equal to {arr[0]!r}: the 1/N standard deviation is 0 "
            "and the Gaussian likelihood is unbounded as sigma -> 0, so no MLE with sigma > 0 exists"
        )
    return float(mu), float(sigma)


def gaussian_log_likelihood(x, mu, sigma):
    r"""Total Gaussian log-likelihood of ``x``, broadcast over ``mu`` and ``sigma``.

    .. math::

        \ell(\mu, \sigma) = \sum_{n=1}^N \log \mathcal N(x_n \mid \mu, \sigma^2)
        = -\frac N2 \log(2\pi\sigma^2) - \frac{1}{2\sigma^2} \sum_{n=1}^N (x_n - \mu)^2 .

    The argument order follows ``scipy.stats.norm.logpdf(x, loc, scale)``: data first, then the
    mean and the standard deviation. The sum of squares is computed as
    :math:`N \hat\sigma^2 + N(\bar x - \mu)^2`, so a grid of ``mu`` values costs no more than a
    single value.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Observations.
    mu : float or array_like
        Mean(s).
    sigma : float or array_like
        Standard deviation(s), each > 0 (not the variance). Broadcast against ``mu``.

    Returns
    -------
    log_likelihood : float or ndarray of shape ``np.broadcast_shapes(mu.shape, sigma.shape)``
        A float when both ``mu`` and ``sigma`` are scalars.

    Raises
    ------
    ValueError
        If ``x`` is invalid, ``mu`` is not finite, ``sigma`` is not > 0, or ``mu`` and ``sigma``
        do not broadcast.

    Examples
    --------
    >>> temps = [-2.5, -9.9, -12.1, -8.9, -6.0, -4.8, 2.4]
    >>> round(gaussian_log_likelihood(temps, -6.0, 5.0), 4)   # sigma = 5 known
    -20.6002
    >>> gaussian_log_likelihood(temps, [-8.0, -6.0, -4.0], 5.0).argmax()
    np.int64(1)
    """
    arr = as_1d_float(x)
    m = as_float_array(mu, "mu")
    s = _positive_array(sigma, "sigma")
    _check_broadcast("mu", m, "sigma", s)
    n = arr.size
    xbar = arr.mean()
    centred_ss = np.sum((arr - xbar) ** 2)
    ss = centred_ss + n * (xbar - m) ** 2
    out = -0.5 * n * np.log(2 * np.pi * s**2) - ss / (2 * s**2)
    return _scalar_or_array(out)


# --------------------------------------------------------------------------------------------
# Categorical
# --------------------------------------------------------------------------------------------


def _as_labels(x, n_categories: int, name: str = "x") -> np.ndarray:
    arr = as_1d_float(x, name)
    if np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must contain integer category labels; found non-integer values")
    labels = arr.astype(np.int64)
    bad = (labels < 0) | (labels >= n_categories)
    if np.any(bad):
        raise ValueError(
            f"{name} must contain labels in 0..{n_categories - 1} (n_categories={n_categories}); "
            f"found {int(bad.sum())} out of range, e.g. {int(labels[bad][0])}"
        )
    return labels


def categorical_mle(x, n_categories: int) -> np.ndarray:
    r"""Maximum-likelihood category probabilities from integer labels.

    Maximising :math:`\sum_k z_k \log\theta_k` subject to :math:`\sum_k \theta_k = 1`
    (a Lagrange multiplier) gives

    .. math::

        \hat\theta_k = \frac{z_k}{N}, \qquad z_k = \#\{n : x_n = k\}.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Labels in ``0, ..., n_categories - 1`` (integer-valued floats are accepted).
    n_categories : int
        Number of categories :math:`K`; categories never observed get probability 0.

    Returns
    -------
    theta : ndarray of shape (n_categories,)
        Non-negative, sums to 1.

    Raises
    ------
    ValueError
        If ``n_categories`` is not an integer >= 1, or ``x`` is empty, contains NaN/inf,
        non-integer labels or labels outside ``0..n_categories-1``.

    Examples
    --------
    >>> categorical_mle([0, 2, 2, 1, 2], n_categories=4)
    array([0.2, 0.2, 0.6, 0. ])
    """
    k = check_int(n_categories, "n_categories")
    labels = _as_labels(x, k)
    return np.bincount(labels, minlength=k) / labels.size


# --------------------------------------------------------------------------------------------
# Gamma
# --------------------------------------------------------------------------------------------


def _log_minus_digamma(a: float) -> float:
    r""":math:`\log a - \psi(a)`, accurate also for large ``a`` (where it is about :math:`1/(2a)`)."""
    if a < 100.0:
        return float(np.log(a) - digamma(a))
    # Asymptotic series; the first omitted term, 1/(240 a^8), is below double precision here.
    r = 1.0 / a
    r2 = r * r
    return float(r / 2 + r2 / 12 - r2 * r2 / 120 + r2 * r2 * r2 / 252)


def _trigamma_minus_inverse(a: float) -> float:
    r""":math:`\psi'(a) - 1/a > 0`, accurate also for large ``a`` (about :math:`1/(2a^2)`)."""
    if a < 100.0:
        return float(polygamma(1, a) - 1.0 / a)
    r = 1.0 / a
    r2 = r * r
    return float(r2 / 2 + r2 * r / 6 - r2 * r2 * r / 30 + r2 * r2 * r2 * r / 42)


def _minka_initial_shape(s: float) -> float:
    """Minka's (2002) approximation to the root of log a - psi(a) = s, within about 1.5%."""
    return float((3.0 - s + np.sqrt((s - 3.0) ** 2 + 24.0 * s)) / (12.0 * s))


def _gamma_sufficient_statistics(x) -> tuple[np.ndarray, int, float, float]:
    arr = as_1d_float(x)
    if np.any(arr <= 0):
        raise ValueError(
            f"x must be strictly positive for a Gamma model; got {int(np.sum(arr <= 0))} value(s) <= 0"
        )
    return arr, arr.size, float(arr.sum()), float(np.log(arr).sum())


def gamma_mle(x, *, tol: float = 1e-10, max_iter: int = 100, return_history: bool = False):
    r"""Maximum-likelihood shape and rate of a Gamma distribution, by Newton's method.

    The density is :math:`p(x \mid a, b) = \frac{b^a}{\Gamma(a)} x^{a-1} e^{-bx}` for
    :math:`x > 0`. Setting :math:`\partial\ell/\partial b = Na/b - \sum_n x_n = 0` gives the rate
    in closed form, :math:`b = a / \bar x`. Substituting it back (the profile likelihood) leaves
    one equation in the shape,

    .. math::

        f(a) = \log a - \psi(a) - s = 0, \qquad
        s = \log \bar x - \frac1N \sum_{n=1}^N \log x_n > 0,

    solved by Newton's method, :math:`a \leftarrow a - f(a)/f'(a)` with
    :math:`f'(a) = 1/a - \psi'(a)`, started from Minka's (2002) approximation

    .. math::

        a_0 = \frac{3 - s + \sqrt{(s - 3)^2 + 24 s}}{12 s}.

    Since :math:`f` is decreasing and convex, every Newton step from a point left of the root
    stays left of it and moves towards it. From a start right of the root a Newton step can
    overshoot past zero: a step that would make :math:`a \le 0` is replaced by halving
    :math:`a`. The iteration stops when the relative step :math:`|a_{t+1} - a_t| / a_t`
    is at most ``tol``.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Strictly positive observations, not all equal.
    tol : float, default 1e-10
        Tolerance on the relative Newton step.
    max_iter : int, default 100
        Maximum number of Newton steps. If it is reached first, a :class:`ConvergenceWarning` is
        issued and the last iterate is returned (useful in the book to show a few steps).
    return_history : bool, default False
        Also return the iterates.

    Returns
    -------
    shape : float
        :math:`\hat a`.
    rate : float
        :math:`\hat b = \hat a / \bar x` (the scale is ``1 / rate``).
    history : dict of ndarray of shape (n_iter + 1,)
        Only if ``return_history``: ``"shape"`` (:math:`a_0, a_1, \dots`), ``"rate"``
        (:math:`a_t / \bar x`) and ``"log_likelihood"`` (the profile log-likelihood at each
        iterate, non-decreasing after the first step).

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D, contains NaN/inf or a value <= 0; if all values are equal
        (then :math:`s = 0` and the likelihood increases without bound as :math:`a \to \infty`
        with :math:`a/b` fixed, so no finite MLE exists); if ``tol`` is not > 0 or ``max_iter``
        not an integer >= 1.

    Examples
    --------
    >>> x = [0.5, 1.2, 2.0, 0.8, 3.1]
    >>> shape, rate = gamma_mle(x)
    >>> round(shape, 4), round(rate, 4)
    (2.6474, 1.7417)
    >>> shape, rate, hist = gamma_mle(x, return_history=True)
    >>> len(hist["shape"]) <= 6
    True
    """
    arr, n, sum_x, sum_log_x = _gamma_sufficient_statistics(x)
    tol = check_positive(tol, "tol")
    max_iter = check_int(max_iter, "max_iter")
    if np.all(arr == arr[0]):
        raise ValueError(
            f"x has {n} value(s), all equal to {arr[0]!r}: then log(mean x) = mean(log x), the "
            "likelihood increases without bound as shape -> inf, and no finite Gamma MLE exists"
        )
    xbar = sum_x / n
    # s = log(xbar) - mean(log x) = -mean(log(x / xbar)): scale-free, and accurate with log1p
    # for the ratios near 1 (log for the others: a ratio below eps would make log1p(-1) = -inf).
    r = arr / xbar
    u = r - 1.0
    log_r = np.log(r)
    near = np.abs(u) < 0.5
    log_r[near] = np.log1p(u[near])
    s = float(-np.mean(log_r))
    if not s > 0:
        raise ValueError(
            "x values are too close together (log(mean x) - mean(log x) is 0 to machine precision): "
            "the Gamma likelihood has no finite maximum"
        )

    a = _minka_initial_shape(s)
    shapes = [a]
    converged = False
    for _ in range(max_iter):
        f = _log_minus_digamma(a) - s
        fprime = -_trigamma_minus_inverse(a)
        a_new = a - f / fprime
        if not a_new > 0:
            a_new = a / 2.0
        shapes.append(a_new)
        step = abs(a_new - a)
        a = a_new
        if step <= tol * a:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"gamma_mle stopped after max_iter={max_iter} Newton steps with relative step "
            f"{step / a:.3g} > tol={tol:g}; the shape estimate may be inaccurate",
            ConvergenceWarning,
            stacklevel=2,
        )
    shape = float(a)
    rate = shape / xbar
    if not return_history:
        return shape, rate
    hist_shape = np.asarray(shapes)
    hist_rate = hist_shape / xbar
    history = {
        "shape": hist_shape,
        "rate": hist_rate,
        "log_likelihood": _gamma_ll_from_stats(n, sum_x, sum_log_x, hist_shape, hist_rate),
    }
    return shape, rate, history


def _gamma_ll_from_stats(n, sum_x, sum_log_x, a, b):
    return n * (a * np.log(b) - gammaln(a)) + (a - 1.0) * sum_log_x - b * sum_x


def _gamma_params(shape, rate):
    a = _positive_array(shape, "shape")
    b = _positive_array(rate, "rate")
    _check_broadcast("shape", a, "rate", b)
    return a, b


def gamma_log_likelihood(x, shape, rate):
    r"""Total Gamma log-likelihood of ``x``, broadcast over ``shape`` and ``rate``.

    .. math::

        \ell(a, b) = N\bigl(a \log b - \log\Gamma(a)\bigr) + (a - 1)\sum_{n=1}^N \log x_n
        - b \sum_{n=1}^N x_n .

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Strictly positive observations.
    shape : float or array_like
        Shape(s) :math:`a > 0`.
    rate : float or array_like
        Rate(s) :math:`b > 0` (inverse scale), broadcast against ``shape``.

    Returns
    -------
    log_likelihood : float or ndarray of shape ``np.broadcast_shapes(shape.shape, rate.shape)``
        A float when both parameters are scalars.

    Raises
    ------
    ValueError
        If ``x`` is invalid or has a value <= 0, or ``shape`` / ``rate`` are not all > 0.

    Examples
    --------
    >>> round(gamma_log_likelihood([1.0, 2.0], 1.0, 1.0), 6)   # Exponential(1): -(1 + 2)
    -3.0
    """
    _, n, sum_x, sum_log_x = _gamma_sufficient_statistics(x)
    a, b = _gamma_params(shape, rate)
    return _scalar_or_array(_gamma_ll_from_stats(n, sum_x, sum_log_x, a, b))


def gamma_score(x, shape, rate) -> np.ndarray:
    r"""Gradient of the Gamma log-likelihood with respect to (shape, rate).

    .. math::

        \frac{\partial\ell}{\partial a} = N\bigl(\log b - \psi(a)\bigr) + \sum_n \log x_n,
        \qquad
        \frac{\partial\ell}{\partial b} = \frac{Na}{b} - \sum_n x_n .

    Both vanish at the MLE returned by :func:`gamma_mle`.

    Parameters
    ----------
    x : array_like of shape (n_samples,)
        Strictly positive observations.
    shape : float or array_like
        Shape(s) :math:`a > 0`.
    rate : float or array_like
        Rate(s) :math:`b > 0`, broadcast against ``shape``.

    Returns
    -------
    score : ndarray of shape ``np.broadcast_shapes(shape.shape, rate.shape) + (2,)``
        ``score[..., 0]`` is :math:`\partial\ell/\partial a`, ``score[..., 1]`` is
        :math:`\partial\ell/\partial b`; shape ``(2,)`` for scalar parameters.

    Raises
    ------
    ValueError
        As :func:`gamma_log_likelihood`.

    Examples
    --------
    >>> gamma_score([1.0, 2.0], 1.0, 1.0)[1]   # 2 * 1 / 1 - (1 + 2)
    np.float64(-1.0)
    """
    _, n, sum_x, sum_log_x = _gamma_sufficient_statistics(x)
    a, b = _gamma_params(shape, rate)
    a, b = np.broadcast_arrays(a, b)
    d_a = n * (np.log(b) - digamma(a)) + sum_log_x
    d_b = n * a / b - sum_x
    return np.stack([d_a, d_b], axis=-1)


# --------------------------------------------------------------------------------------------
# Poisson
# --------------------------------------------------------------------------------------------


def _as_counts(x, name: str = "x") -> np.ndarray:
    """Return ``x`` as a 1-D float array of non-negative integers, refusing anything else."""
    arr = as_1d_float(x, name)
    if np.any((arr < 0) | (arr != np.round(arr))):
        raise ValueError(f"{name} must contain counts (integers >= 0)")
    return arr


def poisson_mle(x) -> float:
    r"""Maximum-likelihood rate of a Poisson distribution: the sample mean.

    Setting :math:`\frac{d\ell}{d\lambda} = \frac{1}{\lambda}\sum_n x_n - N = 0` gives
    :math:`\hat\lambda = \bar x` (0 when every count is 0: the likelihood :math:`e^{-N\lambda}`
    is then largest at the boundary).

    Parameters
    ----------
    x : array_like of shape (N,)
        Counts, integers >= 0.

    Returns
    -------
    lam : float

    Raises
    ------
    ValueError
        If ``x`` is empty, not 1-D, or holds a negative or non-integer value.

    Examples
    --------
    >>> poisson_mle([0, 2, 1, 3])
    1.5
    """
    return float(_as_counts(x).mean())


def poisson_log_likelihood(lam, x):
    r"""Poisson log-likelihood of the counts ``x``, vectorised over the rate ``lam``.

    .. math::

        \ell(\lambda) = \log\lambda \sum_{n=1}^N x_n - N\lambda - \sum_{n=1}^N \log x_n!,

    with :math:`0 \log 0 = 0`: at :math:`\lambda = 0`, :math:`\ell = 0` when every count is 0
    and :math:`-\infty` otherwise.

    Parameters
    ----------
    lam : float or array_like of any shape
        Rates, each >= 0.
    x : array_like of shape (N,)
        Counts, integers >= 0.

    Returns
    -------
    log_likelihood : float or ndarray of the shape of ``lam``
        A float when ``lam`` is a scalar. Values may be ``-inf``.

    Examples
    --------
    >>> round(poisson_log_likelihood(1.0, [0, 1]), 4)   # log(e^-1) + log(e^-1)
    -2.0
    """
    lam = as_float_array(lam, "lam")
    if np.any(lam < 0):
        raise ValueError(f"lam must be >= 0; got {int(np.sum(lam < 0))} negative value(s)")
    arr = _as_counts(x)
    out = xlogy(arr.sum(), lam) - arr.size * lam - np.sum(gammaln(arr + 1.0))
    return _scalar_or_array(out)
