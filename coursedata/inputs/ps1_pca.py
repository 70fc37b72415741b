"""Seeded inputs for problem set 1 (PCA and the SVD)."""

import numpy as np


def _data(seed: int, n: int, d: int) -> np.ndarray:
    """Correlated data with a decaying spectrum and a non-zero mean, shape (n, d)."""
    rng = np.random.default_rng(seed)
    scales = 4.0 * 0.6 ** np.arange(d)
    rotation, _ = np.linalg.qr(rng.normal(size=(d, d)))
    return rng.normal(size=(n, d)) * scales @ rotation.T + rng.normal(scale=3.0, size=d)


def _basis(seed: int, k: int, d: int) -> np.ndarray:
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(d, k)))
    return q.T


def _digits() -> np.ndarray:
    from coursedata import load_digits

    return load_digits().X[:400]


CASES = {
    "center": lambda: {"X": _data(1, 40, 6)},
    "pca_eig": lambda: {"X": _data(2, 80, 7), "k": 3},
    "pca_eig_wide": lambda: {"X": _data(3, 12, 20), "k": 5},
    "pca_svd": lambda: {"X": _data(4, 80, 7), "k": 3},
    "pca_svd_wide": lambda: {"X": _data(5, 12, 20), "k": 5},
    "project": lambda: {"X": _data(6, 30, 6), "mean": _data(7, 1, 6)[0], "components": _basis(8, 2, 6)},
    "reconstruct": lambda: {"Z": _data(9, 30, 2), "mean": _data(10, 1, 6)[0],
                            "components": _basis(11, 2, 6)},
    "best_rank_k": lambda: {"X": _data(12, 25, 10), "k": 4},
    "best_rank_k_wide": lambda: {"X": _data(13, 6, 15), "k": 2},
    "reconstruction_error_small": lambda: {"X": _data(14, 30, 6), "k": 2},
    "reconstruction_error": lambda: {"X": _digits(), "k": 10},
    "components_for_variance_small": lambda: {"X": _data(15, 40, 6), "fraction": 0.9},
    "components_for_variance": lambda: {"X": _digits(), "fraction": 0.9},
    "components_for_variance_wide": lambda: {"X": _data(16, 10, 20), "fraction": 0.97},
}
