"""Trusted checks for problem set 2: matrix completion by alternating least squares.

The reference is :mod:`solutions.matrix_completion` (``objective``, ``rmse`` and the ``ALS``
estimator, with and without biases). The student's functions work on a dense array ``R`` with a
boolean ``mask``; the reference on the sparse matrix of the observed entries (explicitly stored,
so that the pattern, not the values, says what was observed).

What is compared, so that every correct answer passes:

- The half-steps have a unique answer for a fixed other factor and ``reg > 0``, so the factors
  are compared. The reference half-step is one sweep of ``ALS``: its user step starts from the
  item factors ``default_rng(seed).normal(0, 1/sqrt(k), (M, k))``, which is exactly how the input
  generators draw the fixed factors (``START_SEEDS``); the item step of ``R`` is the user step of
  ``R.T``.
- ALS factors are never compared (``U Q`` and ``Z Q`` fit equally well for any orthogonal
  ``Q``): a run is checked by its predictions ``U Z^T`` on the unobserved entries, by the
  objective of the returned factors (recomputed here), by its recorded losses against the
  reference's ``loss_history_`` from the same start, and by the losses never increasing. With
  biases, the predictions ``mu + b_i + c_j + u_i^T z_j`` on every entry and the biases themselves
  (which are not rotation-ambiguous) are compared as well.
- A visible cell earns its point only when every value its hidden part recorded is right (all
  or nothing), as its visible test asserts values; the hidden cells give partial credit per
  case and per independent part.

Tolerances. The objective and RMSE are closed forms compared to ``rtol=1e-9``. The half-steps are
well-conditioned ridge solves (``reg >= 0.1`` with factors of norm about one), compared to
``rtol=1e-6``. Runs of up to 25 sweeps from the same start agree with the reference to about
1e-13 (any correct order of floating-point operations); they are compared to ``rtol=1e-6``, while
a wrong start, order of half-steps or penalty moves them by more than 1e-3.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from autograder.checks.answers import Answers, unpack
from autograder.checks.compare import check_shape, compare
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
from coursedata.inputs.ps2_matrix_completion import START_SEEDS
from solutions.matrix_completion import ALS, objective, rmse

PROBLEM_SET = "ps2_matrix_completion"

VALUE_TOL = {"rtol": 1e-9, "atol": 1e-12}
STEP_TOL = {"rtol": 1e-6, "atol": 1e-8}
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
        return f"{what} should be a 1-D array; yours has shape {values.shape}"
    if not np.all(np.isfinite(values)):
        return f"{what} contains NaN or infinite values"
    if values.size < 2:
        return None
    steps = np.diff(values)
    rises = np.flatnonzero(steps > rtol * max(abs(values[0]), 1e-300))
    if rises.size:
        t = int(rises[0])
        return (f"{what}: the value rises from {values[t]:.6g} to {values[t + 1]:.6g} at step "
                f"{t + 2}, but it can never increase ({rises.size} rise(s) in all)")
    return None


def all_finite(got, what: str) -> str | None:
    """Return a message if ``got`` has NaN or infinite values."""
    if not np.all(np.isfinite(np.asarray(got, dtype=float))):
        return f"{what} contains NaN or infinite values"
    return None


# --------------------------------------------------------------------------------------------
# Reference computations
# --------------------------------------------------------------------------------------------


def _sparse(R: np.ndarray, mask: np.ndarray) -> sp.csr_matrix:
    """The observed entries of ``R`` as a CSR matrix, every one stored (even a rating of 0)."""
    rows, cols = np.nonzero(mask)
    return sp.csr_matrix((R[rows, cols], (rows, cols)), shape=R.shape)


def _check_start(case: str, factors: np.ndarray) -> None:
    """The fixed factors of a half-step case must be ALS's start for the seed in START_SEEDS."""
    rows, k = factors.shape
    start = np.random.default_rng(START_SEEDS[case]).normal(0.0, 1.0 / np.sqrt(k), size=(rows, k))
    if not np.array_equal(start, factors):
        raise RuntimeError(f"the inputs of {case!r} no longer match ALS's initialisation")


#: The two half-steps: the item step is the user step of the transposed ratings.
_SIDES = {
    "users": dict(fixed="Z", transpose=False, solved="U", rows="users", each="user",
                  few="{n} of whom rated fewer than k = {k} movies"),
    "items": dict(fixed="U", transpose=True, solved="Z", rows="movies", each="movie",
                  few="{n} of which have fewer than k = {k} ratings"),
}


def _reference_step(case: str, inp: dict, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact ridge half-step of ``inp`` and the mask it used, rows being the solved side.

    One sweep of ALS from the same fixed factors gives the user step; the item step is the user
    step of the transposed ratings.
    """
    spec = _SIDES[side]
    fixed = inp[spec["fixed"]]
    _check_start(case, fixed)
    R, mask = (inp["R"].T, inp["mask"].T) if spec["transpose"] else (inp["R"], inp["mask"])
    model = ALS(n_factors=fixed.shape[1], reg=inp["reg"], n_iters=1,
                random_state=START_SEEDS[case]).fit(_sparse(R, mask))
    return model.user_factors_, mask


def _reference_run(inp: dict, biases: bool) -> ALS:
    return ALS(n_factors=inp["k"], reg=inp["reg"], n_iters=inp["n_iters"],
               random_state=inp["seed"], biases=biases).fit(_sparse(inp["R"], inp["mask"]))


def _describe(inp: dict) -> str:
    R, mask = inp["R"], inp["mask"]
    n_few = int(np.sum(mask.sum(axis=1) < inp.get("k", 0))) if "k" in inp else 0
    text = f"a {R.shape[0]}x{R.shape[1]} rating matrix with {int(mask.sum())} observed entries"
    if n_few:
        text += f" ({n_few} user(s) with fewer than k = {inp['k']} ratings)"
    return text


# --------------------------------------------------------------------------------------------
# Question 1: the objective
# --------------------------------------------------------------------------------------------


def _objective_value(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = objective(_sparse(inp["R"], inp["mask"]), inp["U"], inp["Z"], inp["reg"])
    what = f"J for {_describe(inp)}, k = {inp['U'].shape[1]} and reg = {inp['reg']:g}"
    return compare(unpack(a, case, 1)[0], expected, what, **VALUE_TOL)


def masked_objective_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _objective_value(a, "objective")))


def masked_objective_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.4, guarded(lambda: _objective_value(a, "objective"))),
        (0.4, guarded(lambda: _objective_value(a, "objective_wide"))),
        (0.2, guarded(lambda: _objective_value(a, "objective_noreg"))))


# --------------------------------------------------------------------------------------------
# Question 2: RMSE
# --------------------------------------------------------------------------------------------


def rmse_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _rmse_value(a, "rmse")))


def _rmse_value(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    mask = inp["mask"]
    expected = rmse(inp["R_true"][mask], inp["R_pred"][mask])
    what = (f"the RMSE over the {int(mask.sum())} True entries of a "
            f"{mask.shape[0]}x{mask.shape[1]} mask")
    return compare(unpack(a, case, 1)[0], expected, what, **VALUE_TOL)


def rmse_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.5, guarded(lambda: _rmse_value(a, "rmse"))),
        (0.5, guarded(lambda: _rmse_value(a, "rmse_sparse"))))


# --------------------------------------------------------------------------------------------
# Questions 3 and 4: the half-steps
# --------------------------------------------------------------------------------------------


def _step_value(a: Answers, case: str, side: str) -> str | None:
    spec = _SIDES[side]
    inp = a.inputs(case)
    expected, mask = _reference_step(case, inp, side)
    counts = mask.sum(axis=1)
    k = inp[spec["fixed"]].shape[1]
    detail = ", " + spec["few"].format(n=int(np.sum(counts < k)), k=k) if np.any(counts < k) \
        else ""
    what = (f"{spec['solved']} for {mask.shape[0]} {spec['rows']}{detail} (reg = "
            f"{inp['reg']:g}; compare with the ridge solution of each {spec['each']})")
    return compare(unpack(a, case, 1)[0], expected, what, **STEP_TOL)


def update_users_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _step_value(a, "update_users", "users")))


def update_items_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _step_value(a, "update_items", "items")))


def update_users_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.3, guarded(lambda: _step_value(a, "update_users", "users"))),
        (0.4, guarded(lambda: _step_value(a, "update_users_few", "users"))),
        (0.3, guarded(lambda: _step_value(a, "update_users_strong", "users"))))


def update_items_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.5, guarded(lambda: _step_value(a, "update_items", "items"))),
        (0.5, guarded(lambda: _step_value(a, "update_items_few", "items"))))


# --------------------------------------------------------------------------------------------
# Questions 5 and 6: ALS without and with biases
# --------------------------------------------------------------------------------------------


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
        return compare(predicted[unobserved], ref.predict_all()[unobserved],
                       f"the predictions U Zᵀ on the unobserved entries for {where}", **RUN_TOL)

    def final_objective():
        (U, Z, _), problem = parts()
        return problem or compare(_student_objective(inp, U, Z), ref.loss_history_[-1],
                                  f"the objective J of your returned U and Z for {where}",
                                  **RUN_TOL)

    def losses():
        (_, _, L), problem = parts()
        return problem or non_increasing(L, "your losses") or compare(
            L, ref.loss_history_, f"the objective after each sweep for {where} (same start, "
            "a user step then an item step)", **RUN_TOL)

    return [(0.4 * weight, guarded(predictions)), (0.3 * weight, guarded(final_objective)),
            (0.3 * weight, guarded(losses))]


def als_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _als_parts(a, "als", 1.0)])


def als_hidden(a: Answers) -> Outcome:
    return weighted(*_als_parts(a, "als", 0.4), *_als_parts(a, "als_few", 0.4),
                    *_als_parts(a, "als_one_sweep", 0.2))


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
        return compare(predicted, ref.predict_all(),
                       f"the predictions μ + b_i + c_j + u_iᵀz_j for {where}", **RUN_TOL)

    def bias_values():
        (_, _, b, c, mu, _), problem = parts()
        return (problem
                or compare(mu, ref.global_mean_, "mu (the mean of the observed ratings)",
                           **VALUE_TOL)
                or compare(b, ref.user_bias_, f"the user biases b for {where}", **RUN_TOL)
                or compare(c, ref.item_bias_, f"the movie biases c for {where}", **RUN_TOL))

    def final_objective():
        (U, Z, b, c, mu, _), problem = parts()
        if problem:
            return problem
        J = _student_objective(inp, U, Z, global_mean=float(mu), user_bias=b, item_bias=c)
        return compare(J, ref.loss_history_[-1], f"the objective J (biases penalised) of your "
                                                 f"returned parameters for {where}", **RUN_TOL)

    def losses():
        (*_, L), problem = parts()
        return problem or non_increasing(L, "your losses") or compare(
            L, ref.loss_history_, f"the objective after each sweep for {where} (same start, "
            "biases penalised, mu fixed)", **RUN_TOL)

    return [(0.4 * weight, guarded(predictions)), (0.2 * weight, guarded(bias_values)),
            (0.2 * weight, guarded(final_objective)), (0.2 * weight, guarded(losses))]


def als_with_biases_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _biases_parts(a, "biases", 1.0)])


def als_with_biases_hidden(a: Answers) -> Outcome:
    return weighted(*_biases_parts(a, "biases", 0.5), *_biases_parts(a, "biases_few", 0.5))


#: Wrong-looking answers that are right: ``(function, outputs, transform)`` of the generic
#: mutants in ``tests/psharness.py`` that must keep full marks.
EQUIVALENT_FORMS = {
    ("als", (0, 1), "negated"): "U Zᵀ, the objective and the losses are the same for -U and -Z",
    ("als_with_biases", (0, 1), "negated"): "U Zᵀ and the objective are the same for -U and -Z",
}

CHECKS = {
    "masked_objective_visible": masked_objective_visible,
    "masked_objective_hidden": masked_objective_hidden,
    "rmse_visible": rmse_visible,
    "rmse_hidden": rmse_hidden,
    "update_users_visible": update_users_visible,
    "update_users_hidden": update_users_hidden,
    "update_items_visible": update_items_visible,
    "update_items_hidden": update_items_hidden,
    "als_visible": als_visible,
    "als_hidden": als_hidden,
    "als_with_biases_visible": als_with_biases_visible,
    "als_with_biases_hidden": als_with_biases_hidden,
}
