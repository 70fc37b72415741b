"""Grader-side inputs and references of problem set 4 (MAP smoothing and naive Bayes).

Every autograded cell of problem set 4 declares its check next to the question, in the source
notebook's cell metadata (``course.check``, see :mod:`autograder.checks.declaration`), so
``CHECKS`` is empty. The declarations name the functions of this module that the named generators
cannot express and the references that are not a public function of :mod:`solutions`:

* Inputs (trusted, run only by the grader; the student kit carries none of them). The synthetic
  training sets are built so that smoothing matters: in every class some feature is never on
  (binary data) or some category never occurs (categorical data), and the last category of each
  categorical feature is declared through ``n_categories`` but never observed at all. The
  real-data cases take seeded subsets of the OpenIntro spam e-mails and of the Titanic
  passengers. Arguments drawn from one random stream (``X`` and ``y`` of one training set)
  come from one call of one function returning them in order, declared under one key naming
  them all (``"X, y": {...}``), so their parameters cannot drift apart.
* References. The fitted parameters and the end-to-end log-posteriors come from
  :class:`solutions.naive_bayes.BernoulliNB` / :class:`~solutions.naive_bayes.CategoricalNB`
  (their ``alpha`` is the problem set's add-alpha pseudo-count); joint log-likelihoods for given
  parameters from independent closed forms (``scipy.stats.bernoulli.logpmf`` summed over
  features; a gather of ``log theta`` by category); log-posteriors from
  :func:`solutions.softmax.log_softmax` of the joint, compared as log-probabilities (``-inf``,
  probability 0, must stay ``-inf``): equal to it exactly when each row is the joint minus one
  constant *and* normalised, where either alone is met by a wrong answer.
* Each student's numbers (the problem set has per-student variants,
  :mod:`autograder.checks.personal`): :func:`draw_variant` draws the runs and flips of
  Question 2's coin and a seed for the grader alone; the hidden cases ``beta_map_scalar`` (through
  :func:`run_counts`) and ``beta_map_large`` read them, and :func:`expected_values` gives the MAP
  estimate Question 2 asks for, for the student's numbers.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy import stats

from solutions.naive_bayes import BernoulliNB, CategoricalNB
from solutions.softmax import log_softmax

PROBLEM_SET = "ps4_map_naive_bayes"
CHECKS: dict = {}


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


def _copies(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Copies, so that the cached arrays stay as generated."""
    return tuple(np.array(a) for a in arrays)


def beta_counts(seed: int, rows: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """``(n_ones, n_zeros)``: counts of ones, then of zeros, each of shape ``(rows, 1)``,
    integers below ``high`` as floats, of one stream."""
    rng = np.random.default_rng(seed)
    n_ones = rng.integers(0, high, size=(rows, 1)).astype(float)
    return n_ones, rng.integers(0, high, size=(rows, 1)).astype(float)


def beta_large_counts(seed: int, n) -> tuple[np.ndarray, np.ndarray]:
    """``(n_ones, n_zeros)`` out of ``n`` flips, float: a seeded 5 to 30 % of each ``n``,
    rounded down, are ones."""
    n = np.asarray(n, dtype=float)
    n_ones = np.floor(n * np.random.default_rng(seed).uniform(0.05, 0.3, size=n.shape))
    return n_ones, n - n_ones


def draw_variant(rng: np.random.Generator) -> dict:
    """One student's numbers: ``runs`` R (50 to 500) of Question 2's coin, flipped until heads,
    which took ``flips`` K in all (K >= R: every run ends in one heads), and ``seed`` for the
    hidden case ``beta_map_large`` (the grader's alone). K is R / theta rounded, for a theta
    uniform between 0.1 and 0.9, so that the MAP estimates (R + 1)/(K + 2) spread over that
    range, where few classmates share one to four decimals (``tests/course/
    test_ps4_variants.py`` measures it)."""
    runs = int(rng.integers(50, 501))
    theta = float(rng.uniform(0.1, 0.9))
    return {
        "runs": runs,
        "flips": runs + int(round(runs * (1 - theta) / theta)),
        "seed": int(rng.integers(2**31)),
    }


def run_counts(runs: int, flips: int) -> tuple[float, float]:
    """``(n_ones, n_zeros)`` of R runs that took K flips: R heads and K - R tails."""
    return float(runs), float(flips - runs)


def expected_values(parameters: dict) -> dict:
    """What the written answer of Question 2 states for the student's numbers: the MAP estimate
    ``(R + 1) / (K + 2)`` of the waiting-for-heads coin under Beta(2, 2)."""
    runs, flips = parameters["runs"], parameters["flips"]
    return {"Q2.1 MAP for your R and K, Beta(2, 2): (R + 1)/(K + 2)": (runs + 1) / (flips + 2)}


def _labels(rng: np.random.Generator, n: int, n_classes: int) -> np.ndarray:
    """Integer labels 0..n_classes-1, each occurring at least twice, in random order."""
    y = np.concatenate(
        [np.repeat(np.arange(n_classes), 2), rng.integers(0, n_classes, n - 2 * n_classes)]
    )
    rng.shuffle(y)
    return y


def binary_data(seed: int, n: int, d: int, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: binary ``X`` of shape ``(n, d)`` (float 0/1) and its labels ``y`` (int64);
    feature ``c`` is never on in class ``c`` and feature ``d-1-c`` always is (zero counts both
    ways)."""
    rng = np.random.default_rng(seed)
    y = _labels(rng, n, n_classes)
    p = rng.beta(0.7, 0.7, size=(n_classes, d))
    X = (rng.random((n, d)) < p[y]).astype(float)
    for c in range(n_classes):
        X[y == c, c] = 0.0
        X[y == c, d - 1 - c] = 1.0
    return X, y


def categorical_data(
    seed: int, n: int, n_categories, n_classes: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)``: category codes ``X`` of shape ``(n, D)`` and labels ``y`` (int64). The last
    category of every feature never occurs; category 0 of feature ``c`` never occurs in class
    ``c``."""
    rng = np.random.default_rng(seed)
    y = _labels(rng, n, n_classes)
    cols = []
    for d, k in enumerate(n_categories):
        probs = rng.dirichlet(np.full(k - 1, 0.8), size=n_classes)  # only k-1 categories used
        u = rng.random(n)
        col = (u[:, None] > np.cumsum(probs[y], axis=1)).sum(axis=1)
        col = np.minimum(col, k - 2)
        if d < n_classes:
            col[(y == d) & (col == 0)] = 1
        cols.append(col)
    return np.column_stack(cols).astype(np.int64), y.astype(np.int64)


def _log_blocks(rng: np.random.Generator, n_classes: int, n_categories) -> np.ndarray:
    """log theta of shape (n_classes, sum K_d): each feature's block is a log-probability vector."""
    blocks = [np.log(rng.dirichlet(np.full(k, 0.7), size=n_classes)) for k in n_categories]
    return np.clip(np.hstack(blocks), -30.0, 0.0)


def log_blocks(seed: int, n_classes: int, n_categories) -> np.ndarray:
    """Seeded ``log theta`` of shape ``(n_classes, sum K_d)``: per class, each feature's block
    is a log-probability vector (clipped below at -30)."""
    return _log_blocks(np.random.default_rng(seed), n_classes, n_categories)


def log_of(values) -> np.ndarray:
    """``log(values)``: a log-prior stated as probabilities."""
    return np.log(np.asarray(values, dtype=float))


def categorical_parameters(
    seed: int, n: int, n_categories, n_classes: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X, log_prior, log_theta)`` from one stream: uniform category codes ``X`` of shape
    ``(n, D)``, then ``log_prior`` (a Dirichlet(3) draw) and ``log_theta``
    (:func:`log_blocks`) of ``n_classes`` classes."""
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, k, size=n) for k in n_categories])
    log_prior = np.log(rng.dirichlet(np.full(n_classes, 3.0)))
    return X, log_prior, _log_blocks(rng, n_classes, n_categories)


def bernoulli_parameters(seed: int, n_classes: int, d: int, beta) -> tuple[np.ndarray, np.ndarray]:
    """``(log_prior, log_theta)`` of one stream: ``log_theta`` of shape ``(n_classes, d)``
    (Beta ``beta`` draws clipped to [0.001, 0.999]) is drawn first, then ``log_prior`` (a
    Dirichlet(3) draw)."""
    rng = np.random.default_rng(seed)
    theta = np.clip(rng.beta(*beta, size=(n_classes, d)), 1e-3, 1 - 1e-3)
    return np.log(rng.dirichlet(np.full(n_classes, 3.0))), np.log(theta)


def binary_matrix(seed: int, n: int, d: int, p: float) -> np.ndarray:
    """Independent flips with probability ``p``, float 0/1 of shape ``(n, d)``."""
    return (np.random.default_rng(seed).random((n, d)) < p).astype(float)


def codes(seed: int, n: int, n_categories, unused_last: bool = False) -> np.ndarray:
    """Category codes of shape ``(n, D)``, column ``d`` uniform below ``n_categories[d]`` (or
    below ``n_categories[d] - 1``: the last category never occurs)."""
    rng = np.random.default_rng(seed)
    return np.column_stack([rng.integers(0, k - unused_last, size=n) for k in n_categories])


def normal_joint(seed: int, n: int, n_classes: int, mean: float, sd: float) -> np.ndarray:
    """Joint log-likelihoods of shape ``(n, n_classes)``, normal around ``mean``."""
    return np.random.default_rng(seed).normal(loc=mean, scale=sd, size=(n, n_classes))


def extreme_joint(
    seed: int, n: int, n_classes: int, sd: float, low: float, high: float
) -> np.ndarray:
    """Joint log-likelihoods whose first half of rows is shifted by ``low`` (every ``exp``
    underflows) and second half by ``high`` (every ``exp`` overflows)."""
    joint = np.random.default_rng(seed).normal(scale=sd, size=(n, n_classes))
    joint[: n // 2] += low
    joint[n // 2 :] += high
    return joint


def joint_with_neginf(seed: int, n: int, n_classes: int, mean: float, sd: float) -> np.ndarray:
    """Normal joint log-likelihoods with one ``-inf`` (probability 0) in every other row."""
    rng = np.random.default_rng(seed)
    joint = rng.normal(loc=mean, scale=sd, size=(n, n_classes))
    rows = np.arange(0, n, 2)
    joint[rows, rng.integers(0, n_classes, size=rows.size)] = -np.inf
    return joint


_DATA = {"spam": "load_spam_email", "titanic": "load_titanic"}


@cache
def _subsets(name: str, seed: int, sizes: tuple) -> list:
    import coursedata

    if name not in _DATA:
        raise ValueError(f"data must be one of {sorted(_DATA)}; got {name!r}")
    data = getattr(coursedata, _DATA[name])()
    perm = np.random.default_rng(seed).permutation(len(data.y))
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    dtype = float if name == "spam" else data.X.dtype
    return [
        (data.X[perm[lo:hi]].astype(dtype), data.y[perm[lo:hi]])
        for lo, hi in zip(bounds[:-1], bounds[1:])
    ]


def subset(data: str, seed: int, sizes, index: int) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of subset ``index`` of disjoint seeded subsets of sizes ``sizes`` of the
    ``"spam"`` e-mails (``X`` float 0/1) or of the ``"titanic"`` passengers (category codes)."""
    return _copies(*_subsets(data, seed, tuple(sizes))[index])


def subset_features(data: str, seed: int, sizes, index: int) -> np.ndarray:
    """``X`` alone of :func:`subset` (a case whose labels are not an argument)."""
    return subset(data, seed, sizes, index)[0]


def train_test(data: str, seed: int, sizes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(X_train, y_train, X_test)``: the features and labels of the first of two disjoint
    seeded subsets of sizes ``sizes = [n_train, n_test]`` (:func:`subset`), then the features
    of the second."""
    if len(sizes) != 2:
        raise ValueError(f"sizes is [n_train, n_test]; got {sizes!r}")
    (X_train, y_train), (X_test, _) = _subsets(data, seed, tuple(sizes))
    return _copies(X_train, y_train, X_test)


# --------------------------------------------------------------------------------------------
# References
# --------------------------------------------------------------------------------------------


def fit_bernoulli(X, y, alpha) -> tuple[np.ndarray, np.ndarray]:
    """``log_prior`` (C,) and ``log_theta`` (C, D) of an add-``alpha`` Bernoulli naive Bayes."""
    nb = BernoulliNB(alpha=alpha).fit(X, y)
    return nb.class_log_prior_, nb.feature_log_prob_


def fit_categorical(X, y, n_categories, alpha) -> tuple[np.ndarray, np.ndarray]:
    """``log_prior`` (C,) and ``log_theta`` (C, sum K_d), the features' blocks side by side."""
    nb = CategoricalNB(alpha=alpha, n_categories=n_categories).fit(X, y)
    return nb.class_log_prior_, np.hstack(nb.feature_log_prob_)


def bernoulli_joint(X, log_prior, log_theta) -> np.ndarray:
    r""":math:`\log\pi_c + \sum_d \log \mathrm{Bernoulli}(x_{nd}; \theta_{cd})`, shape (N, C)."""
    theta = np.exp(log_theta)
    per_feature = stats.bernoulli.logpmf(X[:, None, :], theta[None, :, :])
    return per_feature.sum(axis=2) + log_prior


def categorical_joint(X, n_categories, log_prior, log_theta) -> np.ndarray:
    r""":math:`\log\pi_c + \sum_d \log\theta_{c,d,x_{nd}}`, a gather of the one-hot columns of
    ``log_theta`` (C, sum K_d); shape (N, C)."""
    starts = np.concatenate([[0], np.cumsum(n_categories)[:-1]])
    columns = X + starts  # (N, D) column of each observed value
    return log_theta[:, columns].sum(axis=2).T + log_prior


def log_posterior(joint) -> np.ndarray:
    """Each row of the joint minus its log-sum-exp: the log-posteriors, shape (N, C)."""
    return log_softmax(joint, axis=1)


def one_hot(X, n_categories) -> np.ndarray:
    """The one-hot encoding (N, sum K_d): feature ``d``'s block of ``K_d`` columns side by side."""
    return np.hstack([np.eye(int(k))[X[:, d]] for d, k in enumerate(n_categories)])


def bernoulli_filter(X_train, y_train, X_test, alpha) -> np.ndarray:
    """Log-posteriors of ``X_test`` (N_test, C) after fitting a Bernoulli naive Bayes."""
    return BernoulliNB(alpha=alpha).fit(X_train, y_train).predict_log_proba(X_test)


def categorical_filter(X_train, y_train, X_test, n_categories, alpha) -> np.ndarray:
    """Log-posteriors of ``X_test`` (N_test, C) after fitting a categorical naive Bayes."""
    return (
        CategoricalNB(alpha=alpha, n_categories=n_categories)
        .fit(X_train, y_train)
        .predict_log_proba(X_test)
    )
