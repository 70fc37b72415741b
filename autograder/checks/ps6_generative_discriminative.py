"""Trusted checks for problem set 6: naive Bayes as a softmax, generative vs discriminative.

The references are :mod:`solutions.linear_classifiers` (``softmax``, ``log_softmax``,
``SharedVarianceGaussianNB``, ``softmax_cross_entropy``, ``LogisticRegression``) and
:class:`solutions.naive_bayes.GaussianNB` (with ``var_smoothing=0``: the plain maximum-likelihood
variances, divisor N_c). The Gaussian log-densities of question 3 come from an independent oracle,
:func:`scipy.stats.norm.logpdf`, normalised with the reference ``log_softmax``.

Every correct answer is accepted: intercepts of a softmax are compared up to a constant shared by
all classes (``ln N_c`` and ``ln(N_c / N)`` are both right), and the weights of logistic
regression are compared with the exact minimiser of the loss rather than with one particular
iteration, so any method that converges passes.

A visible cell earns its point only when every value its hidden part recorded is right (all or
nothing), as its visible test asserts values; hidden cells give partial credit per case and per
independent array.

Tolerances. Closed forms (softmax, estimates, weights, the loss and its gradient) are compared to
``rtol`` about 1e-9, far looser than double-precision rounding of these small sums and far
tighter than any mistake. The seeded gradient-descent runs of question 6 reach the minimiser to
about 1e-8 in the weights and probabilities (the loss is strongly convex there: lambda / N = 0.1),
so they are compared to 1e-5; a mistake moves them by more than 1e-3.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
from scipy.stats import norm

from autograder.checks.answers import Answers, unpack
from autograder.checks.compare import check_shape, compare, rows_up_to_constant
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
from coursedata.grading import inputs
from solutions.linear_classifiers import (LogisticRegression, SharedVarianceGaussianNB,
                                          log_softmax, softmax, softmax_cross_entropy)
from solutions.naive_bayes import GaussianNB

PROBLEM_SET = "ps6_generative_discriminative"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _softmax_of(logits: np.ndarray, what: str) -> tuple[np.ndarray | None, str | None]:
    """The softmax of the logits a student's parameters give, or a message if they overflow."""
    with np.errstate(all="ignore"):
        logits = np.asarray(logits, dtype=float)
    if not np.all(np.isfinite(logits)):
        return None, (f"{what} gives logits that are NaN or infinite (they overflow): its "
                      f"parameters are far too large")
    return softmax(logits, axis=1), None


def _labels(inp: dict) -> str:
    X = inp["X"]
    return f"{X.shape[0]} examples, {X.shape[1]} features, {int(inp['y'].max()) + 1} classes"


# --------------------------------------------------------------------------------------------
# Question 1: softmax
# --------------------------------------------------------------------------------------------


def _softmax_value(a: Answers, case: str, label: str) -> str | None:
    Z = a.inputs(case)["Z"]
    return compare(unpack(a, case, 1)[0], softmax(Z, axis=1), f"the softmax of {label}",
                   rtol=1e-9, atol=1e-12)


def softmax_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _softmax_value(a, "softmax", "random logits")))


def softmax_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.2, guarded(lambda: _softmax_value(a, "softmax", "random logits"))),
        (0.4, guarded(lambda: _softmax_value(a, "softmax_large",
                                             "logits of size up to 5000 (shift each row first)"))),
        (0.2, guarded(lambda: _softmax_value(a, "softmax_wide", "a (3, 40) matrix"))),
        (0.2, guarded(lambda: _softmax_value(a, "softmax_one_row", "a single row"))))


# --------------------------------------------------------------------------------------------
# Question 2: Gaussian naive Bayes estimates
# --------------------------------------------------------------------------------------------


def _gnb_values(a: Answers, case: str) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    ref = GaussianNB(var_smoothing=0.0).fit(inp["X"], inp["y"])
    label = _labels(inp)
    return [
        (0.3, guarded(lambda: compare(unpack(a, case, 3)[0], ref.theta_,
                                      f"the class means for {label}", rtol=1e-9, atol=1e-12))),
        (0.4, guarded(lambda: compare(unpack(a, case, 3)[1], ref.var_,
                                      f"the class variances (divisor N_c) for {label}",
                                      rtol=1e-9, atol=1e-12))),
        (0.3, guarded(lambda: compare(unpack(a, case, 3)[2], ref.class_log_prior_,
                                      f"the log priors log(N_c / N) for {label}",
                                      rtol=1e-9, atol=1e-12))),
    ]


def fit_gaussian_nb_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _gnb_values(a, "gnb")])


def fit_gaussian_nb_hidden(a: Answers) -> Outcome:
    parts = []
    for case in ("gnb", "gnb_wine", "gnb_cancer"):
        parts += [(w / 3, p) for w, p in _gnb_values(a, case)]
    return weighted(*parts)


# --------------------------------------------------------------------------------------------
# Question 3: Gaussian naive Bayes log posterior
# --------------------------------------------------------------------------------------------


def _reference_log_posterior(inp: dict) -> np.ndarray:
    X, means, variances = inp["X"], inp["means"], inp["variances"]
    jll = norm.logpdf(X[:, None, :], loc=means[None], scale=np.sqrt(variances)[None]).sum(axis=2)
    return log_softmax(jll + inp["log_prior"], axis=1)


def _posterior_value(a: Answers, case: str, label: str) -> str | None:
    expected = _reference_log_posterior(a.inputs(case))
    return compare(unpack(a, case, 1)[0], expected, f"the log posterior {label}",
                   rtol=1e-9, atol=1e-8)


def gaussian_nb_log_posterior_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _posterior_value(a, "posterior",
                                                          "for 3 classes in 4-D")))


def gaussian_nb_log_posterior_hidden(a: Answers) -> Outcome:
    return weighted(
        (0.3, guarded(lambda: _posterior_value(a, "posterior", "for 3 classes in 4-D"))),
        (0.4, guarded(lambda: _posterior_value(
            a, "posterior_far", "far from every class (joint log-likelihoods near -10^4; "
                                "normalise with log-sum-exp)"))),
        (0.3, guarded(lambda: _posterior_value(a, "posterior_many", "for 10 classes in 16-D"))))


# --------------------------------------------------------------------------------------------
# Question 4: the shared-variance weights
# --------------------------------------------------------------------------------------------


def _svw_values(a: Answers, case: str) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    X = inp["X"]
    ref = SharedVarianceGaussianNB().fit(X, inp["y"])
    label = _labels(inp)

    def posterior():
        W, w0 = unpack(a, case, 2)
        problem = check_shape(W, ref.coef_.shape, "W") or check_shape(w0, ref.intercept_.shape, "w0")
        if problem:
            return problem
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(w0))):
            return "W or w0 contains NaN or infinite values"
        what = f"the posterior softmax(X Wᵀ + w0) for {label}"
        with np.errstate(all="ignore"):
            P, problem = _softmax_of(X @ W.T + w0, what)
        return problem or compare(P, ref.predict_proba(X), what, rtol=0.0, atol=1e-9)

    return [
        (0.4, guarded(lambda: compare(unpack(a, case, 2)[0], ref.coef_,
                                      f"W = μ/σ² (pooled σ², divisor N D) for {label}",
                                      rtol=1e-8, atol=1e-10))),
        (0.3, guarded(lambda: rows_up_to_constant(unpack(a, case, 2)[1], ref.intercept_,
                                                  f"w0 for {label}", rtol=1e-9, atol=1e-10))),
        (0.3, guarded(posterior)),
    ]


def shared_variance_weights_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _svw_values(a, "svw")])


def shared_variance_weights_hidden(a: Answers) -> Outcome:
    parts = []
    for case in ("svw", "svw_cancer", "svw_wine"):
        parts += [(w / 3, p) for w, p in _svw_values(a, case)]
    return weighted(*parts)


# --------------------------------------------------------------------------------------------
# Question 5: cross-entropy and gradient
# --------------------------------------------------------------------------------------------


def _ce_values(a: Answers, case: str, label: str) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    loss, (gW, gb) = softmax_cross_entropy(inp["W"], inp["b"], inp["X"], inp["Y"], inp["reg"])
    # each gradient entry is a sum of N terms of size up to max|x|: rounding is relative to that
    g_scale = 1e-10 * (1.0 + float(np.abs(inp["X"]).sum(axis=0).max()))
    label = f"{label} (λ = {inp['reg']:g})"
    return [
        (0.4, guarded(lambda: compare(unpack(a, case, 3)[0], loss, f"the loss for {label}",
                                      rtol=1e-9, atol=1e-9))),
        (0.4, guarded(lambda: compare(unpack(a, case, 3)[1], gW, f"grad_W for {label}",
                                      rtol=1e-7, atol=g_scale))),
        (0.2, guarded(lambda: compare(unpack(a, case, 3)[2], gb, f"grad_b for {label}",
                                      rtol=1e-7, atol=1e-10 * inp["X"].shape[0]))),
    ]


def cross_entropy_and_gradient_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _ce_values(a, "ce", "4 classes")])


def cross_entropy_and_gradient_hidden(a: Answers) -> Outcome:
    cases = [("ce", "4 classes", 0.2), ("ce_noreg", "3 classes without penalty", 0.25),
             ("ce_binary", "2 classes of breast cancer data", 0.25),
             ("ce_large", "logits in the thousands (use log-sum-exp)", 0.3)]
    parts = []
    for case, label, w in cases:
        parts += [(w * v, p) for v, p in _ce_values(a, case, label)]
    return weighted(*parts)


# --------------------------------------------------------------------------------------------
# Question 6: logistic regression by gradient descent
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _reference_lr(case: str) -> LogisticRegression:
    """The exact minimiser for a seeded case, fitted once per process (never modified)."""
    inp = inputs(PROBLEM_SET, case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return LogisticRegression(reg=inp["reg"], tol=1e-10, max_iter=10_000).fit(inp["X"],
                                                                                  inp["y"])


def _lr_values(a: Answers, case: str, label: str) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    X, y, reg = inp["X"], inp["y"], inp["reg"]
    ref = _reference_lr(case)
    label = f"{label} (λ = {reg:g}, lr = {inp['lr']:g}, {inp['n_iter']} steps)"

    def usable(W, b) -> str | None:
        problem = check_shape(W, ref.coef_.shape, "W") or check_shape(b, ref.intercept_.shape, "b")
        if problem:
            return problem
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(b))):
            return f"W or b contains NaN or infinite values for {label}: did the descent diverge?"
        return None

    def probabilities():
        W, b = unpack(a, case, 2)
        problem = usable(W, b)
        if problem:
            return problem
        what = f"the fitted probabilities for {label}"
        with np.errstate(all="ignore"):
            P, problem = _softmax_of(X @ W.T + b, what)
        return problem or compare(P, ref.predict_proba(X), what, rtol=0.0, atol=1e-5)

    def loss():
        W, b = unpack(a, case, 2)
        problem = usable(W, b)
        if problem:
            return problem
        with np.errstate(all="ignore"):
            _, problem = _softmax_of(X @ W.T + b, f"your W and b for {label}")
            if problem:
                return problem
            value, _ = softmax_cross_entropy(W, b, X, np.eye(ref.coef_.shape[0])[y], reg)
        if value - ref.loss_ > 1e-6 * (1.0 + ref.loss_):
            return (f"the penalised loss at your weights for {label} is {value:.8g}, above its "
                    f"minimum {ref.loss_:.8g}")
        return None

    return [
        (0.4, guarded(probabilities)),
        (0.25, guarded(lambda: compare(unpack(a, case, 2)[0], ref.coef_, f"W for {label}",
                                       rtol=1e-4, atol=1e-5))),
        (0.15, guarded(lambda: rows_up_to_constant(unpack(a, case, 2)[1], ref.intercept_,
                                                   f"b for {label}", rtol=0.0, atol=1e-5))),
        (0.2, guarded(loss)),
    ]


def fit_logistic_regression_visible(a: Answers) -> Outcome:
    return first_problem(*[p for _, p in _lr_values(a, "fit_lr", "3 synthetic classes")])


def fit_logistic_regression_hidden(a: Answers) -> Outcome:
    cases = [("fit_lr", "3 synthetic classes"), ("fit_lr_cancer", "10 breast cancer features"),
             ("fit_lr_wine", "the wine data")]
    parts = []
    for case, label in cases:
        parts += [(w / 3, p) for w, p in _lr_values(a, case, label)]
    return weighted(*parts)


#: Wrong-looking answers that are right: ``(function, output, transform)`` of the generic
#: mutants in ``tests/psharness.py`` that must keep full marks.
EQUIVALENT_FORMS = {
    ("shared_variance_weights", 1, "shifted"): "a softmax's intercepts are defined up to a "
                                               "constant shared by all classes",
    ("fit_logistic_regression", 1, "shifted"): "a softmax's intercepts are defined up to a "
                                               "constant shared by all classes (b is not "
                                               "penalised)",
}

CHECKS = {
    "softmax_visible": softmax_visible,
    "softmax_hidden": softmax_hidden,
    "fit_gaussian_nb_visible": fit_gaussian_nb_visible,
    "fit_gaussian_nb_hidden": fit_gaussian_nb_hidden,
    "gaussian_nb_log_posterior_visible": gaussian_nb_log_posterior_visible,
    "gaussian_nb_log_posterior_hidden": gaussian_nb_log_posterior_hidden,
    "shared_variance_weights_visible": shared_variance_weights_visible,
    "shared_variance_weights_hidden": shared_variance_weights_hidden,
    "cross_entropy_and_gradient_visible": cross_entropy_and_gradient_visible,
    "cross_entropy_and_gradient_hidden": cross_entropy_and_gradient_hidden,
    "fit_logistic_regression_visible": fit_logistic_regression_visible,
    "fit_logistic_regression_hidden": fit_logistic_regression_hidden,
}
