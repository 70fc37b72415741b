"""Helpers for the problem-set tests: the nbgrader release, and many variants in one kernel.

Grading one notebook in a fresh kernel costs a few seconds, mostly the kernel's start. The mutant
tests grade dozens of variants of each problem set, so they run them in one real kernel, clearing
its namespace (``%reset -f``) and pointing ``GRADER_RESULTS_DIR`` at a fresh folder before each.
The scoring itself is the production code (:func:`autograder.scoring.score_results`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.problemset import COURSE_DIR, ProblemSet
from autograder.scoring import CellScore, score_results
from coursedata.grading import RESULTS_ENV


def generate_release(names: list[str], root: Path) -> Path:
    """Run ``nbgrader generate_assignment`` for ``names`` in a copy of the course at ``root``."""
    shutil.copy(COURSE_DIR / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(COURSE_DIR / "source", root / "source")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for name in names:
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", name, "--force",
                        f"--CourseDirectory.root={root}",
                        f"--CourseDirectory.db_url=sqlite:///{root}/gradebook.db"],
                       cwd=root, env=env, check=True, capture_output=True)
    return root / "release"


def run_variants(ps: ProblemSet, notebooks: list[nbformat.NotebookNode],
                 timeout: float = 120) -> list[tuple[list[CellScore], nbformat.NotebookNode]]:
    """Execute each notebook in turn in one kernel and score it; return (scores, executed)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        host = nbformat.v4.new_notebook()
        client = NotebookClient(host, timeout=timeout, allow_errors=True, kernel_name="python3")
        with client.setup_kernel(cwd=tmp):
            for i, nb in enumerate(notebooks):
                results = Path(tmp, f"results-{i}")
                results.mkdir()
                reset = nbformat.v4.new_code_cell(
                    f"%reset -f\nimport os\nos.environ[{RESULTS_ENV!r}] = {str(results)!r}")
                cells = [reset] + [c for c in nb.cells]
                host.cells = cells
                for index, cell in enumerate(cells):
                    if cell.cell_type == "code":
                        client.execute_cell(cell, index)
                out.append((score_results(ps, results), nb))
    return out
