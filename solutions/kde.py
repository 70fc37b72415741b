r"""Kernel density estimation in one dimension, with leave-one-out bandwidth selection.

Derived in ``chapters/05_density_estimation.md``. Given data :math:`x_1, \dots, x_N`, a kernel
:math:`K` (symmetric, non-negative, :math:`\int K = 1`) and a bandwidth :math:`h > 0`, the kernel
density estimate is

.. math::

    \hat p(x) = \frac{1}{N} \sum_{n=1}^{N} K_h(x - x_n), \qquad K_h(u) = \frac{1}{h} K(u / h).

:math:`K_h` is itself a kernel for every :math:`h > 0`, so :math:`\hat p` is a density. Three
kernels are provided: Gaussian, uniform (box) and Epanechnikov. The bandwidth is either given, or
set by Scott's or Silverman's rule of thumb exactly as :class:`scipy.stats.gaussian_kde` defines
them, or chosen by maximising the leave-one-out log-likelihood (:func:`select_bandwidth`).

Every pairwise evaluation runs in blocks of at most ``_BLOCK_ENTRIES`` query-data pairs (a loop
over blocks, vectorised inside), so 10,000 points at 10,000 queries needs about one megabyte of
scratch memory instead of one dense 800 MB matrix. Data and queries are sorted first, so that a
block only touches the data its kernels can reach: those within :math:`h` for the compact kernels,
and within :math:`38.7\,h` for the Gaussian kernel when evaluating the density itself (beyond that
:math:`e^{-u^2/2}` is exactly zero in float64). Log densities with the Gaussian kernel are computed
in log space with the log-sum-exp trick over all the data, so they stay finite far in the tails.

References
----------
.. [1] B. W. Silverman, *Density Estimation for Statistics and Data Analysis*, Chapman and Hall,
   1986.
.. [2] D. W. Scott, *Multivariate Density Estimation: Theory, Practice, and Visualization*, Wiley,
   1992.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from solutions._validation import (
    as_1d_float,
    check_is_fitted,
    check_option,
    check_positive,
)

__all__ = [
    "gaussian_kernel",
    "uniform_kernel",
    "epanechnikov_kernel",
    "KERNELS",
    "BANDWIDTH_RULES",
    "KernelDensity",
    "loo_log_likelihood",
    "select_bandwidth",
    "reflected_pdf",
]

#: Largest number of query-data pairs held in one block (512 KB of float64). Measured on a
#: Haswell core, blocks of 3e4 to 3e5 entries are equally fast (the exponential dominates), and
#: far larger blocks are slower because they leave the cache.
_BLOCK_ENTRIES = 1 << 16

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


def gaussian_kernel(u):
    r"""Standard normal kernel :math:`K(u) = \frac{1}{\sqrt{2\pi}} e^{-u^2/2}`.

    Parameters
    ----------
    u : array_like of any shape
        Scaled distances :math:`u = (x - x_n) / h`.

    Returns
    -------
    ndarray of the same shape as ``u``
        Kernel values.

    Examples
    --------
    >>> float(gaussian_kernel(0.0))  # 1 / sqrt(2 pi)
    0.3989422804014327
    """
    u = np.asarray(u, dtype=float)
    return np.exp(-0.5 * u * u - _LOG_SQRT_2PI)


def _log_gaussian_kernel(u):
    r""":math:`\log K(u) = -u^2/2 - \log\sqrt{2\pi}`, finite for every finite ``u``."""
    u = np.asarray(u, dtype=float)
    return -0.5 * u * u - _LOG_SQRT_2PI


def uniform_kernel(u):
    r"""Uniform (box, "tophat") kernel :math:`K(u) = \tfrac12 \mathbf 1[|u| \le 1]`.

    Parameters
    ----------
    u : array_like of any shape
        Scaled distances.

    Returns
    -------
    ndarray of the same shape as ``u``
        ``0.5`` on :math:`[-1, 1]`, ``0`` outside.

    Examples
    --------
    >>> uniform_kernel([-1.0, 0.0, 1.5])
    array([0.5, 0.5, 0. ])
    """
    u = np.asarray(u, dtype=float)
    return np.where(np.abs(u) <= 1.0, 0.5, 0.0)


def _log_uniform_kernel(u):
    r""":math:`\log K(u) = \log\tfrac12` on :math:`[-1, 1]` and :math:`-\infty` outside."""
    u = np.asarray(u, dtype=float)
    return np.where(np.abs(u) <= 1.0, np.log(0.5), -np.inf)


def epanechnikov_kernel(u):
    r"""Epanechnikov kernel :math:`K(u) = \tfrac34 \max(1 - u^2, 0)`.

    It minimises the asymptotic mean integrated squared error among non-negative kernels
    (Silverman 1986, section 3.3.2).

    Parameters
    ----------
    u : array_like of any shape
        Scaled distances.

    Returns
    -------
    ndarray of the same shape as ``u``
        Kernel values, zero outside :math:`(-1, 1)`.

    Examples
    --------
    >>> epanechnikov_kernel([0.0, 0.5, 2.0])
    array([0.75  , 0.5625, 0.    ])
    """
    u = np.asarray(u, dtype=float)
    return 0.75 * np.maximum(1.0 - u * u, 0.0)


def _log_epanechnikov_kernel(u):
    r""":math:`\log K(u) = \log\tfrac34 + \log(1 - u^2)` on :math:`(-1, 1)`, :math:`-\infty` outside."""
    u = np.asarray(u, dtype=float)
    out = np.full(u.shape, -np.inf)
    inside = np.abs(u) < 1.0
    out[inside] = np.log(0.75) + np.log1p(-(u[inside] ** 2))
    return out[()] if out.ndim == 0 else out


#: Registry ``name -> (kernel, log_kernel)``; both are vectorised over arrays of any shape.
KERNELS: dict[str, tuple[Callable, Callable]] = {
    "gaussian": (gaussian_kernel, _log_gaussian_kernel),
    "uniform": (uniform_kernel, _log_uniform_kernel),
    "epanechnikov": (epanechnikov_kernel, _log_epanechnikov_kernel),
}

#: Rules of thumb understood by ``bandwidth``.
BANDWIDTH_RULES = ("scott", "silverman")


# In-place block evaluators: turn a tile of differences d = q - x into the *unnormalised* kernel
# kappa(d / h), where K = const * kappa. They are the hot loop, so they use fused in-place ufuncs.


def _gaussian_tile(tile: np.ndarray, h: float, log: bool) -> None:
    np.multiply(tile, tile, out=tile)
    np.multiply(tile, -0.5 / (h * h), out=tile)  # log kappa = -u^2 / 2
    if not log:
        np.exp(tile, out=tile)


def _uniform_tile(tile: np.ndarray, h: float, log: bool) -> None:
    np.abs(tile, out=tile)
    np.multiply(tile, 1.0 / h, out=tile)
    np.less_equal(tile, 1.0, out=tile, casting="unsafe")  # kappa = 1[|u| <= 1]


def _epanechnikov_tile(tile: np.ndarray, h: float, log: bool) -> None:
    np.multiply(tile, 1.0 / h, out=tile)
    np.multiply(tile, tile, out=tile)
    np.subtract(1.0, tile, out=tile)
    np.maximum(tile, 0.0, out=tile)  # kappa = max(1 - u^2, 0)


class _Spec(NamedTuple):
    tile: Callable[[np.ndarray, float, bool], None]
    log_const: float  # log of K / kappa
    radius: float  # kappa(u) == 0.0 in float64 for |u| > radius
    log_space: bool  # whether log densities need log-sum-exp (kappa underflows in the tails)


_SPECS = {
    # exp(-u^2/2) rounds to 0.0 for u^2/2 > 745.2, i.e. |u| > 38.61.
    "gaussian": _Spec(_gaussian_tile, -_LOG_SQRT_2PI, 38.7, True),
    "uniform": _Spec(_uniform_tile, np.log(0.5), 1.0, False),
    "epanechnikov": _Spec(_epanechnikov_tile, np.log(0.75), 1.0, False),
}


# --------------------------------------------------------------------------------------------
# The blocked evaluation shared by pdf, score_samples and the leave-one-out scores
# --------------------------------------------------------------------------------------------


def _kernel_density(queries, data, h, kernel, *, log, leave_one_out=False):
    r"""Blocked :math:`\hat p(q_m) = \frac{1}{N' h}\sum_n K((q_m - x_n)/h)`, or its logarithm.

    Parameters
    ----------
    queries : ndarray of shape (n_queries,)
        Query points; ignored (taken to be ``data``) when ``leave_one_out`` is true.
    data : ndarray of shape (n_samples,)
        The sample :math:`x_1, \dots, x_N`.
    h : float
        Bandwidth.
    kernel : str
        A key of ``KERNELS``.
    log : bool
        Return the log density. For the Gaussian kernel it is accumulated with log-sum-exp
        (shifting each block row by its maximum, then combining blocks with ``logaddexp``), so it
        is finite wherever the exact value is; compact kernels are bounded and never underflow, so
        the log of their sum is exact (``-inf`` where no data point lies within ``h``).
    leave_one_out : bool
        Score each data point under the estimate built from the other :math:`N' = N - 1` points
        (otherwise :math:`N' = N`).

    Returns
    -------
    ndarray of shape (n_queries,)
    """
    spec = _SPECS[kernel]
    block = int(_BLOCK_ENTRIES)
    order_x = np.argsort(data, kind="stable")
    x = data[order_x]
    if leave_one_out:
        order_q, q = None, x
    else:
        order_q = np.argsort(queries, kind="stable")
        q = queries[order_q]
    n, m = x.size, q.size
    n_eff = n - 1 if leave_one_out else n
    in_log_space = log and spec.log_space
    truncate = not in_log_space  # in log space every data point counts, however far
    reach = spec.radius * h

    cols = min(n, block)
    rows = max(1, block // cols)
    buf = np.empty(rows * cols)
    out = np.empty(m)
    for qs in range(0, m, rows):
        qe = min(qs + rows, m)
        qb = q[qs:qe, None]
        if truncate:
            lo = int(np.searchsorted(x, q[qs] - reach, side="left"))
            hi = int(np.searchsorted(x, q[qe - 1] + reach, side="right"))
        else:
            lo, hi = 0, n
        acc = np.full(qe - qs, -np.inf if in_log_space else 0.0)
        for ds in range(lo, hi, cols):
            de = min(ds + cols, hi)
            tile = buf[: (qe - qs) * (de - ds)].reshape(qe - qs, de - ds)
            np.subtract(qb, x[ds:de], out=tile)
            spec.tile(tile, h, in_log_space)
            if leave_one_out:  # drop the pairs (i, i): query qs + r is data point ds + c
                idx = np.arange(max(qs, ds), min(qe, de))
                tile[idx - qs, idx - ds] = -np.inf if in_log_space else 0.0
            if in_log_space:
                shift = tile.max(axis=1)
                shift[~np.isfinite(shift)] = 0.0  # a row holding only the excluded pair
                np.subtract(tile, shift[:, None], out=tile)
                np.exp(tile, out=tile)
                total = tile.sum(axis=1)  # >= 1 unless the row was empty
                part = np.full(qe - qs, -np.inf)
                np.log(total, out=part, where=total > 0)
                part += shift
                np.logaddexp(acc, part, out=acc)
            else:
                acc += tile.sum(axis=1)
        out[qs:qe] = acc

    if in_log_space:
        out += spec.log_const - np.log(n_eff * h)
    elif log:
        with np.errstate(divide="ignore"):
            np.log(out, out=out)
        out += spec.log_const - np.log(n_eff * h)
    else:
        out *= np.exp(spec.log_const) / (n_eff * h)
    if order_q is not None:
        result = np.empty(m)
        result[order_q] = out
        return result
    return out


# --------------------------------------------------------------------------------------------
# Bandwidth
# --------------------------------------------------------------------------------------------


def _resolve_bandwidth(bandwidth, x: np.ndarray) -> float:
    """Return the bandwidth as a positive float, applying a rule of thumb if one is named."""
    if isinstance(bandwidth, str):
        check_option(bandwidth, "bandwidth", BANDWIDTH_RULES)
        n = x.size
        if n < 2:
            raise ValueError(
                f"bandwidth={bandwidth!r} needs at least 2 data points to estimate the spread; got {n}"
            )
        sd = float(np.std(x, ddof=1))
        if not sd > 0:
            raise ValueError(
                f"bandwidth={bandwidth!r} is undefined: x has zero sample variance "
                "(all values equal); pass a positive float bandwidth instead"
            )
        factor = n ** (-1.0 / 5.0) if bandwidth == "scott" else (0.75 * n) ** (-1.0 / 5.0)
        return factor * sd
    if isinstance(bandwidth, (bool, np.bool_)):
        raise ValueError(f"bandwidth must be a positive float, 'scott' or 'silverman'; got {bandwidth!r}")
    return check_positive(bandwidth, "bandwidth")


def _check_kernel(kernel) -> str:
    if not isinstance(kernel, str):
        raise ValueError(f"kernel must be a string, one of {', '.join(map(repr, KERNELS))}; got {kernel!r}")
    return check_option(kernel, "kernel", tuple(KERNELS))


# --------------------------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------------------------


class KernelDensity:
    r"""One-dimensional kernel density estimator.

    .. math::

        \hat p(x) = \frac{1}{N h} \sum_{n=1}^{N} K\!\left(\frac{x - x_n}{h}\right)

    Parameters
    ----------
    kernel : {"gaussian", "uniform", "epanechnikov"}, default "gaussian"
        :math:`K(u)`: the standard normal pdf :math:`\frac{1}{\sqrt{2\pi}}e^{-u^2/2}`, the box
        :math:`\frac12\mathbf 1[|u|\le 1]` (scikit-learn's ``"tophat"``), or
        :math:`\frac34\max(1-u^2, 0)`.
    bandwidth : float or {"scott", "silverman"}, default "scott"
        :math:`h > 0`, or a rule of thumb defined exactly as in :class:`scipy.stats.gaussian_kde`
        for one dimension, with :math:`\hat\sigma` the sample standard deviation (``ddof=1``):

        * Scott: :math:`h = \hat\sigma\, N^{-1/5}`;
        * Silverman: :math:`h = \hat\sigma\, \left(\frac{N (d + 2)}{4}\right)^{-1/(d + 4)}
          = \hat\sigma\,(3N/4)^{-1/5} \approx 1.06\,\hat\sigma\,N^{-1/5}` for :math:`d = 1`.

        Silverman's rule is the normal-reference bandwidth: it minimises the asymptotic mean
        integrated squared error of a **Gaussian** kernel when the data are themselves Gaussian
        (Silverman 1986, eq. 3.28). Scott's rule rounds that constant :math:`(4/3)^{1/5} \approx
        1.06` down to 1 (Scott 1992, section 6.2), so it is slightly smaller than the optimum
        even for Gaussian data. With the box or Epanechnikov kernel both rules are applied
        unchanged, so ``h`` then is the same number but not that kernel's optimum. They
        oversmooth multimodal data;
        :func:`select_bandwidth` adapts to the data instead. (Silverman's book also gives the
        more robust :math:`0.9\min(\hat\sigma, \mathrm{IQR}/1.34)N^{-1/5}`, which is *not* the
        rule used here or by SciPy.)

    Attributes
    ----------
    bandwidth_ : float
        The bandwidth :math:`h` actually used (rules of thumb resolved).
    n_samples_ : int
        :math:`N`.
    data_ : ndarray of shape (n_samples,)
        A copy of the fitted sample.

    Examples
    --------
    >>> import numpy as np
    >>> kde = KernelDensity(bandwidth=0.5).fit(np.array([-1.0, 0.0, 1.0]))
    >>> kde.pdf(np.array([0.0])).round(4)
    array([0.3379])
    >>> kde.score_samples(np.array([50.0])).round(1)  # finite although the pdf underflows
    array([-4803.3])
    >>> round(KernelDensity(bandwidth="silverman").fit(np.array([0.0, 1.0, 3.0])).bandwidth_, 4)
    1.2988
    """

    def __init__(self, kernel: str = "gaussian", bandwidth="scott"):
        self.kernel = kernel
        self.bandwidth = bandwidth

    def fit(self, x, y=None) -> KernelDensity:
        """Store the sample and resolve the bandwidth.

        Parameters
        ----------
        x : array_like of shape (n_samples,) or (n_samples, 1)
            Finite data.
        y : ignored
            Present for scikit-learn compatibility.

        Returns
        -------
        self
        """
        self._kernel = _check_kernel(self.kernel)
        x = as_1d_float(x, "x")
        self.bandwidth_ = _resolve_bandwidth(self.bandwidth, x)
        self.data_ = np.array(x, dtype=float, copy=True)
        self.n_samples_ = int(x.size)
        return self

    def _queries(self, x_query) -> np.ndarray:
        check_is_fitted(self, "bandwidth_")
        return as_1d_float(x_query, "x_query")

    def pdf(self, x_query) -> np.ndarray:
        r"""Density :math:`\hat p(x)` at each query point.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        q = self._queries(x_query)
        return _kernel_density(q, self.data_, self.bandwidth_, self._kernel, log=False)

    def score_samples(self, x_query) -> np.ndarray:
        r"""Log density :math:`\log \hat p(x)` at each query point.

        For the Gaussian kernel it is computed in log space,

        .. math::

            \log\hat p(x) = \operatorname{logsumexp}_n\!\left(-\tfrac12 u_n^2\right)
                - \log(N h \sqrt{2\pi}), \qquad u_n = \frac{x - x_n}{h},

        so it stays finite far in the tails where :math:`\hat p(x)` underflows to 0. For the
        compact kernels it is ``-inf`` wherever no data point lies within :math:`h`.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)

        Returns
        -------
        ndarray of shape (n_queries,)
        """
        q = self._queries(x_query)
        return _kernel_density(q, self.data_, self.bandwidth_, self._kernel, log=True)

    def score(self, x_query, y=None) -> float:
        r"""Total log-likelihood :math:`\sum_m \log\hat p(x_m)` of the query points.

        Parameters
        ----------
        x_query : array_like of shape (n_queries,) or (n_queries, 1)
        y : ignored

        Returns
        -------
        float
        """
        return float(np.sum(self.score_samples(x_query)))


# --------------------------------------------------------------------------------------------
# Leave-one-out cross-validation
# --------------------------------------------------------------------------------------------


def loo_log_likelihood(x, bandwidth, kernel: str = "gaussian") -> float:
    r"""Leave-one-out log-likelihood of a kernel density estimate.

    .. math::

        \mathcal L_{\mathrm{LOO}}(h) = \sum_{n=1}^{N} \log \hat p_{-n}(x_n), \qquad
        \hat p_{-n}(x) = \frac{1}{(N-1) h} \sum_{m \ne n} K\!\left(\frac{x - x_m}{h}\right).

    Each point is scored by the estimate built from the other :math:`N - 1` points; without
    leaving it out the likelihood would grow without bound as :math:`h \to 0`.

    Parameters
    ----------
    x : array_like of shape (n_samples,) or (n_samples, 1)
        At least 2 finite values.
    bandwidth : float or {"scott", "silverman"}
        :math:`h`, as in :class:`KernelDensity` (a rule is applied to all of ``x``).
    kernel : {"gaussian", "uniform", "epanechnikov"}, default "gaussian"

    Returns
    -------
    float
        :math:`\mathcal L_{\mathrm{LOO}}(h)`. With a compact kernel it is ``-inf`` as soon as one
        point has no other point within :math:`h` (strictly within, for Epanechnikov); such a
        bandwidth is never chosen by :func:`select_bandwidth`. With the Gaussian kernel it is
        computed in log space and is always finite.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.0, 0.5, 3.0])
    >>> round(loo_log_likelihood(x, 1.0), 4)
    -7.9247
    >>> loo_log_likelihood(x, 1.0, kernel="uniform")  # 3.0 has no neighbour within 1
    -inf
    """
    kernel = _check_kernel(kernel)
    x = as_1d_float(x, "x")
    if x.size < 2:
        raise ValueError(f"x needs at least 2 points for leave-one-out; got {x.size}")
    h = _resolve_bandwidth(bandwidth, x)
    return float(np.sum(_kernel_density(x, x, h, kernel, log=True, leave_one_out=True)))


def select_bandwidth(x, candidates, kernel: str = "gaussian", *, return_scores: bool = False):
    r"""Choose the bandwidth that maximises the leave-one-out log-likelihood.

    .. math::

        \hat h = \arg\max_{h \in \text{candidates}} \sum_{n=1}^{N} \log \hat p_{-n}(x_n)

    Parameters
    ----------
    x : array_like of shape (n_samples,) or (n_samples, 1)
        At least 2 finite values.
    candidates : array_like of shape (n_candidates,)
        Positive finite bandwidths, e.g. ``np.geomspace(0.05, 2, 30)``.
    kernel : {"gaussian", "uniform", "epanechnikov"}, default "gaussian"
    return_scores : bool, default False
        Also return every candidate's score, e.g. to plot the cross-validation curve.

    Returns
    -------
    best : float
        The candidate with the highest score (the first one on ties).
    scores : ndarray of shape (n_candidates,)
        Only if ``return_scores``: :func:`loo_log_likelihood` of each candidate (``-inf`` for
        compact-kernel bandwidths that leave some point without a neighbour).

    Raises
    ------
    ValueError
        On bad input, or if every candidate scores ``-inf`` (all too small for a compact kernel).

    Notes
    -----
    Likelihood cross-validation is sensitive to clumps: near-duplicate values (rounded or
    discretised data) reward very small bandwidths, and heavy tails push towards large ones
    (Silverman 1986, section 3.4.4). Plot the scores before trusting the maximum.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.random.default_rng(1).normal(size=200)
    >>> best, scores = select_bandwidth(x, [0.05, 0.4, 3.0], return_scores=True)
    >>> best, int(scores.argmax())
    (0.4, 1)
    """
    kernel = _check_kernel(kernel)
    x = as_1d_float(x, "x")
    if x.size < 2:
        raise ValueError(f"x needs at least 2 points for leave-one-out; got {x.size}")
    h = as_1d_float(candidates, "candidates")
    if np.any(h <= 0):
        raise ValueError(f"candidates must all be > 0; got {h[h <= 0][:5].tolist()}")
    scores = np.array([loo_log_likelihood(x, float(hk), kernel) for hk in h])
    if not np.any(np.isfinite(scores)):
        raise ValueError(
            f"every candidate bandwidth gives a leave-one-out log-likelihood of -inf with the "
            f"{kernel!r} kernel (some point has no neighbour within h); try larger candidates"
        )
    best = float(h[int(np.argmax(scores))])
    return (best, scores) if return_scores else best


def reflected_pdf(kde: KernelDensity, x_query, lower: float = 0.0) -> np.ndarray:
    r"""Kernel density estimate with the reflection correction at a lower boundary.

    A kernel estimate of a variable that cannot go below ``lower`` puts the mass
    :math:`\frac1N\sum_n \int_{-\infty}^{L} K_h(x - x_n)\,dx` below the boundary :math:`L`
    (for the Gaussian kernel :math:`\frac1N\sum_n\Phi((L - x_n)/h)`) and is biased low near it.
    Reflecting that mass back (Schuster, 1985; Silverman, 1986, section 2.10),

    .. math::

        \hat p_R(x) = \hat p(x) + \hat p(2L - x) \quad (x \ge L), \qquad \hat p_R(x) = 0
        \quad (x < L),

    gives a density on :math:`[L, \infty)`: substituting :math:`u = 2L - x` in the second term
    shows :math:`\int_L^\infty \hat p_R = \int_{-\infty}^{\infty}\hat p = 1`.

    Parameters
    ----------
    kde : KernelDensity
        A fitted estimator whose data are all :math:`\ge L`.
    x_query : array_like of shape (n_queries,) or (n_queries, 1)
    lower : float, default 0.0
        The boundary :math:`L`.

    Returns
    -------
    ndarray of shape (n_queries,)

    Raises
    ------
    ValueError
        If ``kde`` is not fitted, ``lower`` is not finite, or some data lie below ``lower``.

    Examples
    --------
    >>> kde = KernelDensity(bandwidth=0.5).fit([0.1, 0.3, 1.0])
    >>> bool(reflected_pdf(kde, [0.0])[0] == 2 * kde.pdf([0.0])[0])
    True
    """
    q = kde._queries(x_query)
    lower = float(as_1d_float([lower], "lower")[0])
    if kde.data_.min() < lower:
        raise ValueError(f"the data go below lower={lower:g} (minimum {kde.data_.min():g}); "
                         "reflection assumes every point is at or above the boundary")
    inside = q >= lower
    out = np.zeros_like(q)
    if inside.any():
        out[inside] = kde.pdf(q[inside]) + kde.pdf(2.0 * lower - q[inside])
    return out
