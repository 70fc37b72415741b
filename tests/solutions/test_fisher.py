"""Tests for solutions/fisher.py against independent oracles.

Oracles: the variance of the score and minus the expected Hessian, both computed from SciPy's own
log-densities (``scipy.stats``) by finite differences and expected by exact enumeration (Bernoulli)
or numerical integration (``scipy.integrate.quad``); ``scipy.stats.norm.interval`` and
``numpy.linalg.inv`` for the intervals; and the coverage of the intervals by simulation.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from solutions.fisher import (
    WaldIntervals,
    bernoulli_fisher_information,
    gamma_fisher_information,
    gaussian_fisher_information,
    wald_intervals,
)
from solutions.mle import gamma_mle

H = 1e-4


def score_fd(logpdf, x, params):
    """Gradient of logpdf(x, *params) in params by central differences (relative steps)."""
    params = np.asarray(params, dtype=float)
    grad = []
    for j in range(params.size):
        step = H * max(1.0, abs(params[j]))
        up, down = params.copy(), params.copy()
        up[j] += step
        down[j] -= step
        grad.append((logpdf(x, *up) - logpdf(x, *down)) / (2 * step))
    return np.array(grad)


def expected_outer_score(logpdf, pdf, params, lo, hi):
    """E[s s^T] by numerical integration of the finite-difference score against the density."""
    k = len(params)
    out = np.empty((k, k))
    for i in range(k):
        for j in range(k):
            out[i, j] = integrate.quad(
                lambda x, i=i, j=j: score_fd(logpdf, x, params)[i] * score_fd(logpdf, x, params)[j]
                * pdf(x, *params), lo, hi, limit=200)[0]
    return out


@pytest.mark.parametrize("theta", [0.1, 0.55, 0.9])
def test_bernoulli_information_is_the_variance_of_the_score(theta):
    logpmf = lambda x, t: stats.bernoulli.logpmf(x, t)           # noqa: E731
    var_score = sum(stats.bernoulli.pmf(x, theta) * score_fd(logpmf, x, [theta])[0] ** 2
                    for x in (0, 1))
    np.testing.assert_allclose(bernoulli_fisher_information(theta, 37), [[37 * var_score]],
                               rtol=1e-6)


def test_gaussian_information_matches_integrated_score():
    mu, sigma = -6.0, 4.5
    logpdf = lambda x, m, s: stats.norm.logpdf(x, m, s)          # noqa: E731
    pdf = lambda x, m, s: stats.norm.pdf(x, m, s)                # noqa: E731
    oracle = expected_outer_score(logpdf, pdf, [mu, sigma], mu - 12 * sigma, mu + 12 * sigma)
    np.testing.assert_allclose(gaussian_fisher_information(sigma, 7), 7 * oracle, rtol=1e-5,
                               atol=1e-8)


@pytest.mark.parametrize("shape,rate", [(25.1, 0.354), (1.0, 2.0), (3.5, 0.7)])
def test_gamma_information_matches_integrated_score_and_hessian(shape, rate):
    logpdf = lambda x, a, b: stats.gamma.logpdf(x, a, scale=1 / b)   # noqa: E731
    pdf = lambda x, a, b: stats.gamma.pdf(x, a, scale=1 / b)         # noqa: E731
    hi = stats.gamma.ppf(1 - 1e-13, shape, scale=1 / rate)
    oracle = expected_outer_score(logpdf, pdf, [shape, rate], 0, hi)
    ours = gamma_fisher_information(shape, rate, 10)
    np.testing.assert_allclose(ours, 10 * oracle, rtol=1e-4)
    # the Gamma Hessian does not depend on x: minus the finite-difference Hessian at any x
    x0 = shape / rate
    hess = np.empty((2, 2))
    for j in range(2):
        step = H * [shape, rate][j]
        up, down = np.array([shape, rate]), np.array([shape, rate])
        up[j] += step
        down[j] -= step
        hess[:, j] = (score_fd(logpdf, x0, up) - score_fd(logpdf, x0, down)) / (2 * step)
    np.testing.assert_allclose(-hess * 10, ours, rtol=1e-4)


def test_wald_interval_scalar_matches_scipy():
    ci = wald_intervals(0.55, bernoulli_fisher_information(0.55, 100), level=0.9)
    assert isinstance(ci, WaldIntervals) and ci.level == 0.9
    se = np.sqrt(0.55 * 0.45 / 100)
    np.testing.assert_allclose(ci.standard_error, [se])
    np.testing.assert_allclose([ci.lower[0], ci.upper[0]], stats.norm.interval(0.9, 0.55, se))


def test_wald_interval_matrix_uses_the_inverse():
    info = gamma_fisher_information(25.1, 0.354, 272)
    ci = wald_intervals([25.1, 0.354], info)
    np.testing.assert_allclose(ci.standard_error, np.sqrt(np.diag(np.linalg.inv(info))), rtol=1e-10)
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(ci.upper - ci.lower, 2 * z * ci.standard_error)


def test_gamma_shape_interval_covers_about_95_percent():
    rng = np.random.default_rng(0)
    a0, b0, n, reps = 4.0, 0.5, 300, 400
    hits = 0
    for _ in range(reps):
        a, b = gamma_mle(rng.gamma(a0, 1 / b0, size=n))
        ci = wald_intervals([a, b], gamma_fisher_information(a, b, n))
        hits += ci.lower[0] <= a0 <= ci.upper[0]
    # binomial standard error of the coverage at 400 repetitions is about 0.011
    assert abs(hits / reps - 0.95) < 0.035


@pytest.mark.parametrize("call,match", [
    (lambda: bernoulli_fisher_information(1.0, 10), "theta must be strictly between 0 and 1"),
    (lambda: bernoulli_fisher_information(0.0, 10), "theta must be finite and > 0"),
    (lambda: bernoulli_fisher_information(0.5, 0), "n must be an integer >= 1"),
    (lambda: gaussian_fisher_information(-1.0, 5), "sigma must be finite and > 0"),
    (lambda: gamma_fisher_information(2.0, np.nan, 5), "rate must be finite and > 0"),
    (lambda: wald_intervals([1.0, 2.0], [[1.0]]), "information must have shape \\(2, 2\\)"),
    (lambda: wald_intervals([1.0, 2.0], [[1.0, 2.0], [0.0, 1.0]]), "must be symmetric"),
    (lambda: wald_intervals([1.0, 2.0], [[1.0, 2.0], [2.0, 1.0]]), "positive definite"),
    (lambda: wald_intervals(1.0, [[1.0]], level=1.0), "level must be strictly between 0 and 1"),
    (lambda: wald_intervals(np.nan, [[1.0]]), "estimate contains 1 NaN"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
