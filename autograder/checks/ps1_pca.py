"""Trusted checks for problem set 1: PCA and the SVD.

Components and singular vectors are compared up to sign; variances follow the lecture's
covariance with divisor N. The reference is :mod:`solutions.pca`.
"""

from __future__ import annotations

import numpy as np

from autograder.checks.common import (Answers, Outcome, check_shape, compare, first_problem,
                                      guarded, rows_up_to_sign, unpack, weighted)
from solutions.pca import PCA, low_rank_approximation

PROBLEM_SET = "ps1_pca"


def _reference_pca(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    pca = PCA(n_components=k).fit(X)
    return pca.components_, pca.singular_values_ ** 2 / X.shape[0]


def center_visible(a: Answers) -> Outcome:
    X = a.inputs("center")["X"]
    Xc, mean = unpack(a, "center", 2)
    return first_problem(check_shape(Xc, X.shape, "the centred data"),
                         check_shape(mean, (X.shape[1],), "the mean"))


def center_hidden(a: Answers) -> Outcome:
    X = a.inputs("center")["X"]
    return weighted(
        (0.5, guarded(lambda: compare(unpack(a, "center", 2)[1], X.mean(axis=0), "the mean"))),
        (0.5, guarded(lambda: compare(unpack(a, "center", 2)[0], X - X.mean(axis=0),
                                      "the centred data"))))


def _structure(a: Answers, case: str) -> Outcome:
    inp = a.inputs(case)
    d, k = inp["X"].shape[1], inp["k"]
    components, variances = unpack(a, case, 2)
    problem = check_shape(components, (k, d), "the components") or check_shape(
        variances, (k,), "the variances")
    if problem:
        return Outcome.failed(problem)
    off = float(np.abs(components @ components.T - np.eye(k)).max())
    if not off <= 1e-6:
        return Outcome(0.5, f"your components are not orthonormal: C Cᵀ differs from the "
                            f"identity by up to {off:.2g}")
    if np.any(np.diff(variances) > 1e-9 * max(1.0, float(np.abs(variances).max()))):
        return Outcome(0.5, "your variances are not sorted in decreasing order")
    return Outcome.passed()


def _values(a: Answers, cases: list[str]) -> Outcome:
    parts = []
    w = 0.5 / len(cases)
    for case in cases:
        inp = a.inputs(case)
        ref_c, ref_v = _reference_pca(inp["X"], inp["k"])
        shape = f"X of shape {inp['X'].shape}"
        parts.append((w, guarded(lambda: rows_up_to_sign(
            unpack(a, case, 2)[0], ref_c, f"the components for {shape}", rtol=1e-5, atol=1e-7))))
        parts.append((w, guarded(lambda: compare(
            unpack(a, case, 2)[1], ref_v, f"the variances (divisor N) for {shape}"))))
    return weighted(*parts)


def project_visible(a: Answers) -> Outcome:
    inp_p, inp_r = a.inputs("project"), a.inputs("reconstruct")
    (Z,) = unpack(a, "project", 1)
    (X_hat,) = unpack(a, "reconstruct", 1)
    return first_problem(
        check_shape(Z, (inp_p["X"].shape[0], inp_p["components"].shape[0]), "the codes Z"),
        check_shape(X_hat, (inp_r["Z"].shape[0], inp_r["components"].shape[1]),
                    "the reconstruction"))


def project_hidden(a: Answers) -> Outcome:
    p, r = a.inputs("project"), a.inputs("reconstruct")
    return weighted(
        (0.5, guarded(lambda: compare(unpack(a, "project", 1)[0],
                                      (p["X"] - p["mean"]) @ p["components"].T, "the codes Z"))),
        (0.5, guarded(lambda: compare(unpack(a, "reconstruct", 1)[0],
                                      r["mean"] + r["Z"] @ r["components"], "the reconstruction"))))


def best_rank_k_visible(a: Answers) -> Outcome:
    inp = a.inputs("best_rank_k")
    (Xk,) = unpack(a, "best_rank_k", 1)
    problem = check_shape(Xk, inp["X"].shape, "the approximation")
    if problem:
        return Outcome.failed(problem)
    if not np.all(np.isfinite(Xk)):
        return Outcome.failed("the approximation contains NaN or infinite values")
    s = np.linalg.svd(Xk, compute_uv=False)
    rank = int(np.sum(s > 1e-8 * s[0])) if s[0] > 0 else 0
    if rank != inp["k"]:
        return Outcome.failed(f"the approximation should have rank {inp['k']}; yours has rank {rank}")
    return Outcome.passed()


def best_rank_k_hidden(a: Answers) -> Outcome:
    parts = []
    for case in ("best_rank_k", "best_rank_k_wide"):
        inp = a.inputs(case)
        expected = low_rank_approximation(inp["X"], inp["k"])
        what = f"the rank-{inp['k']} approximation of a {inp['X'].shape[0]}x{inp['X'].shape[1]} matrix"
        parts.append((0.5, guarded(lambda: compare(unpack(a, case, 1)[0], expected, what,
                                                   rtol=1e-6, atol=1e-8))))
    return weighted(*parts)


def reconstruction_error_hidden(a: Answers) -> Outcome:
    inp = a.inputs("reconstruction_error")
    (err,) = unpack(a, "reconstruction_error", 1)
    X = inp["X"]
    s = np.linalg.svd(X - X.mean(axis=0), compute_uv=False)
    expected = float(np.sum(s[inp["k"]:] ** 2))
    problem = compare(err, expected, f"the squared reconstruction error of the digits with "
                                     f"k={inp['k']}")
    return Outcome.failed(problem) if problem else Outcome.passed()


CHECKS = {
    "center_visible": center_visible,
    "center_hidden": center_hidden,
    "pca_eig_visible": lambda a: _structure(a, "pca_eig"),
    "pca_eig_hidden": lambda a: _values(a, ["pca_eig", "pca_eig_wide"]),
    "pca_svd_visible": lambda a: _structure(a, "pca_svd"),
    "pca_svd_hidden": lambda a: _values(a, ["pca_svd", "pca_svd_wide"]),
    "project_visible": project_visible,
    "project_hidden": project_hidden,
    "best_rank_k_visible": best_rank_k_visible,
    "best_rank_k_hidden": best_rank_k_hidden,
    "reconstruction_error_hidden": reconstruction_error_hidden,
}
