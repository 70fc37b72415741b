"""Tests for solutions/discriminant_analysis.py against independent oracles.

Oracles: scikit-learn's ``LinearDiscriminantAnalysis`` (lsqr solver: priors, means, the pooled
maximum-likelihood covariance, coef_, intercept_ and posteriors) and
``QuadraticDiscriminantAnalysis`` (covariances and posteriors), SciPy's ``multivariate_normal``
for the joint log-likelihood, and the invariant that LDA's log posterior is linear in x.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_breast_cancer, load_iris
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA

from solutions.discriminant_analysis import (
    LinearDiscriminantAnalysis,
    QuadraticDiscriminantAnalysis,
)


@pytest.fixture(scope="module", params=["cancer", "iris"])
def data(request):
    if request.param == "cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X = X[:, :6]
    else:
        X, y = load_iris(return_X_y=True)
        y = np.array(["setosa", "versicolor", "virginica"])[y]        # string labels
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y


def test_lda_matches_sklearn(data):
    X, y = data
    ours = LinearDiscriminantAnalysis().fit(X, y)
    sk = SkLDA(solver="lsqr").fit(X, y)
    np.testing.assert_array_equal(ours.classes_, sk.classes_)
    np.testing.assert_allclose(ours.priors_, sk.priors_)
    np.testing.assert_allclose(ours.means_, sk.means_, atol=1e-12)
    np.testing.assert_allclose(ours.covariance_, sk.covariance_, atol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), sk.predict_log_proba(X), atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))
    if len(ours.classes_) == 2:       # scikit-learn stores the difference of the two classes
        np.testing.assert_allclose(ours.coef_[1] - ours.coef_[0], sk.coef_[0], rtol=1e-8)
        np.testing.assert_allclose(ours.intercept_[1] - ours.intercept_[0], sk.intercept_[0],
                                   rtol=1e-8)
    else:
        np.testing.assert_allclose(ours.coef_, sk.coef_, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(ours.intercept_, sk.intercept_, rtol=1e-8)


def test_qda_matches_sklearn(data):
    X, y = data
    ours = QuadraticDiscriminantAnalysis().fit(X, y)
    sk = SkQDA(store_covariance=True, tol=1e-12).fit(X, y)
    np.testing.assert_allclose(ours.covariances_, np.array(sk.covariance_), atol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), sk.predict_log_proba(X), atol=1e-7)
    np.testing.assert_array_equal(ours.predict(X), sk.predict(X))


def test_joint_log_likelihood_is_the_gaussian_density(data):
    X, y = data
    for model in (LinearDiscriminantAnalysis().fit(X, y), QuadraticDiscriminantAnalysis().fit(X, y)):
        joint = model.predict_joint_log_proba(X[:50])
        for c in range(len(model.classes_)):
            cov = model.covariance_ if hasattr(model, "covariance_") else model.covariances_[c]
            oracle = np.log(model.priors_[c]) + stats.multivariate_normal(model.means_[c], cov).logpdf(X[:50])
            np.testing.assert_allclose(joint[:, c], oracle, rtol=1e-10)


def test_lda_scores_differ_from_joint_by_a_common_term(data):
    X, y = data
    lda = LinearDiscriminantAnalysis().fit(X, y)
    gap = lda.predict_joint_log_proba(X) - lda.decision_function(X)
    np.testing.assert_allclose(gap, gap[:, :1] * np.ones_like(gap), atol=1e-9)


def test_bad_input():
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="at least 2 classes"):
        LinearDiscriminantAnalysis().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="mismatched lengths"):
        QuadraticDiscriminantAnalysis().fit(X, np.arange(19) % 2)
    X_bad = X.copy()
    X_bad[:, 2] = 1.0                                        # constant feature
    with pytest.raises(ValueError, match="pooled within-class covariance is singular"):
        LinearDiscriminantAnalysis().fit(X_bad, np.arange(20) % 2)
    y = np.array([0] * 17 + [1] * 3)                         # class 1: 3 samples in 3 dimensions
    with pytest.raises(ValueError, match="covariance of class 1 is singular"):
        QuadraticDiscriminantAnalysis().fit(X, y)
    lda = LinearDiscriminantAnalysis().fit(X, np.arange(20) % 2)
    with pytest.raises(ValueError, match="X has 2 columns"):
        lda.predict(X[:, :2])
    with pytest.raises(ValueError, match="not fitted yet"):
        QuadraticDiscriminantAnalysis().predict(X)
    with pytest.raises(ValueError, match="NaN"):
        lda.predict_proba(np.full((1, 3), np.nan))
