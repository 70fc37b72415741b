"""Trusted checks for problem set 1: PCA and the SVD.

Components and singular vectors are compared up to sign; variances follow the lecture's
covariance with divisor N. The reference is :mod:`solutions.pca`. A visible cell's points need
every value its hidden part recorded to be right (all or nothing), as its visible test does.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.answers import Answers, scalar, unpack
from autograder.checks.compare import compare, rows_up_to_sign
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
from solutions.pca import PCA, low_rank_approximation

PROBLEM_SET = "ps1_pca"


def _reference_pca(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    pca = PCA(n_components=k).fit(X)
    return pca.components_, pca.singular_values_ ** 2 / X.shape[0]


def _center_problems(a: Answers) -> list[str | None]:
    X = a.inputs("center")["X"]
    return [guarded(lambda: compare(unpack(a, "center", 2)[1], X.mean(axis=0), "the mean")),
            guarded(lambda: compare(unpack(a, "center", 2)[0], X - X.mean(axis=0),
                                    "the centred data"))]


def center_visible(a: Answers) -> Outcome:
    return first_problem(*_center_problems(a))


def center_hidden(a: Answers) -> Outcome:
    mean, centred = _center_problems(a)
    return weighted((0.5, mean), (0.5, centred))


def _pca_problems(a: Answers, case: str) -> list[str | None]:
    """Components (up to the sign of each row) and variances of one recorded case."""
    inp = a.inputs(case)
    ref_c, ref_v = _reference_pca(inp["X"], inp["k"])
    shape = f"X of shape {inp['X'].shape}"
    return [guarded(lambda: rows_up_to_sign(unpack(a, case, 2)[0], ref_c,
                                            f"the components for {shape}", rtol=1e-5, atol=1e-7)),
            guarded(lambda: compare(unpack(a, case, 2)[1], ref_v,
                                    f"the variances (divisor N) for {shape}"))]


def _visible(a: Answers, cases: list[str]) -> Outcome:
    """A visible cell: all or nothing, every value its recorded cases hold."""
    return first_problem(*[p for case in cases for p in _pca_problems(a, case)])


def _values(a: Answers, cases: list[str]) -> Outcome:
    w = 0.5 / len(cases)
    return weighted(*[(w, p) for case in cases for p in _pca_problems(a, case)])


def _project_problems(a: Answers) -> list[str | None]:
    p, r = a.inputs("project"), a.inputs("reconstruct")
    return [guarded(lambda: compare(unpack(a, "project", 1)[0],
                                    (p["X"] - p["mean"]) @ p["components"].T, "the codes Z")),
            guarded(lambda: compare(unpack(a, "reconstruct", 1)[0],
                                    r["mean"] + r["Z"] @ r["components"], "the reconstruction"))]


def project_visible(a: Answers) -> Outcome:
    return first_problem(*_project_problems(a))


def project_hidden(a: Answers) -> Outcome:
    codes, reconstruction = _project_problems(a)
    return weighted((0.5, codes), (0.5, reconstruction))


def _best_rank_k_problem(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    expected = low_rank_approximation(inp["X"], inp["k"])
    what = (f"the rank-{inp['k']} approximation of a {inp['X'].shape[0]}x{inp['X'].shape[1]} "
            f"matrix")
    return guarded(lambda: compare(unpack(a, case, 1)[0], expected, what, rtol=1e-6, atol=1e-8))


def best_rank_k_visible(a: Answers) -> Outcome:
    return first_problem(_best_rank_k_problem(a, "best_rank_k"))


def best_rank_k_hidden(a: Answers) -> Outcome:
    return weighted(*[(0.5, _best_rank_k_problem(a, case))
                      for case in ("best_rank_k", "best_rank_k_wide")])


def _reconstruction_error_problem(a: Answers, case: str, data: str) -> str | None:
    inp = a.inputs(case)
    X = inp["X"]
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    expected = float(np.sum(s[inp["k"]:] ** 2))
    return guarded(lambda: compare(scalar(a, case, "the squared reconstruction error"), expected,
                                   f"the squared reconstruction error of {data} with "
                                   f"k={inp['k']}"))


def reconstruction_error_visible(a: Answers) -> Outcome:
    return first_problem(_reconstruction_error_problem(
        a, "reconstruction_error_small", "a 30x6 matrix"))


def reconstruction_error_hidden(a: Answers) -> Outcome:
    return first_problem(_reconstruction_error_problem(a, "reconstruction_error", "the digits"))


def _components_for_variance_problem(a: Answers, case: str) -> str | None:
    """The smallest k whose top-k variances (from the singular values) reach the fraction."""
    inp = a.inputs(case)
    X, fraction = inp["X"], inp["fraction"]
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    kept = np.cumsum(s ** 2) / np.sum(s ** 2)
    expected = int(np.argmax(kept >= fraction)) + 1
    what = (f"the number of components that keep {fraction:.0%} of the variance of a "
            f"{X.shape[0]}x{X.shape[1]} matrix")
    return guarded(lambda: compare(scalar(a, case, what), expected, what, rtol=0, atol=1e-9))


def components_for_variance_visible(a: Answers) -> Outcome:
    return first_problem(_components_for_variance_problem(a, "components_for_variance_small"))


def components_for_variance_hidden(a: Answers) -> Outcome:
    return weighted(*[(0.5, _components_for_variance_problem(a, case))
                      for case in ("components_for_variance", "components_for_variance_wide")])


#: Wrong-looking answers that are right: ``(function, output, transform)`` of the generic
#: mutants in ``tests/psharness.py`` that must keep full marks.
EQUIVALENT_FORMS = {
    ("pca_eig", 0, "negated"): "principal directions are defined up to sign",
    ("pca_svd", 0, "negated"): "principal directions are defined up to sign",
}

CHECKS = {
    "center_visible": center_visible,
    "center_hidden": center_hidden,
    "pca_eig_visible": lambda a: _visible(a, ["pca_eig"]),
    "pca_eig_hidden": lambda a: _values(a, ["pca_eig", "pca_eig_wide"]),
    "pca_svd_visible": lambda a: _visible(a, ["pca_svd"]),
    "pca_svd_hidden": lambda a: _values(a, ["pca_svd", "pca_svd_wide"]),
    "project_visible": project_visible,
    "project_hidden": project_hidden,
    "best_rank_k_visible": best_rank_k_visible,
    "best_rank_k_hidden": best_rank_k_hidden,
    "reconstruction_error_visible": reconstruction_error_visible,
    "reconstruction_error_hidden": reconstruction_error_hidden,
    "components_for_variance_visible": components_for_variance_visible,
    "components_for_variance_hidden": components_for_variance_hidden,
}
