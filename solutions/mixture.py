r"""A Gaussian mixture in one dimension, fitted by expectation–maximisation (EM).

Derived in ``chapters/05_density_estimation.md``. The model

.. math::

    p(x \mid \boldsymbol\theta) = \sum_{k=1}^K \pi_k\, \mathcal N(x \mid \mu_k, \sigma_k^2),
    \qquad \pi_k \ge 0, \quad \sum_k \pi_k = 1,

has the log-likelihood :math:`\ell(\boldsymbol\theta) = \sum_n \log \sum_k \pi_k
\mathcal N(x_n \mid \mu_k, \sigma_k^2)`, whose stationarity conditions are coupled through the
responsibilities

.. math::

    r_{nk} = \frac{\pi_k\, \mathcal N(x_n \mid \mu_k, \sigma_k^2)}
                  {\sum_j \pi_j\, \mathcal N(x_n \mid \mu_j, \sigma_j^2)} ,

so there is no closed form. EM alternates the E-step (compute :math:`r_{nk}` with the parameters
fixed) and the M-step (with :math:`N_k = \sum_n r_{nk}`: :math:`\pi_k = N_k / N`,
:math:`\mu_k = \sum_n r_{nk} x_n / N_k`, :math:`\sigma_k^2 = \sum_n r_{nk} (x_n - \mu_k)^2 / N_k`).
Plain EM never decreases :math:`\ell`: the M-step maximises a lower bound on :math:`\ell` that
touches it at the current parameters. The variance floor below breaks that argument: with
``reg_var > 0`` the M-step's variances are not the bound's maximiser, so an iteration is no
longer guaranteed to raise :math:`\ell` (the code does not check the history for a decrease).

Everything is computed in log space: :math:`\log \pi_k \mathcal N(x_n \mid \mu_k, \sigma_k^2)`
for all ``(n, k)``, normalised with :func:`scipy.special.logsumexp`, so points far from every
component keep finite log densities and well-defined responsibilities. The likelihood is
unbounded (a component shrinking onto one point), so, as in scikit-learn, a small ``reg_var`` is
added to every variance in the M-step.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.special import logsumexp

from solutions._validation import (
    ConvergenceWarning,
    as_1d_float,
    check_int,
    check_is_fitted,
    check_option,
    check_positive,
)
from solutions.softmax import softmax

__all__ = ["ConvergenceWarning", "GaussianMixture", "em", "fit_mixture", "m_step",
           "responsibilities"]

_INITS = ("quantiles", "random")


def _log_joint(x: np.ndarray, weights, means, variances) -> np.ndarray:
    r"""Return :math:`\log \pi_k + \log \mathcal N(x_n \mid \mu_k, \sigma_k^2)`, shape ``(N, K)``."""
    z = x[:, None] - means
    return np.log(weights) - 0.5 * np.log(2.0 * np.pi * variances) - 0.5 * z * z / variances


def _normalise(log_joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Return :math:`\log p(x_n) = \operatorname{logsumexp}_k` of ``log_joint`` and the
    responsibilities :math:`r_{nk}`, sharing one exponential (shifted by each row's maximum)."""
    top = log_joint.max(axis=1, keepdims=True)
    resp = np.exp(log_joint - top)
    total = resp.sum(axis=1, keepdims=True)
    resp /= total
    return (top + np.log(total))[:, 0], resp


def responsibilities(x, weights, means, variances) -> tuple[np.ndarray, float]:
    r"""E-step: the responsibilities and the log-likelihood, computed in log space.

    .. math::

        \log r_{nk} = \log \pi_k + \log \mathcal N(x_n \mid \mu_k, \sigma_k^2)
                      - \operatorname{logsumexp}_j \big(\log \pi_j
                      + \log \mathcal N(x_n \mid \mu_j, \sigma_j^2)\big),
        \qquad
        \ell = \sum_{n=1}^N \operatorname{logsumexp}_k \big(\log \pi_k
               + \log \mathcal N(x_n \mid \mu_k, \sigma_k^2)\big).

    A point far from every component (every :math:`\pi_k \mathcal N(x_n)` below the smallest
    float) keeps finite responsibilities and a finite :math:`\log p(x_n)`.

    Parameters
    ----------
    x : array_like of shape (N,)
    weights, means, variances : array_like of shape (K,)
        :math:`\pi_k > 0` (summing to one), :math:`\mu_k`, :math:`\sigma_k^2 > 0`.

    Returns
    -------
    resp : ndarray of shape (N, K)
        :math:`r_{nk}`; each row sums to one.
    log_likelihood : float
        :math:`\ell`.
    """
    x = as_1d_float(x, "x")
    log_px, resp = _normalise(_log_joint(x, np.asarray(weights, dtype=float),
                                         np.asarray(means, dtype=float),
                                         np.asarray(variances, dtype=float)))
    return resp, float(log_px.sum())


def m_step(x, resp, reg_var: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""M-step: the weighted Gaussian MLE of each component.

    With :math:`N_k = \sum_n r_{nk}`,

    .. math::

        \pi_k = \frac{N_k}{N}, \qquad \mu_k = \frac{1}{N_k}\sum_n r_{nk} x_n, \qquad
        \sigma_k^2 = \frac{1}{N_k}\sum_n r_{nk} (x_n - \mu_k)^2 + \texttt{reg\_var}.

    A component with :math:`N_k = 0` gets ``10 * eps`` added to :math:`N_k`, so no division by 0.

    Parameters
    ----------
    x : array_like of shape (N,)
    resp : array_like of shape (N, K)
        Responsibilities; each row sums to one.
    reg_var : float, default 0
        Added to every variance (``0`` is plain EM).

    Returns
    -------
    weights, means, variances : ndarray of shape (K,)
    """
    x = as_1d_float(x, "x")
    r = np.asarray(resp, dtype=float)
    n_k = r.sum(axis=0) + 10 * np.finfo(float).eps  # no division by 0 for a dead component
    means = r.T @ x / n_k
    z = x[:, None] - means
    variances = np.einsum("nk,nk->k", r, z * z) / n_k + reg_var
    return n_k / x.size, means, variances


def _em(x: np.ndarray, weights, means, variances, max_iter: int, reg_var: float = 0.0,
        tol: float | None = None):
    r"""EM from the given start: ``(weights, means, variances, history, converged)``.

    Stops after ``max_iter`` iterations or, with ``tol``, when an iteration raises
    :math:`\ell / N` by less than ``tol`` (then ``converged`` is True)."""
    r, log_lik = responsibilities(x, weights, means, variances)
    lls = [log_lik]
    for _ in range(max_iter):
        weights, means, variances = m_step(x, r, reg_var)
        if not np.all(variances > 0):
            raise ValueError("a component collapsed onto a single point (variance 0); "
                             "use reg_var > 0 or fewer components")
        r, log_lik = responsibilities(x, weights, means, variances)
        lls.append(log_lik)
        if tol is not None and (lls[-1] - lls[-2]) / x.size < tol:
            return weights, means, variances, np.array(lls), True
    return weights, means, variances, np.array(lls), False


def em(x, weights, means, variances, n_iter: int):
    r"""``n_iter`` iterations of plain EM (E-step, then M-step) from the given start.

    Each iteration computes the responsibilities at the current parameters
    (:func:`responsibilities`) and refits every component to them (:func:`m_step`). The
    log-likelihood :math:`\ell(\boldsymbol\theta^{(t)})` never decreases: the M-step maximises the
    lower bound :math:`\mathcal F(q, \boldsymbol\theta) \le \ell(\boldsymbol\theta)` that the
    E-step made touch :math:`\ell` at :math:`\boldsymbol\theta^{(t)}`.

    Parameters
    ----------
    x : array_like of shape (N,)
    weights, means, variances : array_like of shape (K,)
        The start :math:`\boldsymbol\theta^{(0)}`.
    n_iter : int, >= 0

    Returns
    -------
    weights, means, variances : ndarray of shape (K,)
        :math:`\boldsymbol\theta^{(n\_iter)}`.
    history : ndarray of shape (n_iter + 1,)
        :math:`\ell(\boldsymbol\theta^{(t)})` for :math:`t = 0, \dots, n\_iter`; non-decreasing.
    """
    w, m, v, history, _ = _em(as_1d_float(x, "x"), weights, means, variances,
                              check_int(n_iter, "n_iter", minimum=0))
    return w, m, v, history


def fit_mixture(x, weights, means, variances, tol: float = 1e-10, max_iter: int = 1000):
    r"""EM from the given start until an iteration raises :math:`\ell / N` by less than ``tol``.

    Parameters
    ----------
    x : array_like of shape (N,)
    weights, means, variances : array_like of shape (K,)
        The start.
    tol : float, default 1e-10
        Stop when :math:`(\ell^{(t)} - \ell^{(t-1)}) / N <` ``tol``.
    max_iter : int, default 1000
        Stop after this many iterations in any case.

    Returns
    -------
    weights, means, variances : ndarray of shape (K,)
        The fitted parameters, in the order of the start's components.
    log_likelihood : float
        :math:`\ell` at the fitted parameters.
    """
    w, m, v, history, _ = _em(as_1d_float(x, "x"), weights, means, variances,
                              check_int(max_iter, "max_iter"), tol=tol)
    return w, m, v, float(history[-1])


def _given_start(value, name: str, K: int) -> np.ndarray:
    """A starting parameter given to :meth:`GaussianMixture.fit`, as a fresh array of shape (K,)."""
    arr = as_1d_float(value, name)
    if arr.shape != (K,):
        raise ValueError(f"{name} must have shape ({K},) for n_components={K}; got shape "
                         f"{arr.shape}")
    return arr.copy()


class GaussianMixture:
    r"""One-dimensional Gaussian mixture fitted by maximum likelihood with EM.

    Parameters
    ----------
    n_components : int, default 2
        Number of components :math:`K \ge 1`.
    max_iter : int, default 500
        Largest number of EM iterations (E-step then M-step).
    tol : float, default 1e-8
        Stop when an iteration raises the *mean* log-likelihood :math:`\ell / N` by less than
        ``tol`` (scikit-learn's criterion).
    reg_var : float, default 1e-6
        Added to every variance in the M-step; keeps a component from collapsing onto a single
        point, where the likelihood is unbounded. ``0`` is plain EM.
    init : {"quantiles", "random"}, default "quantiles"
        Starting means: the data's quantiles at :math:`(k - \tfrac12)/K` (deterministic), or
        :math:`K` distinct data points drawn with ``random_state``. The starting weights are
        :math:`1/K` and the starting variances the data's variance. Ignored for the parameters
        given by :meth:`fit`'s ``means_init``, ``weights_init`` and ``variances_init``.
    random_state : int, numpy.random.Generator or None
        Seed of the ``"random"`` initialisation.

    Attributes
    ----------
    weights_, means_, variances_ : ndarray of shape (n_components,)
        :math:`\pi_k`, :math:`\mu_k`, :math:`\sigma_k^2` after the last M-step.
    log_likelihood_history_ : ndarray of shape (n_iter_ + 1,)
        :math:`\ell` at the starting parameters and after each iteration. With ``reg_var = 0``
        it never decreases (up to rounding); with ``reg_var > 0`` that is not guaranteed.
    log_likelihood_ : float
        :math:`\ell` at the fitted parameters (the last entry of the history).
    n_iter_ : int
        Number of EM iterations run.
    converged_ : bool
        Whether the ``tol`` criterion was met within ``max_iter`` iterations (if not, a
        :class:`ConvergenceWarning` is issued).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> x = np.concatenate([rng.normal(0, 1, 300), rng.normal(6, 1, 700)])
    >>> gmm = GaussianMixture(2).fit(x)
    >>> gmm.means_.round(1), gmm.weights_.round(1)
    (array([-0.,  6.]), array([0.3, 0.7]))
    """

    def __init__(self, n_components=2, max_iter=500, tol=1e-8, reg_var=1e-6,
                 init="quantiles", random_state=None):
        self.n_components = n_components
        self.max_iter = max_iter
        self.tol = tol
        self.reg_var = reg_var
        self.init = init
        self.random_state = random_state

    # ------------------------------------------------------------------ fitting
    def _initial(self, x: np.ndarray, K: int, reg: float, weights_init, means_init,
                 variances_init):
        init = check_option(self.init, "init", _INITS)
        weights = (np.full(K, 1.0 / K) if weights_init is None
                   else _given_start(weights_init, "weights_init", K))
        if means_init is not None:
            means = _given_start(means_init, "means_init", K)
        elif init == "quantiles":
            means = np.quantile(x, (np.arange(K) + 0.5) / K)
        else:
            means = np.random.default_rng(self.random_state).choice(np.unique(x), size=K,
                                                                     replace=False)
        variances = (np.full(K, x.var() + reg) if variances_init is None
                     else _given_start(variances_init, "variances_init", K))
        if np.any(weights <= 0) or not np.isclose(weights.sum(), 1.0, rtol=0, atol=1e-10):
            raise ValueError(f"weights_init must be positive and sum to 1; got {weights}")
        if np.any(variances <= 0):
            raise ValueError(f"variances_init must be positive; got {variances}")
        return weights, means, variances

    def fit(self, x, y=None, *, weights_init=None, means_init=None, variances_init=None):
        """Fit the mixture to the 1-D sample ``x`` by EM.

        Parameters
        ----------
        x : array_like of shape (n_samples,) or (n_samples, 1)
        y : ignored
        weights_init, means_init, variances_init : array_like of shape (n_components,), optional
            Starting parameters, overriding ``init``.

        Returns
        -------
        self : GaussianMixture
        """
        x = as_1d_float(x, "x")
        K = check_int(self.n_components, "n_components")
        max_iter = check_int(self.max_iter, "max_iter")
        tol = check_positive(self.tol, "tol", strict=False)
        reg = check_positive(self.reg_var, "reg_var", strict=False)
        n_distinct = np.unique(x).size
        if K > n_distinct:
            raise ValueError(f"n_components={K} is more than the {n_distinct} distinct value(s) "
                             f"in x; a mixture needs at least one distinct point per component")
        weights, means, variances = self._initial(x, K, reg, weights_init, means_init,
                                                   variances_init)

        weights, means, variances, history, converged = _em(x, weights, means, variances,
                                                            max_iter, reg, tol)
        n_iter = history.size - 1
        if not converged:
            warnings.warn(f"EM stopped at max_iter={max_iter} before the mean log-likelihood "
                          f"rose by less than tol={tol:g} per iteration; raise max_iter",
                          ConvergenceWarning, stacklevel=2)
        self.weights_, self.means_, self.variances_ = weights, means, variances
        self.log_likelihood_history_ = history
        self.log_likelihood_ = float(history[-1])
        self.n_iter_ = n_iter
        self.converged_ = converged
        return self

    # ------------------------------------------------------------------ evaluation
    def _log_joint_at(self, x_query) -> np.ndarray:
        check_is_fitted(self, "means_")
        return _log_joint(as_1d_float(x_query, "x_query"), self.weights_, self.means_,
                          self.variances_)

    def score_samples(self, x_query) -> np.ndarray:
        r"""Log density :math:`\log p(x) = \operatorname{logsumexp}_k(\log \pi_k +
        \log \mathcal N(x \mid \mu_k, \sigma_k^2))` at each query point.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        return logsumexp(self._log_joint_at(x_query), axis=1)

    def pdf(self, x_query) -> np.ndarray:
        r"""Density :math:`p(x)` at each query point.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        return np.exp(self.score_samples(x_query))

    def score(self, x_query, y=None) -> float:
        r"""Total log-likelihood :math:`\sum_m \log p(x_m)` of the query points.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)
        y : ignored

        Returns
        -------
        float
        """
        return float(self.score_samples(x_query).sum())

    def bic(self, x) -> float:
        r"""Bayesian information criterion of the fitted mixture on the sample ``x``.

        .. math::

            \mathrm{BIC} = -2\sum_{n=1}^N \log p(x_n) + (3K - 1)\log N,

        where :math:`3K - 1` counts the free parameters (:math:`K` means, :math:`K` variances,
        :math:`K - 1` weights). Smaller is better; it approximates :math:`-2\log p(x)` with the
        parameters integrated out (Schwarz, 1978).

        Parameters
        ----------
        x : array_like of shape (n_samples,) or (n_samples, 1)
            Usually the training sample.

        Returns
        -------
        float
        """
        n = as_1d_float(x, "x").size
        return -2.0 * self.score(x) + (3 * self.weights_.size - 1) * np.log(n)

    def predict_proba(self, x_query) -> np.ndarray:
        r"""Responsibilities :math:`r_{mk} = p(\text{component } k \mid x_m)`; rows sum to one.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)

        Returns
        -------
        ndarray of shape (n_queries, n_components)
        """
        return softmax(self._log_joint_at(x_query), axis=1)

    def predict(self, x_query) -> np.ndarray:
        """Most responsible component of each query point.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)

        Returns
        -------
        ndarray of int, shape (n_queries,)
        """
        return np.argmax(self._log_joint_at(x_query), axis=1)
