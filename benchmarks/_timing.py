"""Timing and memory helpers shared by every benchmark module."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable


def best_of(fn: Callable[[], object], repeat: int = 5) -> float:
    """Return the best wall time in seconds of ``repeat`` calls of ``fn`` (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def peak_memory_mb(fn: Callable[[], object]) -> float:
    """Return the peak of memory allocated by Python and numpy during one call of ``fn``, in MB."""
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


def case(name: str, ours_s: float, peer_s: float, peer: str, target: str, note: str = "") -> dict:
    """One benchmark row: our time, the peer's time measured in the same run, and the target ratio."""
    return {"name": name, "ours_s": ours_s, "peer_s": peer_s, "peer": peer,
            "ratio": ours_s / peer_s, "target": target, "note": note}
