"""Trusted checks for problem set 4: MAP smoothing and naive Bayes.

References: :func:`solutions.map_estimation.beta_bernoulli_map` for the Beta MAP, and
:class:`solutions.naive_bayes.BernoulliNB` / :class:`~solutions.naive_bayes.CategoricalNB` for the
fitted parameters and the end-to-end log-posteriors (their ``alpha`` is the same add-alpha
pseudo-count as the problem set's). Joint log-likelihoods for given parameters are compared with
independent closed forms (``scipy.stats.bernoulli.logpmf`` summed over features; a gather of
``log theta`` by category). Log-posteriors are accepted exactly when they are a normalised
log-softmax of the joint: each row log-sum-exps to 0, and each row differs from the joint by one
constant; ``-inf`` (probability 0) must stay ``-inf``.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from autograder.checks.common import (Answers, Outcome, check_shape, compare, compare_extended,
                                      first_problem, guarded, log_probability_rows,
                                      rows_up_to_constant, unpack, weighted)
from solutions.map_estimation import beta_bernoulli_map
from solutions.naive_bayes import BernoulliNB, CategoricalNB

PROBLEM_SET = "ps4_map_naive_bayes"


def _describe(inp: dict, x: str = "X") -> str:
    alpha = f", alpha = {float(inp['alpha']):g}" if "alpha" in inp else ""
    return f"{x} of shape {tuple(inp[x].shape)}{alpha}"


# ---------------------------------------------------------------- Question 1: beta_map
BETA_CASES = ("beta_map", "beta_map_scalar", "beta_map_large")
_BETA_WHAT = {"beta_map": "the table of MAP estimates for counts of shape (6, 1) and priors of shape (4,)",
              "beta_map_scalar": "the MAP estimate for n_ones = 0, n_zeros = 7, a = 3, b = 2",
              "beta_map_large": "the MAP estimates for N from 10 to 1,000,000 flips, a = 3, b = 12"}


def beta_map_visible(a: Answers) -> Outcome:
    inp = a.inputs("beta_map")
    (theta,) = unpack(a, "beta_map", 1)
    shape = np.broadcast_shapes(*(np.shape(v) for v in inp.values()))
    problem = check_shape(theta, shape, "the broadcast table of MAP estimates")
    if problem:
        return Outcome.failed(problem)
    if not np.all((theta >= 0) & (theta <= 1)):
        return Outcome.failed("a MAP estimate of a probability must lie in [0, 1]")
    return Outcome.passed()


def beta_map_hidden(a: Answers) -> Outcome:
    parts = []
    for case in BETA_CASES:
        inp = a.inputs(case)
        expected = np.asarray(beta_bernoulli_map(**inp))
        what = _BETA_WHAT[case]
        parts.append((1 / len(BETA_CASES), guarded(lambda: compare(
            unpack(a, case, 1)[0], expected, what, rtol=1e-9, atol=1e-12))))
    return weighted(*parts)


# ---------------------------------------------------------------- Question 3: fit_bernoulli_nb
BERNOULLI_FIT_CASES = ("fit_bernoulli", "fit_bernoulli_half", "fit_bernoulli_spam")


def _fit_structure(a: Answers, case: str, n_cols) -> Outcome:
    inp = a.inputs(case)
    C = int(inp["y"].max()) + 1
    log_prior, log_theta = unpack(a, case, 2)
    problem = (check_shape(log_prior, (C,), "log_prior")
               or check_shape(log_theta, (C, n_cols), "log_theta"))
    if problem:
        return Outcome.failed(problem)
    if not (np.all(np.isfinite(log_prior)) and np.all(np.isfinite(log_theta))):
        return Outcome.failed("log_prior or log_theta has -inf or NaN values: with alpha > 0 "
                              "every smoothed probability is positive")
    total = float(np.exp(log_prior).sum())
    if not abs(total - 1.0) <= 1e-8:
        return Outcome.failed(f"exp(log_prior) sums to {total:.6g}, not 1: return log(N_c / N)")
    if not np.all(log_theta < 0):
        return Outcome.failed("every theta must be < 1, so every log_theta must be negative")
    return Outcome.passed()


def fit_bernoulli_nb_visible(a: Answers) -> Outcome:
    return _fit_structure(a, "fit_bernoulli", a.inputs("fit_bernoulli")["X"].shape[1])


def _fit_values(a: Answers, cases, reference) -> Outcome:
    parts = []
    w = 1.0 / len(cases)
    for case in cases:
        inp = a.inputs(case)
        ref_prior, ref_theta = reference(inp)
        where = f"for {_describe(inp)}"
        parts.append((w / 3, guarded(lambda: compare(
            unpack(a, case, 2)[0], ref_prior, f"log_prior {where}", rtol=1e-9, atol=1e-12))))
        parts.append((2 * w / 3, guarded(lambda: compare(
            unpack(a, case, 2)[1], ref_theta, f"log_theta {where}", rtol=1e-9, atol=1e-12))))
    return weighted(*parts)


def _bernoulli_reference(inp: dict):
    nb = BernoulliNB(alpha=inp["alpha"]).fit(inp["X"], inp["y"])
    return nb.class_log_prior_, nb.feature_log_prob_


def fit_bernoulli_nb_hidden(a: Answers) -> Outcome:
    return _fit_values(a, BERNOULLI_FIT_CASES, _bernoulli_reference)


# ---------------------------------------------------------------- Question 4: Bernoulli joint
def _joint_structure(a: Answers, case: str) -> Outcome:
    inp = a.inputs(case)
    (joint,) = unpack(a, case, 1)
    problem = check_shape(joint, (inp["X"].shape[0], inp["log_prior"].shape[0]),
                          "the joint log-likelihood")
    if problem:
        return Outcome.failed(problem)
    if not np.all(np.isfinite(joint)):
        return Outcome.failed("the joint log-likelihood has NaN or infinite values")
    if not np.all(joint <= 0):
        return Outcome.failed("a joint log-likelihood of binary or categorical data is the log "
                              "of a probability, so it cannot be positive")
    return Outcome.passed()


def _bernoulli_joint_reference(inp: dict) -> np.ndarray:
    theta = np.exp(inp["log_theta"])
    per_feature = stats.bernoulli.logpmf(inp["X"][:, None, :], theta[None, :, :])
    return per_feature.sum(axis=2) + inp["log_prior"]


def _joint_values(a: Answers, cases, reference) -> Outcome:
    parts = []
    for case in cases:
        inp = a.inputs(case)
        expected = reference(inp)
        what = f"the joint log-likelihood for {_describe(inp)}"
        parts.append((1 / len(cases), guarded(lambda: compare(
            unpack(a, case, 1)[0], expected, what, rtol=1e-8, atol=1e-9))))
    return weighted(*parts)


def bernoulli_joint_log_likelihood_hidden(a: Answers) -> Outcome:
    return _joint_values(a, ("joint_bernoulli", "joint_bernoulli_spam"),
                         _bernoulli_joint_reference)


# ---------------------------------------------------------------- Question 5: predict_log_proba
LOG_PROBA_CASES = ("log_proba", "log_proba_large", "log_proba_neginf")
_LOG_PROBA_WHAT = {"log_proba": "the log-posterior matrix",
                   "log_proba_large": "the log-posterior matrix for joints near -5000 and +900",
                   "log_proba_neginf": "the log-posterior matrix for joints with -inf entries"}


def predict_log_proba_visible(a: Answers) -> Outcome:
    joint = a.inputs("log_proba")["joint"]
    (got,) = unpack(a, "log_proba", 1)
    return first_problem(check_shape(got, joint.shape, "the log-posterior matrix"),
                         log_probability_rows(got, "the log-posterior matrix"))


def predict_log_proba_hidden(a: Answers) -> Outcome:
    parts = []
    w = 1.0 / len(LOG_PROBA_CASES)
    for case in LOG_PROBA_CASES:
        joint = a.inputs(case)["joint"]
        what = _LOG_PROBA_WHAT[case]
        parts.append((w / 2, guarded(lambda: log_probability_rows(unpack(a, case, 1)[0], what))))
        parts.append((w / 2, guarded(lambda: rows_up_to_constant(
            unpack(a, case, 1)[0], joint, what, rtol=1e-9, atol=1e-8,
            reference="the joint log-likelihood"))))
    return weighted(*parts)


# ---------------------------------------------------------------- Questions 6 and 11: end to end
def _end_to_end(a: Answers, cases, make_model) -> Outcome:
    parts = []
    for case in cases:
        inp = a.inputs(case)
        model = make_model(inp).fit(inp["X_train"], inp["y_train"])
        expected = model.predict_log_proba(inp["X_test"])
        what = (f"the log-posterior matrix of {inp['X_test'].shape[0]} test rows after training on "
                f"{inp['X_train'].shape[0]} rows with alpha = {float(inp['alpha']):g}")
        parts.append((1 / len(cases), guarded(lambda: compare_extended(
            unpack(a, case, 1)[0], expected, what, rtol=1e-6, atol=1e-8))))
    return weighted(*parts)


def spam_filter_hidden(a: Answers) -> Outcome:
    return _end_to_end(a, ("spam_filter", "spam_filter_small"),
                       lambda inp: BernoulliNB(alpha=inp["alpha"]))


def titanic_filter_hidden(a: Answers) -> Outcome:
    return _end_to_end(a, ("titanic_filter", "titanic_filter_small"),
                       lambda inp: CategoricalNB(alpha=inp["alpha"],
                                                 n_categories=inp["n_categories"]))


# ---------------------------------------------------------------- Question 8: one_hot
def _one_hot_reference(inp: dict) -> np.ndarray:
    X, K = inp["X"], inp["n_categories"]
    return np.hstack([np.eye(int(k))[X[:, d]] for d, k in enumerate(K)])


def one_hot_visible(a: Answers) -> Outcome:
    inp = a.inputs("one_hot")
    (got,) = unpack(a, "one_hot", 1)
    problem = check_shape(got, (inp["X"].shape[0], int(inp["n_categories"].sum())),
                          "the one-hot encoding (columns: the sum of n_categories)")
    if problem:
        return Outcome.failed(problem)
    if not np.all((got == 0) | (got == 1)):
        return Outcome.failed("the one-hot encoding must contain only 0 and 1")
    if not np.all(got.sum(axis=1) == inp["X"].shape[1]):
        return Outcome.failed("each row must have exactly one 1 per feature")
    return Outcome.passed()


def one_hot_hidden(a: Answers) -> Outcome:
    parts = []
    for case in ("one_hot", "one_hot_single"):
        inp = a.inputs(case)
        expected = _one_hot_reference(inp)
        what = (f"the one-hot encoding for X of shape {inp['X'].shape} and n_categories "
                f"{inp['n_categories'].tolist()}")
        parts.append((0.5, guarded(lambda: compare(unpack(a, case, 1)[0], expected, what,
                                                   rtol=0, atol=0))))
    return weighted(*parts)


# ---------------------------------------------------------------- Question 9: fit_categorical_nb
CATEGORICAL_FIT_CASES = ("fit_categorical", "fit_categorical_alpha", "fit_categorical_titanic")


def fit_categorical_nb_visible(a: Answers) -> Outcome:
    inp = a.inputs("fit_categorical")
    K = inp["n_categories"]
    outcome = _fit_structure(a, "fit_categorical", int(K.sum()))
    if outcome.fraction < 1:
        return outcome
    log_theta = unpack(a, "fit_categorical", 2)[1]
    starts = np.concatenate([[0], np.cumsum(K)[:-1]])
    sums = np.add.reduceat(np.exp(log_theta), starts, axis=1)
    if not np.allclose(sums, 1.0, atol=1e-8):
        return Outcome.failed(f"within each class, each feature's probabilities must sum to 1; "
                              f"yours sum to {np.round(sums, 4).tolist()}")
    return Outcome.passed()


def _categorical_reference(inp: dict):
    nb = CategoricalNB(alpha=inp["alpha"], n_categories=inp["n_categories"]).fit(inp["X"], inp["y"])
    return nb.class_log_prior_, np.hstack(nb.feature_log_prob_)


def fit_categorical_nb_hidden(a: Answers) -> Outcome:
    return _fit_values(a, CATEGORICAL_FIT_CASES, _categorical_reference)


# ---------------------------------------------------------------- Question 10: categorical joint
def _categorical_joint_reference(inp: dict) -> np.ndarray:
    X, K, log_theta = inp["X"], inp["n_categories"], inp["log_theta"]
    starts = np.concatenate([[0], np.cumsum(K)[:-1]])
    columns = X + starts                                    # (N, D) column of each observed value
    return log_theta[:, columns].sum(axis=2).T + inp["log_prior"]


def categorical_joint_log_likelihood_hidden(a: Answers) -> Outcome:
    return _joint_values(a, ("joint_categorical", "joint_categorical_titanic"),
                         _categorical_joint_reference)


CHECKS = {
    "beta_map_visible": beta_map_visible,
    "beta_map_hidden": beta_map_hidden,
    "fit_bernoulli_nb_visible": fit_bernoulli_nb_visible,
    "fit_bernoulli_nb_hidden": fit_bernoulli_nb_hidden,
    "bernoulli_joint_log_likelihood_visible": lambda a: _joint_structure(a, "joint_bernoulli"),
    "bernoulli_joint_log_likelihood_hidden": bernoulli_joint_log_likelihood_hidden,
    "predict_log_proba_visible": predict_log_proba_visible,
    "predict_log_proba_hidden": predict_log_proba_hidden,
    "spam_filter_hidden": spam_filter_hidden,
    "one_hot_visible": one_hot_visible,
    "one_hot_hidden": one_hot_hidden,
    "fit_categorical_nb_visible": fit_categorical_nb_visible,
    "fit_categorical_nb_hidden": fit_categorical_nb_hidden,
    "categorical_joint_log_likelihood_visible": lambda a: _joint_structure(a, "joint_categorical"),
    "categorical_joint_log_likelihood_hidden": categorical_joint_log_likelihood_hidden,
    "titanic_filter_hidden": titanic_filter_hidden,
}
