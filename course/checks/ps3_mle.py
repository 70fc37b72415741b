"""Trusted checks for problem set 3 (maximum likelihood) that are not declared.

Every other autograded cell of problem set 3 declares its check next to the question, in the
source notebook's cell metadata (``course.check``, see :mod:`autograder.checks.declared`): the
reference in :mod:`solutions.mle`, the seeded inputs, the tolerances (closed forms and
log-likelihoods to ``rtol=1e-8``, since a sum of N terms in double precision in any order agrees
far better; the Gamma MLE, an iterative root, to a relative ``1e-7``, far looser than rounding
error and far tighter than an unconverged Newton iteration) and the weights.

The score (question 5: `gamma_score_visible`, `gamma_score_hidden`) stays here: it is close to
zero near the MLE, so each entry is compared with an absolute tolerance scaled by the size of
the terms it is a difference of, a formula of the inputs that a declaration does not state. Its
inputs are declared in the notebook like the others' (``answers.inputs(case)`` reads them).
"""

from __future__ import annotations

import numpy as np

from autograder.checks.answers import Answers, unpack
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
from coursedata.compare import check_shape, compare
from solutions.mle import gamma_score

PROBLEM_SET = "ps3_mle"


# --------------------------------------------------------------------------------------------
# Question 5: Gamma score
# --------------------------------------------------------------------------------------------


def _gamma_score_value(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    x, shape, rate = inp["x"], inp["shape"], inp["rate"]
    (got,) = unpack(a, case, 1)
    problem = check_shape(got, (2,), "the score")
    if problem:
        return problem
    expected = gamma_score(x, shape, rate)
    n = x.size
    # Each entry is a difference of terms of these sizes; rounding error is relative to them.
    scale_a = n * (abs(np.log(rate)) + abs(float(np.log(shape))) + 1.0) + np.sum(np.abs(np.log(x)))
    scale_b = n * shape / rate + np.sum(x)
    label = f"at a={shape:g}, b={rate:g} for N={n}"
    return compare(
        got[0], expected[0], f"∂ℓ/∂a {label}", rtol=1e-8, atol=1e-10 * scale_a
    ) or compare(got[1], expected[1], f"∂ℓ/∂b {label}", rtol=1e-8, atol=1e-10 * scale_b)


def gamma_score_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _gamma_score_value(a, "gamma_score")))


def gamma_score_hidden(a: Answers) -> Outcome:
    cases = ("gamma_score", "gamma_score_faithful", "gamma_score_small_shape")
    return weighted(*[(1 / 3, guarded(lambda c=c: _gamma_score_value(a, c))) for c in cases])


CHECKS = {
    "gamma_score_visible": gamma_score_visible,
    "gamma_score_hidden": gamma_score_hidden,
}
