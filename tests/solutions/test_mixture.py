"""Tests for solutions.mixture (a 1-D Gaussian mixture fitted by EM).

Oracles: scikit-learn's GaussianMixture started from the same parameters, SciPy's normal density,
numerical integration, the EM fixed-point equations and the monotone log-likelihood.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from coursedata import load_faithful
from solutions.mixture import (
    ConvergenceWarning,
    GaussianMixture,
    em,
    fit_mixture,
    m_step,
    responsibilities,
)


def two_groups(n=500, seed=0):
    rng = np.random.default_rng(seed)
    first = rng.random(n) < 0.3
    return np.where(first, rng.normal(0.0, 1.0, n), rng.normal(5.0, 1.0, n))


@pytest.fixture(scope="module")
def eruptions():
    return load_faithful().X[:, 0]


def test_matches_sklearn_from_the_same_start(eruptions):
    w0, m0, v0 = np.array([0.5, 0.5]), np.array([2.0, 4.0]), np.array([1.0, 1.0])
    ours = GaussianMixture(2, tol=1e-12, max_iter=5000).fit(
        eruptions, weights_init=w0, means_init=m0, variances_init=v0)
    ref = SkGaussianMixture(2, tol=1e-12, max_iter=5000, weights_init=w0,
                            means_init=m0[:, None], precisions_init=(1 / v0)[:, None, None],
                            covariance_type="full").fit(eruptions[:, None])
    assert ours.converged_ and ref.converged_
    np.testing.assert_allclose(ours.weights_, ref.weights_, rtol=1e-6)
    np.testing.assert_allclose(ours.means_, ref.means_.ravel(), rtol=1e-6)
    np.testing.assert_allclose(ours.variances_, ref.covariances_.ravel(), rtol=1e-5)
    np.testing.assert_allclose(ours.score_samples(eruptions), ref.score_samples(eruptions[:, None]),
                               rtol=1e-6)
    np.testing.assert_allclose(ours.predict_proba(eruptions), ref.predict_proba(eruptions[:, None]),
                               atol=1e-6)


def test_score_samples_is_the_mixture_of_normal_densities():
    x = two_groups()
    gmm = GaussianMixture(2).fit(x)
    q = np.linspace(-4, 9, 57)
    expected = np.sum(gmm.weights_ * stats.norm.pdf(q[:, None], gmm.means_,
                                                     np.sqrt(gmm.variances_)), axis=1)
    np.testing.assert_allclose(gmm.pdf(q), expected, rtol=1e-12)
    assert gmm.score(q) == pytest.approx(np.log(expected).sum(), rel=1e-12)


def test_log_density_stays_finite_far_in_the_tails():
    gmm = GaussianMixture(2).fit(two_groups())
    far = np.array([-1e4, 1e4])
    assert np.all(gmm.pdf(far) == 0.0)  # underflows...
    assert np.all(np.isfinite(gmm.score_samples(far)))  # ...but the log does not
    assert np.allclose(gmm.predict_proba(far).sum(axis=1), 1.0)


def test_density_integrates_to_one():
    gmm = GaussianMixture(3).fit(two_groups())
    total, _ = integrate.quad(lambda t: gmm.pdf([t])[0], -np.inf, np.inf, limit=200)
    assert total == pytest.approx(1.0, abs=1e-8)


def test_fitted_parameters_satisfy_the_em_fixed_point():
    x = two_groups()
    gmm = GaussianMixture(2, tol=1e-14, max_iter=5000, reg_var=0.0).fit(x)
    r = gmm.predict_proba(x)
    Nk = r.sum(axis=0)
    np.testing.assert_allclose(gmm.weights_, Nk / x.size, rtol=1e-6)
    np.testing.assert_allclose(gmm.means_, r.T @ x / Nk, rtol=1e-6)
    np.testing.assert_allclose(gmm.variances_, (r * (x[:, None] - gmm.means_) ** 2).sum(0) / Nk,
                               rtol=1e-6)


def test_recovers_a_well_separated_mixture():
    gmm = GaussianMixture(2).fit(two_groups(n=20_000, seed=1))
    order = np.argsort(gmm.means_)
    np.testing.assert_allclose(gmm.means_[order], [0.0, 5.0], atol=0.05)
    np.testing.assert_allclose(gmm.weights_[order], [0.3, 0.7], atol=0.02)
    np.testing.assert_allclose(gmm.variances_[order], [1.0, 1.0], atol=0.06)
    np.testing.assert_array_equal(gmm.predict([-1.0, 6.0]), order[[0, 1]])


def test_history_ends_at_the_final_log_likelihood():
    x = two_groups()
    gmm = GaussianMixture(2).fit(x)
    assert gmm.log_likelihood_history_.shape == (gmm.n_iter_ + 1,)
    assert gmm.log_likelihood_ == pytest.approx(gmm.score(x), rel=1e-12)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        capped = GaussianMixture(2, max_iter=2, tol=0.0).fit(x)
    assert capped.n_iter_ == 2 and not capped.converged_


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(1, 4), init=st.sampled_from(["quantiles", "random"]))
def test_em_never_decreases_the_log_likelihood(seed, K, init):
    rng = np.random.default_rng(seed)
    x = np.concatenate([rng.normal(rng.normal(0, 5), rng.uniform(0.3, 3), size=rng.integers(5, 60))
                        for _ in range(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # only the climb matters here
        gmm = GaussianMixture(K, reg_var=0.0, max_iter=60, init=init, random_state=seed).fit(x)
    steps = np.diff(gmm.log_likelihood_history_)
    assert np.all(steps >= -1e-9 * np.abs(gmm.log_likelihood_history_[1:]))


def test_one_component_is_the_gaussian_mle():
    x = two_groups()
    gmm = GaussianMixture(1, reg_var=0.0).fit(x)
    assert gmm.means_[0] == pytest.approx(x.mean(), rel=1e-12)
    assert gmm.variances_[0] == pytest.approx(x.var(), rel=1e-12)
    assert gmm.weights_[0] == pytest.approx(1.0)


def test_random_init_is_reproducible():
    x = two_groups()
    a = GaussianMixture(3, init="random", random_state=4).fit(x)
    b = GaussianMixture(3, init="random", random_state=4).fit(x)
    np.testing.assert_array_equal(a.means_, b.means_)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_components=0), "n_components must be an integer >= 1"),
    (dict(n_components=2.5), "n_components must be an integer >= 1"),
    (dict(max_iter=0), "max_iter must be an integer >= 1"),
    (dict(tol=-1.0), "tol"),
    (dict(reg_var=np.nan), "reg_var"),
    (dict(init="kmeans"), "unknown init"),
])
def test_rejects_bad_hyperparameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        GaussianMixture(**kwargs).fit(two_groups())


def test_rejects_bad_data_and_starts():
    with pytest.raises(ValueError, match="NaN or infinite"):
        GaussianMixture(2).fit([1.0, np.nan, 3.0])
    with pytest.raises(ValueError, match="must be 1-D"):
        GaussianMixture(2).fit(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="more than the 2 distinct value"):
        GaussianMixture(3).fit([1.0, 1.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"means_init must have shape \(2,\)"):
        GaussianMixture(2).fit(two_groups(), means_init=[0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="weights_init must be positive and sum to 1"):
        GaussianMixture(2).fit(two_groups(), weights_init=[0.7, 0.7])
    with pytest.raises(ValueError, match="variances_init must be positive"):
        GaussianMixture(2).fit(two_groups(), variances_init=[1.0, 0.0])


def test_collapse_without_regularisation_is_reported():
    x = np.array([0.0, 0.0, 0.0, 10.0])  # one component ends on the single point 10
    with pytest.raises(ValueError, match="collapsed onto a single point"):
        GaussianMixture(2, reg_var=0.0).fit(x, means_init=[0.0, 10.0])


def test_methods_before_fit():
    with pytest.raises(ValueError, match="not fitted"):
        GaussianMixture(2).score_samples([0.0])


# ---------------------------------------------------------------------------------------------
# The public E-step, M-step and EM loop (the references of problem set 7)
# ---------------------------------------------------------------------------------------------

START = dict(weights=np.array([0.3, 0.7]), means=np.array([2.0, 4.0]),
             variances=np.array([0.5, 0.8]))


def _sk_one_step(x, weights, means, variances):
    """scikit-learn's GaussianMixture after one EM iteration from the given start (no variance
    floor): its initial E-step, then one M-step."""
    sk = SkGaussianMixture(len(means), max_iter=1, tol=0.0, reg_covar=0.0,
                           covariance_type="full", weights_init=weights,
                           means_init=means[:, None],
                           precisions_init=(1 / variances)[:, None, None])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns that one iteration did not converge
        sk.fit(x[:, None])
    return sk.weights_, sk.means_.ravel(), sk.covariances_.ravel()


def test_responsibilities_are_bayes_rule_with_normal_densities(eruptions):
    joint = START["weights"] * stats.norm.pdf(eruptions[:, None], START["means"],
                                              np.sqrt(START["variances"]))
    resp, ll = responsibilities(eruptions, **START)
    assert resp.shape == (eruptions.size, 2)
    np.testing.assert_allclose(resp, joint / joint.sum(axis=1, keepdims=True), rtol=1e-12)
    assert ll == pytest.approx(np.log(joint.sum(axis=1)).sum(), rel=1e-13)


def test_responsibilities_stay_finite_where_every_density_underflows():
    x = np.array([-60.0, 0.5, 80.0])          # exp(-0.5 * 60**2 / 0.5) is 0 in floating point
    start = dict(weights=np.array([0.5, 0.5]), means=np.array([0.0, 1.0]),
                 variances=np.array([0.5, 0.5]))
    with np.errstate(all="ignore"):
        naive = stats.norm.pdf(x[:, None], start["means"], np.sqrt(start["variances"]))
        assert np.isnan(naive / naive.sum(axis=1, keepdims=True)).any()
    resp, ll = responsibilities(x, **start)
    assert np.all(np.isfinite(resp)) and np.allclose(resp.sum(axis=1), 1)
    log_joint = np.log(0.5) + stats.norm.logpdf(x[:, None], start["means"],
                                                np.sqrt(start["variances"]))
    log_px = np.logaddexp(log_joint[:, 0], log_joint[:, 1])
    np.testing.assert_allclose(resp, np.exp(log_joint - log_px[:, None]), rtol=1e-9, atol=0)
    assert ll == pytest.approx(log_px.sum(), rel=1e-13)


def test_one_em_step_matches_sklearn(eruptions):
    resp, _ = responsibilities(eruptions, **START)
    for ours, theirs in zip(m_step(eruptions, resp), _sk_one_step(eruptions, **START)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    w, m, v, history = em(eruptions, **START, n_iter=1)
    for ours, theirs in zip((w, m, v), _sk_one_step(eruptions, **START)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10)
    assert history.shape == (2,)
    assert history[1] == pytest.approx(responsibilities(eruptions, w, m, v)[1], rel=1e-14)


def test_em_history_never_decreases_and_fit_mixture_is_sklearns_fit(eruptions):
    _, _, _, history = em(eruptions, **START, n_iter=60)
    assert history.shape == (61,) and np.all(np.diff(history) >= -1e-9 * abs(history[-1]))
    w, m, v, ll = fit_mixture(eruptions, **START, tol=1e-13, max_iter=5000)
    sk = SkGaussianMixture(2, tol=1e-12, max_iter=5000, reg_covar=0.0,
                           weights_init=START["weights"], means_init=START["means"][:, None],
                           precisions_init=(1 / START["variances"])[:, None, None]).fit(
        eruptions[:, None])
    np.testing.assert_allclose(m, sk.means_.ravel(), rtol=1e-6)
    np.testing.assert_allclose(w, sk.weights_, rtol=1e-6)
    np.testing.assert_allclose(v, sk.covariances_.ravel(), rtol=1e-5)
    assert ll == pytest.approx(sk.score(eruptions[:, None]) * eruptions.size, rel=1e-9)


def test_m_step_of_hard_assignments_is_each_groups_mle():
    x = np.array([0.0, 1.0, 2.0, 10.0, 14.0])
    resp = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1]], dtype=float)
    w, m, v = m_step(x, resp)
    np.testing.assert_allclose(w, [0.6, 0.4])
    np.testing.assert_allclose(m, [1.0, 12.0])
    np.testing.assert_allclose(v, [np.var([0, 1, 2]), np.var([10, 14])])


def test_em_rejects_a_negative_number_of_iterations():
    with pytest.raises(ValueError, match="n_iter"):
        em([0.0, 1.0, 2.0], [0.5, 0.5], [0.0, 2.0], [1.0, 1.0], n_iter=-1)
