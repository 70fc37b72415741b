"""Gaussian kernel density evaluation: solutions.kde against scipy.stats.gaussian_kde.

Both evaluate the same estimate (same data, same bandwidth) of 10,000 points at 10,000 queries,
i.e. 1e8 kernel evaluations. SciPy runs a compiled loop; ours runs numpy ufuncs in place over
blocks of 65,536 pairs. Both are dominated by the float64 exponential.
"""

from __future__ import annotations

import numpy as np
import scipy.stats
from _timing import best_of, case, peak_memory_mb

from solutions.kde import KernelDensity

N_POINTS = 10_000
N_QUERIES = 10_000


def run() -> list[dict]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N_POINTS)
    queries = rng.standard_normal(N_QUERIES)

    peer = scipy.stats.gaussian_kde(x)  # Scott's factor
    ours = KernelDensity(kernel="gaussian", bandwidth="scott").fit(x)
    assert np.isclose(ours.bandwidth_, peer.factor * np.std(x, ddof=1), rtol=1e-12)
    check = queries[:500]  # same estimate, checked on a slice to keep the run short
    np.testing.assert_allclose(ours.pdf(check), peer.evaluate(check), rtol=1e-10)

    # each call takes about a second, so two timed repeats after the warm-up are enough
    ours_s = best_of(lambda: ours.pdf(queries), repeat=2)
    peer_s = best_of(lambda: peer.evaluate(queries), repeat=2)
    ours_mb = peak_memory_mb(lambda: ours.pdf(queries))
    peer_mb = peak_memory_mb(lambda: peer.evaluate(queries))
    return [
        case(
            f"KDE gaussian pdf, {N_POINTS:,} pts x {N_QUERIES:,} queries",
            ours_s,
            peer_s,
            "scipy.stats.gaussian_kde.evaluate",
            "<= 1.2x",
            note=f"peak memory ours {ours_mb:.1f} MB, scipy {peer_mb:.1f} MB "
            f"(a dense matrix would be {N_POINTS * N_QUERIES * 8 / 1e6:.0f} MB)",
        )
    ]
