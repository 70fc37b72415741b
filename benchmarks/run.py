"""Run every benchmark module and print our time over the peer's time, measured in the same run.

Usage: ``make benchmark`` (or ``python benchmarks/run.py [topic ...]``, e.g. ``kde pca``).
"""

from __future__ import annotations

import importlib
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def main(argv: list[str]) -> int:
    topics = argv or sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    rows = []
    for topic in topics:
        module = importlib.import_module(f"bench_{topic}")
        rows.extend(module.run())
    header = f"{'benchmark':<48} {'ours (s)':>10} {'peer (s)':>10} {'ratio':>7}  {'target':<10} peer / note"
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['name']:<48} {r['ours_s']:>10.4f} {r['peer_s']:>10.4f} {r['ratio']:>6.2f}x  "
              f"{r['target']:<10} {r['peer']}{'; ' + r['note'] if r['note'] else ''}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
