"""Tests for solutions.kde against SciPy, scikit-learn, closed forms, brute force and invariants."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.integrate
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.neighbors import KernelDensity as SkKernelDensity

from solutions import kde as kde_module
from solutions.kde import (
    KERNELS,
    KernelDensity,
    epanechnikov_kernel,
    gaussian_kernel,
    loo_log_likelihood,
    select_bandwidth,
    uniform_kernel,
)

KERNEL_NAMES = ["gaussian", "uniform", "epanechnikov"]
SKLEARN_NAME = {"gaussian": "gaussian", "uniform": "tophat", "epanechnikov": "epanechnikov"}


@pytest.fixture
def sample():
    rng = np.random.default_rng(42)
    return rng.normal(loc=1.0, scale=2.0, size=300)


def _bimodal(n, rng):
    half = n // 2
    return np.concatenate([rng.normal(-3, 0.5, half), rng.normal(3, 0.5, n - half)])


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernel_integrates_to_one_and_is_symmetric(name):
    kernel, _ = KERNELS[name]
    f = lambda u: float(kernel(u))  # noqa: E731
    if name == "gaussian":
        total, _ = scipy.integrate.quad(f, -np.inf, np.inf)
    else:
        total, _ = scipy.integrate.quad(f, -2, 2, points=[-1, 1])
    assert total == pytest.approx(1.0, abs=1e-9)
    u = np.linspace(-3, 3, 601)
    np.testing.assert_array_equal(kernel(u), kernel(-u))
    assert np.all(kernel(u) >= 0)


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("h", [0.1, 0.7, 5.0])
def test_scaled_kernel_integrates_to_one(name, h):
    kernel, _ = KERNELS[name]
    f = lambda u: float(kernel(u / h)) / h  # noqa: E731
    total, _ = scipy.integrate.quad(f, -50 * h, 50 * h, points=[-h, h], limit=200)
    assert total == pytest.approx(1.0, abs=1e-8)


def test_kernel_closed_forms():
    u = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])
    np.testing.assert_allclose(gaussian_kernel(u), scipy.stats.norm.pdf(u), rtol=1e-14)
    np.testing.assert_array_equal(uniform_kernel(u), [0, 0.5, 0.5, 0.5, 0.5, 0.5, 0])
    np.testing.assert_allclose(epanechnikov_kernel(u), [0, 0, 0.5625, 0.75, 0.5625, 0, 0])


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_kernels_keep_any_shape(name):
    kernel, log_kernel = KERNELS[name]
    u = np.linspace(-1.5, 1.5, 24).reshape(2, 3, 4)
    assert kernel(u).shape == (2, 3, 4)
    assert log_kernel(u).shape == (2, 3, 4)
    assert np.ndim(kernel(0.3)) == 0 and np.ndim(log_kernel(0.3)) == 0


@pytest.mark.parametrize("name", KERNEL_NAMES)
def test_log_kernel_matches_kernel(name):
    kernel, log_kernel = KERNELS[name]
    u = np.linspace(-3, 3, 121)
    k, logk = kernel(u), log_kernel(u)
    positive = k > 0
    np.testing.assert_allclose(logk[positive], np.log(k[positive]), rtol=1e-12)
    assert np.all(logk[~positive] == -np.inf)
    if name != "gaussian":
        assert np.all(log_kernel(np.array([-1.5, 3.0, 10.0])) == -np.inf)
    else:  # finite where the kernel underflows
        assert gaussian_kernel(60.0) == 0.0
        assert KERNELS["gaussian"][1](60.0) == pytest.approx(-1800 - 0.5 * np.log(2 * np.pi))


# --------------------------------------------------------------------------------------------
# Density against SciPy and scikit-learn
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h", [0.2, 1.0, 3.0])
def test_gaussian_pdf_matches_scipy(sample, h):
    queries = np.linspace(-8, 10, 157)
    ref = scipy.stats.gaussian_kde(sample, bw_method=h / np.std(sample, ddof=1))
    ours = KernelDensity(bandwidth=h).fit(sample)
    np.testing.assert_allclose(ours.pdf(queries), ref(queries), rtol=1e-10, atol=1e-300)


@pytest.mark.parametrize("rule", ["scott", "silverman"])
@pytest.mark.parametrize("n", [2, 37, 300])
def test_bandwidth_rules_match_scipy(sample, rule, n):
    x = sample[:n]
    ref = scipy.stats.gaussian_kde(x, bw_method=rule)
    ours = KernelDensity(bandwidth=rule).fit(x)
    assert ours.bandwidth_ == pytest.approx(ref.factor * np.std(x, ddof=1), rel=1e-12)
    assert ours.bandwidth_ == pytest.approx(np.sqrt(ref.covariance[0, 0]), rel=1e-12)
    queries = np.linspace(x.min() - 3, x.max() + 3, 50)
    np.testing.assert_allclose(ours.pdf(queries), ref(queries), rtol=1e-10)


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("h", [0.15, 0.8])
def test_score_samples_matches_sklearn(sample, name, h):
    queries = np.concatenate([np.linspace(-9, 11, 200), sample[:20] + 0.01])
    ref = SkKernelDensity(kernel=SKLEARN_NAME[name], bandwidth=h).fit(sample[:, None])
    expected = ref.score_samples(queries[:, None])
    ours = KernelDensity(kernel=name, bandwidth=h).fit(sample).score_samples(queries)
    finite = np.isfinite(expected)
    np.testing.assert_array_equal(np.isfinite(ours), finite)
    if name != "gaussian":
        assert not finite.all()  # the comparison covers the -inf region of compact kernels
    np.testing.assert_allclose(ours[finite], expected[finite], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(
        KernelDensity(kernel=name, bandwidth=h).fit(sample).pdf(queries), np.exp(expected),
        rtol=1e-10, atol=1e-300,
    )


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("h", [0.05, 0.5, 2.0])
def test_kde_integrates_to_one(name, h):
    x = np.random.default_rng(3).standard_t(df=4, size=60)
    est = KernelDensity(kernel=name, bandwidth=h).fit(x)
    n_grid = 40_001 if name == "gaussian" else 400_001  # the box kernel's jumps need a fine grid
    grid = np.linspace(x.min() - 12 * h, x.max() + 12 * h, n_grid)
    assert np.trapezoid(est.pdf(grid), grid) == pytest.approx(1.0, abs=2e-3 if name == "uniform" else 1e-6)


def test_gaussian_log_density_finite_in_far_tails():
    x = np.array([0.0, 1.0])
    q = np.array([100.0, -100.0, 1e4])
    est = KernelDensity(bandwidth=1.0).fit(x)
    assert np.all(est.pdf(q) == 0.0)  # the naive log(pdf) would be -inf
    log_p = est.score_samples(q)
    assert np.all(np.isfinite(log_p))
    c = -0.5 * np.log(2 * np.pi) + np.log(0.5)
    # closed form: log(0.5 (phi(100) + phi(99))) = -99^2/2 + log(1 + exp(-(100^2 - 99^2)/2)) + c
    expected = [
        -0.5 * 99**2 + np.log1p(np.exp(-0.5 * (100**2 - 99**2))) + c,
        -0.5 * 100**2 + np.log1p(np.exp(-0.5 * (101**2 - 100**2))) + c,
        -0.5 * (1e4 - 1) ** 2 + c,
    ]
    np.testing.assert_allclose(log_p, expected, rtol=1e-13)
    sk = SkKernelDensity(bandwidth=1.0).fit(x[:, None]).score_samples(q[:, None])
    np.testing.assert_allclose(log_p, sk, rtol=1e-10)


def test_score_is_sum_of_score_samples(sample):
    est = KernelDensity(bandwidth=0.5).fit(sample)
    q = sample[:50] + 0.1
    assert est.score(q) == pytest.approx(est.score_samples(q).sum(), rel=1e-12)


def test_fit_attributes_and_column_input(sample):
    est = KernelDensity(kernel="epanechnikov", bandwidth=0.4)
    assert est.fit(sample[:, None]) is est
    assert est.n_samples_ == sample.size and est.bandwidth_ == 0.4
    np.testing.assert_array_equal(est.data_, sample)
    assert est.kernel == "epanechnikov"
    q = np.linspace(-2, 2, 9)
    np.testing.assert_array_equal(est.pdf(q[:, None]), est.pdf(q))


def test_pdf_keeps_query_order():
    x = np.array([0.0, 0.3, 2.0])
    q = np.array([2.0, -1.0, 0.1, 5.0, 0.1])
    est = KernelDensity(bandwidth=0.5).fit(x)
    expected = scipy.stats.norm.pdf((q[:, None] - x[None, :]) / 0.5).sum(axis=1) / (3 * 0.5)
    np.testing.assert_allclose(est.pdf(q), expected, rtol=1e-13)


# --------------------------------------------------------------------------------------------
# Leave-one-out and bandwidth selection
# --------------------------------------------------------------------------------------------


def _brute_force_loo(x, h, name):
    """Oracle: refit scikit-learn without each point in turn and score the left-out point."""
    total = 0.0
    for i in range(x.size):
        rest = np.delete(x, i)[:, None]
        ref = SkKernelDensity(kernel=SKLEARN_NAME[name], bandwidth=h).fit(rest)
        total += ref.score_samples(x[i : i + 1, None])[0]
    return total


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("h", [0.3, 1.5])
def test_loo_matches_brute_force(name, h):
    x = np.random.default_rng(7).normal(size=25)
    expected = _brute_force_loo(x, h, name)
    got = loo_log_likelihood(x, h, kernel=name)
    if np.isfinite(expected):
        assert got == pytest.approx(expected, rel=1e-10)
    else:
        assert got == -np.inf


def test_loo_gaussian_matches_scipy_refits():
    x = np.random.default_rng(8).exponential(size=15)
    h = 0.4
    expected = sum(
        np.log(scipy.stats.gaussian_kde(np.delete(x, i),
                                        bw_method=h / np.std(np.delete(x, i), ddof=1))(x[i])[0])
        for i in range(x.size)
    )
    assert loo_log_likelihood(x, h) == pytest.approx(expected, rel=1e-10)


def test_loo_compact_kernel_isolated_point_is_minus_inf():
    x = np.array([0.0, 0.2, 0.4, 5.0])
    assert loo_log_likelihood(x, 1.0, kernel="uniform") == -np.inf
    assert loo_log_likelihood(x, 1.0, kernel="epanechnikov") == -np.inf
    assert np.isfinite(loo_log_likelihood(x, 1.0, kernel="gaussian"))
    assert np.isfinite(loo_log_likelihood(x, 5.0, kernel="uniform"))


def test_loo_gaussian_outlier_stays_finite():
    x = np.array([0.0, 0.1, 0.2, 1e3])  # the outlier's LOO density underflows to 0 in linear space
    value = loo_log_likelihood(x, 0.5)
    assert np.isfinite(value)
    assert value == pytest.approx(_brute_force_loo(x, 0.5, "gaussian"), rel=1e-12)


def test_loo_accepts_rule_of_thumb(sample):
    h = KernelDensity(bandwidth="silverman").fit(sample).bandwidth_
    assert loo_log_likelihood(sample, "silverman") == pytest.approx(loo_log_likelihood(sample, h), rel=1e-14)


def test_select_bandwidth_normal_near_silverman():
    x = np.random.default_rng(0).normal(size=500)
    candidates = np.geomspace(0.05, 2.0, 25)
    best = select_bandwidth(x, candidates)
    silverman = KernelDensity(bandwidth="silverman").fit(x).bandwidth_
    assert silverman / 2 <= best <= 2 * silverman
    assert best in candidates


def test_select_bandwidth_bimodal_smaller_than_scott():
    x = _bimodal(400, np.random.default_rng(1))
    scott = KernelDensity(bandwidth="scott").fit(x).bandwidth_
    candidates = np.geomspace(0.02, 3.0, 30)
    best, scores = select_bandwidth(x, candidates, return_scores=True)
    assert best < scott / 2
    assert scores.shape == candidates.shape
    assert best == candidates[np.argmax(scores)]
    for h, s in zip(candidates[:3], scores[:3]):
        assert s == pytest.approx(loo_log_likelihood(x, h), rel=1e-14)


def test_select_bandwidth_skips_minus_inf_candidates():
    x = np.array([0.0, 0.1, 0.2, 3.0, 3.1])
    best, scores = select_bandwidth(x, [0.05, 0.15, 5.0], kernel="uniform", return_scores=True)
    assert scores[0] == -np.inf
    assert np.isfinite(scores[1]) and best in (0.15, 5.0)


# --------------------------------------------------------------------------------------------
# Blocking and memory
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", KERNEL_NAMES)
@pytest.mark.parametrize("block", [1, 3, 7, 40, 10**6])
def test_blocked_equals_dense(monkeypatch, name, block):
    rng = np.random.default_rng(11)
    x = np.concatenate([rng.normal(size=17), [0.5, 0.5, 40.0]])  # duplicates and an outlier
    q = np.concatenate([rng.normal(size=13) * 3, [0.5, 60.0]])
    h = 0.6
    kernel, _ = KERNELS[name]
    dense = kernel((q[:, None] - x[None, :]) / h).sum(axis=1) / (x.size * h)
    k_self = kernel((x[:, None] - x[None, :]) / h)
    np.fill_diagonal(k_self, 0.0)
    with np.errstate(divide="ignore"):
        dense_loo = np.log(k_self.sum(axis=1) / ((x.size - 1) * h)).sum()
    monkeypatch.setattr(kde_module, "_BLOCK_ENTRIES", block)
    est = KernelDensity(kernel=name, bandwidth=h).fit(x)
    np.testing.assert_allclose(est.pdf(q), dense, rtol=1e-12, atol=1e-300)
    finite = dense > 0
    np.testing.assert_allclose(est.score_samples(q)[finite], np.log(dense[finite]), rtol=1e-12)
    if name == "gaussian":
        assert np.all(np.isfinite(est.score_samples(q)))  # 60.0 is far out but finite in log space
        assert np.isfinite(loo_log_likelihood(x, h, name))  # 40.0 too
    else:
        assert np.all(est.score_samples(q)[~finite] == -np.inf)
        assert loo_log_likelihood(x, h, name) == dense_loo == -np.inf
    x_in = x[:-1]  # without the outlier, every LOO term is finite for each kernel
    with monkeypatch.context() as m:
        m.setattr(kde_module, "_BLOCK_ENTRIES", 10**6)
        unblocked = loo_log_likelihood(x_in, 1.5, name)
    assert loo_log_likelihood(x_in, 1.5, name) == pytest.approx(unblocked, rel=1e-12)


def test_memory_stays_bounded():
    rng = np.random.default_rng(5)
    x, q = rng.normal(size=2000), rng.normal(size=2000)
    est = KernelDensity(bandwidth=0.3).fit(x)
    for method in (est.pdf, est.score_samples):
        tracemalloc.start()
        try:
            method(q)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert peak < 4e6  # a dense 2000 x 2000 float64 matrix would be 32 MB
    tracemalloc.start()
    try:
        loo_log_likelihood(x, 0.3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4e6


# --------------------------------------------------------------------------------------------
# Invariants (hypothesis)
# --------------------------------------------------------------------------------------------

_data = st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=25).map(np.array)
_queries = st.lists(st.floats(-60, 60, allow_nan=False), min_size=1, max_size=10).map(np.array)


@settings(max_examples=40, deadline=None)
@given(x=_data, q=_queries, shift=st.floats(-1e3, 1e3), h=st.floats(0.05, 20))
def test_shift_equivariance(x, q, shift, h):
    """p_{x + c}(y + c) = p_x(y) for the Gaussian kernel (smooth, so rounding stays harmless)."""
    base = KernelDensity(bandwidth=h).fit(x)
    moved = KernelDensity(bandwidth=h).fit(x + shift)
    np.testing.assert_allclose(
        moved.score_samples(q + shift), base.score_samples(q), rtol=1e-9, atol=1e-6
    )


@settings(max_examples=40, deadline=None)
@given(x=_data, q=_queries, scale=st.floats(0.01, 100), h=st.floats(0.05, 20))
def test_scale_equivariance(x, q, scale, h):
    """With bandwidth a*h, p_{a x}(a y) = p_x(y) / a."""
    base = KernelDensity(bandwidth=h).fit(x)
    scaled = KernelDensity(bandwidth=scale * h).fit(scale * x)
    np.testing.assert_allclose(
        scaled.score_samples(scale * q), base.score_samples(q) - np.log(scale), rtol=1e-9, atol=1e-9
    )


@settings(max_examples=40, deadline=None)
@given(
    x=st.lists(st.floats(-10, 10, allow_nan=False), min_size=2, max_size=20, unique=True).map(np.array),
    scale=st.floats(0.1, 10),
    rule=st.sampled_from(["scott", "silverman"]),
)
def test_rule_of_thumb_scales_with_data(x, scale, rule):
    if np.std(x, ddof=1) < 1e-6:
        return
    h = KernelDensity(bandwidth=rule).fit(x).bandwidth_
    assert KernelDensity(bandwidth=rule).fit(scale * x + 3.0).bandwidth_ == pytest.approx(scale * h, rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(x=_data, q=_queries, h=st.floats(0.05, 5), name=st.sampled_from(KERNEL_NAMES), seed=st.integers(0, 99))
def test_permutation_invariance_and_nonnegative(x, q, h, name, seed):
    perm = np.random.default_rng(seed).permutation(x.size)
    a = KernelDensity(kernel=name, bandwidth=h).fit(x).pdf(q)
    b = KernelDensity(kernel=name, bandwidth=h).fit(x[perm]).pdf(q)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    assert np.all(a >= 0)
    assert np.all(a <= KERNELS[name][0](0.0) / h + 1e-12)


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bandwidth", [0.0, -1.0, np.nan, np.inf])
def test_bad_bandwidth_value(bandwidth):
    with pytest.raises(ValueError, match="bandwidth must be finite and > 0"):
        KernelDensity(bandwidth=bandwidth).fit([0.0, 1.0])
    with pytest.raises(ValueError, match="bandwidth"):
        loo_log_likelihood([0.0, 1.0], bandwidth)


@pytest.mark.parametrize("bandwidth", ["Scott", "normal_reference", True, [0.5], None])
def test_bad_bandwidth_kind(bandwidth):
    with pytest.raises(ValueError, match="bandwidth"):
        KernelDensity(bandwidth=bandwidth).fit([0.0, 1.0])


def test_unknown_kernel():
    with pytest.raises(ValueError, match="unknown kernel 'tophat'"):
        KernelDensity(kernel="tophat").fit([0.0, 1.0])
    with pytest.raises(ValueError, match="kernel"):
        KernelDensity(kernel=None).fit([0.0, 1.0])
    with pytest.raises(ValueError, match="unknown kernel"):
        loo_log_likelihood([0.0, 1.0], 1.0, kernel="cosine")
    with pytest.raises(ValueError, match="unknown kernel"):
        select_bandwidth([0.0, 1.0], [1.0], kernel="box")


def test_hyperparameters_not_validated_in_init():
    est = KernelDensity(kernel="nope", bandwidth=-3)
    assert est.kernel == "nope" and est.bandwidth == -3


@pytest.mark.parametrize(
    "x, match",
    [
        (np.zeros((3, 2)), "x must be 1-D"),
        (np.zeros((2, 2, 2)), "x must be 1-D"),
        (5.0, "x must be 1-D"),
        ([0.0, np.nan], "NaN or infinite"),
        ([0.0, np.inf], "NaN or infinite"),
        ([], "x is empty"),
        (["a", "b"], "numeric"),
    ],
)
def test_bad_x(x, match):
    with pytest.raises(ValueError, match=match):
        KernelDensity(bandwidth=1.0).fit(x)
    with pytest.raises(ValueError, match=match):
        loo_log_likelihood(x, 1.0)
    with pytest.raises(ValueError, match=match):
        select_bandwidth(x, [1.0])


def test_bad_queries():
    est = KernelDensity(bandwidth=1.0).fit([0.0, 1.0])
    for method in (est.pdf, est.score_samples, est.score):
        with pytest.raises(ValueError, match="x_query must be 1-D"):
            method(np.zeros((2, 3)))
        with pytest.raises(ValueError, match="x_query contains 1 NaN"):
            method([0.0, np.nan])


def test_too_few_points():
    with pytest.raises(ValueError, match="at least 2 points for leave-one-out"):
        loo_log_likelihood([1.0], 1.0)
    with pytest.raises(ValueError, match="at least 2 points for leave-one-out"):
        select_bandwidth([1.0], [1.0])
    for rule in ("scott", "silverman"):
        with pytest.raises(ValueError, match="at least 2 data points"):
            KernelDensity(bandwidth=rule).fit([1.0])
    # a single point is a valid sample with an explicit bandwidth
    est = KernelDensity(bandwidth=2.0).fit([1.0])
    assert est.pdf([1.0])[0] == pytest.approx(scipy.stats.norm.pdf(0.0) / 2.0)


@pytest.mark.parametrize("rule", ["scott", "silverman"])
def test_zero_variance_with_rule(rule):
    with pytest.raises(ValueError, match="zero sample variance"):
        KernelDensity(bandwidth=rule).fit([2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match="zero sample variance"):
        loo_log_likelihood([2.0, 2.0], rule)
    assert np.isfinite(loo_log_likelihood([2.0, 2.0], 1.0))  # a float bandwidth is fine


def test_bad_candidates():
    x = [0.0, 1.0, 2.0]
    with pytest.raises(ValueError, match="candidates is empty"):
        select_bandwidth(x, [])
    with pytest.raises(ValueError, match="candidates must all be > 0"):
        select_bandwidth(x, [0.5, 0.0])
    with pytest.raises(ValueError, match="candidates must all be > 0"):
        select_bandwidth(x, [-1.0])
    with pytest.raises(ValueError, match="candidates contains 1 NaN"):
        select_bandwidth(x, [0.5, np.nan])
    with pytest.raises(ValueError, match="candidates must be 1-D"):
        select_bandwidth(x, np.ones((2, 2)))


def test_all_candidates_minus_inf():
    with pytest.raises(ValueError, match="every candidate bandwidth"):
        select_bandwidth([0.0, 10.0, 20.0], [0.1, 1.0], kernel="epanechnikov")


def test_not_fitted():
    est = KernelDensity()
    for method in (est.pdf, est.score_samples, est.score):
        with pytest.raises(ValueError, match="not fitted yet"):
            method([0.0])


def test_a_forgotten_one_over_h_makes_leave_one_out_choose_the_largest_bandwidth():
    """Without 1/h the leave-one-out score is the correct one plus N log h and, with the Gaussian
    kernel, rises with h: the search ends at the top of the grid (ps5, Q7 part 1)."""
    from coursedata import load_faithful

    faithful = load_faithful()
    x = faithful.X[:, faithful.feature_names.index("eruptions")]
    grid = np.geomspace(0.02, 5, 40)
    gaps = x[:, None] - x[None, :]

    def forgotten(h):
        values = gaussian_kernel(gaps / h)
        np.fill_diagonal(values, 0.0)
        return float(np.sum(np.log(values.sum(axis=1) / (x.size - 1))))

    wrong = np.array([forgotten(h) for h in grid])
    right = np.array([loo_log_likelihood(x, h) for h in grid])
    assert np.allclose(wrong, right + x.size * np.log(grid))
    assert np.all(np.diff(wrong) > 0) and wrong[-1] < x.size * np.log(gaussian_kernel(0.0))
    assert 0.05 < grid[np.argmax(right)] < 0.2                       # the correct score peaks inside
