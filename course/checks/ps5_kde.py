"""Trusted checks for problem set 5 (kernel density estimation) that are not declared, and the
grader-side inputs and references its declarations name.

Every other autograded cell of problem set 5 declares its check next to the question, in the
source notebook's cell metadata (``course.check``, see :mod:`autograder.checks.declared`): the
references (:mod:`solutions.kde` and :class:`solutions.naive_bayes.KDENaiveBayes`, through the
small adapters below, which take the student's argument names), the seeded inputs, the
tolerances (kernels to ``1e-12``; density values to ``rtol=1e-8``; the rules of thumb to
``rtol=1e-9``; leave-one-out sums and scores to ``1e-8``; the chosen bandwidth to a relative
``1e-9``, as it is one of the candidates; log-posteriors to ``1e-7``, their rows normalised first)
and the weights (the chosen bandwidth 0.6 of a selection case, its scores 0.4). The inputs the
named generators cannot express (the kernels' test points, the bimodal and outlier samples, the
grids over the Old Faithful data, the wine split, the naive Bayes data with an outlier) are the
functions ``_kernel_points`` ... ``_nb_outlier`` of this module, which the declarations name
(``"course.checks.ps5_kde:_bimodal"``); the kit carries none of them.

One check stays Python, its inputs declared in the notebook like the others' (``answers.inputs``
reads them):

- ``kde_pdf_hidden``: on the two grids over the Old Faithful data a wrong estimate is first
  explained by its integral over the grid, one of its inputs (``integrates to 0.521037 over
  [15.8, 133], not 1``), which no declared comparison can see (a comparison sees the output and
  the reference's value only).
"""

from __future__ import annotations

import functools

import numpy as np

from autograder.checks.answers import Answers, unpack
from autograder.checks.outcome import Outcome, guarded, weighted
from coursedata.compare import compare, integrates_to_one
from solutions import kde
from solutions.naive_bayes import KDENaiveBayes

PROBLEM_SET = "ps5_kde"


# --------------------------------------------------------------------------------------------
# Inputs the declarations name (seeded; each call builds new arrays)
# --------------------------------------------------------------------------------------------


def _kernel_points(seed: int, shape: list[int]) -> np.ndarray:
    """Scaled distances spread over [-2.5, 2.5], with some just inside and outside +-1 and +-2.

    Returns
    -------
    ndarray of shape ``shape``
    """
    rng = np.random.default_rng(seed)
    u = rng.uniform(-2.5, 2.5, size=tuple(shape))
    near = np.array([0.999, 1.001, -0.999, -1.001, 1.999, 2.001, -1.999, -2.001, 0.0, 0.5])
    flat = u.reshape(-1)
    flat[: near.size] = near
    return flat.reshape(tuple(shape))


def _uniform(seed: int, n: int, low: float, high: float) -> np.ndarray:
    """``n`` query points drawn uniformly on ``[low, high)``, shape ``(n,)``."""
    return np.random.default_rng(seed).uniform(low, high, n)


def _bimodal(seed: int, n: int) -> np.ndarray:
    """A sample of size ``n`` from 0.3 N(0, 1) + 0.7 N(5, 1), shape ``(n,)``."""
    rng = np.random.default_rng(seed)
    first = rng.random(n) < 0.3
    return np.where(first, rng.normal(0.0, 1.0, n), rng.normal(5.0, 1.0, n))


def _outlier_sample(seed: int) -> np.ndarray:
    """A tight cluster of 40 points plus two isolated ones (6 and -9.5), shape ``(42,)``: far
    apart on the scale of a small bandwidth."""
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(0.0, 0.3, 40), [6.0, -9.5]])


@functools.cache
def _faithful_column(column: int) -> np.ndarray:
    from coursedata import load_faithful

    x = load_faithful().X[:, column].copy()
    x.setflags(write=False)
    return x


def _faithful_grid(column: int, h: float, reach: float, num: int) -> np.ndarray:
    """``num`` evenly spaced points from ``min - reach h`` to ``max + reach h`` of an Old
    Faithful column (0 eruptions, 1 waiting): a grid that holds a KDE's whole mass."""
    x = _faithful_column(column)
    return np.linspace(x.min() - reach * h, x.max() + reach * h, num)


def _geomspace(start: float, stop: float, num: int) -> np.ndarray:
    """``num`` candidates evenly spaced on a log scale, shape ``(num,)``."""
    return np.geomspace(start, stop, num)


@functools.cache
def _wine_arrays() -> tuple[np.ndarray, np.ndarray]:
    from coursedata import load_wine

    data = load_wine()
    return data.X.copy(), data.y.copy()


def _wine_split(
    seed: int, features: list[int], n_test: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test)`` of a seeded train/test split of the UCI wine data's
    ``features``, standardised with the training rows' mean and sd."""
    X, y = _wine_arrays()
    order = np.random.default_rng(seed).permutation(y.size)
    test, train = order[:n_test], order[n_test:]
    Xf = X[:, features]
    Z = (Xf - Xf[train].mean(axis=0)) / Xf[train].std(axis=0)
    return Z[train], y[train].copy(), Z[test]


def _nb_outlier(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test)``: three Gaussian classes labelled 2, 5, 7 of unequal size
    in 3 features, and 12 test rows of which two lie far from every class."""
    rng = np.random.default_rng(seed)
    sizes = {2: 12, 5: 25, 7: 18}
    centres = {2: [0.0, 0.0, 0.0], 5: [2.0, -1.0, 0.5], 7: [-1.5, 1.5, 2.0]}
    X = np.vstack([rng.normal(centres[c], 1.0, size=(m, 3)) for c, m in sizes.items()])
    y = np.concatenate([np.full(m, c) for c, m in sizes.items()])
    perm = rng.permutation(y.size)
    X_test = rng.normal(0.5, 1.5, size=(12, 3))
    X_test[3] = [40.0, 0.0, 0.0]
    X_test[8] = [1.0, -35.0, 30.0]
    return X[perm], y[perm], X_test


# --------------------------------------------------------------------------------------------
# References with the student's argument names (the declarations name them)
# --------------------------------------------------------------------------------------------


def _kde_pdf(x_query, data, h, kernel="gaussian") -> np.ndarray:
    """The reference estimate at ``x_query``, shape ``(n_queries,)``."""
    return kde.KernelDensity(kernel=kernel, bandwidth=h).fit(data).pdf(x_query)


def _scott_bandwidth(data) -> float:
    """Scott's rule, as :class:`solutions.kde.KernelDensity` applies it."""
    return kde.KernelDensity(bandwidth="scott").fit(data).bandwidth_


def _silverman_bandwidth(data) -> float:
    """Silverman's rule, as :class:`solutions.kde.KernelDensity` applies it."""
    return kde.KernelDensity(bandwidth="silverman").fit(data).bandwidth_


def _loo_log_likelihood(data, h) -> float:
    """The Gaussian-kernel leave-one-out log-likelihood of ``data`` with bandwidth ``h``."""
    return kde.loo_log_likelihood(data, h, kernel="gaussian")


def _select_bandwidth(data, candidates) -> tuple[float, np.ndarray]:
    """The candidate of largest Gaussian-kernel leave-one-out log-likelihood, and the scores of
    every candidate, shape ``(n_candidates,)``."""
    best, scores = kde.select_bandwidth(data, candidates, kernel="gaussian", return_scores=True)
    return float(best), np.asarray(scores, dtype=float)


def _kde_naive_bayes_log_proba(X_train, y_train, X_test, h) -> np.ndarray:
    """Log-posteriors of the test rows, shape ``(n_test, n_classes)``, columns in the order of
    ``np.unique(y_train)``."""
    model = KDENaiveBayes(kernel="gaussian", bandwidth=h).fit(X_train, y_train)
    return model.predict_log_proba(X_test)


# --------------------------------------------------------------------------------------------
# Question 2: kde_pdf, hidden cell
# --------------------------------------------------------------------------------------------


def _pdf_values(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    what = (
        f"the {inp.get('kernel', 'gaussian')}-kernel estimate (N = {inp['data'].size}, "
        f"h = {inp['h']})"
    )
    return guarded(
        lambda: compare(unpack(a, case, 1)[0], _kde_pdf(**inp), what, rtol=1e-8, atol=1e-12)
    )


def _pdf_integral(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    what = (
        f"your {inp.get('kernel', 'gaussian')}-kernel estimate of the Old Faithful data "
        f"(h = {inp['h']})"
    )
    return guarded(lambda: integrates_to_one(unpack(a, case, 1)[0], inp["x_query"], what))


def kde_pdf_hidden(a: Answers) -> Outcome:
    # On a grid over the data, a right estimate integrates to one; that property alone is met
    # by wrong estimates (another bandwidth), so it only explains a wrong value.
    return weighted(
        (0.15, _pdf_values(a, "kde_pdf")),
        (0.15, _pdf_values(a, "kde_pdf_uniform")),
        (0.15, _pdf_values(a, "kde_pdf_epanechnikov")),
        (0.3, _pdf_integral(a, "kde_pdf_waiting_grid") or _pdf_values(a, "kde_pdf_waiting_grid")),
        (
            0.25,
            _pdf_integral(a, "kde_pdf_eruptions_grid") or _pdf_values(a, "kde_pdf_eruptions_grid"),
        ),
    )


CHECKS = {"kde_pdf_hidden": kde_pdf_hidden}
