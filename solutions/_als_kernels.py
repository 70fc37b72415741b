r"""Compiled kernels of ALS: the half-step's ridge regressions, and predictions of many pairs.

Used by :mod:`solutions.matrix_completion` (derived in ``chapters/02_matrix_completion.md``).

**Half-step** (:func:`ridge_rows`): one small ridge regression per row of a sparse matrix.
Row ``r`` of a CSR pattern (``indptr``, ``indices``) with targets ``y`` selects the feature rows
:math:`x_s` (``X[indices[p]]``) of its stored entries :math:`\Omega_r`; its solution is

.. math::

    w_r = \Big( \sum_{s \in \Omega_r} x_s x_s^\top + \lambda I_D \Big)^{-1}
          \sum_{s \in \Omega_r} y_{rs} x_s
        = X_r^\top \big( X_r X_r^\top + \lambda I_n \big)^{-1} y_r ,

the second (dual) form by the push-through identity when :math:`\lambda > 0`. A row with
:math:`n = |\Omega_r| < D` entries is solved in the dual form, an :math:`n \times n` system
instead of a :math:`D \times D` one (most MovieLens movies have only a few ratings); the others
accumulate the upper triangle of their Gram matrix, one outer product per entry, and solve it.
Every system is solved by a Cholesky factorisation :math:`A = R^\top R` in a ``D x D`` scratch
array, so memory does not grow with the data.

**Predictions** (:func:`pair_dot`): :math:`u_{i_n}^\top z_{j_n}` for many pairs, for the
objective and ``predict``.

Written as compiled loops (Numba) because the work per row is tiny (a ``20 x 20`` system): in
NumPy each row costs a dozen calls' overhead, and batching all rows means streaming large
temporary tables through memory. The loops that accumulate may reassociate sums (``fastmath``
``reassoc``/``contract``, so they vectorise): results agree with a plain loop to rounding.
Compiled once per machine and cached beside this file.
"""

from __future__ import annotations

import numba
import numpy as np

_EPS = np.finfo(float).eps
#: Floating-point freedoms of the accumulating loops: reorder sums and fuse multiply-adds, but
#: keep NaN, infinity and signed-zero semantics.
_SUMS = {"reassoc", "contract"}


@numba.njit(cache=True, nogil=True)
def _cholesky_solve(A, b, diag, n):  # pragma: no cover - compiled
    r"""Solve :math:`A x = b` in place for the leading ``n x n`` block; ``False`` if singular.

    Only the upper triangle of ``A`` is read; it is overwritten by the Cholesky factor ``R``
    (:math:`A = R^\top R`, right-looking, row-contiguous updates) and ``b[:n]`` by ``x``.
    ``diag`` is scratch of length ``>= n``. A pivot not above ``n * eps`` times its original
    diagonal entry means a singular (or numerically singular) system.
    """
    for k in range(n):
        diag[k] = A[k, k]
    for k in range(n):
        pivot = A[k, k]
        if not pivot > n * _EPS * diag[k]:
            return False
        d = np.sqrt(pivot)
        A[k, k] = d
        inv = 1.0 / d
        for j in range(k + 1, n):
            A[k, j] *= inv
        for i in range(k + 1, n):
            a = A[k, i]
            for j in range(i, n):
                A[i, j] -= a * A[k, j]
    for k in range(n):  # R^T y = b, column by column
        b[k] /= A[k, k]
        for j in range(k + 1, n):
            b[j] -= A[k, j] * b[k]
    for k in range(n - 1, -1, -1):  # R x = y
        s = b[k]
        for j in range(k + 1, n):
            s -= A[k, j] * b[j]
        b[k] = s / A[k, k]
    return True


@numba.njit(cache=True, nogil=True, fastmath=_SUMS)
def _gram_upper(indices, targets, X, lo, hi, A, b):  # pragma: no cover - compiled
    r"""Set the upper triangle of ``A`` to :math:`\sum_p x_p x_p^\top` and ``b`` to
    :math:`\sum_p y_p x_p` over entries ``p = lo .. hi - 1`` (four outer products at a time)."""
    D = X.shape[1]
    for i in range(D):
        b[i] = 0.0
        for j in range(i, D):
            A[i, j] = 0.0
    p = lo
    while p + 4 <= hi:
        x0, x1, x2, x3 = X[indices[p]], X[indices[p + 1]], X[indices[p + 2]], X[indices[p + 3]]
        y0, y1, y2, y3 = targets[p], targets[p + 1], targets[p + 2], targets[p + 3]
        for i in range(D):
            a0, a1, a2, a3 = x0[i], x1[i], x2[i], x3[i]
            b[i] += y0 * a0 + y1 * a1 + y2 * a2 + y3 * a3
            for j in range(i, D):
                A[i, j] += a0 * x0[j] + a1 * x1[j] + a2 * x2[j] + a3 * x3[j]
        p += 4
    while p < hi:
        x, y = X[indices[p]], targets[p]
        for i in range(D):
            b[i] += y * x[i]
            for j in range(i, D):
                A[i, j] += x[i] * x[j]
        p += 1


@numba.njit(cache=True, nogil=True, fastmath=_SUMS)
def _dual_gram(indices, targets, X, lo, n, reg, A, b):  # pragma: no cover - compiled
    r"""Set the upper triangle of ``A[:n, :n]`` to :math:`X_r X_r^\top + \lambda I` and
    ``b[:n]`` to :math:`y_r` for the ``n`` entries starting at ``lo``."""
    D = X.shape[1]
    for i in range(n):
        xi = X[indices[lo + i]]
        for j in range(i, n):
            xj = X[indices[lo + j]]
            s = 0.0
            for k in range(D):
                s += xi[k] * xj[k]
            A[i, j] = s
        A[i, i] += reg
        b[i] = targets[lo + i]


@numba.njit(cache=True, nogil=True, fastmath=_SUMS)
def _combine_rows(indices, X, lo, n, alpha, w):  # pragma: no cover - compiled
    r"""Add :math:`X_r^\top \alpha` (rows ``X[indices[lo:lo + n]]``) to ``w``."""
    for i in range(n):
        xi = X[indices[lo + i]]
        for k in range(X.shape[1]):
            w[k] += alpha[i] * xi[k]


@numba.njit(cache=True, nogil=True)
def ridge_rows(indptr, indices, targets, X, reg, out):  # pragma: no cover - compiled
    r"""Solve every row's ridge regression into ``out``; return ``-1``, or the first singular row.

    Parameters
    ----------
    indptr : ndarray of int, shape (n_rows + 1,)
    indices : ndarray of int, shape (nnz,)
        CSR pattern: the entries of row ``r`` are ``indptr[r]:indptr[r + 1]``, their feature
        rows ``X[indices[p]]``.
    targets : ndarray of float, shape (nnz,)
        :math:`y_{rs}`, aligned with ``indices``.
    X : ndarray of float, shape (n_other, D), C-contiguous
    reg : float
        :math:`\lambda \ge 0`; with 0 every row takes the primal form.
    out : ndarray of float, shape (n_rows, D)
        Overwritten with :math:`w_r`; rows without entries get 0 (the minimiser of
        :math:`\lambda \lVert w \rVert^2`). Rows after a singular one are left unsolved.

    Returns
    -------
    int
        ``-1`` when every system was solved, else the index of the first singular row.
    """
    D = X.shape[1]
    A = np.empty((D, D))
    b = np.empty(D)
    diag = np.empty(D)
    for r in range(indptr.size - 1):
        lo, hi = indptr[r], indptr[r + 1]
        n = hi - lo
        w = out[r]
        w[:] = 0.0
        if n == 0:
            continue
        if reg > 0 and n < D:  # dual: (X_r X_r^T + reg I_n) alpha = y_r, w = X_r^T alpha
            _dual_gram(indices, targets, X, lo, n, reg, A, b)
            if not _cholesky_solve(A, b, diag, n):
                return r
            _combine_rows(indices, X, lo, n, b, w)
        else:  # primal: (sum_s x_s x_s^T + reg I_D) w = sum_s y_s x_s
            _gram_upper(indices, targets, X, lo, hi, A, b)
            for i in range(D):
                A[i, i] += reg
            if not _cholesky_solve(A, b, diag, D):
                return r
            for i in range(D):
                w[i] = b[i]
    return -1


@numba.njit(cache=True, nogil=True, fastmath=_SUMS)
def pair_dot(A, B, rows, cols):  # pragma: no cover - compiled
    r"""Return ``out[n] = A[rows[n]] @ B[cols[n]]``, without gathering the rows.

    Parameters
    ----------
    A : ndarray of shape (n_a, K)
    B : ndarray of shape (n_b, K)
    rows, cols : ndarray of int, shape (n_pairs,)
        Valid row indices of ``A`` and ``B``.

    Returns
    -------
    ndarray of shape (n_pairs,)
    """
    out = np.empty(rows.size)
    for n in range(rows.size):
        a, b = A[rows[n]], B[cols[n]]
        s = 0.0
        for k in range(A.shape[1]):
            s += a[k] * b[k]
        out[n] = s
    return out
