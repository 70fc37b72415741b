"""Tests for solutions.map_estimation against SciPy distributions and numerical optimisation."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy.optimize import minimize, minimize_scalar
from scipy.special import softmax

from solutions.map_estimation import (
    beta_bernoulli_map,
    beta_bernoulli_posterior_mean,
    dirichlet_categorical_map,
    dirichlet_categorical_posterior_mean,
)


def numerical_beta_mode(alpha, beta):
    res = minimize_scalar(
        lambda t: -st.beta.logpdf(t, alpha, beta), bounds=(1e-12, 1 - 1e-12), method="bounded",
        options={"xatol": 1e-12}
    )
    return res.x


def numerical_dirichlet_mode(post):
    """Maximise sum_k (post_k - 1) log theta_k over the simplex (softmax parametrisation)."""
    post = np.asarray(post, dtype=float)

    def neg(w):
        return -np.sum((post - 1) * np.log(softmax(w)))

    def grad(w):
        theta = softmax(w)
        return -((post - 1) - (post - 1).sum() * theta)

    res = minimize(neg, np.zeros(post.size), jac=grad, method="BFGS", options={"gtol": 1e-12})
    return softmax(res.x)


# ------------------------------------------------------------------------------------------
# Beta-Bernoulli
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n1, n0, a, b",
                         [(55, 45, 2, 2), (0, 10, 2, 3), (3, 0, 1.5, 1.5), (7, 2, 0.5, 0.8), (1, 1, 10, 1)])
def test_beta_map_is_the_posterior_mode(n1, n0, a, b):
    theta = beta_bernoulli_map(n1, n0, a, b)
    assert isinstance(theta, float)
    assert theta == pytest.approx(numerical_beta_mode(n1 + a, n0 + b), abs=1e-6)


@pytest.mark.parametrize("n1, n0, a, b", [(55, 45, 2, 2), (0, 0, 0.5, 0.5), (3, 0, 1, 1), (7, 2, 0.3, 8)])
def test_beta_posterior_mean_matches_scipy(n1, n0, a, b):
    assert beta_bernoulli_posterior_mean(n1, n0, a, b) == pytest.approx(
        st.beta(n1 + a, n0 + b).mean(), rel=1e-12)


def test_beta_map_add_one_smoothing_and_uniform_prior():
    n1 = np.array([0, 1, 5, 10, 3])
    n0 = np.array([10, 0, 5, 2, 0])
    np.testing.assert_allclose(beta_bernoulli_map(n1, n0, 2, 2), (n1 + 1) / (n1 + n0 + 2))
    # a = b = 1: the MLE, including the boundary values 0 and 1
    np.testing.assert_allclose(beta_bernoulli_map(n1, n0, 1, 1), n1 / (n1 + n0))
    assert beta_bernoulli_map(55, 45, 1, 1) == pytest.approx(0.55)


def test_beta_map_mode_on_the_boundary_when_pseudo_count_is_one():
    # Beta(1, 4) has density 4 (1 - t)^3, maximal at t = 0
    assert beta_bernoulli_map(0, 2, 1, 2) == 0.0
    t = np.linspace(0, 1, 101)
    assert t[np.argmax(st.beta.pdf(t, 1, 4))] == 0.0
    assert beta_bernoulli_map(4, 0, 2, 1) == 1.0


def test_beta_map_vectorised_per_word_per_class():
    rng = np.random.default_rng(0)
    n_docs = np.array([[30], [50]])  # (n_classes, 1)
    n1 = rng.integers(0, 30, size=(2, 6))
    n0 = n_docs - n1
    theta = beta_bernoulli_map(n1, n0, 2, 2)
    assert theta.shape == (2, 6)
    expected = [[numerical_beta_mode(n1[c, j] + 2, n0[c, j] + 2) for j in range(6)] for c in range(2)]
    np.testing.assert_allclose(theta, expected, atol=1e-6)
    mean = beta_bernoulli_posterior_mean(n1, n0, np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0]), 2)
    np.testing.assert_allclose(mean, st.beta(n1 + np.array([1.0, 2.0, 3.0, 1.0, 2.0, 3.0]), n0 + 2).mean())


def test_beta_map_tends_to_mle_as_n_grows():
    gaps = []
    for n in [10, 100, 1_000, 10_000, 100_000]:
        n1 = 0.3 * n
        gaps.append(abs(beta_bernoulli_map(n1, n - n1, 5, 3) - 0.3))
    assert np.all(np.diff(gaps) < 0)
    assert gaps[-1] < 1e-4


@settings(max_examples=60, deadline=None)
@given(
    n1=hst.integers(0, 1000),
    n0=hst.integers(0, 1000),
    a=hst.floats(1.01, 50),
    b=hst.floats(1.01, 50),
)
def test_beta_map_shrinks_mle_towards_prior_mode(n1, n0, a, b):
    """The MAP is a convex combination of the prior mode and the MLE (when N > 0)."""
    theta = beta_bernoulli_map(n1, n0, a, b)
    prior_mode = (a - 1) / (a + b - 2)
    candidates = [prior_mode] if n1 + n0 == 0 else [prior_mode, n1 / (n1 + n0)]
    assert min(candidates) - 1e-12 <= theta <= max(candidates) + 1e-12
    mean = beta_bernoulli_posterior_mean(n1, n0, a, b)
    assert 0 < mean < 1


@pytest.mark.parametrize("func", [beta_bernoulli_map, beta_bernoulli_posterior_mean])
@pytest.mark.parametrize(
    "args, match",
    [
        ((-1, 3, 2, 2), "n_ones must be counts >= 0"),
        ((1, [3, -2], 2, 2), "n_zeros must be counts >= 0"),
        ((np.nan, 3, 2, 2), "n_ones contains"),
        ((1, 3, 0, 2), "a is a prior parameter and must be > 0"),
        ((1, 3, 2, -1), "b is a prior parameter and must be > 0"),
        ((1, 3, 2, np.inf), "b contains"),
        (([1, 2, 3], [1, 2], 2, 2), "broadcast"),
    ],
)
def test_beta_input_errors(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


@pytest.mark.parametrize(
    "args",
    [
        (0, 5, 0.5, 2),  # n_ones + a < 1: density unbounded at theta = 0
        (5, 0, 2, 0.5),  # n_zeros + b < 1: unbounded at theta = 1
        (0, 0, 0.5, 0.5),  # U-shaped posterior
        ([3, 0], [2, 2], 0.5, 2),  # one bad entry in a vector
    ],
)
def test_beta_map_undefined_below_one(args):
    with pytest.raises(ValueError, match="unbounded"):
        beta_bernoulli_map(*args)
    # the posterior mean is still defined
    assert np.all(np.isfinite(beta_bernoulli_posterior_mean(*args)))


def test_beta_map_uniform_posterior_has_no_unique_mode():
    with pytest.raises(ValueError, match="uniform"):
        beta_bernoulli_map(0, 0, 1, 1)
    with pytest.raises(ValueError, match="uniform"):
        beta_bernoulli_map([0, 1], [0, 1], 1, 1)


# ------------------------------------------------------------------------------------------
# Dirichlet-categorical
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "counts, alpha",
    [
        ([3, 0, 1], 2.0),
        ([10, 20, 5, 0], [1.5, 3.0, 1.2, 4.0]),
        ([0, 7, 2], 1.0),  # a zero count with alpha = 1 puts the mode on a face
        ([1, 1, 1, 1, 1], 0.6),
    ],
)
def test_dirichlet_map_is_the_posterior_mode(counts, alpha):
    theta = dirichlet_categorical_map(counts, alpha)
    post = np.asarray(counts, dtype=float) + np.broadcast_to(alpha, np.shape(counts))
    np.testing.assert_allclose(theta, numerical_dirichlet_mode(post), atol=1e-6)
    assert theta.sum() == pytest.approx(1.0)


def test_dirichlet_map_per_class_counts_and_add_one():
    counts = np.array([[3, 0, 1, 6], [0, 2, 2, 0], [5, 5, 5, 5]])
    theta = dirichlet_categorical_map(counts, 2)
    assert theta.shape == (3, 4)
    np.testing.assert_allclose(theta, (counts + 1) / (counts.sum(axis=1, keepdims=True) + 4))
    for c in range(3):
        np.testing.assert_allclose(theta[c], numerical_dirichlet_mode(counts[c] + 2.0), atol=1e-6)
    # alpha = 1: the MLE from labels
    labels = np.random.default_rng(1).integers(0, 6, size=100)
    np.testing.assert_allclose(dirichlet_categorical_map(np.bincount(labels, minlength=6), 1),
                               np.bincount(labels, minlength=6) / 100)


def test_dirichlet_map_with_two_categories_is_the_beta_map():
    n1 = np.array([0, 4, 9])
    n0 = np.array([3, 4, 1])
    theta = dirichlet_categorical_map(np.stack([n1, n0], axis=-1), [2.5, 1.5])
    np.testing.assert_allclose(theta[:, 0], beta_bernoulli_map(n1, n0, 2.5, 1.5))


def test_dirichlet_posterior_mean_matches_scipy():
    counts = np.array([4, 0, 9, 1])
    alpha = np.array([0.5, 1.0, 2.0, 0.1])
    mean = dirichlet_categorical_posterior_mean(counts, alpha)
    np.testing.assert_allclose(mean, st.dirichlet(counts + alpha).mean(), rtol=1e-12)
    per_class = dirichlet_categorical_posterior_mean(np.array([[1, 2, 3], [0, 0, 0]]), 1.0)
    np.testing.assert_allclose(per_class, [[2 / 9, 3 / 9, 4 / 9], [1 / 3, 1 / 3, 1 / 3]])


def test_dirichlet_map_tends_to_mle_as_n_grows():
    p = np.array([0.5, 0.3, 0.2])
    gaps = [np.abs(dirichlet_categorical_map(p * n, 3.0) - p).max() for n in [10, 100, 1_000, 100_000]]
    assert np.all(np.diff(gaps) < 0) and gaps[-1] < 1e-4


@pytest.mark.parametrize("func", [dirichlet_categorical_map, dirichlet_categorical_posterior_mean])
@pytest.mark.parametrize(
    "counts, alpha, match",
    [
        ([3, -1, 2], 2.0, "counts must be counts >= 0"),
        ([3, np.nan, 2], 2.0, "counts contains"),
        (5, 2.0, "at least one axis"),
        ([3, 1, 2], 0.0, "alpha is a prior parameter and must be > 0"),
        ([3, 1, 2], [1.0, -2.0, 1.0], "alpha is a prior parameter and must be > 0"),
        ([3, 1, 2], [1.0, 2.0], "broadcast"),
        ([], 1.0, "empty"),
    ],
)
def test_dirichlet_input_errors(func, counts, alpha, match):
    with pytest.raises(ValueError, match=match):
        func(counts, alpha)


def test_dirichlet_map_undefined_cases():
    with pytest.raises(ValueError, match="not defined.*negative"):
        dirichlet_categorical_map([3, 0, 2], 0.5)  # unseen category with alpha < 1
    with pytest.raises(ValueError, match="not defined.*negative"):
        dirichlet_categorical_map([[3, 1], [0, 4]], [0.9, 1.0])
    with pytest.raises(ValueError, match="denominator.*uniform"):
        dirichlet_categorical_map([[1, 1, 1], [0, 0, 0]], 1.0)
    # the posterior mean is defined in both cases
    np.testing.assert_allclose(dirichlet_categorical_posterior_mean([3, 0, 2], 0.5),
                               [3.5 / 6.5, 0.5 / 6.5, 2.5 / 6.5])
