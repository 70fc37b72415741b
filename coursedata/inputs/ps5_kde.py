"""Seeded inputs for problem set 5 (kernel density estimation and KDE naive Bayes).

Data generation only: synthetic samples, the Old Faithful eruptions and waiting times, and a few
standardised features of the UCI wine data split into training and test rows.
"""

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def _faithful_columns() -> tuple[np.ndarray, np.ndarray]:
    from coursedata import load_faithful

    X = load_faithful().X
    return X[:, 0].copy(), X[:, 1].copy()


def _eruptions() -> np.ndarray:
    return _faithful_columns()[0].copy()


def _waiting() -> np.ndarray:
    return _faithful_columns()[1].copy()


@lru_cache(maxsize=None)
def _wine_arrays() -> tuple[np.ndarray, np.ndarray]:
    from coursedata import load_wine

    data = load_wine()
    return data.X.copy(), data.y.copy()


def _bimodal(seed: int, n: int) -> np.ndarray:
    """A sample from 0.3 N(0, 1) + 0.7 N(5, 1)."""
    rng = np.random.default_rng(seed)
    first = rng.random(n) < 0.3
    return np.where(first, rng.normal(0.0, 1.0, n), rng.normal(5.0, 1.0, n))


def _kernel_points(seed: int, shape: tuple) -> np.ndarray:
    """Scaled distances spread over [-2.5, 2.5], with some just inside and outside +-1 and +-2."""
    rng = np.random.default_rng(seed)
    u = rng.uniform(-2.5, 2.5, size=shape)
    near = np.array([0.999, 1.001, -0.999, -1.001, 1.999, 2.001, -1.999, -2.001, 0.0, 0.5])
    flat = u.reshape(-1)
    flat[:near.size] = near
    return flat.reshape(shape)


def _outlier_sample(seed: int) -> np.ndarray:
    """A tight cluster plus two isolated points, far apart on the scale of a small bandwidth."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0.0, 0.3, 40), [6.0, -9.5]])


def _grid(x: np.ndarray, h: float, reach: float, n: int) -> np.ndarray:
    return np.linspace(x.min() - reach * h, x.max() + reach * h, n)


def _wine_split(seed: int, features: list[int], n_test: int) -> dict:
    """Standardised wine features (training mean and sd), a seeded train/test split."""
    X, y = _wine_arrays()
    rng = np.random.default_rng(seed)
    order = rng.permutation(y.size)
    test, train = order[:n_test], order[n_test:]
    Xf = X[:, features]
    mean, sd = Xf[train].mean(axis=0), Xf[train].std(axis=0)
    Z = (Xf - mean) / sd
    return {"X_train": Z[train], "y_train": y[train].copy(), "X_test": Z[test]}


def _nb_outlier(seed: int) -> dict:
    """Three classes labelled 2, 5, 7 of unequal size; one test row lies far from every class."""
    rng = np.random.default_rng(seed)
    sizes = {2: 12, 5: 25, 7: 18}
    centres = {2: [0.0, 0.0, 0.0], 5: [2.0, -1.0, 0.5], 7: [-1.5, 1.5, 2.0]}
    X = np.vstack([rng.normal(centres[c], 1.0, size=(m, 3)) for c, m in sizes.items()])
    y = np.concatenate([np.full(m, c) for c, m in sizes.items()])
    perm = rng.permutation(y.size)
    X_test = rng.normal(0.5, 1.5, size=(12, 3))
    X_test[3] = [40.0, 0.0, 0.0]
    X_test[8] = [1.0, -35.0, 30.0]
    return {"X_train": X[perm], "y_train": y[perm], "X_test": X_test, "h": 0.45}


CASES = {
    # Question 1: kernels
    "uniform_kernel": lambda: {"u": _kernel_points(1, (60,))},
    "epanechnikov_kernel": lambda: {"u": _kernel_points(2, (60,))},
    "uniform_kernel_2d": lambda: {"u": _kernel_points(3, (12, 9))},
    "epanechnikov_kernel_2d": lambda: {"u": _kernel_points(4, (12, 9))},
    # Question 2: the estimate
    "kde_pdf": lambda: {"x_query": np.random.default_rng(5).uniform(-4, 9, 50),
                        "data": _bimodal(6, 30), "h": 0.7},
    "kde_pdf_uniform": lambda: {"x_query": np.random.default_rng(7).uniform(-3, 8, 80),
                                "data": _bimodal(8, 45), "h": 0.61, "kernel": "uniform"},
    "kde_pdf_epanechnikov": lambda: {"x_query": np.random.default_rng(9).uniform(-3, 8, 80),
                                     "data": _bimodal(10, 45), "h": 0.83,
                                     "kernel": "epanechnikov"},
    "kde_pdf_waiting_grid": lambda: {"x_query": _grid(_waiting(), 3.1, 12.0, 3001),
                                     "data": _waiting(), "h": 3.1},
    "kde_pdf_eruptions_grid": lambda: {"x_query": _grid(_eruptions(), 0.2837, 2.0, 4001),
                                       "data": _eruptions(), "h": 0.2837,
                                       "kernel": "epanechnikov"},
    # Question 3: rules of thumb
    "scott": lambda: {"data": _eruptions()},
    "silverman": lambda: {"data": _eruptions()},
    "scott_small": lambda: {"data": _bimodal(11, 7)},
    "silverman_small": lambda: {"data": _bimodal(12, 7)},
    # Question 4: leave-one-out log-likelihood
    "loo": lambda: {"data": _eruptions(), "h": 0.3},
    "loo_outlier": lambda: {"data": _outlier_sample(13), "h": 0.05},
    "loo_waiting": lambda: {"data": _waiting(), "h": 2.5},
    "loo_small": lambda: {"data": _bimodal(14, 5), "h": 1.3},
    # Question 5: bandwidth selection
    "select_bandwidth": lambda: {"data": _eruptions(), "candidates": np.geomspace(0.03, 1.5, 25)},
    "select_bandwidth_waiting": lambda: {"data": _waiting(),
                                         "candidates": np.geomspace(0.5, 20.0, 21)},
    "select_bandwidth_bimodal": lambda: {"data": _bimodal(15, 300),
                                         "candidates": np.linspace(0.1, 2.0, 20)},
    # Question 6: KDE naive Bayes
    "nb": lambda: {**_wine_split(16, [0, 6, 9, 12], 40), "h": 0.4},
    "nb_wine": lambda: {**_wine_split(17, [1, 5, 10, 11, 3], 50), "h": 0.55},
    "nb_outlier": lambda: _nb_outlier(18),
}
