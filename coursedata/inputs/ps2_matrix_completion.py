"""Seeded inputs for problem set 2 (matrix completion by alternating least squares).

Data generation only (students can read this file). A rating matrix is a dense array ``R`` of
shape (n_users, n_items) with a boolean ``mask`` of the same shape, True where a rating was
observed. Ratings are a noisy low-rank matrix around 3 stars (plus user and item effects for the
bias model). The entries of ``R`` where ``mask`` is False are **not** ratings: they hold arbitrary
numbers (never zeros), so a function that reads them gives a different answer.

Some cases have users (items) with fewer ratings than factors, or with no rating at all: their
ridge systems are singular without the penalty.

Fixed factors given to the half-steps are drawn exactly as the problem set's ALS initialises the
item factors: ``numpy.random.default_rng(seed).normal(0, 1 / sqrt(k), size=(rows, k))``, with
the seed listed in ``START_SEEDS``.
"""

import numpy as np

#: Seed of the fixed factors of each half-step case (see the module docstring).
START_SEEDS = {
    "update_users": 21, "update_users_few": 22, "update_users_strong": 23,
    "update_items": 31, "update_items_few": 32,
}


def _ratings(seed: int, n_users: int, n_items: int, rank: int, density: float, *,
             noise: float = 0.3, biases: bool = False, user_counts: dict | None = None,
             item_counts: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A noisy rank-``rank`` rating matrix and its mask of observed entries.

    ``user_counts`` (``item_counts``) maps a row (column) to its exact number of observed
    entries; every other row and column has at least one. Unobserved entries are filled with
    numbers drawn uniformly from [-9, -6] or [6, 9].
    """
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n_users, rank))
    B = rng.normal(size=(n_items, rank))
    full = 3.0 + A @ B.T / np.sqrt(rank) + noise * rng.normal(size=(n_users, n_items))
    if biases:
        full += rng.normal(0.0, 0.8, size=(n_users, 1)) + rng.normal(0.0, 0.6, size=(1, n_items))
    mask = rng.random((n_users, n_items)) < density
    user_counts = user_counts or {}
    item_counts = item_counts or {}
    for i in range(n_users):
        if i not in user_counts and not mask[i].any():
            mask[i, rng.integers(n_items)] = True
    for j in range(n_items):
        if j not in item_counts and not mask[:, j].any():
            candidates = [i for i in range(n_users) if i not in user_counts] or list(range(n_users))
            mask[rng.choice(candidates), j] = True
    for i, count in user_counts.items():
        mask[i] = False
        mask[i, rng.choice(n_items, size=count, replace=False)] = True
    for j, count in item_counts.items():
        mask[:, j] = False
        mask[rng.choice(n_users, size=count, replace=False), j] = True
    garbage = rng.uniform(6.0, 9.0, size=full.shape) * rng.choice([-1.0, 1.0], size=full.shape)
    return np.where(mask, full, garbage), mask


def _start(case: str, rows: int, k: int) -> np.ndarray:
    return np.random.default_rng(START_SEEDS[case]).normal(0.0, 1.0 / np.sqrt(k), size=(rows, k))


def _objective(seed: int, n_users: int, n_items: int, k: int, reg: float) -> dict:
    R, mask = _ratings(seed, n_users, n_items, k, 0.5)
    rng = np.random.default_rng(seed + 1000)
    return {"R": R, "mask": mask, "U": rng.normal(size=(n_users, k)),
            "Z": rng.normal(size=(n_items, k)), "reg": reg}


def _users(case: str, seed: int, n_users: int, n_items: int, k: int, reg: float,
           density: float, user_counts=None) -> dict:
    R, mask = _ratings(seed, n_users, n_items, k, density, user_counts=user_counts)
    return {"R": R, "mask": mask, "Z": _start(case, n_items, k), "reg": reg}


def _items(case: str, seed: int, n_users: int, n_items: int, k: int, reg: float,
           density: float, item_counts=None) -> dict:
    R, mask = _ratings(seed, n_users, n_items, k, density, item_counts=item_counts)
    return {"R": R, "mask": mask, "U": _start(case, n_users, k), "reg": reg}


def _rmse(seed: int, n_users: int, n_items: int, density: float) -> dict:
    R, mask = _ratings(seed, n_users, n_items, 2, density)
    rng = np.random.default_rng(seed + 1000)
    return {"R_true": R, "R_pred": R + rng.normal(0.0, 0.8, size=R.shape), "mask": mask}


def _als(seed: int, n_users: int, n_items: int, k: int, reg: float, n_iters: int,
         density: float, *, biases: bool = False, user_counts=None, item_counts=None) -> dict:
    R, mask = _ratings(seed, n_users, n_items, k, density, biases=biases,
                       user_counts=user_counts, item_counts=item_counts)
    return {"R": R, "mask": mask, "k": k, "reg": reg, "n_iters": n_iters, "seed": seed + 500}


CASES = {
    "objective": lambda: _objective(1, 12, 9, 3, 0.7),
    "objective_wide": lambda: _objective(2, 7, 15, 2, 2.5),
    "objective_noreg": lambda: _objective(3, 10, 10, 4, 0.0),
    "rmse": lambda: _rmse(4, 12, 9, 0.5),
    "rmse_sparse": lambda: _rmse(5, 30, 20, 0.1),
    "update_users": lambda: _users("update_users", 6, 15, 12, 3, 0.5, 0.5),
    "update_users_few": lambda: _users("update_users_few", 7, 14, 10, 4, 0.1, 0.6,
                                       user_counts={0: 1, 3: 2, 5: 3, 8: 0}),
    "update_users_strong": lambda: _users("update_users_strong", 8, 9, 16, 2, 10.0, 0.4),
    "update_items": lambda: _items("update_items", 9, 12, 15, 3, 0.5, 0.5),
    "update_items_few": lambda: _items("update_items_few", 10, 10, 14, 4, 0.2, 0.6,
                                       item_counts={1: 1, 4: 3, 9: 0}),
    "als": lambda: _als(11, 20, 15, 2, 0.3, 15, 0.5),
    "als_few": lambda: _als(12, 30, 24, 3, 1.0, 25, 0.35, user_counts={0: 1, 7: 2},
                            item_counts={5: 1}),
    "als_one_sweep": lambda: _als(13, 12, 10, 2, 0.5, 1, 0.5),
    "biases": lambda: _als(14, 25, 20, 2, 1.0, 15, 0.5, biases=True),
    "biases_few": lambda: _als(15, 30, 22, 3, 2.0, 20, 0.35, biases=True,
                               user_counts={2: 1, 9: 0}, item_counts={4: 1}),
}
