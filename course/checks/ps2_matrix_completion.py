"""Trusted checks and grader-side inputs for problem set 2: matrix completion by alternating
least squares.

The reference is :mod:`solutions.matrix_completion` (``objective``, ``rmse``, the ridge half-step
of ``ALS`` and the ``ALS`` estimator, with and without biases). The student's functions work on a
dense array ``R`` with a boolean ``mask``; the reference on the sparse matrix of the observed
entries (explicitly stored, so that the pattern, not the values, says what was observed).

Declared in the source notebook (``course.check``, see :mod:`autograder.checks.declared`): the
objective, the RMSE and the two half-steps (questions 1 to 4), each compared with the reference
wrappers below on its seeded inputs. The objective and RMSE are closed forms compared to
``rtol=1e-9``; the half-steps have a unique answer for a fixed other factor and ``reg > 0``
(well-conditioned ridge solves, ``reg >= 0.1`` with factors of norm about one), compared to
``rtol=1e-6``.

Every case's inputs are declared there too, drawn by the generators below (grader-side: the kit
carries none of them). A rating matrix is a noisy low-rank matrix around 3 stars (plus user and
item effects for the bias model); the entries of ``R`` where ``mask`` is False hold arbitrary
numbers in [-9, -6] or [6, 9] (never zeros), so a function that reads them gives a different
answer. Some cases have users (items) with fewer ratings than factors, or none: their ridge
systems are singular without the penalty. A case's ``R`` and ``mask`` come from one call of
:func:`ratings` (declared ``"R, mask": {...}``), its ``U`` and ``Z`` from one of
:func:`factor_pair`, so their parameters cannot drift apart.

Questions 5 and 6's visible cells (``als_visible``, ``als_with_biases_visible``) are declared
too, with :func:`als_run` and :func:`als_with_biases_run` as references: a run from the stated
start is determined, but ALS factors only up to an orthogonal ``Q`` (``U Q`` and ``Z Q`` give the
same ``U Zᵀ`` and the same objective, penalty included: the lecture's section on the model), so
``U`` and ``Z`` are compared together, ``"compare": "orthogonal_together"`` (aligned by the one
``Q`` that fits both best, then each compared to ``rtol=1e-6``); the losses (and ``b``, ``c``,
``mu``) directly. The student's check judges them with the same comparison.

Still Python, one line per check (their inputs are declared like the others'):

- ``als_hidden``: a run is scored on values derived from what it returned, for partial credit
  per independent part: its predictions ``U Zᵀ`` on the unobserved entries, the objective of its
  factors recomputed here, and its losses (never increasing, and equal to the reference's from
  the same start), weighted 0.4 / 0.3 / 0.3 per case.
- ``als_with_biases_hidden``: the same for the bias model (predictions ``μ + b_i + c_j +
  u_iᵀz_j`` on every entry, the biases, the recomputed objective and the losses, 0.4 / 0.2 / 0.2
  / 0.2).

A visible cell earns its point only when every value its hidden part recorded is right (all or
nothing), as its visible test asserts values; the hidden cells give partial credit per case and
per independent part. Runs of up to 25 sweeps from the same start agree with the reference to
about 1e-13 (any correct order of floating-point operations); they are compared to ``rtol=1e-6``,
while a wrong start, order of half-steps or penalty moves them by more than 1e-3.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from autograder.checks.answers import Answers, unpack
from autograder.checks.outcome import Outcome, guarded, weighted
from coursedata.compare import check_shape, compare, your_rises, your_shape, your_value
from solutions.matrix_completion import ALS, _ridge_rows, objective, rmse

PROBLEM_SET = "ps2_matrix_completion"

VALUE_TOL = {"rtol": 1e-9, "atol": 1e-12}
RUN_TOL = {"rtol": 1e-6, "atol": 1e-7}


# --------------------------------------------------------------------------------------------
# Generic helpers (candidates for compare.py)
# --------------------------------------------------------------------------------------------


def non_increasing(values, what: str, *, rtol: float = 1e-9) -> str | None:
    """Return a message unless ``values`` (1-D) never increases by more than ``rtol * |values[0]|``.

    For iterative methods that provably never increase an objective (ALS, EM, exact coordinate
    descent): rounding may raise a converged value by a few ulps, never by more.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 1:
        return f"{what} should be a 1-D array; yours has {your_shape(values.shape, (0,))}"
    if not np.all(np.isfinite(values)):
        return f"{what} contains NaN or infinite values"
    if values.size < 2:
        return None
    steps = np.diff(values)
    rises = np.flatnonzero(steps > rtol * max(abs(values[0]), 1e-300))
    if rises.size:
        t = int(rises[0])
        return (
            f"{what}: the value rises from {your_value(values[t], '.6g')} to "
            f"{your_value(values[t + 1], '.6g')}{your_rises(t + 2, int(rises.size))}, "
            "but it can never increase"
        )
    return None


def all_finite(got, what: str) -> str | None:
    """Return a message if ``got`` has NaN or infinite values."""
    if not np.all(np.isfinite(np.asarray(got, dtype=float))):
        return f"{what} contains NaN or infinite values"
    return None


# --------------------------------------------------------------------------------------------
# Inputs (named in the notebook's declarations as "course.checks.ps2_matrix_completion:...")
# --------------------------------------------------------------------------------------------


def _counts(counts) -> dict[int, int]:
    """``{row: count}`` from a declaration (JSON keys are strings), in increasing row order."""
    return {int(i): int(n) for i, n in sorted((counts or {}).items(), key=lambda kv: int(kv[0]))}


def _ratings(
    seed: int,
    users: int,
    items: int,
    rank: int,
    density: float,
    *,
    biases: bool = False,
    user_counts=None,
    item_counts=None,
) -> tuple[np.ndarray, np.ndarray]:
    """A noisy rank-``rank`` rating matrix of shape (users, items) and its boolean mask.

    ``user_counts`` (``item_counts``) maps a row (column) to its exact number of observed
    entries; every other row and column has at least one. Unobserved entries are filled with
    numbers drawn uniformly from [-9, -6] or [6, 9].
    """
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(users, rank))
    B = rng.normal(size=(items, rank))
    full = 3.0 + A @ B.T / np.sqrt(rank) + 0.3 * rng.normal(size=(users, items))
    if biases:
        full += rng.normal(0.0, 0.8, size=(users, 1)) + rng.normal(0.0, 0.6, size=(1, items))
    mask = rng.random((users, items)) < density
    user_counts, item_counts = _counts(user_counts), _counts(item_counts)
    for i in range(users):
        if i not in user_counts and not mask[i].any():
            mask[i, rng.integers(items)] = True
    for j in range(items):
        if j not in item_counts and not mask[:, j].any():
            candidates = [i for i in range(users) if i not in user_counts] or list(range(users))
            mask[rng.choice(candidates), j] = True
    for i, count in user_counts.items():
        mask[i] = False
        mask[i, rng.choice(items, size=count, replace=False)] = True
    for j, count in item_counts.items():
        mask[:, j] = False
        mask[rng.choice(users, size=count, replace=False), j] = True
    garbage = rng.uniform(6.0, 9.0, size=full.shape) * rng.choice([-1.0, 1.0], size=full.shape)
    return np.where(mask, full, garbage), mask


def ratings(
    seed: int, users: int, items: int, rank: int, density: float, **options
) -> tuple[np.ndarray, np.ndarray]:
    """``(R, mask)`` of one seeded rating matrix: ``R`` float of shape (users, items), ``mask``
    bool of the same shape (declared together, ``"R, mask": {...}``). ``options``: ``biases``,
    ``user_counts``, ``item_counts`` (see :func:`_ratings`)."""
    return _ratings(seed, users, items, rank, density, **options)


def noisy_ratings(
    seed: int, users: int, items: int, rank: int, density: float, noise_seed: int, sd: float
) -> np.ndarray:
    """The ratings ``R`` of :func:`ratings` plus ``default_rng(noise_seed).normal(0, sd)`` noise
    on every entry: predictions about ``sd`` stars off."""
    R, _ = _ratings(seed, users, items, rank, density)
    return R + np.random.default_rng(noise_seed).normal(0.0, sd, size=R.shape)


def factor_pair(seed: int, users: int, items: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(U, Z)``: standard normal factors drawn in turn from ``default_rng(seed)``, ``U`` of
    shape (users, k), then ``Z`` of shape (items, k)."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(users, k)), rng.normal(size=(items, k))


def als_start(seed: int, rows: int, k: int) -> np.ndarray:
    """ALS's initial factors: ``default_rng(seed).normal(0, 1/sqrt(k), size=(rows, k))``."""
    return np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(k), size=(rows, k))


# --------------------------------------------------------------------------------------------
# References of the declared checks: the student's signatures, on the sparse observed entries
# --------------------------------------------------------------------------------------------


def _sparse(R: np.ndarray, mask: np.ndarray) -> sp.csr_matrix:
    """The observed entries of ``R`` as a CSR matrix, every one stored (even a rating of 0)."""
    rows, cols = np.nonzero(mask)
    return sp.csr_matrix((R[rows, cols], (rows, cols)), shape=R.shape)


def masked_objective(R, mask, U, Z, reg) -> float:
    """The objective J of factors ``U``, ``Z`` on the observed entries (``objective``)."""
    return objective(_sparse(R, mask), U, Z, reg)


def masked_rmse(R_true, R_pred, mask) -> float:
    """The RMSE over the entries where ``mask`` is True (``rmse``)."""
    return rmse(R_true[mask], R_pred[mask])


def update_users(R, mask, Z, reg) -> np.ndarray:
    """The exact ridge user step of ALS for fixed item factors ``Z``, shape (N, k)."""
    M = _sparse(R, mask)
    return _ridge_rows(M, M.data, Z, reg, "user")


def update_items(R, mask, U, reg) -> np.ndarray:
    """The exact ridge item step: the user step of the transposed ratings, shape (M, k)."""
    M = _sparse(R.T, mask.T)
    return _ridge_rows(M, M.data, U, reg, "item")


# --------------------------------------------------------------------------------------------
# Questions 5 and 6: ALS without and with biases
# --------------------------------------------------------------------------------------------


def _reference_run(inp: dict, biases: bool) -> ALS:
    return ALS(
        n_factors=inp["k"],
        reg=inp["reg"],
        n_iters=inp["n_iters"],
        random_state=inp["seed"],
        biases=biases,
    ).fit(_sparse(inp["R"], inp["mask"]))


def als_run(R, mask, k, reg, n_iters, seed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(U, Z, losses)`` of ALS from the stated start (the reference of ``als_visible``)."""
    ref = _reference_run(dict(R=R, mask=mask, k=k, reg=reg, n_iters=n_iters, seed=seed), False)
    return ref.user_factors_, ref.item_factors_, ref.loss_history_


def als_with_biases_run(R, mask, k, reg, n_iters, seed) -> tuple:
    """``(U, Z, b, c, mu, losses)`` of ALS with biases from the stated start (the reference of
    ``als_with_biases_visible``)."""
    ref = _reference_run(dict(R=R, mask=mask, k=k, reg=reg, n_iters=n_iters, seed=seed), True)
    return (
        ref.user_factors_,
        ref.item_factors_,
        ref.user_bias_,
        ref.item_bias_,
        ref.global_mean_,
        ref.loss_history_,
    )


def _describe(inp: dict) -> str:
    R, mask = inp["R"], inp["mask"]
    n_few = int(np.sum(mask.sum(axis=1) < inp.get("k", 0))) if "k" in inp else 0
    text = f"a {R.shape[0]}x{R.shape[1]} rating matrix with {int(mask.sum())} observed entries"
    if n_few:
        text += f" ({n_few} user(s) with fewer than k = {inp['k']} ratings)"
    return text


def _run_shapes(inp: dict, out: tuple, biases: bool) -> str | None:
    N, M = inp["R"].shape
    k, T = inp["k"], inp["n_iters"]
    names = ["U", "Z", "b", "c", "mu", "losses"] if biases else ["U", "Z", "losses"]
    shapes = [(N, k), (M, k), (N,), (M,), (), (T,)] if biases else [(N, k), (M, k), (T,)]
    for name, got, shape in zip(names, out, shapes):
        problem = check_shape(got, shape, name) or all_finite(got, name)
        if problem:
            return problem
    return None


def _student_objective(inp: dict, U, Z, **biases) -> float:
    """The objective J of a student's factors; overflowing factors give inf (judged wrong by the
    comparison), not a warning."""
    with np.errstate(over="ignore", invalid="ignore"):
        return objective(_sparse(inp["R"], inp["mask"]), U, Z, inp["reg"], **biases)


def _als_parts(a: Answers, case: str, weight: float) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    ref = _reference_run(inp, biases=False)
    where = f"{_describe(inp)}, k = {inp['k']}, reg = {inp['reg']:g}, {inp['n_iters']} sweep(s)"
    unobserved = ~inp["mask"]

    def parts():
        out = unpack(a, case, 3)
        return out, _run_shapes(inp, out, biases=False)

    def predictions():
        (U, Z, _), problem = parts()
        if problem:
            return problem
        with np.errstate(over="ignore", invalid="ignore"):  # huge factors: inf, judged wrong
            predicted = U @ Z.T
        return compare(
            predicted[unobserved],
            ref.predict_all()[unobserved],
            f"the predictions U Zᵀ on the unobserved entries for {where}",
            **RUN_TOL,
        )

    def final_objective():
        (U, Z, _), problem = parts()
        return problem or compare(
            _student_objective(inp, U, Z),
            ref.loss_history_[-1],
            f"the objective J of your returned U and Z for {where}",
            **RUN_TOL,
        )

    def losses():
        (_, _, L), problem = parts()
        return (
            problem
            or non_increasing(L, "your losses")
            or compare(
                L,
                ref.loss_history_,
                f"the objective after each sweep for {where} (same start, "
                "a user step then an item step)",
                **RUN_TOL,
            )
        )

    return [
        (0.4 * weight, guarded(predictions)),
        (0.3 * weight, guarded(final_objective)),
        (0.3 * weight, guarded(losses)),
    ]


def als_hidden(a: Answers) -> Outcome:
    return weighted(
        *_als_parts(a, "als", 0.4),
        *_als_parts(a, "als_few", 0.4),
        *_als_parts(a, "als_one_sweep", 0.2),
    )


def _biases_parts(a: Answers, case: str, weight: float) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    ref = _reference_run(inp, biases=True)
    where = f"{_describe(inp)}, k = {inp['k']}, reg = {inp['reg']:g}, {inp['n_iters']} sweeps"

    def parts():
        out = unpack(a, case, 6)
        return out, _run_shapes(inp, out, biases=True)

    def predictions():
        (U, Z, b, c, mu, _), problem = parts()
        if problem:
            return problem
        with np.errstate(over="ignore", invalid="ignore"):  # huge values: inf, judged wrong
            predicted = mu + b[:, None] + c[None, :] + U @ Z.T
        return compare(
            predicted,
            ref.predict_all(),
            f"the predictions μ + b_i + c_j + u_iᵀz_j for {where}",
            **RUN_TOL,
        )

    def bias_values():
        (_, _, b, c, mu, _), problem = parts()
        return (
            problem
            or compare(mu, ref.global_mean_, "mu (the mean of the observed ratings)", **VALUE_TOL)
            or compare(b, ref.user_bias_, f"the user biases b for {where}", **RUN_TOL)
            or compare(c, ref.item_bias_, f"the movie biases c for {where}", **RUN_TOL)
        )

    def final_objective():
        (U, Z, b, c, mu, _), problem = parts()
        if problem:
            return problem
        J = _student_objective(inp, U, Z, global_mean=float(mu), user_bias=b, item_bias=c)
        return compare(
            J,
            ref.loss_history_[-1],
            f"the objective J (biases penalised) of your returned parameters for {where}",
            **RUN_TOL,
        )

    def losses():
        (*_, L), problem = parts()
        return (
            problem
            or non_increasing(L, "your losses")
            or compare(
                L,
                ref.loss_history_,
                f"the objective after each sweep for {where} (same start, "
                "biases penalised, mu fixed)",
                **RUN_TOL,
            )
        )

    return [
        (0.4 * weight, guarded(predictions)),
        (0.2 * weight, guarded(bias_values)),
        (0.2 * weight, guarded(final_objective)),
        (0.2 * weight, guarded(losses)),
    ]


def als_with_biases_hidden(a: Answers) -> Outcome:
    return weighted(*_biases_parts(a, "biases", 0.5), *_biases_parts(a, "biases_few", 0.5))


CHECKS = {
    "als_hidden": als_hidden,
    "als_with_biases_hidden": als_with_biases_hidden,
}
