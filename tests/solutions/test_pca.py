"""Tests for solutions/pca.py against independent oracles.

Oracles: scikit-learn's PCA, SciPy's singular values (``scipy.linalg.svdvals``), the Eckart--Young
closed form, closed-form singular values of a Läuchli matrix, and invariants (orthonormality,
ordering, rank, exact reconstruction at full rank).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_digits
from sklearn.decomposition import PCA as SkPCA

from solutions.pca import PCA, low_rank_approximation, truncated_svd


def make_data(n=200, d=8, seed=0):
    """Gaussian data with well-separated column scales (distinct singular values) and a non-zero mean."""
    rng = np.random.default_rng(seed)
    scales = np.geomspace(10.0, 0.5, d)
    mixing = np.linalg.qr(rng.normal(size=(d, d)))[0]  # rotate so components are not axis-aligned
    return rng.normal(size=(n, d)) * scales @ mixing.T + rng.normal(size=d) * 5


def align_rows(A, B):
    """Flip the rows of A to have non-negative inner product with the rows of B (sign ambiguity)."""
    signs = np.sign(np.sum(A * B, axis=1))
    return A * signs[:, None]


def dropped_ss(X, k):
    """Sum of the squared singular values beyond the k-th (SciPy oracle)."""
    s = scipy.linalg.svdvals(X)
    return float(np.sum(s[k:] ** 2))


# --------------------------------------------------------------------------- against scikit-learn
@pytest.mark.parametrize("solver", ["svd", "eig"])
@pytest.mark.parametrize("shape,k", [((200, 8), 3), ((200, 8), 8), ((30, 50), 10)])
def test_matches_sklearn(solver, shape, k):
    X = make_data(*shape, seed=1)
    ours = PCA(n_components=k, solver=solver).fit(X)
    sk = SkPCA(n_components=k, svd_solver="full").fit(X)

    np.testing.assert_allclose(ours.mean_, sk.mean_, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        align_rows(ours.components_, sk.components_), sk.components_, atol=1e-8
    )
    # explained_variance_ uses the divisor N - 1, exactly as scikit-learn does
    np.testing.assert_allclose(ours.explained_variance_, sk.explained_variance_, rtol=1e-9)
    np.testing.assert_allclose(
        ours.explained_variance_ratio_, sk.explained_variance_ratio_, rtol=1e-9
    )
    np.testing.assert_allclose(ours.singular_values_, sk.singular_values_, rtol=1e-9)

    Z_ours, Z_sk = ours.transform(X), sk.transform(X)
    np.testing.assert_allclose(align_rows(Z_ours.T, Z_sk.T).T, Z_sk, atol=1e-8)
    np.testing.assert_allclose(ours.inverse_transform(Z_ours), sk.inverse_transform(Z_sk), atol=1e-8)
    assert (ours.n_components_, ours.n_features_in_, ours.n_samples_) == (k, shape[1], shape[0])


def test_variance_conventions():
    """explained_variance_ = s^2/(N-1) (sklearn); lecture eigenvalues s^2/N of the 1/N covariance."""
    X = make_data(50, 4, seed=2)
    n = X.shape[0]
    pca = PCA(n_components=4).fit(X)
    lecture_cov = (X - X.mean(0)).T @ (X - X.mean(0)) / n
    lam = np.sort(scipy.linalg.eigvalsh(lecture_cov))[::-1]
    np.testing.assert_allclose(pca.singular_values_**2 / n, lam, rtol=1e-10)
    np.testing.assert_allclose(pca.explained_variance_ * (n - 1) / n, lam, rtol=1e-10)
    np.testing.assert_allclose(pca.explained_variance_, np.linalg.eigvalsh(np.cov(X.T))[::-1], rtol=1e-10)
    np.testing.assert_allclose(pca.explained_variance_ratio_.sum(), 1.0, rtol=1e-12)


def test_digits_real_data():
    X = load_digits().data  # (1797, 64), with constant zero pixels
    ours = PCA(n_components=10).fit(X)
    sk = SkPCA(n_components=10, svd_solver="full").fit(X)
    np.testing.assert_allclose(ours.explained_variance_ratio_, sk.explained_variance_ratio_, rtol=1e-8)
    np.testing.assert_allclose(align_rows(ours.components_, sk.components_), sk.components_, atol=1e-8)
    err = np.sum((X - ours.inverse_transform(ours.transform(X))) ** 2)
    np.testing.assert_allclose(err, dropped_ss(X - X.mean(0), 10), rtol=1e-8)
    with pytest.raises(ValueError, match=r"n_components=70 is larger than min\(n_samples, n_features\)=64"):
        PCA(n_components=70).fit(X)


# --------------------------------------------------------------------------- invariants
@pytest.mark.parametrize("shape,k", [((200, 8), 5), ((30, 50), 20)])
def test_solvers_agree_and_invariants(shape, k):
    X = make_data(*shape, seed=3)
    a = PCA(k, solver="svd").fit(X)
    b = PCA(k, solver="eig").fit(X)
    # Same deterministic sign rule on both routes: agreement without sign alignment.
    np.testing.assert_allclose(a.components_, b.components_, atol=1e-7)
    np.testing.assert_allclose(a.explained_variance_, b.explained_variance_, rtol=1e-8)
    np.testing.assert_allclose(a.fit_transform(X), b.fit_transform(X), atol=1e-7)
    for p in (a, b):
        np.testing.assert_allclose(p.components_ @ p.components_.T, np.eye(k), atol=1e-12)
        assert np.all(np.diff(p.explained_variance_) <= 0)
        # sign rule: the entry of largest |.| in each component is positive
        idx = np.argmax(np.abs(p.components_), axis=1)
        assert np.all(p.components_[np.arange(k), idx] > 0)


def test_fit_transform_equals_fit_then_transform_and_new_data():
    X = make_data(100, 6, seed=4)
    X_new = make_data(20, 6, seed=5)
    for solver in ("svd", "eig"):
        pca = PCA(3, solver=solver)
        Z = pca.fit_transform(X)
        np.testing.assert_allclose(Z, pca.transform(X), atol=1e-10)
        sk = SkPCA(3, svd_solver="full").fit(X)
        np.testing.assert_allclose(
            align_rows(pca.transform(X_new).T, sk.transform(X_new).T).T, sk.transform(X_new), atol=1e-8
        )


def test_fit_returns_self_and_accepts_lists():
    X = make_data(10, 3, seed=6)
    pca = PCA(2)
    assert pca.fit(X.tolist()) is pca
    assert pca.transform(X.tolist()).shape == (10, 2)


@pytest.mark.parametrize("solver", ["svd", "eig"])
@pytest.mark.parametrize("shape", [(40, 6), (6, 40)])
def test_full_rank_reconstruction_recovers_x(solver, shape):
    X = make_data(*shape, seed=7)
    pca = PCA(min(shape), solver=solver).fit(X)
    np.testing.assert_allclose(pca.inverse_transform(pca.transform(X)), X, atol=1e-8)
    np.testing.assert_allclose(low_rank_approximation(X, min(shape)), X, atol=1e-10)


def test_constant_data_gives_zero_ratio():
    X = np.ones((5, 3))
    pca = PCA(2).fit(X)
    np.testing.assert_array_equal(pca.explained_variance_ratio_, 0.0)
    np.testing.assert_array_equal(pca.explained_variance_, 0.0)
    np.testing.assert_allclose(pca.inverse_transform(pca.transform(X)), X)


# --------------------------------------------------------------------------- Eckart-Young
@pytest.mark.parametrize("k", [1, 3, 6])
def test_eckart_young_closed_form(k):
    X = make_data(60, 9, seed=8)
    Xk = low_rank_approximation(X, k)
    assert np.linalg.matrix_rank(Xk) == k
    np.testing.assert_allclose(np.linalg.norm(X - Xk), np.sqrt(dropped_ss(X, k)), rtol=1e-10)

    # PCA's squared reconstruction error = sum of dropped s^2 of the *centred* data
    for solver in ("svd", "eig"):
        pca = PCA(k, solver=solver).fit(X)
        err = np.sum((X - pca.inverse_transform(pca.transform(X))) ** 2)
        np.testing.assert_allclose(err, dropped_ss(X - X.mean(0), k), rtol=1e-8)


def test_truncated_svd_factors():
    X = make_data(30, 7, seed=9)
    Q, s, U = truncated_svd(X, 4)
    assert Q.shape == (30, 4) and s.shape == (4,) and U.shape == (7, 4)
    np.testing.assert_allclose(s, scipy.linalg.svdvals(X)[:4], rtol=1e-12)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(U.T @ U, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(X @ U, Q * s, atol=1e-10)  # X u_j = s_j q_j
    np.testing.assert_allclose((Q * s) @ U.T, low_rank_approximation(X, 4), atol=1e-12)
    # on centred data the right factor is exactly PCA's basis (same sign rule)
    Xc = X - X.mean(0)
    np.testing.assert_allclose(truncated_svd(Xc, 4)[2].T, PCA(4).fit(X).components_, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 12),
    d=st.integers(2, 12),
    data=st.data(),
)
def test_no_rank_k_matrix_beats_eckart_young(seed, n, d, data):
    k = data.draw(st.integers(1, min(n, d)), label="k")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    best = np.linalg.norm(X - low_rank_approximation(X, k))
    tol = 1e-9 * np.linalg.norm(X)
    np.testing.assert_allclose(best, np.sqrt(dropped_ss(X, k)), rtol=1e-9, atol=tol)

    # a random rank-k matrix
    B = rng.normal(size=(n, k)) @ rng.normal(size=(k, d))
    assert np.linalg.norm(X - B) >= best - tol
    # the best rank-k matrix within a random k-dim row space: X P P^T
    P = np.linalg.qr(rng.normal(size=(d, k)))[0]
    assert np.linalg.norm(X - X @ P @ P.T) >= best - tol
    # a small perturbation of the optimal factors
    Q, s, U = truncated_svd(X, k)
    B = (Q + 1e-3 * rng.normal(size=Q.shape)) * s @ (U + 1e-3 * rng.normal(size=U.shape)).T
    assert np.linalg.norm(X - B) >= best - tol


# --------------------------------------------------------------------------- numerical accuracy
def test_svd_route_beats_eig_route_on_lauchli():
    """Documents why "svd" is the default: forming X^T X squares the condition number.

    The centred data are the Läuchli matrix L = [1 1 1; eps I] stacked with -L (mean zero), whose
    singular values are sqrt(2) * (sqrt(3 + eps^2), eps, eps) in closed form. With eps = 1e-9,
    eps^2 = 1e-18 vanishes next to 1 in floating point, so the covariance route cannot see the two
    small singular values at all, while the SVD of the data keeps them to full relative accuracy.
    """
    eps = 1e-9
    L = np.vstack([np.ones((1, 3)), eps * np.eye(3)])
    X = np.vstack([L, -L])
    exact = np.sqrt(2.0) * np.array([np.sqrt(3.0 + eps**2), eps, eps])

    svd = PCA(3, solver="svd").fit(X).singular_values_
    eig = PCA(3, solver="eig").fit(X).singular_values_
    rel_svd = np.abs(svd - exact) / exact
    rel_eig = np.abs(eig - exact) / exact
    assert np.all(rel_svd < 1e-10)
    assert rel_eig[0] < 1e-10  # the large one is fine on both routes
    assert np.max(rel_eig[1:]) > 0.5  # the small ones are lost (wrong magnitude or zero)


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "X,match",
    [
        (np.ones(5), "must be 2-D"),
        (np.ones((3, 4, 2)), "must be 2-D"),
        (np.array([[1.0, np.nan], [2.0, 3.0]]), "NaN or infinite"),
        (np.array([[1.0, np.inf], [2.0, 3.0]]), "NaN or infinite"),
        (np.zeros((0, 3)), "empty"),
        (np.ones((1, 3)), "at least 2 samples"),
    ],
)
def test_fit_rejects_bad_x(X, match):
    with pytest.raises(ValueError, match=match):
        PCA(1).fit(X)


@pytest.mark.parametrize(
    "n_components,match",
    [
        (0, "n_components=0 must be at least 1"),
        (-2, "n_components=-2 must be at least 1"),
        (7, r"n_components=7 is larger than min\(n_samples, n_features\)=4"),
        (2.5, "n_components must be an int"),
        (2.0, "n_components must be an int"),
        ("2", "n_components must be an int"),
        (None, "n_components must be an int"),
        (True, "n_components must be an int"),
    ],
)
def test_fit_rejects_bad_n_components(n_components, match):
    with pytest.raises(ValueError, match=match):
        PCA(n_components).fit(make_data(10, 4))


def test_numpy_integer_n_components_accepted():
    assert PCA(np.int64(2)).fit(make_data(10, 4)).n_components_ == 2


def test_unknown_solver():
    with pytest.raises(ValueError, match="unknown solver 'arpack'"):
        PCA(2, solver="arpack").fit(make_data(10, 4))


def test_unfitted():
    with pytest.raises(ValueError, match="not fitted"):
        PCA(2).transform(make_data(10, 4))
    with pytest.raises(ValueError, match="not fitted"):
        PCA(2).inverse_transform(np.zeros((3, 2)))


def test_wrong_number_of_features_or_components():
    pca = PCA(2).fit(make_data(10, 4))
    with pytest.raises(ValueError, match="X has 3 columns, but this PCA has n_features_in_=4"):
        pca.transform(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="Z has 3 columns, but this PCA has n_components_=2"):
        pca.inverse_transform(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="must be 2-D"):
        pca.transform(np.zeros(4))
    with pytest.raises(ValueError, match="NaN or infinite"):
        pca.inverse_transform(np.array([[np.nan, 0.0]]))


@pytest.mark.parametrize("func", [low_rank_approximation, truncated_svd])
@pytest.mark.parametrize(
    "rank,match",
    [
        (0, "rank=0 must be at least 1"),
        (5, r"rank=5 is larger than min\(n_samples, n_features\)=3"),
        (1.5, "rank must be an int"),
    ],
)
def test_rank_out_of_range(func, rank, match):
    with pytest.raises(ValueError, match=match):
        func(np.ones((3, 6)), rank)


@pytest.mark.parametrize("func", [low_rank_approximation, truncated_svd])
def test_low_rank_rejects_bad_x(func):
    with pytest.raises(ValueError, match="must be 2-D"):
        func(np.ones(4), 1)
    with pytest.raises(ValueError, match="NaN or infinite"):
        func(np.array([[np.nan, 1.0], [1.0, 1.0]]), 1)


# --- the grader's references and inputs for problem set 1 (course/checks/ps1_pca.py) --------

def test_problem_set_1_pca_references_agree_with_scikit_learn():
    from course.checks import ps1_pca as ref

    for X, k in [(ref.correlated_data(2, 80, 7), 3), (ref.correlated_data(3, 12, 20), 5)]:
        sk = SkPCA(n_components=k, svd_solver="full").fit(X)
        for solve in (ref.pca_eig, ref.pca_svd):
            components, variances = solve(X=X, k=k)
            np.testing.assert_allclose(align_rows(components, sk.components_), sk.components_,
                                       atol=1e-10)
            n = X.shape[0]
            np.testing.assert_allclose(variances, sk.explained_variance_ * (n - 1) / n,
                                       rtol=1e-12)
        residual = X - sk.inverse_transform(sk.transform(X))
        assert ref.reconstruction_error(X=X, k=k) == pytest.approx(np.sum(residual ** 2),
                                                                    rel=1e-10)


@pytest.mark.parametrize("X, fraction", [("digits", 0.9), ("wide", 0.97), ("small", 0.9),
                                         ("small", 0.5)])
def test_problem_set_1_components_for_variance_is_scikit_learns_choice(X, fraction):
    from course.checks import ps1_pca as ref

    X = {"digits": ref.digits(400), "wide": ref.correlated_data(16, 10, 20),
         "small": ref.correlated_data(15, 40, 6)}[X]
    chosen = SkPCA(n_components=fraction, svd_solver="full").fit(X).n_components_
    assert ref.components_for_variance(X=X, fraction=fraction) == chosen


def test_problem_set_1_low_rank_project_and_centre_references():
    from course.checks import ps1_pca as ref

    X = ref.correlated_data(13, 6, 15)
    approx = ref.best_rank_k(X=X, k=2)
    s = scipy.linalg.svdvals(X)
    assert np.linalg.matrix_rank(approx) == 2
    assert np.sum((X - approx) ** 2) == pytest.approx(np.sum(s[2:] ** 2), rel=1e-10)
    centred, mean = ref.center(X=X)
    np.testing.assert_allclose(mean, np.mean(X, axis=0), rtol=1e-14)
    np.testing.assert_allclose(centred.sum(axis=0), 0, atol=1e-12)
    basis = ref.orthonormal_rows(8, 6, 6)
    np.testing.assert_allclose(basis @ basis.T, np.eye(6), atol=1e-12)
    point = ref.correlated_point(7, 6)
    codes = ref.project(X=X[:, :6], mean=point, components=basis)
    np.testing.assert_allclose(ref.reconstruct(Z=codes, mean=point, components=basis), X[:, :6],
                               atol=1e-12)
    np.testing.assert_array_equal(ref.digits(400), load_digits().data[:400])
