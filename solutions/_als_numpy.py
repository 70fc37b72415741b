r"""ALS's half-step and predictions in plain NumPy: where Numba is missing (in a browser's Pyodide).

The same two functions as :mod:`solutions._als_kernels`, with the same arguments, results and
choice of form per row: primal :math:`(\sum_s x_s x_s^\top + \lambda I_D) w = \sum_s y_s x_s`, or
dual :math:`(X_r X_r^\top + \lambda I_n)\alpha = y_r`, :math:`w = X_r^\top \alpha` when
:math:`\lambda > 0` and the row has fewer entries than unknowns.

**Batched solves.** A Python loop over rows would cost a dozen NumPy calls per row (about a second
per MovieLens sweep). Instead the rows are grouped, and each group's systems are built and solved
at once on stacked arrays:

- *dual rows* (``n < D`` entries) are grouped by their exact count ``n``: the group's feature
  rows are gathered into an ``(m, n, D)`` array :math:`\mathcal X`, its systems
  :math:`\mathcal X \mathcal X^\top + \lambda I_n` (``(m, n, n)``) are solved by one
  :func:`numpy.linalg.solve`, and :math:`w = \mathcal X^\top \alpha`;
- *primal rows* are grouped by counts rounded up to a geometric ladder (ratio 5/4), each row padded
  with entries whose feature row is zero and whose target is zero. Padding adds exact zeros to
  :math:`\sum_s x_s x_s^\top` and :math:`\sum_s y_s x_s`, so the systems are unchanged, and there
  are only a few dozen groups however many distinct counts the data have (at most a quarter more
  arithmetic). Each group's ``(m, D, D)`` Gram matrices come from one batched ``matmul``.

Every group is first factorised by a batched Cholesky :func:`numpy.linalg.cholesky`, the kernels'
test of singularity (a pivot not above ``n * eps`` times its diagonal entry); only if that fails
(possible only with :math:`\lambda = 0`) is the group walked row by row to find the first singular
row, as the kernel reports it. The group's systems are then solved by one batched
:func:`numpy.linalg.solve` (LU; equal to the Cholesky solution to rounding). The gathered arrays
hold ``nnz * D`` numbers in all (16 MB for MovieLens with ``D = 20``), processed one group at a time.

``tests/solutions/test_matrix_completion.py`` checks that this path gives the compiled kernels' factors,
losses and predictions to 1e-10; ``benchmarks/bench_matrix_completion.py`` times it against them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["ridge_rows", "pair_dot"]

_EPS = np.finfo(float).eps
#: Ratio of the ladder of padded row lengths of the primal groups.
_LADDER = 1.25


def _singular(A: np.ndarray) -> np.ndarray:
    """Which matrices of a stack ``(m, n, n)`` are singular, by the kernels' Cholesky test.

    Returns a boolean array of shape ``(m,)``. When the batched factorisation fails (some matrix
    not positive definite, possible only with ``reg = 0``) the stack is tested matrix by matrix.
    """
    n = A.shape[-1]
    diag = np.diagonal(A, axis1=1, axis2=2)
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return np.array([_solve_spd(a, np.zeros(n)) is None for a in A])
    pivots = np.diagonal(L, axis1=1, axis2=2) ** 2
    return ~np.all(pivots > n * _EPS * diag, axis=1)


def _solve_spd(A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Solve one symmetric positive definite ``A x = b`` by Cholesky; ``None`` if singular."""
    n = A.shape[0]
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return None
    if np.any(~(np.diag(L) ** 2 > n * _EPS * np.diag(A))):
        return None
    return np.linalg.solve(L.T, np.linalg.solve(L, b))


def _solve_group(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    r"""Solve the stacked systems ``A[k] x[k] = b[k]``; shapes ``(m, n, n)``, ``(m, n)``.

    Returns ``(x, first)``: ``x`` of shape ``(m, n)`` and the position in the stack of the first
    singular system, or ``-1``.
    """
    singular = _singular(A)
    if singular.any():
        return np.zeros_like(b), int(np.argmax(singular))
    return np.linalg.solve(A, b[..., None])[..., 0], -1


def _groups(counts: np.ndarray, dual: np.ndarray):
    """Yield ``(rows, width)``: rows of equal dual count, or primal rows padded to a ladder step.

    ``rows`` are increasing row numbers; every row in it has at most ``width`` entries.
    """
    primal = ~dual & (counts > 0)
    for n in np.unique(counts[dual]):
        yield np.flatnonzero(dual & (counts == n)), int(n)
    if not primal.any():
        return
    steps = np.ceil(np.log(counts[primal]) / np.log(_LADDER)).astype(np.int64)
    widths = np.zeros(counts.size, dtype=np.int64)
    widths[primal] = np.maximum(np.ceil(_LADDER ** steps), counts[primal])
    for width in np.unique(widths[primal]):
        yield np.flatnonzero(widths == width), int(width)


def ridge_rows(indptr, indices, targets, X, reg, out) -> int:
    r"""Solve every row's ridge regression into ``out``; return ``-1``, or the first singular row.

    Parameters and result as :func:`solutions._als_kernels.ridge_rows`: ``out`` of shape
    ``(n_rows, D)`` is overwritten with :math:`w_r` (0 for rows without entries). When a row is
    singular, rows other than the solved groups' are left as they are.
    """
    n_rows, D = indptr.size - 1, X.shape[1]
    counts = np.diff(indptr)
    dual = (counts > 0) & (counts < D) if reg > 0 else np.zeros(n_rows, dtype=bool)
    # One extra zero feature row and zero target: the padding entries of the primal groups.
    Xz = np.vstack([X, np.zeros((1, D))])
    cols = np.append(indices, X.shape[0])
    ys = np.append(targets, 0.0)
    pad = indices.size
    out[counts == 0] = 0.0
    first = n_rows
    for rows, width in _groups(counts, dual):
        offsets = np.arange(width)
        entry = indptr[rows, None] + offsets
        entry = np.where(offsets < counts[rows, None], entry, pad)  # (m, width)
        Xg, yg = Xz[cols[entry]], ys[entry]  # (m, width, D), (m, width)
        if dual[rows[0]]:
            A = Xg @ np.swapaxes(Xg, 1, 2)  # (m, n, n)
            A[:, offsets, offsets] += reg
            alpha, bad = _solve_group(A, yg)
            W = (alpha[:, None, :] @ Xg)[:, 0]
        else:
            A = np.swapaxes(Xg, 1, 2) @ Xg  # (m, D, D)
            A[:, np.arange(D), np.arange(D)] += reg
            W, bad = _solve_group(A, (yg[:, None, :] @ Xg)[:, 0])
        if bad >= 0:
            first = min(first, int(rows[bad]))
            continue
        out[rows] = W
    return -1 if first == n_rows else first


def pair_dot(A, B, rows, cols) -> np.ndarray:
    """Return ``out[n] = A[rows[n]] @ B[cols[n]]``, shape ``(n_pairs,)``."""
    return np.einsum("ij,ij->i", A[rows], B[cols])
