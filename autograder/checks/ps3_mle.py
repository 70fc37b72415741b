"""Trusted checks for problem set 3: maximum likelihood.

The reference is :mod:`solutions.mle`. Tolerances follow each problem's conditioning: the closed
forms and log-likelihoods are compared to ``rtol=1e-8`` (a sum of N terms computed in double
precision in any order agrees far better than that); the score is compared with an absolute
tolerance scaled by the size of the terms it is a difference of, because it is close to zero
near the MLE; the Gamma MLE, an iterative root, is compared to ``rtol=1e-7``, far looser than
rounding error (about 1e-13 here) and far tighter than an unconverged Newton iteration.

A visible cell earns its point only when every value its hidden part recorded is right (all or
nothing), as its visible test asserts values; hidden cells give partial credit per case.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.answers import Answers, unpack
from autograder.checks.compare import check_shape, compare, compare_extended, compare_relative
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
from solutions.mle import (bernoulli_log_likelihood, categorical_mle, gamma_log_likelihood,
                           gamma_mle, gamma_score, gaussian_mle)

PROBLEM_SET = "ps3_mle"


# --------------------------------------------------------------------------------------------
# Question 1: Bernoulli log-likelihood
# --------------------------------------------------------------------------------------------


def _bernoulli_value(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = np.asarray(bernoulli_log_likelihood(inp["theta"], inp["x"]))
    n, heads = inp["x"].size, int(inp["x"].sum())
    what = f"ℓ(θ) for {heads} heads in {n} flips"
    return compare_extended(unpack(a, case, 1)[0], expected, what, rtol=1e-8, atol=1e-10)


def bernoulli_log_likelihood_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _bernoulli_value(a, "bernoulli_grid")))


def bernoulli_log_likelihood_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.3, guarded(lambda: _bernoulli_value(a, "bernoulli_grid"))),
        (0.2, guarded(lambda: _bernoulli_value(a, "bernoulli_all_tails"))),
        (0.1, guarded(lambda: _bernoulli_value(a, "bernoulli_all_heads"))),
        (0.1, guarded(lambda: _bernoulli_value(a, "bernoulli_scalar"))),
        (0.3, guarded(lambda: _bernoulli_value(a, "bernoulli_long"))))


# --------------------------------------------------------------------------------------------
# Question 2: Gaussian
# --------------------------------------------------------------------------------------------


def _gaussian_values(a: Answers, case: str) -> list[tuple[float, str | None]]:
    x = a.inputs(case)["x"]
    mu, sigma = gaussian_mle(x)
    n = x.size
    return [
        (0.5, guarded(lambda: compare(unpack(a, case, 2)[0], mu, f"μ̂ for N={n}",
                                      rtol=1e-8, atol=1e-10))),
        (0.5, guarded(lambda: compare(unpack(a, case, 2)[1], sigma, f"σ̂ (divisor N) for N={n}",
                                      rtol=1e-8, atol=1e-10))),
    ]


def gaussian_mle_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _gaussian_values(a, "gaussian")])


def gaussian_mle_hidden(a: Answers) -> Outcome:
    parts = []
    for case in ("gaussian", "gaussian_small", "gaussian_large"):
        parts += [(w / 3, p) for w, p in _gaussian_values(a, case)]
    return weighted(*parts)


# --------------------------------------------------------------------------------------------
# Question 3: categorical
# --------------------------------------------------------------------------------------------


def _categorical_value(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = categorical_mle(inp["x"], inp["n_categories"])
    unseen = int(np.sum(expected == 0))
    what = (f"θ̂ for K={inp['n_categories']} categories and N={inp['x'].size} labels"
            + (f" ({unseen} categor{'y' if unseen == 1 else 'ies'} never observed)" if unseen else ""))
    return compare(unpack(a, case, 1)[0], expected, what, rtol=1e-10, atol=1e-12)


def categorical_mle_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _categorical_value(a, "categorical")))


def categorical_mle_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.25, guarded(lambda: _categorical_value(a, "categorical"))),
        (0.3, guarded(lambda: _categorical_value(a, "categorical_unseen_last"))),
        (0.3, guarded(lambda: _categorical_value(a, "categorical_unseen_middle"))),
        (0.15, guarded(lambda: _categorical_value(a, "categorical_one"))))


# --------------------------------------------------------------------------------------------
# Question 4: Gamma log-likelihood
# --------------------------------------------------------------------------------------------


def _gamma_ll_value(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = gamma_log_likelihood(inp["x"], inp["shape"], inp["rate"])
    what = f"ℓ(a={inp['shape']:g}, b={inp['rate']:g}) for N={inp['x'].size}"
    return compare(unpack(a, case, 1)[0], expected, what, rtol=1e-8, atol=1e-8)


def gamma_log_likelihood_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _gamma_ll_value(a, "gamma_ll")))


def gamma_log_likelihood_hidden(a: Answers) -> Outcome:
    cases = ("gamma_ll", "gamma_ll_faithful", "gamma_ll_large_shape", "gamma_ll_small_shape")
    return weighted(*[(0.25, guarded(lambda c=c: _gamma_ll_value(a, c))) for c in cases])


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
    return (compare(got[0], expected[0], f"∂ℓ/∂a {label}", rtol=1e-8, atol=1e-10 * scale_a)
            or compare(got[1], expected[1], f"∂ℓ/∂b {label}", rtol=1e-8, atol=1e-10 * scale_b))


def gamma_score_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _gamma_score_value(a, "gamma_score")))


def gamma_score_hidden(a: Answers) -> Outcome:
    cases = ("gamma_score", "gamma_score_faithful", "gamma_score_small_shape")
    return weighted(*[(1 / 3, guarded(lambda c=c: _gamma_score_value(a, c))) for c in cases])


# --------------------------------------------------------------------------------------------
# Question 6: Gamma MLE
# --------------------------------------------------------------------------------------------


def _gamma_mle_values(a: Answers, case: str, label: str) -> list[tuple[float, str | None]]:
    x = a.inputs(case)["x"]
    shape, rate = gamma_mle(x)
    return [
        (0.5, guarded(lambda: compare_relative(unpack(a, case, 2)[0], shape,
                                               f"the shape for {label}", rtol=1e-7))),
        (0.5, guarded(lambda: compare_relative(unpack(a, case, 2)[1], rate,
                                               f"the rate for {label}", rtol=1e-7))),
    ]


def gamma_mle_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _gamma_mle_values(a, "gamma_mle",
                                                           "simulated data (a = 3)")])


def gamma_mle_hidden(a: Answers) -> Outcome:
    cases = [("gamma_mle", "simulated data (a = 3)", 0.2),
             ("gamma_mle_faithful", "the Old Faithful waiting times", 0.3),
             ("gamma_mle_duration", "the Old Faithful eruption durations", 0.2),
             ("gamma_mle_small_shape", "simulated data with a small shape (a = 0.3)", 0.3)]
    parts = []
    for case, label, w in cases:
        parts += [(w * v, p) for v, p in _gamma_mle_values(a, case, label)]
    return weighted(*parts)


CHECKS = {
    "bernoulli_log_likelihood_visible": bernoulli_log_likelihood_visible,
    "bernoulli_log_likelihood_hidden": bernoulli_log_likelihood_hidden,
    "gaussian_mle_visible": gaussian_mle_visible,
    "gaussian_mle_hidden": gaussian_mle_hidden,
    "categorical_mle_visible": categorical_mle_visible,
    "categorical_mle_hidden": categorical_mle_hidden,
    "gamma_log_likelihood_visible": gamma_log_likelihood_visible,
    "gamma_log_likelihood_hidden": gamma_log_likelihood_hidden,
    "gamma_score_visible": gamma_score_visible,
    "gamma_score_hidden": gamma_score_hidden,
    "gamma_mle_visible": gamma_mle_visible,
    "gamma_mle_hidden": gamma_mle_hidden,
}
