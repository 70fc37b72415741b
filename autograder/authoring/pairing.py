"""Answer cells and their tests, paired by grade_id: an answer renamed away from its tests.

A test cell belongs to the question its grade_id names (``QUESTION_visible``,
``QUESTION_hidden``: :func:`coursedata.naming.question_of`), and the question is the answer cell
whose grade_id is ``QUESTION``. An answer cell whose grade_id is changed in the cell toolbar (to
``center_v2``, or a name of the author's own) leaves its tests naming a cell that no longer
exists, and itself with no test: its feedback and points are no longer the tests'. A test cell
that names no answer cell on purpose (a task graded on several answers together, such as a
filter built from earlier questions' functions) is left alone: only tests that the renamed cell
can be told to have lost (by the function it defines, or a grade_id close to theirs) are named.
"""

from __future__ import annotations

import ast
import difflib

from autograder.authoring.cells import TOOLBAR
from autograder.authoring.validate import Problem, nbgrader_meta
from autograder.grading.problemset import ProblemSet
from coursedata.naming import question_of, test_kind

__all__ = ["pairing_problems"]


def _functions(source: str) -> list[str]:
    """The names of the functions ``source`` defines at its top level (none if it is no Python)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def _tests(ps: ProblemSet) -> dict[str, list[str]]:
    """``{question: [its test cells' grade_ids]}`` of the graded test cells, in order."""
    out: dict[str, list[str]] = {}
    for cell in ps.source.cells:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id", "")
        if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
            if test_kind(gid) is not None:
                out.setdefault(question_of(gid), []).append(gid)
    return out


def _lost(gid: str, source: str, orphans: list[str]) -> str | None:
    """The orphaned question the answer cell ``gid`` was: the function it defines, or the
    grade_id closest to its own."""
    named = [f for f in _functions(source) if f in orphans]
    if named:
        return named[0]
    close = difflib.get_close_matches(gid, orphans, n=1, cutoff=0.6)
    return close[0] if close else None


def pairing_problems(ps: ProblemSet) -> list[Problem]:
    """An answer cell with no test whose tests, named by a grade_id no answer cell has, it can
    be told to have lost: named with those tests and the two fixes."""
    tests = _tests(ps)
    answers = {
        nbgrader_meta(c).get("grade_id", ""): c
        for c in ps.source.cells
        if c.cell_type == "code" and nbgrader_meta(c).get("solution")
    }
    orphans = [q for q in tests if q not in answers]
    out = []
    for gid, cell in answers.items():
        if gid in tests or not orphans:
            continue
        question = _lost(gid, cell.source, orphans)
        if question is None:
            continue
        orphans.remove(question)
        names = ", ".join(f"`{t}`" for t in tests[question])
        renamed = ", ".join(f"`{gid}{t.removeprefix(question)}`" for t in tests[question])
        out.append(
            Problem(
                f"{ps.notebook_name}, cell `{gid}`",
                f"no test cell belongs to it, and its tests {names} name the answer cell "
                f"`{question}`, which no cell is now (the answer's grade_id was changed), so "
                "their points and feedback are no question's",
                f"Change its grade_id back to `{question}` ({TOOLBAR}), or rename its tests "
                f"{renamed} to match it.",
            )
        )
    return out
