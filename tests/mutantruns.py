"""The declared mutants of every problem set, each graded once per test run.

A mutant is a realistic mistake declared next to the answer it mutates, in the solution cell's
``metadata.course.mutants`` of the source notebook (read by :mod:`autograder.checks.mutants`, its
format there). Two test files read the same runs: ``tests/course/test_problem_sets.py`` (every mutant
loses points where it says, and one the visible test must catch fails it in the kernel) and
``tests/autograder/pages/test_report.py`` (the class report puts one mistake in one group). Grading the 173
mutants of the six problem sets takes minutes, so the session fixture ``mutant_runs``
(``tests/conftest.py``) grades each problem set's mutants the first time a test asks for them and
hands every later test the same runs. An author grades one problem set's mutants with
``python -m autograder check-problem-set NAME --mutants``.

Under pytest-xdist each worker is a process of its own: the runs are kept on disk in the run's
temporary folder, shared by its workers, behind one file lock per problem set. The first worker to
ask grades; another asking meanwhile waits for it and then reads what it wrote.
"""

from __future__ import annotations

import copy
import fcntl
import json
import pickle
import re
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.checks.mutants import Mutant, mutants
from autograder.grading.problemset import ProblemSet
from tests.psharness import run_variants

__all__ = ["MutantRun", "MutantRuns", "mutant_notebook", "mutants_of", "mutant_secrets"]


@dataclass(frozen=True)
class MutantRun:
    """One mutant made on the reference solution and graded (the whole notebook, in a kernel).

    Attributes
    ----------
    mutant : autograder.checks.mutants.Mutant
        The mistake.
    scores : list of autograder.grading.scoring.CellScore
        Its scores, by the production scoring.
    executed : nbformat.NotebookNode
        The assembled notebook with its outputs (a visible test that caught the mistake holds
        an error).
    results : Path
        The folder its hidden cells recorded their answers in, kept for the whole test run.
    """

    mutant: Mutant
    scores: list
    executed: nbformat.NotebookNode
    results: Path


def mutants_of(name: str) -> list[Mutant]:
    """The mutants problem set ``name`` declares in its source notebook's solution cells."""
    ps = ProblemSet(name)
    return mutants(ps.source, ps.notebook_name)


_SECRET_BLOCK = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS).*?### END \1", re.S)


def mutant_secrets(ps: ProblemSet) -> list[str]:
    """The texts of ``ps``'s mutants (names, ``find``, ``replace``) that a student must never
    see: those found nowhere in the source but in its metadata and its solution and hidden
    blocks (``")"`` or ``pass`` may be in the question's text too), as JSON writes them."""
    public = " ".join(_SECRET_BLOCK.sub("", c.source) for c in ps.source.cells)
    pieces = {p for m in mutants_of(ps.name) for p in (m.name, m.find, m.replace)}
    return sorted(json.dumps(p, ensure_ascii=False)[1:-1] for p in pieces
                  if p.strip() and p not in public)


def mutant_notebook(ps: ProblemSet, mutant: Mutant, base: nbformat.NotebookNode | None = None
                    ) -> nbformat.NotebookNode:
    """The assembled notebook of ``base`` (the reference by default) whose answer cell
    ``mutant.cell`` holds the reference's answer with ``mutant.find`` replaced."""
    nb = copy.deepcopy(ps.source if base is None else base)
    [source] = [c.source for c in ps.source.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == mutant.cell]
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == mutant.cell]
    cell.source = source.replace(mutant.find, mutant.replace)
    return ps.assemble(nb).notebook


def _grade(ps: ProblemSet, folder: Path) -> list[MutantRun]:
    mutants = mutants_of(ps.name)
    notebooks = [mutant_notebook(ps, m) for m in mutants]
    runs = run_variants(ps, notebooks, keep=folder)
    return [MutantRun(m, scores, executed, folder / f"results-{i}")
            for i, (m, (scores, executed)) in enumerate(zip(mutants, runs))]


class MutantRuns:
    """``runs(name)``: the graded mutants of problem set ``name``, graded once per test run.

    Parameters
    ----------
    base : Path
        A folder shared by every process of the test run (pytest-xdist's workers included).
    """

    def __init__(self, base: Path):
        self.base = Path(base)
        self._runs: dict[str, list[MutantRun]] = {}

    def __call__(self, name: str) -> list[MutantRun]:
        if name not in self._runs:
            self._runs[name] = self._shared(name)
        return self._runs[name]

    def problem_set(self, name: str) -> ProblemSet:
        """Problem set ``name`` as its mutants are graded: itself, or with variants, one sample
        student's variant drawn with a secret of this test run (the same in every process, so
        a test may grade other notebooks on the same numbers)."""
        ps = ProblemSet(name)
        if ps.variants is None:
            return ps
        path = self.base / "sample-variants.secret"
        with open(self.base / "sample-variants.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not path.is_file():
                path.write_bytes(secrets.token_bytes(32))
        return ps.for_student("sample-1", path.read_bytes())

    def _shared(self, name: str) -> list[MutantRun]:
        folder = self.base / f"mutant-runs-{name}"
        done = folder / "runs.pickle"
        with open(self.base / f"mutant-runs-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.is_file():
                shutil.rmtree(folder, ignore_errors=True)  # what a failed attempt left
                runs = _grade(self.problem_set(name), folder)
                partial = done.with_suffix(".partial")
                partial.write_bytes(pickle.dumps(runs))
                partial.rename(done)  # complete or absent, even if this process is killed
        return pickle.loads(done.read_bytes())
