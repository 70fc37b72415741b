"""Declared checks: what they add to grading one submission of problem set 3.

* Writing the declared cases' inputs into a submission's scratch folder (done before each run),
  against the bare execution of the reference notebook in a kernel (nbclient, no sandbox): the
  inputs must cost a negligible fraction of a run.
* Scoring the reference's recorded answers with the declared checks, against the same with the
  kernel's own run above: scoring stays a small fraction of a run.

Targets: writing the inputs <= 0.01x a run; scoring <= 0.10x a run.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from _timing import best_of, case

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.checks.declared import write_inputs  # noqa: E402
from autograder.problemset import ProblemSet  # noqa: E402
from autograder.scoring import score_results  # noqa: E402
from coursedata.grading import RESULTS_ENV  # noqa: E402

PS = "ps3_mle"


def _execute(ps: ProblemSet, results: Path) -> None:
    from nbclient import NotebookClient

    nb = ps.assemble(ps.source).notebook
    os.environ[RESULTS_ENV] = str(results)
    try:
        NotebookClient(nb, timeout=120, allow_errors=True).execute(cwd=str(results))
    finally:
        os.environ.pop(RESULTS_ENV, None)


def run() -> list[dict]:
    ps = ProblemSet(PS)
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp, "results")
        results.mkdir()
        write_inputs(ps.source, results)
        run_s = best_of(lambda: _execute(ps, results), repeat=1)
        inputs_s = best_of(lambda: write_inputs(ps.source, results), repeat=20)
        score_s = best_of(lambda: score_results(ps, results, frozenset()), repeat=5)
    return [
        case("declared inputs written, one ps3 submission", inputs_s, run_s,
             "executing the notebook", "<= 0.01x"),
        case("declared checks scored, one ps3 submission", score_s, run_s,
             "executing the notebook", "<= 0.10x"),
    ]
