"""Gaussian mixture by EM: solutions.mixture against scikit-learn's GaussianMixture.

100,000 points from a three-component 1-D mixture, K = 3, the same starting parameters, exactly
100 EM iterations each (``tol=0``), so both do the same arithmetic; the fitted means must agree.
"""

from __future__ import annotations

import warnings

import numpy as np
from _timing import best_of, case
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning
from sklearn.mixture import GaussianMixture as SkGaussianMixture

from solutions.mixture import ConvergenceWarning, GaussianMixture

N, K, ITERS = 100_000, 3, 100


def run() -> list[dict]:
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(-3, 1, N // 4), rng.normal(0, 0.5, N // 4),
                        rng.normal(4, 1.5, N - N // 2)])
    w0, m0, v0 = np.full(K, 1 / K), np.array([-1.0, 0.5, 1.0]), np.full(K, x.var())
    ours = GaussianMixture(K, max_iter=ITERS, tol=0.0)
    peer = SkGaussianMixture(K, max_iter=ITERS, tol=0.0, weights_init=w0,
                             means_init=m0[:, None], precisions_init=(1 / v0)[:, None, None])

    def fit_ours():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # tol=0 never "converges"
            return ours.fit(x, weights_init=w0, means_init=m0, variances_init=v0)

    def fit_peer():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SkConvergenceWarning)
            return peer.fit(x[:, None])

    fit_ours(), fit_peer()
    assert ours.n_iter_ == peer.n_iter_ == ITERS
    np.testing.assert_allclose(np.sort(ours.means_), np.sort(peer.means_.ravel()), rtol=1e-6)
    return [case(f"GMM EM, {N:,} points, K={K}, {ITERS} iterations", best_of(fit_ours, 3),
                 best_of(fit_peer, 3), "sklearn.mixture.GaussianMixture", "<= 1.2x",
                 "same start; fitted means agree to 1e-6")]
