"""Trusted checks for problem set 4: MAP smoothing and naive Bayes.

References: :func:`solutions.map_estimation.beta_bernoulli_map` for the Beta MAP, and
:class:`solutions.naive_bayes.BernoulliNB` / :class:`~solutions.naive_bayes.CategoricalNB` for the
fitted parameters and the end-to-end log-posteriors (their ``alpha`` is the same add-alpha
pseudo-count as the problem set's). Joint log-likelihoods for given parameters are compared with
independent closed forms (``scipy.stats.bernoulli.logpmf`` summed over features; a gather of
``log theta`` by category). Log-posteriors are accepted exactly when they are a normalised
log-softmax of the joint: each row log-sum-exps to 0, and each row differs from the joint by one
constant; ``-inf`` (probability 0) must stay ``-inf``. Both together, per case: either alone is
met by a wrong answer (the joint itself, or any normalised matrix).

A visible cell earns its point only when every value its hidden part recorded is right (all or
nothing), as its visible test asserts values; hidden cells give partial credit per case and, for
the fitted parameters, per array.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from autograder.checks.answers import Answers, unpack
from autograder.checks.compare import (compare, compare_extended, log_probability_rows,
                                       rows_up_to_constant)
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
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


def _beta_problem(a: Answers, case: str) -> str | None:
    expected = np.asarray(beta_bernoulli_map(**a.inputs(case)))
    return guarded(lambda: compare(unpack(a, case, 1)[0], expected, _BETA_WHAT[case],
                                   rtol=1e-9, atol=1e-12))


def beta_map_visible(a: Answers) -> Outcome:
    return first_problem(_beta_problem(a, "beta_map"))


def beta_map_hidden(a: Answers) -> Outcome:
    return weighted(*[(1 / len(BETA_CASES), _beta_problem(a, case)) for case in BETA_CASES])


# ---------------------------------------------------------------- Question 3: fit_bernoulli_nb
BERNOULLI_FIT_CASES = ("fit_bernoulli", "fit_bernoulli_half", "fit_bernoulli_spam")


def _fit_problems(a: Answers, case: str, reference) -> list[str | None]:
    """log_prior and log_theta of one recorded case."""
    inp = a.inputs(case)
    ref_prior, ref_theta = reference(inp)
    where = f"for {_describe(inp)}"
    return [guarded(lambda: compare(unpack(a, case, 2)[0], ref_prior, f"log_prior {where}",
                                    rtol=1e-9, atol=1e-12)),
            guarded(lambda: compare(unpack(a, case, 2)[1], ref_theta, f"log_theta {where}",
                                    rtol=1e-9, atol=1e-12))]


def _fit_values(a: Answers, cases, reference) -> Outcome:
    parts = []
    w = 1.0 / len(cases)
    for case in cases:
        prior, theta = _fit_problems(a, case, reference)
        parts += [(w / 3, prior), (2 * w / 3, theta)]
    return weighted(*parts)


def _bernoulli_reference(inp: dict):
    nb = BernoulliNB(alpha=inp["alpha"]).fit(inp["X"], inp["y"])
    return nb.class_log_prior_, nb.feature_log_prob_


def fit_bernoulli_nb_visible(a: Answers) -> Outcome:
    return first_problem(*_fit_problems(a, "fit_bernoulli", _bernoulli_reference))


def fit_bernoulli_nb_hidden(a: Answers) -> Outcome:
    return _fit_values(a, BERNOULLI_FIT_CASES, _bernoulli_reference)


# ---------------------------------------------------------------- Question 4: Bernoulli joint
def _bernoulli_joint_reference(inp: dict) -> np.ndarray:
    theta = np.exp(inp["log_theta"])
    per_feature = stats.bernoulli.logpmf(inp["X"][:, None, :], theta[None, :, :])
    return per_feature.sum(axis=2) + inp["log_prior"]


def _joint_problem(a: Answers, case: str, reference) -> str | None:
    inp = a.inputs(case)
    expected = reference(inp)
    what = f"the joint log-likelihood for {_describe(inp)}"
    return guarded(lambda: compare(unpack(a, case, 1)[0], expected, what, rtol=1e-8, atol=1e-9))


def _joint_values(a: Answers, cases, reference) -> Outcome:
    return weighted(*[(1 / len(cases), _joint_problem(a, case, reference)) for case in cases])


def bernoulli_joint_log_likelihood_hidden(a: Answers) -> Outcome:
    return _joint_values(a, ("joint_bernoulli", "joint_bernoulli_spam"),
                         _bernoulli_joint_reference)


# ---------------------------------------------------------------- Question 5: predict_log_proba
LOG_PROBA_CASES = ("log_proba", "log_proba_large", "log_proba_neginf")
_LOG_PROBA_WHAT = {"log_proba": "the log-posterior matrix",
                   "log_proba_large": "the log-posterior matrix for joints near -5000 and +900",
                   "log_proba_neginf": "the log-posterior matrix for joints with -inf entries"}


def _log_proba_problem(a: Answers, case: str) -> str | None:
    """Right exactly when the joint minus one constant per row AND normalised: either alone is
    met by a wrong answer (the joint itself; any normalised matrix)."""
    joint = a.inputs(case)["joint"]
    what = _LOG_PROBA_WHAT[case]
    return guarded(lambda: rows_up_to_constant(unpack(a, case, 1)[0], joint, what, rtol=1e-9,
                                               atol=1e-8, reference="the joint log-likelihood")
                   or log_probability_rows(unpack(a, case, 1)[0], what))


def predict_log_proba_visible(a: Answers) -> Outcome:
    return first_problem(_log_proba_problem(a, "log_proba"))


def predict_log_proba_hidden(a: Answers) -> Outcome:
    return weighted(*[(1 / len(LOG_PROBA_CASES), _log_proba_problem(a, case))
                      for case in LOG_PROBA_CASES])


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


def _one_hot_problem(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = _one_hot_reference(inp)
    what = (f"the one-hot encoding for X of shape {inp['X'].shape} and n_categories "
            f"{inp['n_categories'].tolist()}")
    # Entries are 0 or 1: any tolerance below 1/2 accepts exactly the right encodings (as
    # integers, booleans or floats); 1e-9 also accepts one computed in floating point.
    return guarded(lambda: compare(unpack(a, case, 1)[0], expected, what, rtol=0, atol=1e-9))


def one_hot_visible(a: Answers) -> Outcome:
    return first_problem(_one_hot_problem(a, "one_hot"))


def one_hot_hidden(a: Answers) -> Outcome:
    return weighted(*[(0.5, _one_hot_problem(a, case)) for case in ("one_hot", "one_hot_single")])


# ---------------------------------------------------------------- Question 9: fit_categorical_nb
CATEGORICAL_FIT_CASES = ("fit_categorical", "fit_categorical_alpha", "fit_categorical_titanic")


def _categorical_reference(inp: dict):
    nb = CategoricalNB(alpha=inp["alpha"], n_categories=inp["n_categories"]).fit(inp["X"], inp["y"])
    return nb.class_log_prior_, np.hstack(nb.feature_log_prob_)


def fit_categorical_nb_visible(a: Answers) -> Outcome:
    return first_problem(*_fit_problems(a, "fit_categorical", _categorical_reference))


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
    "bernoulli_joint_log_likelihood_visible": lambda a: first_problem(
        _joint_problem(a, "joint_bernoulli", _bernoulli_joint_reference)),
    "bernoulli_joint_log_likelihood_hidden": bernoulli_joint_log_likelihood_hidden,
    "predict_log_proba_visible": predict_log_proba_visible,
    "predict_log_proba_hidden": predict_log_proba_hidden,
    "spam_filter_hidden": spam_filter_hidden,
    "one_hot_visible": one_hot_visible,
    "one_hot_hidden": one_hot_hidden,
    "fit_categorical_nb_visible": fit_categorical_nb_visible,
    "fit_categorical_nb_hidden": fit_categorical_nb_hidden,
    "categorical_joint_log_likelihood_visible": lambda a: first_problem(
        _joint_problem(a, "joint_categorical", _categorical_joint_reference)),
    "categorical_joint_log_likelihood_hidden": categorical_joint_log_likelihood_hidden,
    "titanic_filter_hidden": titanic_filter_hidden,
}
