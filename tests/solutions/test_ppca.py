"""Tests for solutions/ppca.py against independent oracles.

Oracles: scikit-learn's ``PCA.score`` / ``score_samples`` / ``get_covariance`` / ``noise_variance_``
(the probabilistic-PCA likelihood, with variances of divisor N - 1, so the data are shrunk by
sqrt((N - 1)/N) to put them on the lecture's divisor N), SciPy's ``multivariate_normal`` (the full
D x D Gaussian), NumPy's ``eigh`` of the covariance for the closed form, the Gaussian conditioning
formula for the posterior mean, scikit-learn's ``FactorAnalysis`` (which nests the model), and
numerical perturbation for maximality.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SkPCA
from sklearn.decomposition import FactorAnalysis

from solutions.ppca import ConvergenceWarning, ProbabilisticPCA


def make_data(n=300, d=8, k=3, noise=0.5, seed=0):
    """Samples of the PPCA model itself: x = W z + mu + eps with isotropic noise."""
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(d, k)) * np.geomspace(4.0, 1.5, k)
    return rng.normal(size=(n, k)) @ W.T + rng.normal(size=d) * 3 + noise * rng.normal(size=(n, d))


def sklearn_on_divisor_n(X, k):
    """scikit-learn's PCA fitted so that its variances use the divisor N (the MLE's)."""
    n = len(X)
    mean = X.mean(axis=0)
    return SkPCA(n_components=k, svd_solver="full").fit(mean + (X - mean) * np.sqrt((n - 1) / n))


@pytest.fixture(scope="module")
def digits():
    X = load_digits().data.astype(float)
    X = X + np.random.default_rng(0).uniform(size=X.shape)       # dequantised, as in the chapter
    return X[::2], X[1::2]


# --------------------------------------------------------------------------- closed form
@pytest.mark.parametrize("shape,k", [((300, 8), 3), ((300, 8), 7), ((80, 60), 12), ((500, 5), 1)])
def test_closed_form_matches_sklearn_score(shape, k):
    X = make_data(*shape, seed=1)
    X_new = make_data(*shape, seed=2)
    ours = ProbabilisticPCA(n_components=k).fit(X)
    sk = sklearn_on_divisor_n(X, k)
    np.testing.assert_allclose(ours.score(X_new), sk.score(X_new), rtol=1e-10)
    np.testing.assert_allclose(ours.score_samples(X_new), sk.score_samples(X_new), rtol=1e-10)
    np.testing.assert_allclose(ours.get_covariance(), sk.get_covariance(), atol=1e-10)
    np.testing.assert_allclose(ours.noise_variance_, sk.noise_variance_, rtol=1e-10)


def test_unshrunk_sklearn_differs_only_by_the_divisor():
    X = make_data(seed=3)
    n = len(X)
    ours = ProbabilisticPCA(3).fit(X)
    sk = SkPCA(3, svd_solver="full").fit(X)                        # divisor N - 1
    np.testing.assert_allclose(ours.get_covariance(), (n - 1) / n * sk.get_covariance(), atol=1e-10)


def test_closed_form_against_eigendecomposition(digits):
    X_fit, _ = digits
    k = 10
    lam, U = np.linalg.eigh(np.cov(X_fit, rowvar=False, bias=True))
    lam, U = lam[::-1], U[:, ::-1]
    ppca = ProbabilisticPCA(k).fit(X_fit)
    sigma2 = lam[k:].mean()                                          # average discarded variance
    np.testing.assert_allclose(ppca.noise_variance_, sigma2, rtol=1e-10)
    W = ppca.components_.T
    # W = U_K (Lambda_K - sigma^2 I)^(1/2) up to the sign of each column
    expected = U[:, :k] * np.sqrt(lam[:k] - sigma2)
    signs = np.sign(np.sum(W * expected, axis=0))
    np.testing.assert_allclose(W, expected * signs, atol=1e-8)
    np.testing.assert_allclose(ppca.mean_, X_fit.mean(axis=0))
    assert ppca.n_iter_ == 0 and ppca.log_likelihood_.shape == (1,)


def test_fewer_samples_than_features_averages_all_discarded_directions():
    """With N < D the covariance has D - N + 1 zero eigenvalues; the MLE averages them into sigma^2
    too, dividing by D - K (scikit-learn's noise_variance_ divides by min(N, D) - K instead)."""
    X = make_data(n=30, d=50, k=4, seed=8)
    lam = np.linalg.eigvalsh(np.cov(X, rowvar=False, bias=True))[::-1]
    ppca = ProbabilisticPCA(6).fit(X)
    np.testing.assert_allclose(ppca.noise_variance_, lam[6:].sum() / (50 - 6), rtol=1e-10)
    best = ppca.score(X)
    for factor in (0.99, 1.01):                                   # and it is the maximum in sigma^2
        ppca.noise_variance_ = lam[6:].sum() / 44 * factor
        assert ppca.score(X) < best


def test_score_samples_matches_scipy_full_gaussian(digits):
    X_fit, X_held = digits
    ppca = ProbabilisticPCA(20).fit(X_fit)
    C = ppca.components_.T @ ppca.components_ + ppca.noise_variance_ * np.eye(64)
    oracle = stats.multivariate_normal(X_fit.mean(axis=0), C).logpdf(X_held)
    np.testing.assert_allclose(ppca.score_samples(X_held), oracle, rtol=1e-10)
    np.testing.assert_allclose(ppca.get_covariance(), C)


def test_closed_form_is_a_maximum():
    X = make_data(seed=4)
    ppca = ProbabilisticPCA(3).fit(X)
    best = ppca.score(X)
    rng = np.random.default_rng(0)
    W, s2 = ppca.components_.copy(), ppca.noise_variance_
    for _ in range(20):
        ppca.components_ = W + 1e-3 * rng.normal(size=W.shape)
        assert ppca.score(X) < best
    ppca.components_ = W
    for factor in (0.99, 1.01):
        ppca.noise_variance_ = s2 * factor
        assert ppca.score(X) < best
    ppca.noise_variance_ = s2
    # rotating the latent space leaves the likelihood unchanged
    R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
    ppca.components_ = (W.T @ R).T
    np.testing.assert_allclose(ppca.score(X), best, rtol=1e-12)


def test_factor_analysis_nests_ppca_and_finds_the_same_subspace():
    """Factor analysis (diagonal noise) contains PPCA (isotropic noise): on data from the PPCA model
    its training likelihood is at least ours, and its loadings span nearly the same subspace."""
    X = make_data(n=4000, d=8, k=3, noise=0.5, seed=5)
    ours = ProbabilisticPCA(3).fit(X)
    fa = FactorAnalysis(n_components=3, tol=1e-8, max_iter=5000, random_state=0).fit(X)
    assert fa.score(X) >= ours.score(X) - 1e-6
    assert fa.score(X) - ours.score(X) < 0.01                     # isotropic truth: nearly equal

    def projector(W):
        Q = np.linalg.qr(W)[0]
        return Q @ Q.T

    P_ours, P_fa = projector(ours.components_.T), projector(fa.components_.T)
    assert np.linalg.norm(P_ours - P_fa, 2) < 0.05


def test_transform_is_the_gaussian_conditional_mean():
    X = make_data(seed=6)
    ppca = ProbabilisticPCA(3).fit(X)
    W, C = ppca.components_.T, ppca.get_covariance()
    # E[z | x] = Cov(z, x) Cov(x)^-1 (x - mu) = W^T C^-1 (x - mu)
    oracle = (W.T @ np.linalg.solve(C, (X - ppca.mean_).T)).T
    np.testing.assert_allclose(ppca.transform(X), oracle, atol=1e-10)


# --------------------------------------------------------------------------- EM
def test_em_reaches_the_closed_form(digits):
    X_fit, X_held = digits
    closed = ProbabilisticPCA(10).fit(X_fit)
    em = ProbabilisticPCA(10, method="em", tol=1e-10, random_state=0).fit(X_fit)
    assert np.all(np.diff(em.log_likelihood_) >= -1e-9)            # monotone
    assert em.n_iter_ == len(em.log_likelihood_) - 1 > 5
    np.testing.assert_allclose(em.score(X_held), closed.score(X_held), rtol=1e-6)
    np.testing.assert_allclose(em.noise_variance_, closed.noise_variance_, rtol=1e-5)
    We, Wc = em.components_.T, closed.components_.T
    np.testing.assert_allclose(We @ We.T, Wc @ Wc.T, atol=1e-3 * np.abs(Wc @ Wc.T).max())
    np.testing.assert_allclose(em.log_likelihood_[-1], em.score(X_fit), rtol=1e-12)


def test_em_is_reproducible_and_warns_when_stopped_early():
    X = make_data(seed=7)
    a = ProbabilisticPCA(3, method="em", tol=1e-6, random_state=3).fit(X)
    b = ProbabilisticPCA(3, method="em", tol=1e-6, random_state=np.random.default_rng(3)).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        ProbabilisticPCA(3, method="em", max_iter=2, random_state=0).fit(X)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("k,match", [(0, "n_components must be an integer >= 1"),
                                     (True, "n_components must be an integer"),
                                     (2.5, "n_components must be an integer"),
                                     (8, "must be below min\\(n_samples, n_features\\)=8")])
def test_bad_n_components(k, match):
    with pytest.raises(ValueError, match=match):
        ProbabilisticPCA(k).fit(make_data(d=8))


def test_bad_options_and_data():
    X = make_data()
    with pytest.raises(ValueError, match="unknown method 'pca'"):
        ProbabilisticPCA(2, method="pca").fit(X)
    with pytest.raises(ValueError, match="max_iter must be an integer >= 1"):
        ProbabilisticPCA(2, method="em", max_iter=0).fit(X)
    with pytest.raises(ValueError, match="tol must be finite and > 0"):
        ProbabilisticPCA(2, method="em", tol=-1).fit(X)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains 1 NaN"):
        ProbabilisticPCA(2).fit(bad)
    with pytest.raises(ValueError, match="at least 2 samples and 2 features"):
        ProbabilisticPCA(1).fit(X[:, :1])


def test_data_in_a_subspace_is_refused():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 2)) @ rng.normal(size=(2, 6))          # rank 2 exactly
    for method in ("closed_form", "em"):
        with pytest.raises(ValueError, match="leaves no variance for the noise"):
            ProbabilisticPCA(2, method=method, random_state=0).fit(X)
    assert ProbabilisticPCA(1).fit(X).noise_variance_ > 0


def test_unfitted_and_wrong_width():
    with pytest.raises(ValueError, match="not fitted yet"):
        ProbabilisticPCA(2).score(np.zeros((3, 4)))
    with pytest.raises(ValueError, match="not fitted yet"):
        ProbabilisticPCA(2).get_covariance()
    ppca = ProbabilisticPCA(2).fit(make_data())
    with pytest.raises(ValueError, match="X has 5 columns"):
        ppca.transform(np.zeros((3, 5)))
