"""Problem set 1 (PCA and the SVD): the generators of its inputs and its references.

Every autograded cell of problem set 1 declares its check next to the question, in the source
notebook's cell metadata (``course.check``, see :mod:`autograder.checks.declared`), so
``CHECKS`` is empty. The declarations name this module for what the declaration format's named
generators and :mod:`solutions` do not give as such:

- the inputs: :func:`correlated_data` (a random rotation of a decaying spectrum with a non-zero
  mean), :func:`correlated_point` (one such row: a mean), :func:`orthonormal_rows` (a basis)
  and :func:`digits` (the first 400 of the digits data);
- the references, named as the student's functions are (so that a declared symmetry names the
  function it exempts) and called with the same keyword arguments: thin wrappers around
  :class:`solutions.pca.PCA` and :func:`solutions.pca.low_rank_approximation`, or the
  one-line formula the lecture gives (centring, codes, reconstruction, the dropped squared
  singular values of the centred data, the number of components for a fraction of variance).

No check stays Python: each of the 14 cells compares returned values with a reference on seeded
inputs, which a declaration states. The declared tolerances are those of the hand-written checks
they replaced: the default (``rtol=1e-6``, ``atol=1e-9``), the components up to the sign of each
row to ``rtol=1e-5, atol=1e-7`` (two solvers agree to that, not to rounding), the rank-k
approximation to ``rtol=1e-6, atol=1e-8``, and the number of components as an integer. These
functions run only in the grader's process.
"""

from __future__ import annotations

import numpy as np

from solutions.pca import PCA, low_rank_approximation

PROBLEM_SET = "ps1_pca"
CHECKS: dict = {}


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def correlated_data(seed: int, n: int, d: int) -> np.ndarray:
    """Correlated data with a decaying spectrum and a non-zero mean.

    The rows are :math:`x = (z \\odot s) R^\\top + m` with :math:`z \\sim N(0, I_d)`, scales
    :math:`s_j = 4 \\cdot 0.6^j`, a random rotation :math:`R` and a mean
    :math:`m \\sim N(0, 9 I_d)`, all drawn from ``numpy.random.default_rng(seed)``.

    Parameters
    ----------
    seed, n, d : int

    Returns
    -------
    ndarray of shape (n, d)
    """
    rng = np.random.default_rng(seed)
    scales = 4.0 * 0.6 ** np.arange(d)
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return rng.normal(size=(n, d)) * scales @ rotation.T + rng.normal(scale=3.0, size=d)


def correlated_point(seed: int, d: int) -> np.ndarray:
    """One row of :func:`correlated_data` ``(seed, 1, d)``, shape (d,): a mean to subtract."""
    return correlated_data(seed, 1, d)[0]


def orthonormal_rows(seed: int, k: int, d: int) -> np.ndarray:
    """A random orthonormal basis of ``k`` directions in ``d`` dimensions, shape (k, d)
    (the Q factor of a standard normal ``(d, k)`` matrix, transposed)."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, k)))
    return q.T


def digits(n: int) -> np.ndarray:
    """The first ``n`` images of the digits data (``coursedata.load_digits``), shape (n, 64)."""
    from coursedata import load_digits

    return load_digits().X[:n]


# --------------------------------------------------------------------------------------------
# References, named and called as the student's functions
# --------------------------------------------------------------------------------------------


def center(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(X - m, m)`` with ``m`` the column means, shapes (N, D) and (D,)."""
    mean = X.mean(axis=0)
    return X - mean, mean


def pca_eig(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The top-``k`` components, shape (k, D), and their variances :math:`s_j^2 / N` (the
    covariance's eigenvalues, divisor N), shape (k,), by :class:`solutions.pca.PCA`."""
    pca = PCA(n_components=k).fit(X)
    return pca.components_, pca.singular_values_**2 / X.shape[0]


#: PCA by the SVD has the same answer.
pca_svd = pca_eig


def project(X: np.ndarray, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """The codes :math:`Z = (X - m) U`, shape (N, k), for ``components`` :math:`U^\\top`."""
    return (X - mean) @ components.T


def reconstruct(Z: np.ndarray, mean: np.ndarray, components: np.ndarray) -> np.ndarray:
    """The reconstructions :math:`m + Z U^\\top`, shape (N, D)."""
    return mean + Z @ components


def best_rank_k(X: np.ndarray, k: int) -> np.ndarray:
    """:func:`solutions.pca.low_rank_approximation` ``(X, k)``, shape (N, D)."""
    return low_rank_approximation(X, k)


def reconstruction_error(X: np.ndarray, k: int) -> float:
    """:math:`\\sum_{j > k} s_j^2` over the singular values of the centred ``X`` (Eckart-Young)."""
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    return float(np.sum(s[k:] ** 2))


def components_for_variance(X: np.ndarray, fraction: float) -> int:
    """The smallest ``k`` whose top-``k`` variances :math:`s_j^2` reach ``fraction`` of their sum."""
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    kept = np.cumsum(s**2) / np.sum(s**2)
    return int(np.argmax(kept >= fraction)) + 1
