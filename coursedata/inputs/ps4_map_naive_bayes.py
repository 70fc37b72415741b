"""Seeded inputs for problem set 4 (MAP smoothing and naive Bayes).

Only data generation lives here (students can read this file). The synthetic training sets are
built so that smoothing matters: in every class some feature is never on (binary data) or some
category never occurs (categorical data), and the last category of each categorical feature is
declared through ``n_categories`` but never observed at all. The real-data cases take seeded
subsets of the OpenIntro spam e-mails and of the Titanic passengers.
"""

import numpy as np


def _labels(rng: np.random.Generator, n: int, n_classes: int) -> np.ndarray:
    """Integer labels 0..n_classes-1, each occurring at least twice, in random order."""
    y = np.concatenate([np.repeat(np.arange(n_classes), 2),
                        rng.integers(0, n_classes, n - 2 * n_classes)])
    rng.shuffle(y)
    return y


def _binary_data(seed: int, n: int, d: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Binary X of shape (n, d) and labels y; feature c is never on in class c, and feature
    d-1-c is always on in class c (zero counts both ways)."""
    rng = np.random.default_rng(seed)
    y = _labels(rng, n, n_classes)
    p = rng.beta(0.7, 0.7, size=(n_classes, d))
    X = (rng.random((n, d)) < p[y]).astype(float)
    for c in range(n_classes):
        X[y == c, c] = 0.0
        X[y == c, d - 1 - c] = 1.0
    return X, y


def _categorical_data(seed: int, n: int, n_categories, n_classes: int):
    """Category codes X of shape (n, D) and labels y. The last category of every feature never
    occurs; category 0 of feature c never occurs in class c."""
    rng = np.random.default_rng(seed)
    y = _labels(rng, n, n_classes)
    cols = []
    for d, k in enumerate(n_categories):
        probs = rng.dirichlet(np.full(k - 1, 0.8), size=n_classes)   # only k-1 categories used
        u = rng.random(n)
        col = (u[:, None] > np.cumsum(probs[y], axis=1)).sum(axis=1)
        col = np.minimum(col, k - 2)
        if d < n_classes:
            col[(y == d) & (col == 0)] = 1
        cols.append(col)
    return np.column_stack(cols).astype(np.int64), y.astype(np.int64)


def _log_blocks(rng: np.random.Generator, n_classes: int, n_categories) -> np.ndarray:
    """log theta of shape (n_classes, sum K_d): each feature's block is a log-probability vector."""
    blocks = [np.log(rng.dirichlet(np.full(k, 0.7), size=n_classes)) for k in n_categories]
    return np.clip(np.hstack(blocks), -30.0, 0.0)


def _bernoulli_params(seed: int, n_classes: int, d: int, beta=(0.4, 0.4)):
    rng = np.random.default_rng(seed)
    theta = np.clip(rng.beta(*beta, size=(n_classes, d)), 1e-3, 1 - 1e-3)
    return np.log(rng.dirichlet(np.full(n_classes, 3.0))), np.log(theta)


def _subsets(data, seed: int, sizes: tuple[int, ...], dtype=None):
    """Disjoint seeded subsets of a data set, as (X, y) pairs (X cast to ``dtype`` if given)."""
    perm = np.random.default_rng(seed).permutation(len(data.y))
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [(data.X[perm[lo:hi]].astype(dtype or data.X.dtype), data.y[perm[lo:hi]])
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def _spam(seed: int, *sizes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Disjoint seeded subsets of the spam e-mails, as (X float 0/1, y) pairs."""
    from coursedata import load_spam_email

    return _subsets(load_spam_email(), seed, sizes, dtype=float)


def _titanic(seed: int, *sizes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Disjoint seeded subsets of the Titanic passengers, as (X categories, y) pairs."""
    from coursedata import load_titanic

    return _subsets(load_titanic(), seed, sizes)


TITANIC_CATEGORIES = (4, 2, 2)


def _beta_map():
    rng = np.random.default_rng(1)
    return {"n_ones": rng.integers(0, 8, size=(6, 1)).astype(float),
            "n_zeros": rng.integers(0, 8, size=(6, 1)).astype(float),
            "a": np.array([2.0, 1.5, 5.0, 3.0]), "b": np.array([2.0, 4.0, 1.5, 10.0])}


def _beta_map_large():
    rng = np.random.default_rng(2)
    n = np.array([10.0, 100.0, 1000.0, 1e4, 1e5, 1e6])
    n_ones = np.floor(n * rng.uniform(0.05, 0.3, size=n.shape))
    return {"n_ones": n_ones, "n_zeros": n - n_ones, "a": 3.0, "b": 12.0}


def _fit_bernoulli_spam():
    [(X, y)] = _spam(3, 400)
    return {"X": X, "y": y, "alpha": 1.0}


def _spam_filter(seed: int, n_train: int, n_test: int, alpha: float):
    (X_train, y_train), (X_test, _) = _spam(seed, n_train, n_test)
    return {"X_train": X_train, "y_train": y_train, "X_test": X_test, "alpha": alpha}


def _joint_bernoulli():
    log_prior, log_theta = _bernoulli_params(4, 3, 10)
    X = (np.random.default_rng(5).random((25, 10)) < 0.4).astype(float)
    return {"X": X, "log_prior": log_prior, "log_theta": log_theta}


def _joint_bernoulli_spam():
    [(X, _)] = _spam(6, 60)
    log_prior, log_theta = _bernoulli_params(7, 2, X.shape[1], beta=(0.5, 2.0))
    return {"X": X, "log_prior": log_prior, "log_theta": log_theta}


def _log_proba():
    return {"joint": np.random.default_rng(8).normal(loc=-20.0, scale=5.0, size=(20, 3))}


def _log_proba_large():
    rng = np.random.default_rng(9)
    joint = rng.normal(scale=3.0, size=(12, 4))
    joint[:6] -= 5000.0      # every exp underflows to 0
    joint[6:] += 900.0       # every exp overflows to inf
    return {"joint": joint}


def _log_proba_neginf():
    rng = np.random.default_rng(10)
    joint = rng.normal(loc=-40.0, scale=10.0, size=(15, 3))
    rows = np.arange(0, 15, 2)
    joint[rows, rng.integers(0, 3, size=rows.size)] = -np.inf   # probability 0, never a whole row
    return {"joint": joint}


def _one_hot():
    n_categories = np.array([3, 5, 2, 4])
    rng = np.random.default_rng(11)
    X = np.column_stack([rng.integers(0, k - 1, size=30) for k in n_categories])  # last unused
    return {"X": X, "n_categories": n_categories}


def _one_hot_single():
    return {"X": np.random.default_rng(12).integers(0, 6, size=(10, 1)),
            "n_categories": np.array([6])}


def _fit_categorical(seed, n, n_categories, n_classes, alpha):
    X, y = _categorical_data(seed, n, n_categories, n_classes)
    return {"X": X, "y": y, "n_categories": np.array(n_categories), "alpha": alpha}


def _fit_categorical_titanic():
    [(X, y)] = _titanic(13, 150)
    return {"X": X, "y": y, "n_categories": np.array(TITANIC_CATEGORIES), "alpha": 1.0}


def _joint_categorical():
    n_categories = np.array([3, 4, 2, 5])
    rng = np.random.default_rng(14)
    X = np.column_stack([rng.integers(0, k, size=25) for k in n_categories])
    return {"X": X, "n_categories": n_categories,
            "log_prior": np.log(rng.dirichlet(np.full(3, 3.0))),
            "log_theta": _log_blocks(rng, 3, n_categories)}


def _joint_categorical_titanic():
    [(X, _)] = _titanic(15, 50)
    rng = np.random.default_rng(16)
    return {"X": X, "n_categories": np.array(TITANIC_CATEGORIES),
            "log_prior": np.log(np.array([0.68, 0.32])),
            "log_theta": _log_blocks(rng, 2, TITANIC_CATEGORIES)}


def _titanic_filter(seed: int, n_train: int, n_test: int, alpha: float):
    (X_train, y_train), (X_test, _) = _titanic(seed, n_train, n_test)
    return {"X_train": X_train, "y_train": y_train, "X_test": X_test,
            "n_categories": np.array(TITANIC_CATEGORIES), "alpha": alpha}


CASES = {
    "beta_map": _beta_map,
    "beta_map_scalar": lambda: {"n_ones": 0.0, "n_zeros": 7.0, "a": 3.0, "b": 2.0},
    "beta_map_large": _beta_map_large,
    "fit_bernoulli": lambda: dict(zip(("X", "y"), _binary_data(20, 60, 12, 3)), alpha=1.0),
    "fit_bernoulli_half": lambda: dict(zip(("X", "y"), _binary_data(21, 40, 9, 2)), alpha=0.5),
    "fit_bernoulli_spam": _fit_bernoulli_spam,
    "joint_bernoulli": _joint_bernoulli,
    "joint_bernoulli_spam": _joint_bernoulli_spam,
    "log_proba": _log_proba,
    "log_proba_large": _log_proba_large,
    "log_proba_neginf": _log_proba_neginf,
    "spam_filter": lambda: _spam_filter(22, 800, 300, 1.0),
    "spam_filter_small": lambda: _spam_filter(23, 120, 200, 0.5),
    "one_hot": _one_hot,
    "one_hot_single": _one_hot_single,
    "fit_categorical": lambda: _fit_categorical(24, 80, (3, 5, 2, 4), 3, 1.0),
    "fit_categorical_alpha": lambda: _fit_categorical(25, 50, (4, 3, 6), 2, 0.3),
    "fit_categorical_titanic": _fit_categorical_titanic,
    "joint_categorical": _joint_categorical,
    "joint_categorical_titanic": _joint_categorical_titanic,
    "titanic_filter": lambda: _titanic_filter(26, 300, 400, 1.0),
    "titanic_filter_small": lambda: _titanic_filter(27, 30, 200, 0.5),
}
