r"""Fisher information, standard errors and Wald confidence intervals for maximum likelihood.

The chapter ``chapters/03_mle.md`` (section "How sure is the MLE?") derives everything here. For
:math:`N` i.i.d. observations the Fisher information is :math:`N` times the information of one,

.. math::

    I_N(\theta) = N\,I_1(\theta), \qquad
    I_1(\theta) = -\mathbb E\big[\nabla^2_\theta \log p(x\mid\theta)\big]
                = \operatorname{Cov}\big[\nabla_\theta \log p(x\mid\theta)\big],

and under regularity conditions the MLE is asymptotically normal,
:math:`\hat\theta \approx \mathcal N\big(\theta, I_N(\theta)^{-1}\big)`. Plugging in
:math:`\hat\theta` gives standard errors :math:`\sqrt{[I_N(\hat\theta)^{-1}]_{jj}}` and the Wald
interval :math:`\hat\theta_j \pm z_{1-\alpha/2}\,\mathrm{se}_j`.

Public API
----------
``bernoulli_fisher_information(theta, n)``
    :math:`N / (\theta(1-\theta))`, shape ``(1, 1)``.
``gaussian_fisher_information(sigma, n)``
    For :math:`(\mu, \sigma)`: :math:`\operatorname{diag}(N/\sigma^2, 2N/\sigma^2)`.
``gamma_fisher_information(shape, rate, n)``
    For :math:`(a, b)`: :math:`N\begin{pmatrix}\psi'(a) & -1/b\\ -1/b & a/b^2\end{pmatrix}`.
``wald_intervals(estimate, information, level=0.95) -> WaldIntervals``
    Standard errors and the Wald intervals from an estimate and its Fisher information.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from ._validation import as_1d_float, as_2d_float, check_int, check_positive

__all__ = [
    "WaldIntervals",
    "bernoulli_fisher_information",
    "gaussian_fisher_information",
    "gamma_fisher_information",
    "wald_intervals",
]


@dataclass(frozen=True)
class WaldIntervals:
    """Wald confidence intervals, one per parameter.

    Attributes
    ----------
    estimate : ndarray of shape (n_params,)
        The maximum-likelihood estimate :math:`\\hat\\theta`.
    standard_error : ndarray of shape (n_params,)
        :math:`\\sqrt{[I_N(\\hat\\theta)^{-1}]_{jj}}`.
    lower, upper : ndarray of shape (n_params,)
        :math:`\\hat\\theta_j \\mp z_{1-\\alpha/2}\\,\\mathrm{se}_j`.
    level : float
        The nominal coverage :math:`1 - \\alpha`.
    """

    estimate: np.ndarray
    standard_error: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float


def bernoulli_fisher_information(theta, n) -> np.ndarray:
    r"""Fisher information of :math:`N` Bernoulli flips about :math:`\theta`.

    .. math::

        I_N(\theta) = -\mathbb E\Big[\frac{\partial^2}{\partial\theta^2}\big(N_H\log\theta
        + N_T\log(1-\theta)\big)\Big] = \frac{N\theta}{\theta^2} + \frac{N(1-\theta)}{(1-\theta)^2}
        = \frac{N}{\theta(1-\theta)} .

    Parameters
    ----------
    theta : float
        Probability of heads, strictly between 0 and 1.
    n : int
        Number of flips :math:`N \ge 1`.

    Returns
    -------
    ndarray of shape (1, 1)

    Examples
    --------
    >>> bernoulli_fisher_information(0.5, 100)
    array([[400.]])
    """
    theta = check_positive(theta, "theta")
    if not theta < 1:
        raise ValueError(f"theta must be strictly between 0 and 1; got {theta!r}")
    n = check_int(n, "n")
    return np.array([[n / (theta * (1.0 - theta))]])


def gaussian_fisher_information(sigma, n) -> np.ndarray:
    r"""Fisher information of :math:`N` Gaussian observations about :math:`(\mu, \sigma)`.

    With :math:`\log p = -\log\sigma - (x-\mu)^2/(2\sigma^2) + \text{const}`, the second
    derivatives are :math:`-1/\sigma^2`, :math:`-2(x-\mu)/\sigma^3` and
    :math:`1/\sigma^2 - 3(x-\mu)^2/\sigma^4`; their expectations give

    .. math::

        I_N(\mu, \sigma) = N\begin{pmatrix} 1/\sigma^2 & 0 \\ 0 & 2/\sigma^2 \end{pmatrix}.

    The information does not depend on :math:`\mu`.

    Parameters
    ----------
    sigma : float
        Standard deviation, :math:`\sigma > 0`.
    n : int
        Number of observations :math:`N \ge 1`.

    Returns
    -------
    ndarray of shape (2, 2)
        Rows and columns ordered :math:`(\mu, \sigma)`.
    """
    sigma = check_positive(sigma, "sigma")
    n = check_int(n, "n")
    return n / sigma**2 * np.diag([1.0, 2.0])


def gamma_fisher_information(shape, rate, n) -> np.ndarray:
    r"""Fisher information of :math:`N` Gamma observations about (shape :math:`a`, rate :math:`b`).

    With :math:`\log p = a\log b - \log\Gamma(a) + (a-1)\log x - bx`, the second derivatives are
    :math:`-\psi'(a)`, :math:`1/b` and :math:`-a/b^2`, none depending on :math:`x`, so

    .. math::

        I_N(a, b) = N\begin{pmatrix} \psi'(a) & -1/b \\ -1/b & a/b^2 \end{pmatrix},

    with :math:`\psi'` the trigamma function.

    Parameters
    ----------
    shape, rate : float
        :math:`a > 0`, :math:`b > 0`.
    n : int
        Number of observations :math:`N \ge 1`.

    Returns
    -------
    ndarray of shape (2, 2)
        Rows and columns ordered (shape, rate).
    """
    a = check_positive(shape, "shape")
    b = check_positive(rate, "rate")
    n = check_int(n, "n")
    return n * np.array([[special.polygamma(1, a), -1.0 / b], [-1.0 / b, a / b**2]])


def wald_intervals(estimate, information, level: float = 0.95) -> WaldIntervals:
    r"""Standard errors and Wald intervals from an estimate and its Fisher information.

    .. math::

        \mathrm{se}_j = \sqrt{\big[I_N(\hat\theta)^{-1}\big]_{jj}}, \qquad
        \hat\theta_j \pm z_{(1+\text{level})/2}\;\mathrm{se}_j,

    where :math:`z_q` is the standard normal quantile (1.96 for a 95 % interval).

    Parameters
    ----------
    estimate : float or array_like of shape (n_params,)
        The MLE :math:`\hat\theta`.
    information : array_like of shape (n_params, n_params)
        The Fisher information at :math:`\hat\theta` (symmetric positive definite), e.g. from
        :func:`gamma_fisher_information`.
    level : float, default 0.95
        Nominal coverage, strictly between 0 and 1.

    Returns
    -------
    WaldIntervals

    Raises
    ------
    ValueError
        If the shapes disagree, ``information`` is not symmetric positive definite, or
        ``level`` is not in (0, 1).

    Examples
    --------
    >>> ci = wald_intervals(0.55, bernoulli_fisher_information(0.55, 100))
    >>> round(float(ci.standard_error[0]), 4), round(float(ci.lower[0]), 3), round(float(ci.upper[0]), 3)
    (0.0497, 0.452, 0.648)
    """
    theta = as_1d_float(np.atleast_1d(estimate), "estimate")
    info = as_2d_float(information, "information")
    if info.shape != (theta.size, theta.size):
        raise ValueError(f"information must have shape ({theta.size}, {theta.size}) to match "
                         f"estimate; got {info.shape}")
    if not np.allclose(info, info.T, rtol=1e-10, atol=0):
        raise ValueError("information must be symmetric")
    try:
        chol = np.linalg.cholesky(info)
    except np.linalg.LinAlgError:
        raise ValueError("information must be positive definite") from None
    level = check_positive(level, "level")
    if not level < 1:
        raise ValueError(f"level must be strictly between 0 and 1; got {level!r}")
    chol_inv = np.linalg.inv(chol)                      # I^-1 = L^-T L^-1
    se = np.sqrt(np.sum(chol_inv**2, axis=0))
    z = stats.norm.ppf(0.5 + level / 2)
    return WaldIntervals(theta, se, theta - z * se, theta + z * se, float(level))
