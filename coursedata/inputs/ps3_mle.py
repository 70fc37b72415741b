"""Seeded inputs for problem set 3 (maximum likelihood)."""

import numpy as np


def _flips(seed: int, n: int, p: float) -> np.ndarray:
    """``n`` coin flips (1 heads, 0 tails) with heads probability ``p``, as int64."""
    return (np.random.default_rng(seed).random(n) < p).astype(np.int64)


def _grid(n: int) -> np.ndarray:
    """``n`` equally spaced heads probabilities from 0 to 1, both ends included."""
    return np.linspace(0.0, 1.0, n)


def _normal(seed: int, n: int, mean: float, sd: float) -> np.ndarray:
    return np.random.default_rng(seed).normal(mean, sd, size=n)


def _labels(seed: int, n: int, probs) -> np.ndarray:
    """``n`` integer labels drawn with the given category probabilities (zeros allowed)."""
    probs = np.asarray(probs, dtype=float)
    return np.random.default_rng(seed).choice(probs.size, size=n, p=probs / probs.sum())


def _gamma(seed: int, n: int, shape: float, rate: float) -> np.ndarray:
    return np.random.default_rng(seed).gamma(shape, 1.0 / rate, size=n)


def _waiting() -> np.ndarray:
    """Old Faithful: minutes until the next eruption, 272 values."""
    from coursedata import load_faithful

    return load_faithful().X[:, 1].copy()


def _duration() -> np.ndarray:
    """Old Faithful: eruption durations in minutes, 272 values."""
    from coursedata import load_faithful

    return load_faithful().X[:, 0].copy()


CASES = {
    # Bernoulli log-likelihood on a grid of theta that includes 0 and 1
    "bernoulli_grid": lambda: {"theta": _grid(21), "x": _flips(1, 60, 0.35)},
    "bernoulli_all_tails": lambda: {"theta": _grid(11), "x": np.zeros(12, dtype=np.int64)},
    "bernoulli_all_heads": lambda: {"theta": _grid(11), "x": np.ones(9, dtype=np.int64)},
    "bernoulli_scalar": lambda: {"theta": 0.3, "x": _flips(2, 40, 0.3)},
    "bernoulli_long": lambda: {"theta": _grid(41)[1:-1], "x": _flips(3, 5000, 0.55)},
    # Gaussian
    "gaussian": lambda: {"x": _normal(4, 30, 10.0, 3.0)},
    "gaussian_small": lambda: {"x": _normal(5, 4, -2.0, 1.5)},
    "gaussian_large": lambda: {"x": _normal(6, 3000, 250.0, 0.4)},
    # Categorical
    "categorical": lambda: {"x": _labels(7, 50, [0.1, 0.3, 0.2, 0.25, 0.15]), "n_categories": 5},
    "categorical_unseen_last": lambda: {"x": _labels(8, 40, [0.5, 0.2, 0.3, 0.0, 0.0]),
                                        "n_categories": 5},
    "categorical_unseen_middle": lambda: {"x": _labels(9, 200, [0.2, 0.0, 0.3, 0.0, 0.4, 0.1]),
                                          "n_categories": 6},
    "categorical_one": lambda: {"x": np.zeros(7, dtype=np.int64), "n_categories": 1},
    # Gamma log-likelihood
    "gamma_ll": lambda: {"x": _gamma(10, 50, 2.5, 1.7), "shape": 2.5, "rate": 1.7},
    "gamma_ll_faithful": lambda: {"x": _waiting(), "shape": 25.0, "rate": 0.35},
    "gamma_ll_large_shape": lambda: {"x": _gamma(11, 80, 300.0, 30.0), "shape": 290.0, "rate": 29.0},
    "gamma_ll_small_shape": lambda: {"x": _gamma(12, 60, 0.4, 2.0), "shape": 0.45, "rate": 2.5},
    # Gamma score
    "gamma_score": lambda: {"x": _gamma(13, 50, 3.0, 0.5), "shape": 2.0, "rate": 0.8},
    "gamma_score_faithful": lambda: {"x": _waiting(), "shape": 20.0, "rate": 0.3},
    "gamma_score_small_shape": lambda: {"x": _gamma(14, 70, 0.6, 4.0), "shape": 0.5, "rate": 3.0},
    # Gamma MLE
    "gamma_mle": lambda: {"x": _gamma(15, 200, 3.0, 2.0)},
    "gamma_mle_faithful": lambda: {"x": _waiting()},
    "gamma_mle_duration": lambda: {"x": _duration()},
    "gamma_mle_small_shape": lambda: {"x": _gamma(16, 500, 0.3, 0.01)},
}
