"""Trusted checks for problem set 5: kernel density estimation and KDE naive Bayes.

The references are :mod:`solutions.kde` (kernels, :class:`~solutions.kde.KernelDensity`, the
leave-one-out log-likelihood, bandwidth selection and the rules of thumb as SciPy defines them)
and :class:`solutions.naive_bayes.KDENaiveBayes`. Besides matching the reference values, a
density evaluated on a grid must integrate to one, and naive Bayes log-posteriors must be
normalised row by row; these properties only explain a wrong answer (wrong answers can have
them too), they earn nothing on their own.

A visible cell earns its point only when every value its hidden part recorded is right (all or
nothing), as its visible test asserts values; hidden cells give partial credit per case and, for
the bandwidth selection, for the chosen bandwidth and the scores.
"""

from __future__ import annotations

import functools

import numpy as np

from autograder.checks.answers import Answers, scalar, unpack
from autograder.checks.compare import check_shape, compare, integrates_to_one, log_probability_rows
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
from coursedata.grading import inputs
from solutions.kde import (KernelDensity, epanechnikov_kernel, loo_log_likelihood,
                           select_bandwidth, uniform_kernel)
from solutions.naive_bayes import KDENaiveBayes

PROBLEM_SET = "ps5_kde"

_KERNELS = {"uniform": uniform_kernel, "epanechnikov": epanechnikov_kernel}


# ------------------------------------------------------------------ Q1 kernels
def _kernel_problem(a: Answers, name: str, case: str) -> str | None:
    u = a.inputs(case)["u"]
    shape = "x".join(map(str, u.shape))
    return guarded(lambda: compare(unpack(a, case, 1)[0], _KERNELS[name](u),
                                   f"the {name} kernel on a {shape} array of u",
                                   rtol=1e-12, atol=1e-12))


def kernels_visible(a: Answers) -> Outcome:
    return first_problem(*[_kernel_problem(a, name, f"{name}_kernel") for name in _KERNELS])


def kernels_hidden(a: Answers) -> Outcome:
    return weighted(*[(0.25, _kernel_problem(a, name, case)) for name in _KERNELS
                      for case in (f"{name}_kernel", f"{name}_kernel_2d")])


# ------------------------------------------------------------------ Q2 kde_pdf
def _reference_pdf(inp: dict) -> np.ndarray:
    kde = KernelDensity(kernel=inp.get("kernel", "gaussian"), bandwidth=inp["h"]).fit(inp["data"])
    return kde.pdf(inp["x_query"])


def _pdf_values(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    what = (f"the {inp.get('kernel', 'gaussian')}-kernel estimate (N = {inp['data'].size}, "
            f"h = {inp['h']})")
    return guarded(lambda: compare(unpack(a, case, 1)[0], _reference_pdf(inp), what,
                                   rtol=1e-8, atol=1e-12))


def _pdf_integral(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    what = (f"your {inp.get('kernel', 'gaussian')}-kernel estimate of the Old Faithful data "
            f"(h = {inp['h']})")
    return guarded(lambda: integrates_to_one(unpack(a, case, 1)[0], inp["x_query"], what))


def kde_pdf_visible(a: Answers) -> Outcome:
    return first_problem(_pdf_values(a, "kde_pdf"))


def kde_pdf_hidden(a: Answers) -> Outcome:
    # On a grid over the data, a right estimate integrates to one; that property alone is met
    # by wrong estimates (another bandwidth), so it only explains a wrong value.
    return weighted(
        (0.15, _pdf_values(a, "kde_pdf")),
        (0.15, _pdf_values(a, "kde_pdf_uniform")),
        (0.15, _pdf_values(a, "kde_pdf_epanechnikov")),
        (0.3, _pdf_integral(a, "kde_pdf_waiting_grid") or _pdf_values(a, "kde_pdf_waiting_grid")),
        (0.25, _pdf_integral(a, "kde_pdf_eruptions_grid")
         or _pdf_values(a, "kde_pdf_eruptions_grid")),
    )


# ------------------------------------------------------------------ Q3 rules of thumb
def _rule(a: Answers, case: str, rule: str) -> str | None:
    data = a.inputs(case)["data"]
    expected = KernelDensity(bandwidth=rule).fit(data).bandwidth_
    return guarded(lambda: compare(scalar(a, case, f"{rule.title()}'s bandwidth"), expected,
                                   f"{rule.title()}'s bandwidth for N = {data.size}",
                                   rtol=1e-9))


def bandwidth_rules_visible(a: Answers) -> Outcome:
    return first_problem(*[_rule(a, rule, rule) for rule in ("scott", "silverman")])


def bandwidth_rules_hidden(a: Answers) -> Outcome:
    return weighted(*[(0.25, _rule(a, case, rule)) for rule in ("scott", "silverman")
                      for case in (rule, f"{rule}_small")])


# ------------------------------------------------------------------ Q4 LOO
def _loo(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = loo_log_likelihood(inp["data"], inp["h"], kernel="gaussian")
    what = f"the leave-one-out log-likelihood (N = {inp['data'].size}, h = {inp['h']})"
    return guarded(lambda: compare(scalar(a, case, what), expected, what, rtol=1e-8, atol=1e-8))


def loo_log_likelihood_visible(a: Answers) -> Outcome:
    return first_problem(_loo(a, "loo"))


def loo_log_likelihood_hidden(a: Answers) -> Outcome:
    return weighted((0.25, _loo(a, "loo")), (0.35, _loo(a, "loo_outlier")),
                    (0.2, _loo(a, "loo_waiting")), (0.2, _loo(a, "loo_small")))


# ------------------------------------------------------------------ Q5 selection
@functools.lru_cache(maxsize=None)
def _reference_selection(case: str) -> tuple[float, np.ndarray]:
    """The reference choice and scores of a seeded case, computed once per process (each is a
    leave-one-out fit per candidate); the scores are read-only."""
    inp = inputs(PROBLEM_SET, case)
    best, scores = select_bandwidth(inp["data"], inp["candidates"], kernel="gaussian",
                                    return_scores=True)
    scores = np.array(scores, dtype=float)
    scores.setflags(write=False)
    return float(best), scores


def _selection(a: Answers, case: str) -> tuple[str | None, str | None]:
    inp = a.inputs(case)
    best, scores = _reference_selection(case)
    n = inp["data"].size

    def best_problem():
        got = scalar(a, case, "the chosen bandwidth", of=2)
        if np.isclose(got, best, rtol=1e-9, atol=0.0):
            return None
        return (f"the chosen bandwidth for N = {n} is {float(got):.6g}; the candidate with the "
                f"largest leave-one-out log-likelihood is {best:.6g}")

    def scores_problem():
        got = unpack(a, case, 2)[1]
        return compare(got, scores, f"the leave-one-out scores for N = {n}", rtol=1e-8, atol=1e-8)

    return guarded(best_problem), guarded(scores_problem)


def select_bandwidth_visible(a: Answers) -> Outcome:
    return first_problem(*_selection(a, "select_bandwidth"))


def select_bandwidth_hidden(a: Answers) -> Outcome:
    parts = []
    for case in ("select_bandwidth", "select_bandwidth_waiting", "select_bandwidth_bimodal"):
        best_problem, scores_problem = _selection(a, case)
        parts += [(0.6 / 3, best_problem), (0.4 / 3, scores_problem)]
    return weighted(*parts)


# ------------------------------------------------------------------ Q6 KDE naive Bayes
def _reference_log_posterior(inp: dict) -> np.ndarray:
    model = KDENaiveBayes(kernel="gaussian", bandwidth=inp["h"]).fit(inp["X_train"], inp["y_train"])
    return model.predict_log_proba(inp["X_test"])


def _nb(a: Answers, case: str) -> str | None:
    """Normalised rows (the clearer message) and the reference's values: normalisation alone is
    met by wrong answers, so it only explains a wrong value."""
    inp = a.inputs(case)
    expected = _reference_log_posterior(inp)
    what = (f"the log-posteriors ({inp['X_test'].shape[0]} test rows, "
            f"{inp['X_train'].shape[1]} features, h = {inp['h']})")

    def problem():
        got = unpack(a, case, 1)[0]
        return (check_shape(got, expected.shape, what) or log_probability_rows(got, what)
                or compare(got, expected, what, rtol=1e-7, atol=1e-7))

    return guarded(problem)


def kde_naive_bayes_visible(a: Answers) -> Outcome:
    return first_problem(_nb(a, "nb"))


def kde_naive_bayes_hidden(a: Answers) -> Outcome:
    return weighted(*[(weight, _nb(a, case))
                      for case, weight in (("nb", 0.3), ("nb_wine", 0.3), ("nb_outlier", 0.4))])


CHECKS = {
    "kernels_visible": kernels_visible,
    "kernels_hidden": kernels_hidden,
    "kde_pdf_visible": kde_pdf_visible,
    "kde_pdf_hidden": kde_pdf_hidden,
    "bandwidth_rules_visible": bandwidth_rules_visible,
    "bandwidth_rules_hidden": bandwidth_rules_hidden,
    "loo_log_likelihood_visible": loo_log_likelihood_visible,
    "loo_log_likelihood_hidden": loo_log_likelihood_hidden,
    "select_bandwidth_visible": select_bandwidth_visible,
    "select_bandwidth_hidden": select_bandwidth_hidden,
    "kde_naive_bayes_visible": kde_naive_bayes_visible,
    "kde_naive_bayes_hidden": kde_naive_bayes_hidden,
}
