"""The MAP in the log-odds parametrisation (solutions/map_estimation.py, chapter 4).

Oracles: a numerical maximisation (``scipy.optimize``) of the posterior density of the log-odds
built from SciPy's Beta density and the Jacobian; the posterior mean by numerical integration
(``scipy.integrate.quad``); scikit-learn's ``BernoulliNB`` additive smoothing as the posterior
predictive of naive Bayes.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats
from sklearn.naive_bayes import BernoulliNB as SkBernoulliNB

from solutions.map_estimation import (
    beta_bernoulli_log_odds_map,
    beta_bernoulli_map,
    beta_bernoulli_posterior_mean,
)
from solutions.naive_bayes import BernoulliNB

CASES = [(0, 17, 2, 2), (0, 17, 1, 1), (55, 45, 2, 2), (3, 9, 0.5, 0.5), (7, 0, 0.2, 3.0)]


def log_odds_mode_numerically(n1, n0, a, b):
    def neg_log_post(eta):
        t = special.expit(eta)
        return -(stats.beta.logpdf(t, n1 + a, n0 + b) + np.log(t) + np.log1p(-t))
    res = optimize.minimize_scalar(neg_log_post, bounds=(-20, 20), method="bounded",
                                   options={"xatol": 1e-11})
    return special.expit(res.x)


@pytest.mark.parametrize("n1,n0,a,b", CASES)
def test_log_odds_map_maximises_the_transformed_density(n1, n0, a, b):
    assert np.isclose(beta_bernoulli_log_odds_map(n1, n0, a, b),
                      log_odds_mode_numerically(n1, n0, a, b), atol=1e-7)


@pytest.mark.parametrize("n1,n0,a,b", CASES)
def test_log_odds_map_is_the_integrated_posterior_mean(n1, n0, a, b):
    mean = integrate.quad(lambda t: t * stats.beta.pdf(t, n1 + a, n0 + b), 0, 1)[0]
    assert np.isclose(beta_bernoulli_log_odds_map(n1, n0, a, b), mean, rtol=1e-8)


def test_differs_from_the_mode_in_theta():
    assert np.isclose(beta_bernoulli_map(0, 17, 2, 2), 1 / 19)
    assert np.isclose(beta_bernoulli_log_odds_map(0, 17, 2, 2), 2 / 21)
    # vectorised and broadcast like the other estimators
    out = beta_bernoulli_log_odds_map([0, 1, 5], 5, 2, 2)
    np.testing.assert_allclose(out, beta_bernoulli_posterior_mean([0, 1, 5], 5, 2, 2))
    assert out.shape == (3,)


def test_naive_bayes_predictive_is_sklearn_additive_smoothing():
    rng = np.random.default_rng(0)
    X = (rng.random((60, 12)) < 0.2).astype(float)
    y = rng.integers(0, 2, 60)
    X_new = (rng.random((40, 12)) < 0.3).astype(float)
    for a in (0.3, 1.0, 2.5):
        ours = BernoulliNB(alpha=a).fit(X, y).predict_log_proba(X_new)
        sk = SkBernoulliNB(alpha=a, force_alpha=True, binarize=None).fit(X, y).predict_log_proba(X_new)
        np.testing.assert_allclose(ours, sk, rtol=1e-10)


@pytest.mark.parametrize("args,match", [((-1, 3, 2, 2), "n_ones"), ((1, 3, 0, 2), "a"),
                                        ((1, np.nan, 2, 2), "n_zeros")])
def test_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        beta_bernoulli_log_odds_map(*args)
