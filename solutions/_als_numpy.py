r"""ALS's half-step and predictions in plain NumPy: where Numba is missing (in a browser's Pyodide).

The same two functions as :mod:`solutions._als_kernels`, with the same arguments, results and
choice of form per row (primal :math:`(\sum_s x_s x_s^\top + \lambda I_D) w = \sum_s y_s x_s`, or
dual :math:`(X_r X_r^\top + \lambda I_n)\alpha = y_r`, :math:`w = X_r^\top \alpha` when
:math:`\lambda > 0` and the row has fewer entries than unknowns). Each row costs a few NumPy calls,
so a sweep over MovieLens takes about a second instead of a few hundredths: use it only where the
compiled kernels cannot run. ``tests/test_matrix_completion.py`` checks that both give the same
factors.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ridge_rows", "pair_dot"]

_EPS = np.finfo(float).eps


def _solve_spd(A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Solve the symmetric positive definite ``A x = b`` by Cholesky; ``None`` if singular.

    Singular means a pivot not above ``n * eps`` times its diagonal entry, as in the kernels.
    """
    n = A.shape[0]
    try:
        R = np.linalg.cholesky(A)  # lower: A = R R^T
    except np.linalg.LinAlgError:
        return None
    if np.any(~(np.diag(R) ** 2 > n * _EPS * np.diag(A))):
        return None
    return np.linalg.solve(R.T, np.linalg.solve(R, b))


def ridge_rows(indptr, indices, targets, X, reg, out) -> int:
    r"""Solve every row's ridge regression into ``out``; return ``-1``, or the first singular row.

    Parameters and result as :func:`solutions._als_kernels.ridge_rows`.
    """
    D = X.shape[1]
    for r in range(indptr.size - 1):
        lo, hi = indptr[r], indptr[r + 1]
        out[r] = 0.0
        if hi == lo:
            continue
        Xr, y = X[indices[lo:hi]], targets[lo:hi]
        if reg > 0 and hi - lo < D:
            alpha = _solve_spd(Xr @ Xr.T + reg * np.eye(hi - lo), y)
            if alpha is None:
                return r
            out[r] = alpha @ Xr
        else:
            w = _solve_spd(Xr.T @ Xr + reg * np.eye(D), y @ Xr)
            if w is None:
                return r
            out[r] = w
    return -1


def pair_dot(A, B, rows, cols) -> np.ndarray:
    """Return ``out[n] = A[rows[n]] @ B[cols[n]]``, shape ``(n_pairs,)``."""
    return np.einsum("ij,ij->i", A[rows], B[cols])
