"""Declared checks: what they add to grading one submission, for every problem set.

Every problem set's inputs are declared in its source notebook and written by the grader into a
submission's scratch folder before the notebook runs (the kit carries no generator). Against the
bare execution of the reference notebook in a kernel (nbclient, no sandbox), per problem set:

* the inputs written for one submission, once a worker has generated them (they are kept per
  process): a negligible fraction of a run;
* the same, the first time in a worker (the seeded generation itself, paid once per worker and
  problem set): a fraction of one run;
* the reference's recorded answers scored by the trusted checks: a small fraction of a run.

Targets: inputs written <= 0.01x a run; first generation <= 0.5x a run; scoring <= 0.10x a run.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from _timing import best_of, case

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks.declaration import _input_files, write_inputs  # noqa: E402
from autograder.grading.problemset import ProblemSet, list_problem_sets  # noqa: E402
from autograder.grading.scoring import score_results  # noqa: E402
from coursedata.grading import RESULTS_ENV  # noqa: E402


def _execute(ps: ProblemSet, results: Path) -> None:
    from nbclient import NotebookClient

    nb = ps.assemble(ps.source).notebook
    os.environ[RESULTS_ENV] = str(results)
    try:
        NotebookClient(nb, timeout=300, allow_errors=True).execute(cwd=str(results))
    finally:
        os.environ.pop(RESULTS_ENV, None)


def _first_generation(ps: ProblemSet, results: Path) -> float:
    """Seconds to write the inputs with nothing generated yet in this process."""
    _input_files.cache_clear()
    start = time.perf_counter()
    write_inputs(ps.source, results)
    return time.perf_counter() - start


def _rows(name: str) -> list[dict]:
    ps = ProblemSet(name)
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp, "results")
        results.mkdir()
        cold_s = _first_generation(ps, results)
        run_s = best_of(lambda: _execute(ps, results), repeat=1)
        inputs_s = best_of(lambda: write_inputs(ps.source, results), repeat=20)
        score_s = best_of(lambda: score_results(ps, results, frozenset()), repeat=5)
    peer = f"executing the {name} notebook"
    return [case(f"{name}: inputs written", inputs_s, run_s, peer, "<= 0.01x"),
            case(f"{name}: inputs first generated", cold_s, run_s, peer, "<= 0.5x",
                 "once per worker process"),
            case(f"{name}: declared checks scored", score_s, run_s, peer, "<= 0.10x")]


def run() -> list[dict]:
    return [row for name in list_problem_sets() for row in _rows(name)]
