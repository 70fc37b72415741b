r"""Matrix completion by alternating least squares: the Netflix problem.

Derived in ``chapters/02_matrix_completion.md``.

A rating matrix :math:`R` of ``n_users`` x ``n_items`` is observed only on a small set
:math:`\Omega` of (user, item) pairs. The latent factor model explains each rating by an inner
product of a user vector :math:`u_i \in \mathbb{R}^K` and an item vector :math:`z_j \in
\mathbb{R}^K`, :math:`R_{ij} \approx u_i^\top z_j` (so :math:`R \approx U Z^\top`), fitted by
minimising the ridge-regularised squared error over the observed entries only,

.. math::

    J(U, Z) = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - u_i^\top z_j)^2
              + \tfrac{\lambda}{2} \Big( \sum_i \lVert u_i \rVert^2
                                        + \sum_j \lVert z_j \rVert^2 \Big).

With :math:`Z` fixed, :math:`J` separates into one ridge regression per user (a linear regression
in disguise),

.. math::

    u_i = \Big( \sum_{j \in \Omega_i} z_j z_j^\top + \lambda I \Big)^{-1}
          \sum_{j \in \Omega_i} R_{ij} z_j,

and symmetrically for the items; alternating least squares (ALS) repeats the two exact half-steps,
so :math:`J` never increases. The ridge term is what keeps a user with fewer than :math:`K` ratings
(whose :math:`\sum_j z_j z_j^\top` is singular) well defined.

With ``biases=True`` the model is :math:`R_{ij} \approx \mu + b_i + c_j + u_i^\top z_j`, where
:math:`\mu` is the mean of the observed ratings (fixed, not regularised) and the biases are
regularised by the same :math:`\lambda`:

.. math::

    J = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - \mu - b_i - c_j - u_i^\top z_j)^2
        + \tfrac{\lambda}{2} \Big( \sum_i (\lVert u_i \rVert^2 + b_i^2)
                                  + \sum_j (\lVert z_j \rVert^2 + c_j^2) \Big).

They are fitted inside the same sweeps by augmenting the factor vectors with a constant 1: the user
step solves for :math:`(u_i, b_i)` with item features :math:`(z_j, 1)` and targets
:math:`R_{ij} - \mu - c_j`, the item step for :math:`(z_j, c_j)` with user features
:math:`(u_i, 1)` and targets :math:`R_{ij} - \mu - b_i`. Each half-step is still an exact ridge
solve of :math:`J`, so :math:`J` still never increases.

Implementation: all per-user (per-item) :math:`K \times K` systems of a half-step are built and
solved at once, without a Python loop over users or items. The Gram matrices are
:math:`G = P\,Q` with :math:`P` the 0/1 pattern of the observed entries (sparse) and :math:`Q` the
table of the upper triangles of the outer products :math:`z_j z_j^\top` (one row per item); the
right-hand sides are :math:`R\,Z`; the stacked systems are solved together by a Cholesky
factorisation written batch-last (the same solution as :func:`numpy.linalg.solve` on a stacked
``(B, K, K)`` array, about twice as fast for many small systems). The only Python loops run over
the ``K`` factors and over blocks: rows are processed in blocks, and the outer-product table in
chunks, so memory stays bounded (about 64 MB per block). Two shortcuts give the same solutions
up to rounding: rows with only a few entries (most movies) are solved in the dual form
:math:`u_i = Z_i^\top (Z_i Z_i^\top + \lambda I)^{-1} r_i`, a system of their size instead of
:math:`K \times K` (see ``_ridge_rows_dual``); and when there are fewer rows than outer products
(the users' half-step), :math:`P\,Q` is accumulated column by column (CSC order), which streams
:math:`Q` once instead of gathering its rows at random.

``reg = 0`` (plain least squares) is allowed when every user and item with a rating has at least
as many ratings as unknowns; otherwise, or if a system is exactly singular, :meth:`ALS.fit` raises
``ValueError`` asking for ``reg > 0``.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from solutions._validation import (
    as_1d_float,
    as_2d_float,
    check_consistent_length,
    check_is_fitted,
    check_positive,
)

__all__ = ["ALS", "objective", "rmse", "train_test_split_ratings"]

#: Memory budget, in bytes, of one block of stacked normal equations (and of one chunk of the
#: outer-product table). Tests lower it to exercise the blocked code paths.
_BLOCK_BYTES = 64 * 2**20


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------

def _type_name(x) -> str:
    cls = type(x)
    module = cls.__module__.split(".")[0]
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _n_duplicates(X) -> int:
    """Number of stored entries of ``X`` that repeat an earlier (row, column) position."""
    if X.format in ("csr", "csc"):
        if X.has_canonical_format:
            return 0
    elif X.format != "coo" or X.has_canonical_format:
        return 0  # lil, dok, dia, bsr cannot store one position twice
    coo = X.tocoo()
    keys = coo.row.astype(np.int64) * X.shape[1] + coo.col
    return int(keys.size - np.unique(keys).size)


def _check_ratings(ratings, name: str = "ratings", shape=None) -> sp.csr_matrix:
    """Validate a sparse rating matrix; return it as a float64 CSR matrix (not to be modified)."""
    if not sp.issparse(ratings):
        raise ValueError(f"{name} must be a scipy.sparse matrix of shape (n_users, n_items); "
                         f"got {_type_name(ratings)}")
    if ratings.ndim != 2:
        raise ValueError(f"{name} must be 2-D of shape (n_users, n_items); "
                         f"got shape {ratings.shape}")
    if shape is not None and tuple(ratings.shape) != tuple(shape):
        raise ValueError(f"{name} must have the fitted shape (n_users, n_items) = {tuple(shape)}; "
                         f"got {tuple(ratings.shape)}")
    n_dup = _n_duplicates(ratings)
    if n_dup:
        raise ValueError(f"{name} stores {n_dup} duplicate (user, item) entr(y/ies); each observed "
                         "rating must be stored once (scipy would add duplicates together)")
    R = as_2d_float(ratings, name, allow_sparse=True)
    if R.nnz == 0:
        raise ValueError(f"{name} has no observed (stored) entries; at least one rating is needed")
    return R


def _check_indices(idx, name: str, n: int, what: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(idx))
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n_pairs,); got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.intp)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must contain integer {what} indices; got dtype {arr.dtype}")
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} index(es) out of range [0, {n}) for the "
                         f"{n} {what}s of the fitted model, e.g. {arr[bad][0]}")
    return arr.astype(np.intp, copy=False)


# --------------------------------------------------------------------------------------------
# Vectorised building blocks
# --------------------------------------------------------------------------------------------

#: Rows with at most this many entries (and fewer than the unknowns) are solved in the dual
#: form (see :func:`_ridge_rows_dual`); beyond it the primal systems are about as cheap.
_DUAL_MAX = 8

#: Rows per chunk of the gather-and-reduce loops (a few hundred KB): small enough that the
#: gathered rows are still in cache when they are reduced, large enough to amortise the loop.
_CACHE_ROWS = 2048


def _pair_dot(A: np.ndarray, B: np.ndarray, rows: np.ndarray, cols: np.ndarray,
              block_bytes: int | None = None) -> np.ndarray:
    """Return ``out[n] = A[rows[n]] @ B[cols[n]]``, in chunks of bounded memory.

    The chunks are cache-sized (``_CACHE_ROWS`` pairs, fewer if ``block_bytes`` asks for it):
    gathering all pairs at once would stream two ``(n, k)`` copies through main memory.
    """
    block_bytes = _BLOCK_BYTES if block_bytes is None else block_bytes
    n, k = rows.size, A.shape[1]
    out = np.empty(n)
    step = max(1, min(_CACHE_ROWS, block_bytes // (16 * max(k, 1))))
    for s in range(0, n, step):
        e = min(s + step, n)
        out[s:e] = np.einsum("nk,nk->n", A.take(rows[s:e], axis=0), B.take(cols[s:e], axis=0))
    return out


def _outer_tri(X: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    r"""Outer-product table: row ``s`` is the upper triangle ``(x_s x_s^\top)[iu, ju]``.

    Returned C-contiguous (scipy's sparse-times-dense kernel is fastest on C-ordered rows) and
    built in cache-sized chunks of rows (a transposed copy or strided writes are much slower).
    """
    n = X.shape[0]
    Q = np.empty((n, iu.size))
    for s in range(0, n, _CACHE_ROWS // 2):
        blk = X[s:s + _CACHE_ROWS // 2]
        np.multiply(blk.take(iu, axis=1), blk.take(ju, axis=1), out=Q[s:s + _CACHE_ROWS // 2])
    return Q


def _cholesky_solve(A_tri: np.ndarray, rhs: np.ndarray, what: str, reg: float) -> np.ndarray:
    r"""Solve a stack of symmetric positive definite systems :math:`A_b x_b = r_b` by Cholesky.

    The stack is stored batch-last so that every operation below is a vectorised operation on
    contiguous rows of length ``B``; the Python loops run over the ``D`` unknowns only, never
    over the systems. (This is what :func:`numpy.linalg.solve` would compute, about twice as fast
    for many small systems, whose cost there is dominated by per-matrix LAPACK overhead.)

    Parameters
    ----------
    A_tri : ndarray of shape (D * (D + 1) / 2, B)
        Upper triangles, in the row-major order of ``numpy.triu_indices(D)``: rows
        ``offset[j] : offset[j + 1]`` hold :math:`A_{j, j:}` (equal to :math:`A_{j:, j}`).
    rhs : ndarray of shape (D, B)
    what : str
        ``"user"`` or ``"item"``, for the error message.
    reg : float
        The ridge parameter, for the error message.

    Returns
    -------
    ndarray of shape (D, B)

    Raises
    ------
    ValueError
        If a pivot is not safely positive (a singular system, possible only when ``reg = 0``).
    """
    D, B = rhs.shape
    offsets = np.concatenate([[0], np.cumsum(np.arange(D, 0, -1))])
    # L[i, k] for i >= k, lower triangular factor: A = L L^T. Only that triangle is ever read
    # (each entry after it is written), so the upper one is left uninitialised.
    L = np.empty((D, D, B))
    for j in range(D):
        col = A_tri[offsets[j]:offsets[j + 1]]  # A[j:, j]
        if j:
            col = col - np.einsum("ikb,kb->ib", L[j:, :j], L[j, :j])
        bad = ~(col[0] > D * np.finfo(float).eps * A_tri[offsets[j]])
        if bad.any():
            raise ValueError(
                f"the normal equations of {int(bad.sum())} {what}(s) are singular with "
                f"reg={reg!r} (the factors of their rated "
                f"{'items' if what == 'user' else 'users'} are linearly dependent); "
                + ("use reg > 0" if reg == 0 else "use a larger reg")
            )
        d = np.sqrt(col[0])
        L[j, j] = d
        L[j + 1:, j] = col[1:] / d
    y = np.empty_like(rhs)  # forward substitution L y = rhs
    for j in range(D):
        y[j] = (rhs[j] - np.einsum("kb,kb->b", L[j, :j], y[:j])) / L[j, j]
    x = np.empty_like(rhs)  # back substitution L^T x = y
    for j in range(D - 1, -1, -1):
        x[j] = (y[j] - np.einsum("kb,kb->b", L[j + 1:, j], x[j + 1:])) / L[j, j]
    return x


def _ridge_rows(Y: sp.csr_matrix, P: sp.csr_matrix, X: np.ndarray, reg: float, what: str,
                block_bytes: int | None = None, P_T: sp.csr_matrix | None = None) -> np.ndarray:
    r"""Solve every row's ridge regression of one ALS half-step at once.

    Row ``r`` of the result is :math:`w_r = (\sum_{s \in \Omega_r} x_s x_s^\top + \lambda I)^{-1}
    \sum_{s \in \Omega_r} y_{rs} x_s`, where :math:`\Omega_r` is the set of stored columns of row
    ``r`` of ``Y`` (the targets :math:`y_{rs}`) and ``P`` is the same pattern with every value 1.
    Rows with no stored entry get the zero vector (the minimiser :math:`w_r = 0` of
    :math:`\lambda \lVert w_r \rVert^2`, or the minimum-norm one when :math:`\lambda = 0`).

    The Gram matrices of a block of rows are one sparse-times-dense product, ``P[block] @ Q``,
    where row ``s`` of ``Q`` is the upper triangle of :math:`x_s x_s^\top`; the right-hand sides
    are ``Y[block] @ X``; the stacked systems are solved by :func:`_cholesky_solve`.

    Parameters
    ----------
    Y, P : scipy.sparse.csr_matrix of shape (n_rows, n_other)
    X : ndarray of shape (n_other, D)
        Feature vector :math:`x_s` of every column.
    reg : float
        :math:`\lambda \ge 0`.
    what : str
        ``"user"`` or ``"item"``, for error messages.
    block_bytes : int, optional
        Memory budget of one block; default ``_BLOCK_BYTES``.
    P_T : scipy.sparse.csr_matrix of shape (n_other, n_rows), optional
        ``P`` transposed, in CSR. When all rows fit in one block and ``Q`` has more rows than the
        result (``n_other > n_rows``), ``P @ Q`` is computed as ``P_T.T @ Q`` (a CSC product,
        which streams ``Q`` once and accumulates into the smaller, cache-resident result,
        instead of gathering rows of ``Q`` at random). It adds the same terms in the same order,
        so the result is identical, about twice as fast for the users of MovieLens.

    Returns
    -------
    ndarray of shape (n_rows, D)
    """
    block_bytes = _BLOCK_BYTES if block_bytes is None else block_bytes
    n_rows, n_other = Y.shape
    D = X.shape[1]
    iu, ju = np.triu_indices(D)
    T = iu.size
    diag_rows = np.concatenate([[0], np.cumsum(np.arange(D, 1, -1))])  # (j, j) in the triangle
    counts = np.diff(Y.indptr)
    W = np.zeros((n_rows, D))
    # Rows with few entries (at most _DUAL_MAX, and fewer than the unknowns) take the cheaper
    # dual form, which needs reg > 0; the others (all of them when reg = 0) the primal D x D
    # normal equations built below.
    few = (counts > 0) & (counts < min(D, _DUAL_MAX + 1))
    if reg == 0:
        few[:] = False
    if few.any():
        _ridge_rows_dual(Y, X, reg, np.flatnonzero(few), W, what, block_bytes)
    primal = (counts > 0) & ~few

    # Outer-product table: row s is the upper triangle of x_s x_s^T, built in chunks of columns.
    def outer_tri(c0, c1):
        return _outer_tri(X[c0:c1], iu, ju)

    chunk = max(1, block_bytes // (8 * T))
    chunks = [(c0, min(c0 + chunk, n_other)) for c0 in range(0, n_other, chunk)]
    Q_all = outer_tri(0, n_other) if len(chunks) == 1 else None

    rows_per_block = max(1, block_bytes // (8 * (2 * T + 2 * D * D + 4 * D)))
    for r0 in range(0, n_rows, rows_per_block):
        r1 = min(r0 + rows_per_block, n_rows)
        active = np.flatnonzero(primal[r0:r1])
        if active.size == 0:
            continue
        whole = r0 == 0 and r1 == n_rows
        if active.size < r1 - r0:  # only the rows solved here: skip the others' Gram matrices
            Pb, Yb = P[r0 + active], Y[r0 + active]
        else:
            Pb = P if whole else P[r0:r1]
            Yb = Y if whole else Y[r0:r1]
        if Q_all is not None:
            if whole and active.size == n_rows and P_T is not None and n_other > n_rows:
                Pb = P_T.T  # CSC view of P: same products, cache-friendly order
            G_tri = np.asarray(Pb @ Q_all)
        else:
            G_tri = np.zeros((active.size, T))
            for c0, c1 in chunks:
                G_tri += Pb[:, c0:c1] @ outer_tri(c0, c1)
        rhs = np.asarray(Yb @ X)
        A_tri = np.ascontiguousarray(G_tri.T)  # (T, n_active): batch last
        A_tri[diag_rows] += reg
        W[r0 + active] = _cholesky_solve(A_tri, np.ascontiguousarray(rhs.T), what, reg).T
    return W


def _ridge_rows_dual(Y: sp.csr_matrix, X: np.ndarray, reg: float, rows: np.ndarray,
                     W: np.ndarray, what: str, block_bytes: int | None = None) -> None:
    r"""Solve the ridge regressions of the given ``rows`` by their dual form, into ``W[rows]``.

    For a row with :math:`n < D` stored entries (features :math:`X_r`, ``n x D``, targets
    :math:`y_r`) and :math:`\lambda > 0`, the push-through identity gives the same vector from an
    ``n x n`` system instead of a ``D x D`` one:

    .. math::

        w_r = (X_r^\top X_r + \lambda I_D)^{-1} X_r^\top y_r
            = X_r^\top (X_r X_r^\top + \lambda I_n)^{-1} y_r .

    Most MovieLens movies have only a few ratings (a third of them just one), so this skips most
    of the ``D x D`` item systems. Rows are grouped by size buckets ``m`` (1, 2, 4, 8, capped
    at ``D - 1``; the first one at least ``n``) and padded to ``m`` entries with zero features
    and zero targets: the padded system is block diagonal, ``diag(X_r X_r^T + lambda I, lambda
    I)``, so the padded multipliers are 0 and :math:`w_r` is unchanged. Each bucket, in blocks of
    bounded memory, is solved at once by :func:`_cholesky_solve` (a few buckets keep the number
    of its Python-level steps small). Used for rows with at most ``_DUAL_MAX`` entries: for
    longer rows the gathers and small batched products cost about as much as the primal solve.
    """
    block_bytes = _BLOCK_BYTES if block_bytes is None else block_bytes
    D = X.shape[1]
    counts = np.diff(Y.indptr)[rows]
    bucket = np.minimum(2 ** np.ceil(np.log2(counts)).astype(np.intp), max(D - 1, 1))
    for m in np.unique(bucket):
        group, n_group = rows[bucket == m], counts[bucket == m]
        ia, ib = np.triu_indices(m)
        diag = np.concatenate([[0], np.cumsum(np.arange(m, 1, -1))])
        step = max(1, block_bytes // (8 * (m * D + 2 * m * m + ia.size + 6 * m + D)))
        for g0 in range(0, group.size, step):
            g, n = group[g0:g0 + step], n_group[g0:g0 + step]
            valid = np.arange(m) < n[:, None]  # (G, m): real entries, then padding
            pos = np.where(valid, Y.indptr[g][:, None] + np.arange(m), 0)
            Xg = X.take(Y.indices[pos], axis=0)  # (G, m, D): features of the entries
            Xg[~valid] = 0.0
            Kg = np.matmul(Xg, Xg.transpose(0, 2, 1))  # (G, m, m): X_r X_r^T
            K_tri = np.ascontiguousarray(Kg[:, ia, ib].T)  # (m(m+1)/2, G): batch last
            K_tri[diag] += reg
            y = np.where(valid, Y.data[pos], 0.0).T  # (m, G)
            alpha = _cholesky_solve(K_tri, np.ascontiguousarray(y), what, reg)
            W[g] = np.matmul(alpha.T[:, None, :], Xg)[:, 0]  # X_r^T alpha_r


def _objective_value(data, rows, cols, U, Z, reg, mu=0.0, b=None, c=None) -> float:
    """The regularised objective J on pre-validated arrays (see :func:`objective`)."""
    pred = _pair_dot(U, Z, rows, cols)
    if b is not None:
        pred += mu + b[rows] + c[cols]
    res = data - pred
    penalty = np.sum(U * U) + np.sum(Z * Z)
    if b is not None:
        penalty += b @ b + c @ c
    return float(0.5 * (res @ res) + 0.5 * reg * penalty)


def _rows_of(R: sp.csr_matrix) -> np.ndarray:
    return np.repeat(np.arange(R.shape[0]), np.diff(R.indptr))


# --------------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------------

def objective(ratings, user_factors, item_factors, reg, *, global_mean=0.0, user_bias=None,
              item_bias=None) -> float:
    r"""Regularised squared error of a latent factor model on the observed ratings.

    .. math::

        J = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - \mu - b_i - c_j - u_i^\top z_j)^2
            + \tfrac{\lambda}{2} \Big( \sum_i (\lVert u_i \rVert^2 + b_i^2)
                                      + \sum_j (\lVert z_j \rVert^2 + c_j^2) \Big)

    where :math:`\Omega` is the set of stored entries of ``ratings``. Without biases
    (``user_bias`` and ``item_bias`` left as ``None``, ``global_mean`` 0) this is
    :math:`\tfrac12 \sum_\Omega (R_{ij} - u_i^\top z_j)^2 + \tfrac{\lambda}{2}(\lVert U
    \rVert_F^2 + \lVert Z \rVert_F^2)`. :attr:`ALS.loss_history_` records this value after each
    sweep.

    Parameters
    ----------
    ratings : scipy.sparse matrix of shape (n_users, n_items)
        Its stored entries (including explicitly stored zeros) are the observed ratings.
    user_factors : array_like of shape (n_users, n_factors)
        :math:`U`, one row :math:`u_i` per user.
    item_factors : array_like of shape (n_items, n_factors)
        :math:`Z`, one row :math:`z_j` per item.
    reg : float
        :math:`\lambda \ge 0`.
    global_mean : float, default 0.0
        :math:`\mu`, not regularised.
    user_bias : array_like of shape (n_users,), optional
        :math:`b`; ``None`` means all zeros.
    item_bias : array_like of shape (n_items,), optional
        :math:`c`; ``None`` means all zeros.

    Returns
    -------
    float

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> R = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))  # two observed ratings
    >>> objective(R, np.ones((2, 1)), np.ones((2, 1)), reg=0.0)
    0.5
    """
    R = _check_ratings(ratings)
    n_users, n_items = R.shape
    U = as_2d_float(user_factors, "user_factors")
    Z = as_2d_float(item_factors, "item_factors")
    if U.shape[0] != n_users:
        raise ValueError(f"user_factors must have n_users = {n_users} rows; got shape {U.shape}")
    if Z.shape[0] != n_items:
        raise ValueError(f"item_factors must have n_items = {n_items} rows; got shape {Z.shape}")
    if U.shape[1] != Z.shape[1]:
        raise ValueError(f"user_factors and item_factors must have the same number of factors; "
                         f"got {U.shape[1]} and {Z.shape[1]}")
    reg = check_positive(reg, "reg", strict=False)
    mu = float(as_1d_float([global_mean], "global_mean")[0])
    b = np.zeros(n_users) if user_bias is None else as_1d_float(user_bias, "user_bias")
    c = np.zeros(n_items) if item_bias is None else as_1d_float(item_bias, "item_bias")
    if b.shape != (n_users,):
        raise ValueError(f"user_bias must have shape ({n_users},); got {b.shape}")
    if c.shape != (n_items,):
        raise ValueError(f"item_bias must have shape ({n_items},); got {c.shape}")
    return _objective_value(R.data, _rows_of(R), R.indices, U, Z, reg, mu, b, c)


def rmse(y_true, y_pred) -> float:
    r"""Root mean squared error :math:`\sqrt{\frac1n \sum_n (y_n - \hat y_n)^2}`.

    Parameters
    ----------
    y_true : array_like of shape (n,)
        Observed ratings.
    y_pred : array_like of shape (n,)
        Predicted ratings.

    Returns
    -------
    float

    Examples
    --------
    >>> rmse([1.0, 2.0], [1.0, 4.0])
    1.4142135623730951
    """
    y_true = as_1d_float(y_true, "y_true")
    y_pred = as_1d_float(y_pred, "y_pred")
    check_consistent_length(y_true=y_true, y_pred=y_pred)
    return float(np.sqrt(np.mean((y_true - y_pred) ** 2)))


def train_test_split_ratings(ratings, test_size=0.2, random_state=None):
    """Split the observed entries of a sparse rating matrix at random into train and test.

    Every stored entry (an explicitly stored 0 included) goes to exactly one of the two outputs,
    chosen uniformly at random; both keep the full shape, so a model fitted on ``train`` can be
    scored on ``test``. The split is not stratified: a user (item) may end up with no training
    ratings, in which case ALS gives it zero factors (and, with biases, a zero bias).

    Parameters
    ----------
    ratings : scipy.sparse matrix of shape (n_users, n_items)
        Stored entries are the observed ratings.
    test_size : float in (0, 1) or int, default 0.2
        Fraction of the observed entries to hold out (rounded up), or their number.
    random_state : int, numpy.random.Generator or None, default None

    Returns
    -------
    train : scipy.sparse.csr_matrix of shape (n_users, n_items)
    test : scipy.sparse.csr_matrix of shape (n_users, n_items)

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> R = sp.random(50, 40, density=0.2, format="csr", random_state=0)
    >>> train, test = train_test_split_ratings(R, test_size=0.25, random_state=0)
    >>> train.nnz + test.nnz == R.nnz, test.nnz
    (True, 100)
    """
    R = _check_ratings(ratings)
    nnz = R.nnz
    if isinstance(test_size, (bool, np.bool_)) or not isinstance(test_size, numbers.Real):
        raise ValueError(f"test_size must be a float in (0, 1) or an int; got {test_size!r}")
    if isinstance(test_size, numbers.Integral):
        n_test = int(test_size)
    else:
        if not 0.0 < test_size < 1.0:
            raise ValueError(f"test_size must be in (0, 1) when a float; got {test_size!r}")
        n_test = int(np.ceil(test_size * nnz))
    if not 1 <= n_test <= nnz - 1:
        raise ValueError(f"test_size={test_size!r} must leave at least one of the {nnz} observed "
                         f"ratings in each of train and test; it asks for {n_test} test entries")
    rng = np.random.default_rng(random_state)
    coo = R.tocoo()
    in_test = np.zeros(nnz, dtype=bool)
    in_test[rng.permutation(nnz)[:n_test]] = True

    def pick(mask):
        return sp.csr_matrix((coo.data[mask], (coo.row[mask], coo.col[mask])), shape=R.shape)

    return pick(~in_test), pick(in_test)


# --------------------------------------------------------------------------------------------
# Estimator
# --------------------------------------------------------------------------------------------

class ALS:
    r"""Latent factor model :math:`R \approx U Z^\top` fitted by alternating least squares.

    Minimises, over the observed set :math:`\Omega` (the stored entries of ``ratings``),

    .. math::

        J = \tfrac12 \sum_{(i,j) \in \Omega} (R_{ij} - u_i^\top z_j)^2
            + \tfrac{\lambda}{2} \Big( \sum_i \lVert u_i \rVert^2 + \sum_j \lVert z_j \rVert^2 \Big)

    by alternating the exact ridge solutions

    .. math::

        u_i = \Big( \sum_{j \in \Omega_i} z_j z_j^\top + \lambda I \Big)^{-1}
              \sum_{j \in \Omega_i} R_{ij} z_j, \qquad
        z_j = \Big( \sum_{i \in \Omega^j} u_i u_i^\top + \lambda I \Big)^{-1}
              \sum_{i \in \Omega^j} R_{ij} u_i,

    so that :math:`J` never increases. With ``biases=True`` the model is
    :math:`R_{ij} \approx \mu + b_i + c_j + u_i^\top z_j`: :math:`\mu` is the mean of the observed
    ratings (fixed, not regularised); :math:`u_i, z_j, b_i, c_j` all carry the penalty
    :math:`\tfrac{\lambda}{2}(\cdot)^2`; each half-step solves for the augmented vectors
    :math:`(u_i, b_i)` (item features :math:`(z_j, 1)`, targets :math:`R_{ij} - \mu - c_j`) and
    then :math:`(z_j, c_j)` (user features :math:`(u_i, 1)`, targets :math:`R_{ij} - \mu - b_i`).
    See :func:`objective`.

    Parameters
    ----------
    n_factors : int
        :math:`K \ge 1`, the number of latent factors.
    reg : float
        :math:`\lambda \ge 0`. With ``reg > 0`` every system is positive definite and a user
        (item) with fewer than ``n_factors`` ratings is fine. ``reg = 0`` (plain least squares) is
        allowed only if every user and item with a rating has at least ``n_factors`` of them
        (``n_factors + 1`` with biases), otherwise :meth:`fit` raises ``ValueError``; it also
        raises if a system turns out exactly singular. Users and items without any rating get
        zero factors (and zero bias) for every ``reg``.
    n_iters : int
        Number of sweeps (a user step then an item step), ``>= 1``.
    random_state : int, numpy.random.Generator or None, default None
        Seeds the initial item factors: ``numpy.random.default_rng(random_state).normal(0.0,
        1 / sqrt(n_factors), size=(n_items, n_factors))`` (so that :math:`\lVert z_j \rVert
        \approx 1`). The initial user factors are never used: the first half-step computes them.
    biases : bool, default False
        Whether to add a global mean and user and item biases.

    Attributes
    ----------
    user_factors_ : ndarray of shape (n_users, n_factors)
        :math:`U`.
    item_factors_ : ndarray of shape (n_items, n_factors)
        :math:`Z`.
    loss_history_ : ndarray of shape (n_iters,)
        The objective :math:`J` after each sweep (non-increasing).
    global_mean_ : float
        :math:`\mu`; only with ``biases=True``.
    user_bias_ : ndarray of shape (n_users,)
        :math:`b`; only with ``biases=True``.
    item_bias_ : ndarray of shape (n_items,)
        :math:`c`; only with ``biases=True``.
    n_users_, n_items_ : int
        Shape of the training matrix.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> rng = np.random.default_rng(0)
    >>> full = rng.normal(size=(30, 2)) @ rng.normal(size=(2, 20))      # rank 2
    >>> mask = rng.random(full.shape) < 0.6
    >>> R = sp.csr_matrix((full[mask], np.nonzero(mask)), shape=full.shape)
    >>> model = ALS(n_factors=2, reg=1e-3, n_iters=50, random_state=0).fit(R)
    >>> bool(rmse(full.ravel(), model.predict_all().ravel()) < 0.05)
    True
    """

    def __init__(self, n_factors, reg, n_iters, random_state=None, biases=False):
        self.n_factors = n_factors
        self.reg = reg
        self.n_iters = n_iters
        self.random_state = random_state
        self.biases = biases

    # ---------------------------------------------------------------------------------- fit
    def fit(self, ratings):
        """Fit the factors (and biases) to the observed entries of ``ratings``.

        Parameters
        ----------
        ratings : scipy.sparse matrix of shape (n_users, n_items)
            Its stored entries are the observed ratings: the sparsity structure, not the values,
            says what was observed, so an explicitly stored 0 is a rating of 0. Duplicate entries
            for one (user, item) pair are refused.

        Returns
        -------
        self : ALS
        """
        K = _check_int(self.n_factors, "n_factors", 1)
        n_iters = _check_int(self.n_iters, "n_iters", 1)
        reg = check_positive(self.reg, "reg", strict=False)
        if not isinstance(self.biases, (bool, np.bool_)):
            raise ValueError(f"biases must be True or False; got {self.biases!r}")
        biases = bool(self.biases)
        R = _check_ratings(ratings)
        n_users, n_items = R.shape
        Rt = R.T.tocsr()  # items x users, same stored entries
        D = K + biases
        if reg == 0:
            for what, M in (("user", R), ("item", Rt)):
                counts = np.diff(M.indptr)
                bad = np.flatnonzero((counts > 0) & (counts < D))
                if bad.size:
                    raise ValueError(
                        f"reg=0 leaves the normal equations singular: {bad.size} {what}(s) have "
                        f"fewer ratings than the {D} unknowns of their least-squares problem "
                        f"(e.g. {what} {bad[0]} has {counts[bad[0]]}); use reg > 0"
                    )

        rng = np.random.default_rng(self.random_state)
        Z = rng.normal(0.0, 1.0 / np.sqrt(K), size=(n_items, K))
        U = np.zeros((n_users, K))
        mu = float(R.data.mean()) if biases else 0.0
        b = np.zeros(n_users) if biases else None
        c = np.zeros(n_items) if biases else None

        rows = _rows_of(R)
        P = sp.csr_matrix((np.ones(R.nnz), R.indices, R.indptr), shape=R.shape)
        Pt = sp.csr_matrix((np.ones(Rt.nnz), Rt.indices, Rt.indptr), shape=Rt.shape)
        Y = sp.csr_matrix((R.data.copy(), R.indices, R.indptr), shape=R.shape)
        Yt = sp.csr_matrix((Rt.data.copy(), Rt.indices, Rt.indptr), shape=Rt.shape)
        ones_items, ones_users = np.ones((n_items, 1)), np.ones((n_users, 1))

        losses = np.empty(n_iters)
        for sweep in range(n_iters):
            if biases:
                Y.data = R.data - mu - c[R.indices]
                W = _ridge_rows(Y, P, np.hstack([Z, ones_items]), reg, "user", P_T=Pt)
                U, b = np.ascontiguousarray(W[:, :K]), W[:, K].copy()
                Yt.data = Rt.data - mu - b[Rt.indices]
                W = _ridge_rows(Yt, Pt, np.hstack([U, ones_users]), reg, "item", P_T=P)
                Z, c = np.ascontiguousarray(W[:, :K]), W[:, K].copy()
            else:
                U = _ridge_rows(Y, P, Z, reg, "user", P_T=Pt)
                Z = _ridge_rows(Yt, Pt, U, reg, "item", P_T=P)
            losses[sweep] = _objective_value(R.data, rows, R.indices, U, Z, reg, mu, b, c)

        self.user_factors_ = U
        self.item_factors_ = Z
        self.loss_history_ = losses
        self.n_users_, self.n_items_ = n_users, n_items
        if biases:
            self.global_mean_ = mu
            self.user_bias_ = b
            self.item_bias_ = c
        else:  # a refit without biases must not keep the biases of an earlier fit
            for name in ("global_mean_", "user_bias_", "item_bias_"):
                self.__dict__.pop(name, None)
        self._seen_indptr = R.indptr.copy()
        self._seen_indices = R.indices.copy()
        return self

    # ------------------------------------------------------------------------------ predict
    def _has_biases(self) -> bool:
        return hasattr(self, "user_bias_")

    def predict(self, user_idx, item_idx):
        r"""Predicted ratings :math:`\hat R_{ij} = u_i^\top z_j` (:math:`+ \mu + b_i + c_j` with
        biases) for the pairs ``(user_idx[n], item_idx[n])``.

        Parameters
        ----------
        user_idx : array_like of int, shape (n_pairs,)
            Row indices in ``[0, n_users)``.
        item_idx : array_like of int, shape (n_pairs,)
            Column indices in ``[0, n_items)``.

        Returns
        -------
        ndarray of shape (n_pairs,)
            Not clipped to the rating scale. A scalar pair gives an array of shape (1,).
        """
        check_is_fitted(self, "user_factors_")
        u = _check_indices(user_idx, "user_idx", self.n_users_, "user")
        i = _check_indices(item_idx, "item_idx", self.n_items_, "item")
        check_consistent_length(user_idx=u, item_idx=i)
        pred = _pair_dot(self.user_factors_, self.item_factors_, u, i)
        if self._has_biases():
            pred += self.global_mean_ + self.user_bias_[u] + self.item_bias_[i]
        return pred

    def predict_all(self):
        r"""The completed matrix :math:`\hat R = U Z^\top` (:math:`+ \mu + b 1^\top + 1 c^\top`).

        Returns
        -------
        ndarray of shape (n_users, n_items)
            Dense: mind the memory, ``8 * n_users * n_items`` bytes (48 MB for MovieLens
            ``ml-latest-small``).
        """
        check_is_fitted(self, "user_factors_")
        full = self.user_factors_ @ self.item_factors_.T
        if self._has_biases():
            full += self.global_mean_ + self.user_bias_[:, None] + self.item_bias_[None, :]
        return full

    def recommend(self, user, n=10, exclude_seen=True):
        """The ``n`` items with the highest predicted rating for one user, best first.

        Parameters
        ----------
        user : int
            Row index in ``[0, n_users)``.
        n : int, default 10
            Number of items to return (fewer if fewer candidates remain).
        exclude_seen : bool, default True
            Leave out the items this user rated in the training matrix.

        Returns
        -------
        ndarray of int, shape (n_returned,)
            Item (column) indices, by decreasing predicted rating (ties by increasing index);
            :meth:`predict` gives the predicted ratings.
        """
        check_is_fitted(self, "user_factors_")
        if isinstance(user, (bool, np.bool_)) or not isinstance(user, numbers.Integral):
            raise ValueError(f"user must be an integer index; got {user!r}")
        if not 0 <= user < self.n_users_:
            raise ValueError(f"user={user} is out of range [0, {self.n_users_}) for the "
                             f"{self.n_users_} users of the fitted model")
        n = _check_int(n, "n", 1)
        user = int(user)
        scores = self.item_factors_ @ self.user_factors_[user]
        if self._has_biases():
            scores = scores + self.item_bias_  # mu + b_user do not change the ranking
        candidates = np.arange(self.n_items_)
        if exclude_seen:
            keep = np.ones(self.n_items_, dtype=bool)
            keep[self._seen_indices[self._seen_indptr[user]:self._seen_indptr[user + 1]]] = False
            candidates = candidates[keep]
        s = scores[candidates]
        top = np.argpartition(-s, n - 1)[:n] if n < s.size else np.arange(s.size)
        top = top[np.lexsort((candidates[top], -s[top]))]
        return candidates[top]

    def score(self, ratings) -> float:
        """Root mean squared error of the predictions on the stored entries of ``ratings``.

        Unlike scikit-learn's ``score``, lower is better: this is the held-out RMSE of the book.

        Parameters
        ----------
        ratings : scipy.sparse matrix of shape (n_users, n_items)
            Held-out ratings (e.g. the ``test`` of :func:`train_test_split_ratings`), with the
            shape of the training matrix.

        Returns
        -------
        float
        """
        check_is_fitted(self, "user_factors_")
        R = _check_ratings(ratings, shape=(self.n_users_, self.n_items_))
        return rmse(R.data, self.predict(_rows_of(R), R.indices))
