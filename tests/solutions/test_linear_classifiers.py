"""Tests of solutions.linear_classifiers against SciPy, scikit-learn, finite differences and invariants."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import check_grad
from scipy.stats import norm
from sklearn import datasets, linear_model
from sklearn import naive_bayes as sknb
from sklearn.preprocessing import StandardScaler

from solutions.linear_classifiers import (
    ConvergenceWarning,
    LogisticRegression,
    SharedVarianceGaussianNB,
    log_softmax,
    softmax,
    softmax_cross_entropy,
)


@pytest.fixture(scope="module")
def wine_std():
    X, y = datasets.load_wine(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def cancer_std():
    X, y = datasets.load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


# ---------------------------------------------------------------------------- softmax
def test_softmax_matches_scipy():
    Z = np.random.default_rng(0).normal(scale=10, size=(20, 5))
    np.testing.assert_allclose(softmax(Z), scipy.special.softmax(Z, axis=-1), rtol=1e-13)
    np.testing.assert_allclose(softmax(Z, axis=0), scipy.special.softmax(Z, axis=0), rtol=1e-13)
    np.testing.assert_allclose(log_softmax(Z), scipy.special.log_softmax(Z, axis=-1),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(softmax(Z).sum(axis=1), 1.0, rtol=1e-14)


def test_softmax_is_stable_for_huge_logits():
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        np.testing.assert_array_equal(softmax(np.array([1000.0, -1000.0])), [1.0, 0.0])
        np.testing.assert_array_equal(softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
        np.testing.assert_array_equal(softmax(np.array([-1000.0, -1000.0])), [0.5, 0.5])
        np.testing.assert_array_equal(log_softmax(np.array([1000.0, -1000.0])), [0.0, -2000.0])
        np.testing.assert_allclose(softmax(np.array([[1000.0, 999.0]])),
                                   [[1 / (1 + np.exp(-1)), 1 / (1 + np.exp(1))]], rtol=1e-14)


def test_softmax_allows_minus_infinity_entries():
    P = softmax(np.array([[0.0, -np.inf, 0.0], [-np.inf, 3.0, -np.inf]]))
    np.testing.assert_array_equal(P, [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]])


@settings(max_examples=50, deadline=None)
@given(
    Z=arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 6)),
             elements=st.floats(-700, 700)),
    shift=arrays(np.float64, 6, elements=st.floats(-1e3, 1e3)),
)
def test_softmax_invariant_to_a_constant_per_row(Z, shift):
    c = shift[: Z.shape[0], None]
    np.testing.assert_allclose(softmax(Z + c), softmax(Z), atol=1e-12)
    np.testing.assert_allclose(softmax(Z).sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(log_softmax(Z + c), log_softmax(Z), atol=1e-9)


def test_softmax_value_errors():
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        softmax(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        log_softmax(np.array([0.0, np.inf]))
    with pytest.raises(ValueError, match="all -inf"):
        softmax(np.array([[0.0, 1.0], [-np.inf, -np.inf]]))
    with pytest.raises(ValueError, match="scalar"):
        softmax(3.0)
    with pytest.raises(ValueError, match="empty along axis"):
        softmax(np.zeros((3, 0)))


# ---------------------------------------------------------------------------- shared variance NB
@pytest.mark.parametrize("loader", [datasets.load_iris, datasets.load_wine])
def test_shared_variance_nb_is_a_softmax_of_linear_scores(loader):
    X, y = loader(return_X_y=True)
    clf = SharedVarianceGaussianNB().fit(X, y)
    Z = X @ clf.coef_.T + clf.intercept_
    np.testing.assert_allclose(clf.decision_function(X), Z, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_proba(X), scipy.special.softmax(Z, axis=1), rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(Z, axis=1))


def test_shared_variance_nb_by_hand():
    X, y = datasets.load_iris(return_X_y=True)
    N, D = X.shape
    clf = SharedVarianceGaussianNB().fit(X, y)
    mu = np.vstack([X[y == c].mean(axis=0) for c in range(3)])
    var = sum(((X[y == c] - mu[c]) ** 2).sum() for c in range(3)) / (N * D)
    np.testing.assert_allclose(clf.theta_, mu, rtol=1e-13)
    assert clf.var_ == pytest.approx(var, rel=1e-13)
    assert clf.sigma_ == pytest.approx(np.sqrt(var), rel=1e-13)
    N_c = np.bincount(y)
    np.testing.assert_allclose(clf.coef_, mu / var, rtol=1e-13)
    np.testing.assert_allclose(clf.intercept_, np.log(N_c) - (mu ** 2).sum(axis=1) / (2 * var), rtol=1e-13)
    # generative model with every variance equal: the joint by scipy.stats.norm
    jll = np.log(N_c / N) + np.stack(
        [norm.logpdf(X, mu[c], np.sqrt(var)).sum(axis=1) for c in range(3)], axis=1)
    np.testing.assert_allclose(clf.predict_joint_log_proba(X), jll, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_log_proba(X), scipy.special.log_softmax(jll, axis=1),
                               rtol=1e-9, atol=1e-9)


def test_shared_variance_nb_equals_sklearn_gaussian_nb_with_variances_forced_equal():
    X, y = datasets.load_wine(return_X_y=True)
    ours = SharedVarianceGaussianNB(sigma=3.0).fit(X, y)
    assert ours.var_ == 9.0 and ours.sigma_ == 3.0
    ref = sknb.GaussianNB().fit(X, y)
    ref.var_ = np.full_like(ref.var_, 9.0)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ours.predict_proba(X), softmax(ours.decision_function(X)), atol=1e-12)


def test_shared_variance_nb_value_errors():
    X, y = datasets.load_iris(return_X_y=True)
    for bad in (0.0, -1.0, np.nan, "big"):
        with pytest.raises(ValueError, match="sigma must be"):
            SharedVarianceGaussianNB(sigma=bad).fit(X, y)
    with pytest.raises(ValueError, match="not fitted"):
        SharedVarianceGaussianNB().decision_function(X)
    with pytest.raises(ValueError, match="pooled within-class variance is 0"):
        SharedVarianceGaussianNB().fit(np.repeat([[0.0], [1.0]], 3, axis=0), np.repeat([0, 1], 3))
    clf = SharedVarianceGaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="X has 2 columns, but this SharedVarianceGaussianNB has "
                                         "n_features_in_=4"):
        clf.decision_function(X[:, :2])
    with pytest.raises(ValueError, match="single class"):
        SharedVarianceGaussianNB().fit(X, np.zeros(len(y)))


# ---------------------------------------------------------------------------- loss and gradient
def _flat(C, D):
    def unpack(p):
        return p[: C * D].reshape(C, D), p[C * D:]
    return unpack


@pytest.mark.parametrize("reg", [0.0, 0.7])
def test_gradient_matches_finite_differences(wine_std, reg):
    X, y = wine_std
    X = X[::4]
    y = y[::4]
    C, D = 3, X.shape[1]
    Y = np.eye(C)[y]
    unpack = _flat(C, D)

    def f(p):
        return softmax_cross_entropy(*unpack(p), X, Y, reg)[0]

    def g(p):
        gW, gb = softmax_cross_entropy(*unpack(p), X, Y, reg)[1]
        return np.concatenate([gW.ravel(), gb])

    rng = np.random.default_rng(4)
    for _ in range(3):
        p0 = rng.normal(scale=0.5, size=C * (D + 1))
        assert check_grad(f, g, p0, epsilon=1e-6) < 1e-5 * max(1.0, np.linalg.norm(g(p0)))


def test_loss_by_hand():
    X = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]])
    y = np.array([0, 2, 1])
    W = np.array([[0.1, -0.2], [0.3, 0.0], [-0.5, 0.4]])
    b = np.array([0.2, -0.1, 0.0])
    Z = X @ W.T + b
    expected = -sum(Z[n, y[n]] - np.log(np.exp(Z[n]).sum()) for n in range(3)) + 0.25 * (W ** 2).sum()
    loss, (gW, gb) = softmax_cross_entropy(W, b, X, np.eye(3)[y], reg=0.5)
    assert loss == pytest.approx(expected, rel=1e-13)
    loss0, _ = softmax_cross_entropy(np.zeros((3, 2)), np.zeros(3), X, np.eye(3)[y])
    assert loss0 == pytest.approx(3 * np.log(3), rel=1e-14)


# ---------------------------------------------------------------------------- logistic regression
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_logistic_multiclass_matches_sklearn(wine_std, C):
    X, y = wine_std
    ours = LogisticRegression(reg=1.0 / C, tol=1e-8).fit(X, y)
    ref = linear_model.LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-4 * max(1.0, np.abs(ref.coef_).max()))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.intercept_ - ours.intercept_.mean(),
                               ref.intercept_ - ref.intercept_.mean(), atol=1e-4)


@pytest.mark.parametrize("C", [0.05, 1.0])
def test_logistic_binary_matches_sklearn(cancer_std, C):
    X, y = cancer_std
    labels = np.array(["benign", "malignant"])[1 - y]  # string labels, sorted order reversed
    ours = LogisticRegression(reg=2.0 / C, tol=1e-8).fit(X, labels)
    ref = linear_model.LogisticRegression(C=C, tol=1e-12, max_iter=10_000).fit(X, labels)
    assert ours.coef_.shape == (2, X.shape[1])
    np.testing.assert_allclose(ours.coef_[0], -ours.coef_[1], atol=1e-6)  # symmetric solution
    np.testing.assert_allclose(ours.coef_[1] - ours.coef_[0], ref.coef_[0], atol=1e-4)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_array_equal(ours.classes_, ["benign", "malignant"])


def test_logistic_optimum_has_zero_gradient_and_lower_loss(wine_std):
    X, y = wine_std
    reg = 0.3
    clf = LogisticRegression(reg=reg, tol=1e-8).fit(X, y)
    Y = np.eye(3)[y]
    loss, (gW, gb) = softmax_cross_entropy(clf.coef_, clf.intercept_, X, Y, reg)
    assert loss == pytest.approx(clf.loss_, rel=1e-10)
    assert np.abs(gW).max() < 1e-6 * len(y) and np.abs(gb).max() < 1e-6 * len(y)
    loss0, _ = softmax_cross_entropy(np.zeros_like(clf.coef_), np.zeros(3), X, Y, reg)
    assert loss < loss0
    rng = np.random.default_rng(5)
    for _ in range(5):  # a strictly convex objective: every nearby point is worse
        dW = rng.normal(scale=1e-2, size=clf.coef_.shape)
        assert softmax_cross_entropy(clf.coef_ + dW, clf.intercept_, X, Y, reg)[0] > loss
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(clf.predict_proba(X)), atol=1e-12)
    assert clf.score(X, y) > 0.95 and clf.n_iter_ > 0


def test_logistic_generative_and_discriminative_agree_on_gaussian_data():
    """With data from the shared-variance model both fits estimate the same posterior."""
    rng = np.random.default_rng(6)
    mu = np.array([[0.0, 0.0], [2.0, 1.0]])
    y = rng.integers(0, 2, 4000)
    X = mu[y] + rng.normal(size=(4000, 2))
    gen = SharedVarianceGaussianNB().fit(X, y)
    disc = LogisticRegression(reg=1e-6).fit(X, y)
    # the log-odds w_1 - w_0 agree within sampling error (true value mu_1 - mu_0 = [2, 1])
    np.testing.assert_allclose(disc.coef_[1] - disc.coef_[0], gen.coef_[1] - gen.coef_[0], rtol=0.15)
    np.testing.assert_allclose(gen.coef_[1] - gen.coef_[0], [2.0, 1.0], rtol=0.1)
    np.testing.assert_allclose(disc.predict_proba(X), gen.predict_proba(X), atol=0.1)


def test_logistic_convergence_warning(wine_std):
    X, y = wine_std
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        LogisticRegression(max_iter=1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LogisticRegression().fit(X, y)


def test_logistic_value_errors(wine_std):
    X, y = wine_std
    with pytest.raises(ValueError, match="reg must be finite and >= 0"):
        LogisticRegression(reg=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="tol must be finite and > 0"):
        LogisticRegression(tol=0).fit(X, y)
    for bad in (0, 2.5, True):
        with pytest.raises(ValueError, match="max_iter must be an integer >= 1"):
            LogisticRegression(max_iter=bad).fit(X, y)
    with pytest.raises(ValueError, match="not fitted"):
        LogisticRegression().predict(X)
    with pytest.raises(ValueError, match="single class"):
        LogisticRegression().fit(X, np.ones(len(y)))
    with pytest.raises(ValueError, match="mismatched lengths"):
        LogisticRegression().fit(X, y[:-1])
    bad = X.copy()
    bad[3, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LogisticRegression().fit(bad, y)
    with pytest.raises(ValueError, match="2-D"):
        LogisticRegression().fit(X[:, 0], y)
    clf = LogisticRegression().fit(X, y)
    with pytest.raises(ValueError,
                       match="X has 4 columns, but this LogisticRegression has n_features_in_=13"):
        clf.predict_proba(X[:, :4])
    with pytest.raises(ValueError, match="mismatched lengths"):
        clf.score(X, y[:-1])


def test_softmax_cross_entropy_value_errors():
    X = np.ones((4, 2))
    Y = np.eye(3)[[0, 1, 2, 0]]
    W, b = np.zeros((3, 2)), np.zeros(3)
    with pytest.raises(ValueError, match="W must have shape"):
        softmax_cross_entropy(np.zeros((2, 2)), b, X, Y)
    with pytest.raises(ValueError, match="b must have shape"):
        softmax_cross_entropy(W, np.zeros(2), X, Y)
    with pytest.raises(ValueError, match="mismatched lengths"):
        softmax_cross_entropy(W, b, X, Y[:3])
    with pytest.raises(ValueError, match="reg must be finite and >= 0"):
        softmax_cross_entropy(W, b, X, Y, reg=-0.1)


def test_l2_penalty_splits_the_weight_of_copied_columns_evenly():
    """Ten copies of a column under the penalty (lambda/2)||W||^2 give each copy s/10, and the fit is
    the one-copy fit with that column times sqrt(10), total weight s = sqrt(10) u (ps6, Q8)."""
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.4).astype(int)
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, -0.5]])[y] + rng.standard_normal((300, 3))
    copied = LogisticRegression(reg=1.0, tol=1e-10, max_iter=5000).fit(
        np.column_stack([X] + [X[:, [0]]] * 9), y)
    X_scaled = X * np.array([np.sqrt(10), 1.0, 1.0])
    scaled = LogisticRegression(reg=1.0, tol=1e-10, max_iter=5000).fit(X_scaled, y)
    one = LogisticRegression(reg=1.0, tol=1e-10, max_iter=5000).fit(X, y)
    w, u, w_one = (m.coef_[1] - m.coef_[0] for m in (copied, scaled, one))
    copies = w[[0, *range(3, 12)]]
    assert np.allclose(copies, copies[0], rtol=1e-6)                    # an even split
    assert np.isclose(copies.sum(), np.sqrt(10) * u[0], rtol=1e-5)     # s = sqrt(10) u
    assert np.allclose(w[1:3], u[1:], rtol=1e-5)
    assert abs(copies.sum()) > abs(w_one[0])                           # less shrinkage here
