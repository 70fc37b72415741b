"""Honest, correct answers written in ways other than the reference, and how to build notebooks.

The course keeps them beside its problem sets: ``<course>/honest/<problem_set>.py`` (optional)
defines ``SOLUTIONS``: a dict from a name (``"loops"``, ``"route"``) to the answer-cell sources of
one honest student, keyed by the nbgrader ``grade_id`` of each code answer cell. With the
reference solution (the source notebook's solution regions) these are three genuinely different
correct solutions per problem set: one with explicit loops, one by another decomposition or
library route. The similarity tests need them (distinct honest work must score below planted
copies) and run over the problem sets that have them (:func:`with_honest_answers`); the tests
check that each earns full marks.
"""

from __future__ import annotations

import copy
import importlib
import tempfile
from pathlib import Path

import nbformat

from autograder.course import CODE_PACKAGE, Course
from autograder.grading.problemset import ProblemSet
from autograder.settings import COURSE_DIR
from tests.submissions import Builder, cell

__all__ = ["builder", "honest_notebooks", "solutions", "run_keeping_results",
           "with_honest_answers"]


def solutions(problem_set: str) -> dict[str, dict[str, str]]:
    """``{name: {grade_id: source}}`` of the honest alternatives to the reference, from the
    default course's ``honest/<problem_set>.py`` (none when it has no such file)."""
    course = Course.default()
    if not course.honest_module(problem_set).exists():
        return {}
    course.use_code()
    return importlib.import_module(f"{CODE_PACKAGE}.honest.{problem_set}").SOLUTIONS


def with_honest_answers() -> list[str]:
    """The default course's problem sets that have honest alternatives to the reference."""
    course = Course.default()
    return [n for n in course.problem_sets() if course.honest_module(n).exists()]


def builder(problem_set: str) -> Builder:
    """Submissions built on the release (``course/release``) with the source's answers."""
    ps = ProblemSet(problem_set)
    return Builder(ps.path, COURSE_DIR / "release" / problem_set / ps.notebook_name)


def honest_notebooks(problem_set: str) -> dict[str, nbformat.NotebookNode]:
    """``{"reference": nb, name: nb, ...}``: the release filled in by each honest student."""
    b = builder(problem_set)
    out = {"reference": b.correct()}
    for name, answers in solutions(problem_set).items():
        nb = b.correct()
        for grade_id, source in answers.items():
            cell(nb, grade_id).source = source
        out[name] = nb
    return out


def run_keeping_results(ps: ProblemSet, notebooks: list[nbformat.NotebookNode], workdir: Path,
                        timeout: float = 300) -> list[tuple[list, Path]]:
    """Run each (assembled) notebook in turn in one kernel, each recording into its own folder
    under ``workdir`` that is kept; return ``(scores, results folder)`` per notebook.

    Only the cells with nbgrader metadata run (the setup, the answers, the tests): the
    exploration on real data (plots, tables) records nothing and takes most of the time."""
    from nbclient import NotebookClient

    from autograder.checks.declared import write_inputs
    from autograder.grading.scoring import score_results
    from coursedata.grading import RESULTS_ENV

    out = []
    host = nbformat.v4.new_notebook()
    client = NotebookClient(host, timeout=timeout, allow_errors=True, kernel_name="python3")
    with tempfile.TemporaryDirectory() as tmp, client.setup_kernel(cwd=tmp):
        for i, nb in enumerate(notebooks):
            results = Path(workdir, f"results-{i}")
            results.mkdir(parents=True)
            write_inputs(ps.source, results)  # as the grader does before a run
            reset = nbformat.v4.new_code_cell(
                f"%reset -f\nimport os\nos.environ[{RESULTS_ENV!r}] = {str(results)!r}")
            host.cells = [reset] + [copy.deepcopy(c) for c in nb.cells
                                    if "nbgrader" in c.get("metadata", {})]
            for index, c in enumerate(host.cells):
                if c.cell_type == "code":
                    client.execute_cell(c, index)
            out.append((score_results(ps, results, host), results))
    return out
