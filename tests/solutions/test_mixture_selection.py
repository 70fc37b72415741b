"""GaussianMixture.bic (solutions/mixture.py, chapter 5) against scikit-learn's BIC.

Oracle: ``sklearn.mixture.GaussianMixture.bic`` evaluated at the same parameters (its own
log-likelihood and its own parameter count), and the formula's two parts checked separately.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from solutions.mixture import GaussianMixture

# the scikit-learn mixture is only a container for our parameters (one EM step, then overwritten)
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def sklearn_at(ours: GaussianMixture, x: np.ndarray) -> SkGaussianMixture:
    """A scikit-learn mixture carrying our fitted parameters."""
    K = ours.weights_.size
    sk = SkGaussianMixture(K, covariance_type="full", max_iter=1).fit(x[:, None])
    sk.weights_, sk.means_ = ours.weights_, ours.means_[:, None]
    sk.covariances_ = ours.variances_[:, None, None]
    sk.precisions_cholesky_ = 1.0 / np.sqrt(sk.covariances_)
    return sk


@pytest.mark.parametrize("K", [1, 2, 3])
def test_bic_matches_sklearn(K):
    rng = np.random.default_rng(K)
    x = np.concatenate([rng.normal(0, 1, 150), rng.normal(5, 0.7, 100)])
    ours = GaussianMixture(K, tol=1e-10, max_iter=2000).fit(x)
    sk = sklearn_at(ours, x)
    np.testing.assert_allclose(ours.score(x), sk.score(x[:, None]) * x.size, rtol=1e-10)
    np.testing.assert_allclose(ours.bic(x), sk.bic(x[:, None]), rtol=1e-10)
    assert sk._n_parameters() == 3 * K - 1


def test_bic_prefers_the_true_number_of_components():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 1, 400), rng.normal(6, 1, 400)])
    bics = [GaussianMixture(K, max_iter=2000).fit(x).bic(x) for K in (1, 2, 3, 4)]
    assert int(np.argmin(bics)) == 1


def test_bic_needs_a_fit_and_valid_data():
    with pytest.raises(ValueError, match="not fitted"):
        GaussianMixture(2).bic([1.0, 2.0, 3.0])
    gmm = GaussianMixture(2).fit([0.0, 0.1, 5.0, 5.2])
    with pytest.raises(ValueError, match="NaN"):
        gmm.bic([np.nan, 1.0])
