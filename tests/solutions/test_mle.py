"""Tests for solutions.mle against closed forms, SciPy, numerical optimisation and invariants."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy.optimize import minimize
from scipy.special import digamma, softmax

from solutions.mle import (
    ConvergenceWarning,
    bernoulli_log_likelihood,
    bernoulli_mle,
    categorical_mle,
    gamma_log_likelihood,
    gamma_mle,
    gamma_score,
    gaussian_log_likelihood,
    gaussian_mle,
    poisson_log_likelihood,
    poisson_mle,
)

COIN = np.array([1] * 55 + [0] * 45)
TORONTO = np.array([-2.5, -9.9, -12.1, -8.9, -6.0, -4.8, 2.4])


# ------------------------------------------------------------------------------------------
# Bernoulli
# ------------------------------------------------------------------------------------------


def test_bernoulli_mle_coin():
    assert bernoulli_mle(COIN) == pytest.approx(0.55)
    assert bernoulli_mle(COIN.astype(bool)) == pytest.approx(0.55)
    assert bernoulli_mle(np.random.default_rng(0).permutation(COIN)) == pytest.approx(0.55)
    assert bernoulli_mle([0, 0, 0]) == 0.0
    assert bernoulli_mle([1]) == 1.0


def test_bernoulli_log_likelihood_closed_form_and_scipy():
    assert bernoulli_log_likelihood(0.5, COIN) == pytest.approx(100 * np.log(0.5))
    assert bernoulli_log_likelihood(0.5, COIN) == pytest.approx(-69.31, abs=5e-3)
    assert isinstance(bernoulli_log_likelihood(0.5, COIN), float)
    for theta in [0.01, 0.3, 0.55, 0.97]:
        expected = st.bernoulli.logpmf(COIN, theta).sum()
        assert bernoulli_log_likelihood(theta, COIN) == pytest.approx(expected, rel=1e-12)


def test_bernoulli_log_likelihood_vectorised_over_theta():
    grid = np.linspace(0.01, 0.99, 50).reshape(5, 10)
    ll = bernoulli_log_likelihood(grid, COIN)
    assert ll.shape == (5, 10)
    expected = st.bernoulli.logpmf(COIN[:, None, None], grid[None]).sum(axis=0)
    np.testing.assert_allclose(ll, expected, rtol=1e-12)


def test_bernoulli_mle_maximises_log_likelihood_on_a_fine_grid():
    grid = np.linspace(0, 1, 100_001)
    ll = bernoulli_log_likelihood(grid, COIN)
    assert grid[np.argmax(ll)] == pytest.approx(bernoulli_mle(COIN), abs=1e-5)
    assert np.all(ll <= bernoulli_log_likelihood(bernoulli_mle(COIN), COIN) + 1e-12)


def test_bernoulli_log_likelihood_derivative_zero_at_mle():
    theta, h = bernoulli_mle(COIN), 1e-6
    derivative = (bernoulli_log_likelihood(theta + h, COIN)
                  - bernoulli_log_likelihood(theta - h, COIN)) / (2 * h)
    assert abs(derivative) < 1e-5
    # ... and not zero elsewhere: N_H/theta - N_T/(1 - theta) at 0.5 is 55/0.5 - 45/0.5 = 20
    d_half = (bernoulli_log_likelihood(0.5 + h, COIN) - bernoulli_log_likelihood(0.5 - h, COIN)) / (2 * h)
    assert d_half == pytest.approx(20.0, rel=1e-6)


def test_bernoulli_log_likelihood_boundary_conventions():
    # 0 log 0 = 0: theta = 0 is certain for all-tails data, impossible once there is a head.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(bernoulli_log_likelihood([0.0, 1.0], [0, 0, 0]), [0.0, -np.inf])
        np.testing.assert_array_equal(bernoulli_log_likelihood([0.0, 1.0], [1, 1]), [-np.inf, 0.0])
        np.testing.assert_array_equal(bernoulli_log_likelihood([0.0, 1.0], COIN), [-np.inf, -np.inf])


@pytest.mark.parametrize(
    "x, match",
    [
        ([], "empty"),
        ([0, 1, np.nan], "NaN"),
        ([0, 1, 2], "only 0 and 1"),
        ([0, 0.5], "only 0 and 1"),
        ([[0, 1], [1, 0]], "1-D"),
        (["a", "b"], "numeric"),
    ],
)
def test_bernoulli_bad_x(x, match):
    with pytest.raises(ValueError, match=match):
        bernoulli_mle(x)
    with pytest.raises(ValueError, match=match):
        bernoulli_log_likelihood(0.5, x)


@pytest.mark.parametrize("theta, match", [(-0.1, r"\[0, 1\]"), (1.5, r"\[0, 1\]"),
                                          ([0.5, 2], r"\[0, 1\]"), (np.nan, "NaN")])
def test_bernoulli_log_likelihood_bad_theta(theta, match):
    with pytest.raises(ValueError, match=match):
        bernoulli_log_likelihood(theta, COIN)


# ------------------------------------------------------------------------------------------
# Gaussian
# ------------------------------------------------------------------------------------------


def test_gaussian_mle_matches_scipy_norm_fit():
    rng = np.random.default_rng(1)
    for seed_x in [rng.normal(3, 2, 20), rng.normal(-1e3, 1e-2, 500), TORONTO]:
        mu, sigma = gaussian_mle(seed_x)
        loc, scale = st.norm.fit(seed_x)
        assert mu == pytest.approx(loc, rel=1e-12)
        assert sigma == pytest.approx(scale, rel=1e-9)


def test_gaussian_mle_toronto_uses_one_over_n():
    mu, sigma = gaussian_mle(TORONTO)
    n = TORONTO.size
    assert mu == pytest.approx(sum(TORONTO.tolist()) / n)
    assert sigma == pytest.approx(np.std(TORONTO, ddof=0))
    assert sigma != pytest.approx(np.std(TORONTO, ddof=1))
    assert sigma == pytest.approx(np.std(TORONTO, ddof=1) * np.sqrt((n - 1) / n))
    assert isinstance(mu, float) and isinstance(sigma, float)
    # a column vector is accepted
    assert gaussian_mle(TORONTO[:, None]) == pytest.approx((mu, sigma))


def test_gaussian_log_likelihood_matches_scipy():
    assert gaussian_log_likelihood(TORONTO, -6.0, 5.0) == pytest.approx(
        st.norm.logpdf(TORONTO, -6.0, 5.0).sum(), rel=1e-12
    )
    assert isinstance(gaussian_log_likelihood(TORONTO, -6.0, 5.0), float)
    mus = np.linspace(-15, 5, 41)
    sigmas = np.array([0.5, 2.0, 5.0, 20.0])
    ll = gaussian_log_likelihood(TORONTO, mus[:, None], sigmas[None, :])
    assert ll.shape == (41, 4)
    expected = st.norm.logpdf(TORONTO[:, None, None], mus[None, :, None], sigmas[None, None, :]).sum(axis=0)
    np.testing.assert_allclose(ll, expected, rtol=1e-11)


def test_gaussian_known_sigma_grid_argmax_is_the_mean():
    grid = np.linspace(-15, 5, 200_001)
    ll = gaussian_log_likelihood(TORONTO, grid, 5.0)
    assert grid[np.argmax(ll)] == pytest.approx(TORONTO.mean(), abs=1e-4)


def test_gaussian_gradient_zero_at_joint_mle():
    mu, sigma = gaussian_mle(TORONTO)
    h = 1e-6
    d_mu = (gaussian_log_likelihood(TORONTO, mu + h, sigma)
            - gaussian_log_likelihood(TORONTO, mu - h, sigma)) / (2 * h)
    d_sigma = (gaussian_log_likelihood(TORONTO, mu, sigma + h)
               - gaussian_log_likelihood(TORONTO, mu, sigma - h)) / (2 * h)
    assert abs(d_mu) < 1e-6 and abs(d_sigma) < 1e-6
    # the joint MLE beats nearby points
    for dm, ds in [(0.1, 0), (-0.1, 0), (0, 0.1), (0, -0.1)]:
        assert gaussian_log_likelihood(TORONTO, mu + dm, sigma + ds) < \
            gaussian_log_likelihood(TORONTO, mu, sigma)


@settings(max_examples=40, deadline=None)
@given(
    seed=hst.integers(0, 2**32 - 1),
    n=hst.integers(2, 50),
    c=hst.floats(0.01, 100) | hst.floats(-100, -0.01),
    d=hst.floats(-1e3, 1e3),
)
def test_gaussian_mle_affine_equivariance(seed, n, c, d):
    x = np.random.default_rng(seed).normal(size=n)
    mu, sigma = gaussian_mle(x)
    mu2, sigma2 = gaussian_mle(c * x + d)
    assert mu2 == pytest.approx(c * mu + d, rel=1e-9, abs=1e-9 * (abs(d) + abs(c)))
    assert sigma2 == pytest.approx(abs(c) * sigma, rel=1e-7)


@pytest.mark.parametrize(
    "x, match",
    [([], "empty"), ([1.0, np.inf], "NaN or infinite"), (np.ones((3, 2)), "1-D"),
     ([2.0, 2.0, 2.0], "all equal"), ([4.2], "all equal")],
)
def test_gaussian_mle_bad_x(x, match):
    with pytest.raises(ValueError, match=match):
        gaussian_mle(x)


@pytest.mark.parametrize(
    "mu, sigma, match",
    [
        (0.0, 0.0, "sigma must be > 0"),
        (0.0, -1.0, "sigma must be > 0"),
        (0.0, [1.0, -1.0], "sigma must be > 0"),
        (0.0, np.nan, "sigma contains"),
        (np.nan, 1.0, "mu contains"),
        ([0.0, 1.0, 2.0], [1.0, 2.0], "broadcast"),
    ],
)
def test_gaussian_log_likelihood_bad_parameters(mu, sigma, match):
    with pytest.raises(ValueError, match=match):
        gaussian_log_likelihood(TORONTO, mu, sigma)


def test_gaussian_log_likelihood_bad_x():
    with pytest.raises(ValueError, match="empty"):
        gaussian_log_likelihood([], 0.0, 1.0)


# ------------------------------------------------------------------------------------------
# Categorical
# ------------------------------------------------------------------------------------------


def test_categorical_mle_matches_bincount():
    x = np.random.default_rng(2).integers(0, 5, size=300)
    np.testing.assert_allclose(categorical_mle(x, 5), np.bincount(x, minlength=5) / 300)
    theta = categorical_mle([0, 2, 2, 1, 2], n_categories=4)
    np.testing.assert_allclose(theta, [0.2, 0.2, 0.6, 0.0])
    assert theta.shape == (4,)
    # integer-valued floats are labels too
    np.testing.assert_allclose(categorical_mle(np.array([0.0, 1.0, 1.0]), 2), [1 / 3, 2 / 3])


def test_categorical_mle_is_the_constrained_maximiser():
    """Lagrange check: maximise sum_k z_k log theta_k over the simplex numerically."""
    x = np.random.default_rng(3).choice(4, size=200, p=[0.1, 0.2, 0.3, 0.4])
    z = np.bincount(x, minlength=4)

    def nll(w):
        return -np.sum(z * np.log(softmax(w)))

    res = minimize(nll, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    np.testing.assert_allclose(categorical_mle(x, 4), softmax(res.x), atol=1e-6)


@pytest.mark.parametrize(
    "x, k, match",
    [
        ([0, 1.5], 3, "integer"),
        ([0, 3], 3, r"0\.\.2"),
        ([-1, 0], 3, r"0\.\.2"),
        ([], 3, "empty"),
        ([0, np.nan], 3, "NaN"),
        ([0, 1], 0, "n_categories"),
        ([0, 1], 2.0, "n_categories"),
        ([0, 1], True, "n_categories"),
    ],
)
def test_categorical_mle_errors(x, k, match):
    with pytest.raises(ValueError, match=match):
        categorical_mle(x, k)


# ------------------------------------------------------------------------------------------
# Gamma
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed, shape, scale, n", [(0, 0.3, 2.0, 100), (1, 1.0, 1.0, 30),
                                                   (2, 2.5, 0.1, 500), (3, 8.0, 10.0, 50),
                                                   (4, 60.0, 0.01, 200)])
def test_gamma_mle_matches_scipy_fit(seed, shape, scale, n):
    x = np.random.default_rng(seed).gamma(shape, scale, size=n)
    a, b = gamma_mle(x)
    a_ref, loc, scale_ref = st.gamma.fit(x, floc=0)
    assert loc == 0
    assert a == pytest.approx(a_ref, rel=1e-6)
    assert b == pytest.approx(1 / scale_ref, rel=1e-6)
    # the closed-form rate given the shape
    assert b == pytest.approx(a / x.mean(), rel=1e-12)


def test_gamma_mle_gradient_zero_and_maximum():
    x = np.random.default_rng(5).gamma(3.0, 2.0, size=80)
    a, b = gamma_mle(x)
    score = gamma_score(x, a, b)
    assert score.shape == (2,)
    # relative to the size of the terms that cancel
    assert abs(score[0]) < 1e-8 * np.abs(np.log(x)).sum()
    assert abs(score[1]) < 1e-8 * x.sum()
    best = gamma_log_likelihood(x, a, b)
    for da, db in [(1e-3, 0), (-1e-3, 0), (0, 1e-3), (0, -1e-3), (1e-3, 1e-3)]:
        assert gamma_log_likelihood(x, a * (1 + da), b * (1 + db)) < best


def test_gamma_log_likelihood_matches_scipy():
    x = np.random.default_rng(6).gamma(2.0, 1.5, size=40)
    for a, b in [(0.5, 0.1), (2.0, 1 / 1.5), (30.0, 7.0)]:
        ll = gamma_log_likelihood(x, a, b)
        assert isinstance(ll, float)
        assert ll == pytest.approx(st.gamma.logpdf(x, a, scale=1 / b).sum(), rel=1e-11)
    shapes = np.array([0.5, 1.0, 2.0])[:, None]
    rates = np.array([0.2, 1.0, 3.0, 9.0])[None, :]
    grid = gamma_log_likelihood(x, shapes, rates)
    assert grid.shape == (3, 4)
    expected = st.gamma.logpdf(x[:, None, None], shapes[None], scale=1 / rates[None]).sum(axis=0)
    np.testing.assert_allclose(grid, expected, rtol=1e-11)


@pytest.mark.parametrize("a, b", [(0.7, 0.3), (2.0, 1.0), (15.0, 4.0)])
def test_gamma_score_matches_finite_differences(a, b):
    x = np.random.default_rng(7).gamma(2.0, 1.0, size=25)
    h = 1e-6
    fd_a = (gamma_log_likelihood(x, a + h, b) - gamma_log_likelihood(x, a - h, b)) / (2 * h)
    fd_b = (gamma_log_likelihood(x, a, b + h) - gamma_log_likelihood(x, a, b - h)) / (2 * h)
    np.testing.assert_allclose(gamma_score(x, a, b), [fd_a, fd_b], rtol=1e-6, atol=1e-6)


def test_gamma_score_broadcasts():
    x = np.array([0.5, 1.0, 4.0])
    shapes = np.array([1.0, 2.0])[:, None]
    rates = np.array([0.5, 1.0, 2.0])
    score = gamma_score(x, shapes, rates)
    assert score.shape == (2, 3, 2)
    # direct formulas with an independent digamma evaluation: d/da log b^a/Gamma(a) = log b - psi(a)
    n = x.size
    np.testing.assert_allclose(score[..., 0], n * (np.log(rates) - digamma(shapes)) + np.log(x).sum())
    np.testing.assert_allclose(score[..., 1], n * shapes / rates - x.sum())


def test_gamma_mle_history():
    x = np.random.default_rng(8).gamma(1.7, 3.0, size=60)
    a, b, hist = gamma_mle(x, return_history=True)
    s = np.log(x.mean()) - np.log(x).mean()
    a0 = (3 - s + np.sqrt((s - 3) ** 2 + 24 * s)) / (12 * s)  # Minka (2002)
    assert hist["shape"][0] == pytest.approx(a0, rel=1e-12)
    assert hist["shape"][-1] == a and hist["rate"][-1] == pytest.approx(b)
    assert 2 <= hist["shape"].size <= 8  # Newton from a good start converges in a few steps
    assert hist["shape"].shape == hist["rate"].shape == hist["log_likelihood"].shape
    np.testing.assert_allclose(
        hist["log_likelihood"],
        [st.gamma.logpdf(x, ai, scale=1 / bi).sum() for ai, bi in zip(hist["shape"], hist["rate"])],
        rtol=1e-11
    )
    assert np.all(np.diff(hist["log_likelihood"][1:]) >= -1e-9)
    # the same estimate with and without the history
    assert gamma_mle(x) == (a, b)


def test_gamma_mle_warns_when_max_iter_is_too_small():
    x = np.random.default_rng(9).gamma(0.4, 1.0, size=50)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        a, b = gamma_mle(x, max_iter=1, tol=1e-300)
    assert a == pytest.approx(st.gamma.fit(x, floc=0)[0], rel=1e-2)


def test_gamma_mle_large_shape_nearly_constant_data():
    # shape ~ 1e6: log a - psi(a) ~ 5e-7 must not be lost to cancellation
    x = np.random.default_rng(10).gamma(1e6, 1e-6, size=1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b = gamma_mle(x)
    a_ref, _, scale_ref = st.gamma.fit(x, floc=0)
    assert a == pytest.approx(a_ref, rel=1e-5)
    assert b == pytest.approx(1 / scale_ref, rel=1e-5)
    score = gamma_score(x, a, b)
    assert abs(score[1]) < 1e-8 * x.sum()


@pytest.mark.parametrize("factor", [0.01, 50.0, 1e4])
def test_gamma_mle_newton_safeguard_from_a_poor_start(monkeypatch, factor):
    """Started far from the root (right of it, Newton would leave a > 0), the iteration still converges."""
    import solutions.mle as mle_module

    x = np.random.default_rng(11).gamma(2.0, 1.0, size=100)
    a_ref = st.gamma.fit(x, floc=0)[0]
    monkeypatch.setattr(mle_module, "_minka_initial_shape", lambda s: factor * a_ref)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a, b, hist = gamma_mle(x, return_history=True)
    assert hist["shape"][0] == pytest.approx(factor * a_ref)
    assert np.all(hist["shape"] > 0)
    assert a == pytest.approx(a_ref, rel=1e-6)


def test_gamma_mle_with_values_far_below_the_mean():
    # A small shape gives values below eps times the mean (here 2e-18): log(x / mean) must not be
    # computed as log1p(x / mean - 1) = log1p(-1) = -inf there.
    x = np.random.default_rng(154).gamma(0.203125, 1.0, size=77)
    assert x.min() / x.mean() < np.finfo(float).eps
    a, b = gamma_mle(x)
    a_ref, _, scale_ref = st.gamma.fit(x, floc=0)
    assert a == pytest.approx(a_ref, rel=1e-7)
    assert b == pytest.approx(1 / scale_ref, rel=1e-7)


@settings(max_examples=40, deadline=None)
@given(
    seed=hst.integers(0, 2**32 - 1),
    shape=hst.floats(0.2, 50.0),
    n=hst.integers(5, 200),
    c=hst.floats(1e-3, 1e3),
)
def test_gamma_mle_scale_equivariance(seed, shape, n, c):
    x = np.random.default_rng(seed).gamma(shape, 1.0, size=n)
    a, b = gamma_mle(x)
    a_c, b_c = gamma_mle(c * x)
    assert a_c == pytest.approx(a, rel=1e-8)
    assert b_c == pytest.approx(b / c, rel=1e-8)


@pytest.mark.parametrize(
    "x, kwargs, match",
    [
        ([1.0, 0.0, 2.0], {}, "strictly positive"),
        ([1.0, -2.0], {}, "strictly positive"),
        ([3.0, 3.0, 3.0], {}, "all equal"),
        ([3.0], {}, "all equal"),
        ([1.0, np.nextafter(1.0, 2.0)], {}, "too close together"),
        ([], {}, "empty"),
        ([1.0, np.nan], {}, "NaN"),
        ([1.0, 2.0], {"tol": 0.0}, "tol"),
        ([1.0, 2.0], {"max_iter": 0}, "max_iter"),
        ([1.0, 2.0], {"max_iter": 2.5}, "max_iter"),
    ],
)
def test_gamma_mle_errors(x, kwargs, match):
    with pytest.raises(ValueError, match=match):
        gamma_mle(x, **kwargs)


@pytest.mark.parametrize("func", [gamma_log_likelihood, gamma_score])
@pytest.mark.parametrize(
    "x, a, b, match",
    [
        ([1.0, 0.0], 1.0, 1.0, "strictly positive"),
        ([1.0, 2.0], 0.0, 1.0, "shape must be > 0"),
        ([1.0, 2.0], 1.0, -1.0, "rate must be > 0"),
        ([1.0, 2.0], [1.0, 2.0], [1.0, 2.0, 3.0], "broadcast"),
        ([1.0, 2.0], np.inf, 1.0, "shape contains"),
    ],
)
def test_gamma_likelihood_and_score_errors(func, x, a, b, match):
    with pytest.raises(ValueError, match=match):
        func(x, a, b)


# ------------------------------------------------------------------------------------------
# Poisson
# ------------------------------------------------------------------------------------------


def test_poisson_log_likelihood_matches_scipy():
    x = np.random.default_rng(0).poisson(3.2, size=40)
    lam = np.array([0.5, 3.0, 7.25])
    expected = [st.poisson(m).logpmf(x).sum() for m in lam]
    np.testing.assert_allclose(poisson_log_likelihood(lam, x), expected, rtol=1e-12)
    assert isinstance(poisson_log_likelihood(2.0, x), float)


def test_poisson_mle_maximises_the_scipy_log_likelihood():
    x = np.random.default_rng(1).poisson(0.7, size=25)
    lam_hat = poisson_mle(x)
    best = minimize(lambda m: -st.poisson(m[0]).logpmf(x).sum(), [2.0],
                    bounds=[(1e-9, None)]).x[0]
    assert lam_hat == pytest.approx(best, rel=1e-5)
    assert lam_hat == pytest.approx(np.mean(x), rel=1e-15)


def test_poisson_boundary_rate_zero():
    assert poisson_log_likelihood(0.0, [0, 0, 0]) == 0.0
    assert poisson_log_likelihood(0.0, [0, 1]) == -np.inf
    assert poisson_mle([0, 0]) == 0.0


@pytest.mark.parametrize("x", [[1.5, 2], [-1, 2], []])
def test_poisson_bad_counts(x):
    with pytest.raises(ValueError):
        poisson_mle(x)
    with pytest.raises(ValueError):
        poisson_log_likelihood(1.0, x)
