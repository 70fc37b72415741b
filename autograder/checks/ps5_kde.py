"""Trusted checks for problem set 5 (kernel density estimation) that are not declared, and the
grader-side inputs and references its declarations name.

Every other autograded cell of problem set 5 declares its check next to the question, in the
source notebook's cell metadata (``course.check``, see :mod:`autograder.checks.declared`): the
references (:mod:`solutions.kde` through the small adapters below, which take the student's
argument names), the seeded inputs, the tolerances (kernels to ``1e-12``, density values to
``rtol=1e-8``, the rules of thumb to ``rtol=1e-9``, leave-one-out sums to ``1e-8``) and the
weights. The inputs the named generators cannot express (the kernel's test points, the bimodal
and outlier samples, the grids over the Old Faithful data, the wine split, the naive Bayes data
with an outlier) are the functions ``_kernel_points`` ... ``_nb_outlier`` of this module, which
the declarations name (``"autograder.checks.ps5_kde:_bimodal"``); the kit carries none of them.

These checks stay Python, their inputs declared in the notebook like the others'
(``answers.inputs(case)`` reads them):

- ``kde_pdf_hidden``: on the two grids over the Old Faithful data a wrong estimate is first
  explained by its integral (``integrates to 0.52, not 1``), a property of the grid argument
  that no declared comparison states;
- ``select_bandwidth_visible``, ``select_bandwidth_hidden``: the chosen bandwidth weighs 0.6 and
  the scores 0.4 of each case, while a declaration shares a case's weight equally among its
  outputs; the reference choice is computed once per process (a leave-one-out fit per candidate);
- ``kde_naive_bayes_visible``, ``kde_naive_bayes_hidden``: a wrong log-posterior is first
  explained by rows that are not normalised, a property no declared comparison states.
"""

from __future__ import annotations

import functools

import numpy as np

from autograder.checks.answers import Answers, scalar, unpack
from autograder.checks.compare import check_shape, compare, integrates_to_one, log_probability_rows
from autograder.checks.outcome import Outcome, first_problem, guarded, weighted
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
    flat[:near.size] = near
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


@functools.lru_cache(maxsize=None)
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


@functools.lru_cache(maxsize=None)
def _wine_arrays() -> tuple[np.ndarray, np.ndarray]:
    from coursedata import load_wine

    data = load_wine()
    return data.X.copy(), data.y.copy()


def _wine_split(seed: int, features: list[int], n_test: int, part: str) -> np.ndarray:
    """One part (``"X_train"``, ``"y_train"`` or ``"X_test"``) of a seeded train/test split of
    the UCI wine data's ``features``, standardised with the training rows' mean and sd."""
    X, y = _wine_arrays()
    order = np.random.default_rng(seed).permutation(y.size)
    test, train = order[:n_test], order[n_test:]
    Xf = X[:, features]
    Z = (Xf - Xf[train].mean(axis=0)) / Xf[train].std(axis=0)
    return {"X_train": Z[train], "y_train": y[train].copy(), "X_test": Z[test]}[part]


def _nb_outlier(seed: int, part: str) -> np.ndarray:
    """One part (``"X_train"``, ``"y_train"`` or ``"X_test"``) of three Gaussian classes
    labelled 2, 5, 7 of unequal size in 3 features, and 12 test rows of which two lie far from
    every class."""
    rng = np.random.default_rng(seed)
    sizes = {2: 12, 5: 25, 7: 18}
    centres = {2: [0.0, 0.0, 0.0], 5: [2.0, -1.0, 0.5], 7: [-1.5, 1.5, 2.0]}
    X = np.vstack([rng.normal(centres[c], 1.0, size=(m, 3)) for c, m in sizes.items()])
    y = np.concatenate([np.full(m, c) for c, m in sizes.items()])
    perm = rng.permutation(y.size)
    X_test = rng.normal(0.5, 1.5, size=(12, 3))
    X_test[3] = [40.0, 0.0, 0.0]
    X_test[8] = [1.0, -35.0, 30.0]
    return {"X_train": X[perm], "y_train": y[perm], "X_test": X_test}[part]


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
    what = (f"the {inp.get('kernel', 'gaussian')}-kernel estimate (N = {inp['data'].size}, "
            f"h = {inp['h']})")
    return guarded(lambda: compare(unpack(a, case, 1)[0], _kde_pdf(**inp), what,
                                   rtol=1e-8, atol=1e-12))


def _pdf_integral(a: Answers, case: str) -> str | None:
    inp = a.inputs(case)
    what = (f"your {inp.get('kernel', 'gaussian')}-kernel estimate of the Old Faithful data "
            f"(h = {inp['h']})")
    return guarded(lambda: integrates_to_one(unpack(a, case, 1)[0], inp["x_query"], what))


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


# --------------------------------------------------------------------------------------------
# Question 5: bandwidth selection
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _reference_selection(data: bytes, candidates: bytes) -> tuple[float, np.ndarray]:
    """The reference choice and scores (read-only), computed once per process for given inputs
    (each is a leave-one-out fit per candidate); the arrays come as float64 bytes."""
    best, scores = kde.select_bandwidth(np.frombuffer(data), np.frombuffer(candidates),
                                        kernel="gaussian", return_scores=True)
    scores = np.array(scores, dtype=float)
    scores.setflags(write=False)
    return float(best), scores


def _selection(a: Answers, case: str) -> tuple[str | None, str | None]:
    inp = a.inputs(case)
    best, scores = _reference_selection(*(np.asarray(inp[k], dtype=np.float64).tobytes()
                                          for k in ("data", "candidates")))
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


# --------------------------------------------------------------------------------------------
# Question 6: KDE naive Bayes
# --------------------------------------------------------------------------------------------


def _nb(a: Answers, case: str) -> str | None:
    """Normalised rows (the clearer message) and the reference's values: normalisation alone is
    met by wrong answers, so it only explains a wrong value."""
    inp = a.inputs(case)
    expected = _kde_naive_bayes_log_proba(**inp)
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
    "kde_pdf_hidden": kde_pdf_hidden,
    "select_bandwidth_visible": select_bandwidth_visible,
    "select_bandwidth_hidden": select_bandwidth_hidden,
    "kde_naive_bayes_visible": kde_naive_bayes_visible,
    "kde_naive_bayes_hidden": kde_naive_bayes_hidden,
}
