"""Trusted checks for problem set 5: kernel density estimation and KDE naive Bayes.

The references are :mod:`solutions.kde` (kernels, :class:`~solutions.kde.KernelDensity`, the
leave-one-out log-likelihood, bandwidth selection and the rules of thumb as SciPy defines them)
and :class:`solutions.naive_bayes.KDENaiveBayes`. Besides matching the reference values, a
density evaluated on a grid must integrate to one, and naive Bayes log-posteriors must be
normalised row by row.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.common import (Answers, Outcome, check_shape, compare, first_problem,
                                      guarded, integrates_to_one, log_probability_rows, scalar,
                                      unpack, weighted)
from solutions.kde import (KernelDensity, epanechnikov_kernel, loo_log_likelihood,
                           select_bandwidth, uniform_kernel)
from solutions.naive_bayes import KDENaiveBayes

PROBLEM_SET = "ps5_kde"

_KERNELS = {"uniform": uniform_kernel, "epanechnikov": epanechnikov_kernel}


# ------------------------------------------------------------------ Q1 kernels
def kernels_visible(a: Answers) -> Outcome:
    problems = []
    for name in _KERNELS:
        u = a.inputs(f"{name}_kernel")["u"]
        problems.append(guarded(lambda: check_shape(unpack(a, f"{name}_kernel", 1)[0], u.shape,
                                                    f"the {name} kernel's values")))
    return first_problem(*problems)


def kernels_hidden(a: Answers) -> Outcome:
    parts = []
    for name, kernel in _KERNELS.items():
        for case in (f"{name}_kernel", f"{name}_kernel_2d"):
            u = a.inputs(case)["u"]
            shape = "x".join(map(str, u.shape))
            parts.append((0.25, guarded(lambda: compare(
                unpack(a, case, 1)[0], kernel(u), f"the {name} kernel on a {shape} array of u",
                rtol=1e-12, atol=1e-12))))
    return weighted(*parts)


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
    inp = a.inputs("kde_pdf")
    (p,) = unpack(a, "kde_pdf", 1)
    problem = check_shape(p, inp["x_query"].shape, "the estimate")
    if problem:
        return Outcome.failed(problem)
    if not np.all(np.isfinite(p)) or np.any(p < 0):
        return Outcome.failed("the estimate should be finite and non-negative")
    return Outcome.passed()


def kde_pdf_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.15, _pdf_values(a, "kde_pdf")),
        (0.15, _pdf_values(a, "kde_pdf_uniform")),
        (0.15, _pdf_values(a, "kde_pdf_epanechnikov")),
        (0.15, _pdf_values(a, "kde_pdf_waiting_grid")),
        (0.2, _pdf_integral(a, "kde_pdf_waiting_grid")),
        (0.2, _pdf_integral(a, "kde_pdf_eruptions_grid")),
    )


# ------------------------------------------------------------------ Q3 rules of thumb
def _rule(a: Answers, case: str, rule: str) -> str | None:
    data = a.inputs(case)["data"]
    expected = KernelDensity(bandwidth=rule).fit(data).bandwidth_
    return guarded(lambda: compare(scalar(a, case, f"{rule.title()}'s bandwidth"), expected,
                                   f"{rule.title()}'s bandwidth for N = {data.size}",
                                   rtol=1e-9))


def bandwidth_rules_visible(a: Answers) -> Outcome:
    problems = []
    for rule in ("scott", "silverman"):
        def problem(rule=rule):
            h = scalar(a, rule, f"{rule.title()}'s bandwidth")
            return None if np.isfinite(h) and h > 0 else (
                f"{rule.title()}'s bandwidth should be a positive number; yours is {float(h):.4g}")
        problems.append(guarded(problem))
    return first_problem(*problems)


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
    def problem():
        value = scalar(a, "loo", "the leave-one-out log-likelihood")
        return None if np.isfinite(value) else "the leave-one-out log-likelihood is not finite"
    return first_problem(guarded(problem))


def loo_log_likelihood_hidden(a: Answers) -> Outcome:
    return weighted((0.25, _loo(a, "loo")), (0.35, _loo(a, "loo_outlier")),
                    (0.2, _loo(a, "loo_waiting")), (0.2, _loo(a, "loo_small")))


# ------------------------------------------------------------------ Q5 selection
def _selection(a: Answers, case: str) -> tuple[str | None, str | None]:
    inp = a.inputs(case)
    best, scores = select_bandwidth(inp["data"], inp["candidates"], kernel="gaussian",
                                    return_scores=True)
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
    inp = a.inputs("select_bandwidth")
    best, scores = unpack(a, "select_bandwidth", 2)
    problem = check_shape(best, (), "the chosen bandwidth") or check_shape(
        scores, inp["candidates"].shape, "the scores")
    if problem:
        return Outcome.failed(problem)
    if not np.any(np.isclose(best, inp["candidates"], rtol=1e-12, atol=0.0)):
        return Outcome.failed(f"the chosen bandwidth {float(best):.6g} is not a candidate")
    return Outcome.passed()


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


def _nb(a: Answers, case: str) -> tuple[str | None, str | None]:
    inp = a.inputs(case)
    expected = _reference_log_posterior(inp)
    what = (f"the log-posteriors ({inp['X_test'].shape[0]} test rows, "
            f"{inp['X_train'].shape[1]} features, h = {inp['h']})")

    def values():
        return compare(unpack(a, case, 1)[0], expected, what, rtol=1e-7, atol=1e-7)

    def normalised():
        got = unpack(a, case, 1)[0]
        return check_shape(got, expected.shape, what) or log_probability_rows(got, what)

    return guarded(values), guarded(normalised)


def kde_naive_bayes_visible(a: Answers) -> Outcome:
    inp = a.inputs("nb")
    (got,) = unpack(a, "nb", 1)
    shape = (inp["X_test"].shape[0], np.unique(inp["y_train"]).size)
    return first_problem(check_shape(got, shape, "the log-posteriors")
                         or log_probability_rows(got, "the log-posteriors"))


def kde_naive_bayes_hidden(a: Answers) -> Outcome:
    parts = []
    for case, weight in (("nb", 0.3), ("nb_wine", 0.3), ("nb_outlier", 0.4)):
        values, normalised = _nb(a, case)
        parts += [(0.75 * weight, values), (0.25 * weight, normalised)]
    return weighted(*parts)


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
