"""Tests for solutions.naive_bayes.MultinomialNB (the multinomial event model, chapter 6).

Oracles: scikit-learn's ``MultinomialNB`` (smoothed log-probabilities and posteriors, on the real
review counts and on random counts), SciPy's multinomial distribution for the full class-conditional
likelihood (which differs from the returned joint only by a term common to all classes), and the
closed form of the smoothed estimate.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

import coursedata
from solutions.naive_bayes import MultinomialNB


@pytest.fixture(scope="module")
def review_counts():
    d = coursedata.load_reviews(binary=False)
    return d.X, d.y


@pytest.mark.parametrize("alpha", [0.1, 1.0, 3.0])
def test_matches_sklearn_on_review_counts(review_counts, alpha):
    X, y = review_counts
    tr, te = np.arange(0, 4000, 2), np.arange(1, 4000, 2)
    ours = MultinomialNB(alpha=alpha).fit(X[tr], y[tr])
    sk = SkMultinomialNB(alpha=alpha, force_alpha=True).fit(X[tr], y[tr])
    np.testing.assert_allclose(ours.feature_log_prob_, sk.feature_log_prob_, rtol=1e-12)
    np.testing.assert_allclose(ours.class_log_prior_, sk.class_log_prior_)
    np.testing.assert_allclose(ours.predict_log_proba(X[te]), sk.predict_log_proba(X[te]),
                               atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X[te]), sk.predict(X[te]))


def test_smoothed_estimate_and_dense_input():
    rng = np.random.default_rng(0)
    X = rng.poisson(1.5, size=(40, 7))
    y = rng.choice(["a", "b", "c"], size=40)
    clf = MultinomialNB(alpha=0.5).fit(X, y)
    for k, c in enumerate(clf.classes_):
        T = X[y == c].sum(axis=0)
        np.testing.assert_allclose(np.exp(clf.feature_log_prob_[k]), (T + 0.5) / (T.sum() + 7 * 0.5))
    np.testing.assert_allclose(clf.predict_proba(X), clf.fit(sp.csr_matrix(X), y).predict_proba(X))


def test_joint_differs_from_the_full_multinomial_by_a_class_free_term():
    rng = np.random.default_rng(1)
    X = rng.poisson(2.0, size=(30, 5))
    y = rng.integers(0, 2, 30)
    clf = MultinomialNB(alpha=1.0).fit(X, y)
    full = np.column_stack([
        clf.class_log_prior_[k] + stats.multinomial.logpmf(X, X.sum(axis=1), np.exp(clf.feature_log_prob_[k]))
        for k in range(2)])
    gap = full - clf.predict_joint_log_proba(X)
    np.testing.assert_allclose(gap[:, 0], gap[:, 1], atol=1e-9)


def test_bad_input():
    X = np.array([[1, 2], [0, 3], [2, 2]])
    with pytest.raises(ValueError, match="non-negative counts"):
        MultinomialNB().fit(-X, [0, 1, 0])
    with pytest.raises(ValueError, match="alpha must be finite and > 0"):
        MultinomialNB(alpha=0).fit(X, [0, 1, 0])
    with pytest.raises(ValueError, match="single class"):
        MultinomialNB().fit(X, [1, 1, 1])
    with pytest.raises(ValueError, match="not fitted"):
        MultinomialNB().predict(X)
