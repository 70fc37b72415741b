"""Trusted checks for problem set 6 that are not declared, and the generators of its inputs.

Questions 1 to 3 declare their checks next to the question, in the source notebook's test cells
(``course.check``, see :mod:`autograder.checks.declared`): the softmax against
:func:`solutions.softmax.softmax`, the Gaussian naive Bayes estimates against
:class:`solutions.naive_bayes.GaussianNB` with ``var_smoothing=0`` (:func:`gaussian_nb_estimates`:
the plain maximum-likelihood variances, divisor N_c), and the log posterior against an
independent oracle, :func:`scipy.stats.norm.logpdf` normalised with the reference ``log_softmax``
(:func:`gaussian_nb_log_posterior`). Closed forms are compared to ``rtol`` 1e-9, far looser than
double-precision rounding of these small sums and far tighter than any mistake.

Questions 4 to 6 declare their visible cells too, against the references below
(:func:`shared_variance_parameters`, :func:`cross_entropy_parts`,
:func:`fitted_logistic_regression`), so the student's check gives those cells the grader's verdict;
their hidden cells stay here, reading the visible cell's case and their own
(``answers.inputs(case)``), for these reasons:

- ``shared_variance_weights``: a third part compares the posterior ``softmax(X Wᵀ + w0)`` made
  from two returned values together, and a declaration compares each returned value alone. The
  visible cell compares W and w0 (up to a constant) alone: right W and w0 make the posterior
  right.
- ``cross_entropy_and_gradient``: the gradients' ``atol`` is a formula of the inputs (each entry
  is a sum of N terms of size up to max|x|), which a declaration does not state; the visible
  cell declares the formula's value for its one case (rounded down).
- ``fit_logistic_regression``: compared with the exact minimiser of the loss, not one iteration,
  so any method that converges passes: the fitted probabilities and the penalised loss at the
  student's weights are functions of both returned values, to tolerances of the descent. The
  visible cell compares W and b (up to a constant) with the minimiser's, to the same tolerances;
  a run that reaches them is at the minimum's loss to about 1e-10, as its hidden parts require.

Every correct answer is accepted: intercepts of a softmax are compared up to a constant shared by
all classes (``ln N_c`` and ``ln(N_c / N)`` are both right). A visible cell earns its point only
when every value its hidden part recorded is right (all or nothing), as its visible test asserts
values; hidden cells give partial credit per case and per independent array. The seeded
gradient-descent runs of question 6 reach the minimiser to about 1e-8 in the weights and
probabilities (the loss is strongly convex there: lambda / N = 0.1), so they are compared to
1e-5; a mistake moves them by more than 1e-3.

The inputs (synthetic classes of unequal size, seeded subsets of the standardised UCI breast
cancer and wine data, random model parameters) are made by the generators below, which the
declarations name (``"course.checks.ps6_generative_discriminative:blobs"``), so the grader,
not the student kit, holds them; each returns the arguments it draws from one random stream in
order, declared under one key naming them all (``"X, y": {...}``).
"""

from __future__ import annotations

import functools
import hashlib
import warnings

import numpy as np
from scipy.stats import norm

from autograder.checks.answers import Answers, unpack
from autograder.checks.outcome import Outcome, guarded, weighted
from coursedata.compare import check_shape, compare, rows_up_to_constant
from solutions.linear_classifiers import (
    LogisticRegression,
    SharedVarianceGaussianNB,
    log_softmax,
    softmax,
    softmax_cross_entropy,
)
from solutions.naive_bayes import GaussianNB

PROBLEM_SET = "ps6_generative_discriminative"


# --------------------------------------------------------------------------------------------
# Inputs: each generator returns the arguments it draws together, in order (one key
# ``"X, y"`` declares them)
# --------------------------------------------------------------------------------------------


@functools.cache
def _standardised(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features standardised over the whole data set (mean 0, sd 1 per column), and labels."""
    import coursedata

    data = {"cancer": coursedata.load_breast_cancer, "wine": coursedata.load_wine}[name]()
    X = (data.X - data.X.mean(axis=0)) / data.X.std(axis=0)
    return X, data.y.astype(np.int64)


def subset(
    name: str, seed: int, n: int, n_features: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: a seeded subset of ``n`` rows (and the first ``n_features`` columns) of the
    standardised ``"cancer"`` or ``"wine"`` data, its features ``X`` (n, D) and labels ``y``
    (n,)."""
    X, y = _standardised(name)
    rows = np.sort(np.random.default_rng(seed).choice(y.size, size=n, replace=False))
    cols = slice(None) if n_features is None else slice(0, n_features)
    return X[rows, cols].copy(), y[rows].copy()


def blobs(
    seed: int, n: int, d: int, n_classes: int, offset: float = 0.0, standardise: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: Gaussian classes of unequal size (each at least 3 rows) with different
    spreads, features ``X`` (n, d) (standardised per column if asked) and labels ``y`` (n,) in
    ``0 .. C-1``."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(n_classes, 2.0))
    y = np.concatenate(
        [
            np.repeat(np.arange(n_classes), 3),
            rng.choice(n_classes, size=n - 3 * n_classes, p=weights),
        ]
    )
    rng.shuffle(y)
    centres = rng.normal(scale=2.0, size=(n_classes, d)) + offset
    spreads = rng.uniform(0.5, 1.5, size=(n_classes, d))
    X = centres[y] + spreads[y] * rng.normal(size=(n, d))
    if standardise:
        X = (X - X.mean(axis=0)) / X.std(axis=0)
    return X, y.astype(np.int64)


def random_logits(seed: int, shape: list, scale: float) -> np.ndarray:
    """Random logits of ``shape``, N(0, scale²)."""
    return np.random.default_rng(seed).normal(scale=scale, size=tuple(shape))


def large_logits() -> np.ndarray:
    """(9, 3) logits whose naive exponentials overflow or underflow, then random huge ones."""
    fixed = np.array(
        [
            [1000.0, -1000.0, 0.0],
            [1000.0, 1000.0, 999.0],
            [-1000.0, -1000.0, -1001.0],
            [-5000.0, 0.0, 5000.0],
            [710.0, 709.0, -745.0],
        ]
    )
    rng = np.random.default_rng(13)
    return np.vstack([fixed, rng.normal(scale=800.0, size=(4, 3))])


def nb_parameters(
    seed: int, n: int, d: int, n_classes: int, far: float = 0.0
) -> tuple[np.ndarray, ...]:
    """``(X, means, variances, log_prior)``: query points ``X`` (n, d), moved ``far`` from the
    means if ``far > 0``, and random Gaussian naive Bayes parameters, ``means`` and
    ``variances`` (C, d) and ``log_prior`` (C,)."""
    rng = np.random.default_rng(seed)
    means = rng.normal(scale=2.0, size=(n_classes, d))
    variances = rng.gamma(3.0, 0.4, size=(n_classes, d))
    log_prior = np.log(rng.dirichlet(np.full(n_classes, 2.0)))
    X = rng.normal(scale=2.5, size=(n, d))
    if far:
        X = X + far * rng.choice([-1.0, 1.0], size=(n, d))
    return X, means, variances, log_prior


def softmax_regression(
    seed: int,
    n: int,
    d: int,
    n_classes: int,
    w_scale: float,
    x_scale: float = 1.0,
    data: dict | None = None,
) -> tuple[np.ndarray, ...]:
    """``(W, b, X, Y)`` for the cross-entropy: random weights ``W`` (C, D) and intercepts ``b``
    (C,), data ``X`` (n, d), N(0, x_scale²), or the features of ``subset(**data)``, and one-hot
    targets ``Y`` (n, C) with every class present."""
    rng = np.random.default_rng(seed)
    X = rng.normal(scale=x_scale, size=(n, d)) if data is None else subset(**data)[0]
    labels = np.concatenate(
        [np.arange(n_classes), rng.integers(0, n_classes, X.shape[0] - n_classes)]
    )
    W = rng.normal(scale=w_scale, size=(n_classes, X.shape[1]))
    b = rng.normal(scale=w_scale, size=n_classes)
    return W, b, X, np.eye(n_classes)[labels]


# --------------------------------------------------------------------------------------------
# References of the declared checks (questions 2 and 3)
# --------------------------------------------------------------------------------------------


def gaussian_nb_estimates(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """The class means (C, D), variances with divisor N_c (C, D) and log priors (C,) of
    :class:`solutions.naive_bayes.GaussianNB` fitted without smoothing."""
    ref = GaussianNB(var_smoothing=0.0).fit(X, y)
    return ref.theta_, ref.var_, ref.class_log_prior_


def gaussian_nb_log_posterior(
    X: np.ndarray, means: np.ndarray, variances: np.ndarray, log_prior: np.ndarray
) -> np.ndarray:
    r"""The log posterior (N, C) by an independent oracle:
    :math:`\log p(c \mid x) = \operatorname{log\,softmax}_c(\log\pi_c + \sum_d
    \log\mathcal N(x_d; \mu_{cd}, \sigma^2_{cd}))` with :func:`scipy.stats.norm.logpdf`."""
    jll = norm.logpdf(X[:, None, :], loc=means[None], scale=np.sqrt(variances)[None]).sum(axis=2)
    return log_softmax(jll + log_prior, axis=1)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# References of the declared visible cells of questions 4 to 6 (the student's signatures)
# --------------------------------------------------------------------------------------------


def shared_variance_parameters(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(W, w0)`` of Gaussian naive Bayes with one shared variance, fitted on ``X``, ``y``."""
    ref = SharedVarianceGaussianNB().fit(X, y)
    return ref.coef_, ref.intercept_


def cross_entropy_parts(W, b, X, Y, reg) -> tuple[float, np.ndarray, np.ndarray]:
    """``(loss, grad_W, grad_b)`` of the penalised softmax cross-entropy, as the student returns
    them (the reference nests the gradients)."""
    loss, (gW, gb) = softmax_cross_entropy(W, b, X, Y, reg)
    return loss, gW, gb


def fitted_logistic_regression(X, y, reg, lr, n_iter) -> tuple[np.ndarray, np.ndarray]:
    """``(W, b)`` of the exact minimiser of the penalised loss (``lr`` and ``n_iter`` set only the
    student's descent, which reaches it)."""
    ref = _reference_lr(X, y, reg)
    return ref.coef_, ref.intercept_


def _softmax_of(logits: np.ndarray, what: str) -> tuple[np.ndarray | None, str | None]:
    """The softmax of the logits a student's parameters give, or a message if they overflow."""
    with np.errstate(all="ignore"):
        logits = np.asarray(logits, dtype=float)
    if not np.all(np.isfinite(logits)):
        return None, (
            f"{what} gives logits that are NaN or infinite (they overflow): its "
            f"parameters are far too large"
        )
    return softmax(logits, axis=1), None


def _labels(inp: dict) -> str:
    X = inp["X"]
    return f"{X.shape[0]} examples, {X.shape[1]} features, {int(inp['y'].max()) + 1} classes"


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
        problem = check_shape(W, ref.coef_.shape, "W") or check_shape(
            w0, ref.intercept_.shape, "w0"
        )
        if problem:
            return problem
        if not (np.all(np.isfinite(W)) and np.all(np.isfinite(w0))):
            return "W or w0 contains NaN or infinite values"
        what = f"the posterior softmax(X Wᵀ + w0) for {label}"
        with np.errstate(all="ignore"):
            P, problem = _softmax_of(X @ W.T + w0, what)
        return problem or compare(P, ref.predict_proba(X), what, rtol=0.0, atol=1e-9)

    return [
        (
            0.4,
            guarded(
                lambda: compare(
                    unpack(a, case, 2)[0],
                    ref.coef_,
                    f"W = μ/σ² (pooled σ², divisor N D) for {label}",
                    rtol=1e-8,
                    atol=1e-10,
                )
            ),
        ),
        (
            0.3,
            guarded(
                lambda: rows_up_to_constant(
                    unpack(a, case, 2)[1], ref.intercept_, f"w0 for {label}", rtol=1e-9, atol=1e-10
                )
            ),
        ),
        (0.3, guarded(posterior)),
    ]


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
        (
            0.4,
            guarded(
                lambda: compare(
                    unpack(a, case, 3)[0], loss, f"the loss for {label}", rtol=1e-9, atol=1e-9
                )
            ),
        ),
        (
            0.4,
            guarded(
                lambda: compare(
                    unpack(a, case, 3)[1], gW, f"grad_W for {label}", rtol=1e-7, atol=g_scale
                )
            ),
        ),
        (
            0.2,
            guarded(
                lambda: compare(
                    unpack(a, case, 3)[2],
                    gb,
                    f"grad_b for {label}",
                    rtol=1e-7,
                    atol=1e-10 * inp["X"].shape[0],
                )
            ),
        ),
    ]


def cross_entropy_and_gradient_hidden(a: Answers) -> Outcome:
    cases = [
        ("ce", "4 classes", 0.2),
        ("ce_noreg", "3 classes without penalty", 0.25),
        ("ce_binary", "2 classes of breast cancer data", 0.25),
        ("ce_large", "logits in the thousands (use log-sum-exp)", 0.3),
    ]
    parts = []
    for case, label, w in cases:
        parts += [(w * v, p) for v, p in _ce_values(a, case, label)]
    return weighted(*parts)


# --------------------------------------------------------------------------------------------
# Question 6: logistic regression by gradient descent
# --------------------------------------------------------------------------------------------


_FITTED: dict[tuple, LogisticRegression] = {}


def _reference_lr(X: np.ndarray, y: np.ndarray, reg: float) -> LogisticRegression:
    """The exact minimiser for a case's inputs, fitted once per process (never modified)."""
    X, y = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(y)
    key = (hashlib.sha256(X.tobytes() + y.tobytes()).hexdigest(), X.shape, y.dtype.str, reg)
    if key not in _FITTED:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _FITTED[key] = LogisticRegression(reg=reg, tol=1e-10, max_iter=10_000).fit(X, y)
    return _FITTED[key]


def _lr_values(a: Answers, case: str, label: str) -> list[tuple[float, str | None]]:
    inp = a.inputs(case)
    X, y, reg = inp["X"], inp["y"], inp["reg"]
    ref = _reference_lr(X, y, reg)
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
            return (
                f"the penalised loss at your weights for {label} is {value:.8g}, above its "
                f"minimum {ref.loss_:.8g}"
            )
        return None

    return [
        (0.4, guarded(probabilities)),
        (
            0.25,
            guarded(
                lambda: compare(
                    unpack(a, case, 2)[0], ref.coef_, f"W for {label}", rtol=1e-4, atol=1e-5
                )
            ),
        ),
        (
            0.15,
            guarded(
                lambda: rows_up_to_constant(
                    unpack(a, case, 2)[1], ref.intercept_, f"b for {label}", rtol=0.0, atol=1e-5
                )
            ),
        ),
        (0.2, guarded(loss)),
    ]


def fit_logistic_regression_hidden(a: Answers) -> Outcome:
    cases = [
        ("fit_lr", "3 synthetic classes"),
        ("fit_lr_cancer", "10 breast cancer features"),
        ("fit_lr_wine", "the wine data"),
    ]
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
    "shared_variance_weights_hidden": shared_variance_weights_hidden,
    "cross_entropy_and_gradient_hidden": cross_entropy_and_gradient_hidden,
    "fit_logistic_regression_hidden": fit_logistic_regression_hidden,
}
