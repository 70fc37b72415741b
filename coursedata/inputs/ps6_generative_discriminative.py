"""Seeded inputs for problem set 6 (naive Bayes as a softmax, generative vs discriminative).

Data generation only (students can read this file): synthetic classes of unequal size, seeded
subsets of the standardised UCI breast cancer and wine data, random model parameters, and the
step sizes and iteration counts given to gradient descent. Labels are always 0, ..., C-1 with
every class present.
"""

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def _standardised(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features standardised over the whole data set (mean 0, sd 1 per column), and labels."""
    import coursedata

    data = {"cancer": coursedata.load_breast_cancer, "wine": coursedata.load_wine}[name]()
    X = (data.X - data.X.mean(axis=0)) / data.X.std(axis=0)
    return X, data.y.astype(np.int64)


def _real(name: str, seed: int, n: int, n_features: int | None = None) -> dict:
    """A seeded subset of n rows (and the first n_features columns) of a standardised data set."""
    X, y = _standardised(name)
    rows = np.sort(np.random.default_rng(seed).choice(y.size, size=n, replace=False))
    cols = slice(None) if n_features is None else slice(0, n_features)
    return {"X": X[rows, cols].copy(), "y": y[rows].copy()}


def _blobs(seed: int, n: int, d: int, n_classes: int, *, offset: float = 0.0) -> dict:
    """Gaussian classes of unequal size (each at least 3 rows) with different spreads."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(n_classes, 2.0))
    y = np.concatenate([np.repeat(np.arange(n_classes), 3),
                        rng.choice(n_classes, size=n - 3 * n_classes, p=weights)])
    rng.shuffle(y)
    centres = rng.normal(scale=2.0, size=(n_classes, d)) + offset
    spreads = rng.uniform(0.5, 1.5, size=(n_classes, d))
    X = centres[y] + spreads[y] * rng.normal(size=(n, d))
    return {"X": X, "y": y.astype(np.int64)}


def _logits(seed: int, shape: tuple, scale: float) -> dict:
    return {"Z": np.random.default_rng(seed).normal(scale=scale, size=shape)}


def _large_logits() -> dict:
    """Rows whose naive exponentials overflow or underflow, plus random huge logits."""
    fixed = np.array([[1000.0, -1000.0, 0.0],
                      [1000.0, 1000.0, 999.0],
                      [-1000.0, -1000.0, -1001.0],
                      [-5000.0, 0.0, 5000.0],
                      [710.0, 709.0, -745.0]])
    rng = np.random.default_rng(13)
    return {"Z": np.vstack([fixed, rng.normal(scale=800.0, size=(4, 3))])}


def _nb_parameters(seed: int, n: int, d: int, n_classes: int, *, far: float = 0.0) -> dict:
    """Random Gaussian naive Bayes parameters and query points (far from the means if far > 0)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2.0, size=(n_classes, d))
    variances = rng.gamma(3.0, 0.4, size=(n_classes, d))
    log_prior = np.log(rng.dirichlet(np.full(n_classes, 2.0)))
    X = rng.normal(scale=2.5, size=(n, d))
    if far:
        X = X + far * rng.choice([-1.0, 1.0], size=(n, d))
    return {"X": X, "means": means, "variances": variances, "log_prior": log_prior}


def _softmax_regression(seed: int, n: int, d: int, n_classes: int, *, w_scale: float,
                        x_scale: float, reg: float, X=None) -> dict:
    """Random weights and intercepts, data and one-hot targets for the cross-entropy."""
    rng = np.random.default_rng(seed)
    if X is None:
        X = rng.normal(scale=x_scale, size=(n, d))
    labels = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, X.shape[0] - n_classes)])
    return {"W": rng.normal(scale=w_scale, size=(n_classes, X.shape[1])),
            "b": rng.normal(scale=w_scale, size=n_classes),
            "X": X, "Y": np.eye(n_classes)[labels], "reg": reg}


def _standardise(data: dict) -> dict:
    X = data["X"]
    return dict(data, X=(X - X.mean(axis=0)) / X.std(axis=0))


def _fit_case(data: dict, reg: float, lr: float, n_iter: int) -> dict:
    return dict(data, reg=reg, lr=lr, n_iter=n_iter)


CASES = {
    # Question 1: softmax
    "softmax": lambda: _logits(1, (7, 4), 3.0),
    "softmax_large": _large_logits,
    "softmax_wide": lambda: _logits(2, (3, 40), 10.0),
    "softmax_one_row": lambda: _logits(3, (1, 5), 1.0),
    # Question 2: fitting Gaussian naive Bayes
    "gnb": lambda: _blobs(4, 60, 4, 3, offset=3.0),
    "gnb_wine": lambda: _real("wine", 5, 120),
    "gnb_cancer": lambda: _real("cancer", 6, 150),
    # Question 3: the Gaussian naive Bayes posterior
    "posterior": lambda: _nb_parameters(7, 10, 4, 3),
    "posterior_far": lambda: _nb_parameters(8, 12, 5, 4, far=60.0),
    "posterior_many": lambda: _nb_parameters(9, 30, 16, 10),
    # Question 4: the shared-variance model's linear weights
    "svw": lambda: _blobs(10, 45, 3, 3, offset=-2.0),
    "svw_cancer": lambda: _real("cancer", 11, 200),
    "svw_wine": lambda: _real("wine", 12, 120),
    # Question 5: cross-entropy and its gradient
    "ce": lambda: _softmax_regression(14, 20, 3, 4, w_scale=1.0, x_scale=1.0, reg=0.5),
    "ce_noreg": lambda: _softmax_regression(15, 30, 5, 3, w_scale=0.7, x_scale=2.0, reg=0.0),
    "ce_binary": lambda: _softmax_regression(16, 0, 0, 2, w_scale=0.3, x_scale=1.0, reg=2.0,
                                             X=_real("cancer", 17, 100)["X"]),
    "ce_large": lambda: _softmax_regression(18, 25, 4, 3, w_scale=30.0, x_scale=10.0, reg=0.1),
    # Question 6: logistic regression by gradient descent (each converges in n_iter steps)
    "fit_lr": lambda: _fit_case(_standardise(_blobs(19, 90, 3, 3)), reg=9.0, lr=0.8, n_iter=300),
    "fit_lr_cancer": lambda: _fit_case(_real("cancer", 20, 200, 10), reg=20.0, lr=0.5, n_iter=300),
    "fit_lr_wine": lambda: _fit_case(_real("wine", 21, 150), reg=30.0, lr=0.8, n_iter=300),
}
