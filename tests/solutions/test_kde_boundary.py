"""reflected_pdf (solutions/kde.py, chapter 5) against independent oracles.

Oracles: SciPy's ``gaussian_kde`` (same bandwidth) evaluated at x and at the mirror image, numerical
integration (``scipy.integrate.quad``) for the total mass, and the closed-form leaked mass
``mean(Phi((L - x_n) / h))``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats

from solutions.kde import KernelDensity, reflected_pdf


@pytest.fixture
def sample():
    return np.random.default_rng(0).exponential(1.0, 300) + 2.0        # support [2, inf)


def test_matches_scipy_mirror_sum(sample):
    kde = KernelDensity(bandwidth=0.3).fit(sample)
    scipy_kde = stats.gaussian_kde(sample, bw_method=0.3 / sample.std(ddof=1))
    q = np.array([2.0, 2.1, 2.5, 4.0, 8.0])
    np.testing.assert_allclose(reflected_pdf(kde, q, lower=2.0), scipy_kde(q) + scipy_kde(4.0 - q),
                               rtol=1e-10)
    np.testing.assert_array_equal(reflected_pdf(kde, [1.0, 1.99], lower=2.0), [0.0, 0.0])


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
def test_integrates_to_one_and_removes_the_leak(sample, kernel):
    kde = KernelDensity(kernel=kernel, bandwidth=0.4).fit(sample)
    # integrate piece by piece between the kernels' edges (the compact kernel has kinks there)
    edges = np.concatenate([sample - 0.4, sample + 0.4, 4.0 - sample - 0.4, 4.0 - sample + 0.4])
    edges = np.unique(np.clip(np.concatenate([edges, [2.0, 20.0]]), 2.0, 20.0))
    total = sum(integrate.quad(lambda t: reflected_pdf(kde, [t], lower=2.0)[0], lo, hi)[0]
                for lo, hi in zip(edges[:-1], edges[1:]))
    assert np.isclose(total, 1.0, atol=1e-6)
    if kernel == "gaussian":
        leaked = integrate.quad(lambda t: kde.pdf([t])[0], -10, 2.0, limit=200)[0]
        assert np.isclose(leaked, np.mean(stats.norm.cdf((2.0 - sample) / 0.4)), rtol=1e-6)


def test_bad_input(sample):
    with pytest.raises(ValueError, match="not fitted"):
        reflected_pdf(KernelDensity(), [1.0])
    kde = KernelDensity(bandwidth=0.3).fit(sample)
    with pytest.raises(ValueError, match="the data go below lower=3"):
        reflected_pdf(kde, [3.5], lower=3.0)
    with pytest.raises(ValueError, match="lower contains 1 NaN"):
        reflected_pdf(kde, [3.5], lower=np.nan)
