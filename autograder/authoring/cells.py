"""The cells' nbgrader metadata as an instructor sets it: what nbgrader refuses, or grades as not
meant, named in the instructor's words before anything else is checked.

nbgrader's own rules (``nbgrader/nbgraderformat/v3.py``, ``MetadataValidatorV3``, and
``nbgrader/preprocessors/clearsolutions.py``) stop ``generate_assignment`` with a traceback that
names no cell ("Duplicate grade id", "Markdown grade cell ... is not marked as a solution cell",
"Solution region detected in a non-solution cell"); a check on a cell that is not graded is
silently never run. Every other count (points, checks, cases) reads these flags, so a mistake
here makes those messages point the wrong way: ``release`` reports these alone when there are
any (:func:`autograder.authoring.release.release`).

- **a grade_id twice** (a cell copied in Jupyter keeps its metadata): nbgrader refuses it;
- **a written answer not marked as an answer** (``solution: false`` on a graded markdown cell), or
  an answer not graded (``grade: false`` on a markdown answer): nbgrader refuses it;
- **solution markers in a cell that is not an answer** (``solution: false``, or no nbgrader
  metadata at all: an editor that drops cells' metadata): nbgrader refuses it;
- **a graded cell without points**, or with points written as text (``"2"``): nbgrader refuses
  it; with 0 points, it grades nothing;
- **a check on a cell that is not graded** (``grade: false`` on a test cell that declares
  ``course.check`` or has an entry in ``CHECKS``), or **hidden tests in a cell that is not
  graded** (its metadata dropped): its check would never score, and nbgrader refuses hidden
  tests outside a graded cell.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import nbformat

from autograder.authoring.validate import Problem, nbgrader_meta
from autograder.checks import load_checks
from autograder.grading.problemset import ProblemSet

__all__ = ["cell_problems"]

#: The line that opens a cell's hidden tests (nbgrader's ``ClearHiddenTests``).
HIDDEN_TESTS = "### BEGIN HIDDEN TESTS"

#: The toolbar of nbgrader's "Create Assignment" view, where these flags are set.
TOOLBAR = "View > Cell Toolbar > Create Assignment"


def _flagged(cell: nbformat.NotebookNode) -> bool:
    """Whether nbgrader tracks the cell (graded, an answer or locked): it then needs a grade_id
    of its own."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade") or meta.get("solution") or meta.get("locked"))


def _number(value: object) -> float | None:
    """A metadata value as a number (None: not one; JSON has no other type ``float`` reads)."""
    if not isinstance(value, (str, int, float)):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _as_written(value: object) -> str:
    """``value`` as a number in JSON (``"2"`` as ``2``), or ``N`` when it is none."""
    number = _number(value) if not isinstance(value, bool) else None
    return "N" if number is None else f"{number:g}"


def _where(ps: ProblemSet, index: int, cell: nbformat.NotebookNode) -> str:
    gid = nbgrader_meta(cell).get("grade_id")
    return f"{ps.notebook_name}, cell {index + 1}" + (f" (`{gid}`)" if gid else "")


def duplicate_problems(ps: ProblemSet) -> list[Problem]:
    """Cells sharing a grade_id: nbgrader's "Duplicate grade id"."""
    first: dict[str, int] = {}
    out = []
    for index, cell in enumerate(ps.source.cells):
        gid = nbgrader_meta(cell).get("grade_id")
        if not gid or not _flagged(cell):
            continue
        if gid not in first:
            first[gid] = index
            continue
        out.append(
            Problem(
                f"{ps.notebook_name}, cells {first[gid] + 1} and {index + 1}",
                f"both have the grade_id `{gid}` (a cell copied in Jupyter keeps the metadata "
                "of the cell it was copied from): nbgrader refuses a grade_id twice, and the "
                "feedback and the grades could not tell the cells apart",
                f"Give cell {index + 1} a grade_id of its own (its question's name, with "
                "_visible or _hidden for a test cell; `python -m autograder add-question` "
                f"names a new question's cells), in {TOOLBAR}, or delete the copy.",
            )
        )
    return out


def flag_problems(ps: ProblemSet) -> list[Problem]:
    """Answer, graded and points flags that nbgrader refuses together."""
    out = []
    for index, cell in enumerate(ps.source.cells):
        meta = nbgrader_meta(cell)
        where = _where(ps, index, cell)
        if meta.get("task"):
            continue
        if (
            cell.cell_type == "code"
            and not meta.get("solution")
            and "### BEGIN SOLUTION" in cell.source
        ):
            flags = "nbgrader solution: false" if meta else "it has no nbgrader metadata"
            out.append(
                Problem(
                    where,
                    f"it holds ### BEGIN SOLUTION but is not an answer cell ({flags}): nbgrader "
                    "refuses to make the student's version",
                    'Mark it as the answer: nbgrader solution: true ("Autograded answer" in '
                    f"{TOOLBAR}), with its grade_id (the function's name); or, if students are "
                    "to see the whole cell, remove the ### BEGIN/END SOLUTION lines.",
                )
            )
        if not meta:
            continue
        markdown = cell.cell_type == "markdown"
        if markdown and meta.get("grade") and not meta.get("solution"):
            out.append(
                Problem(
                    where,
                    "it is a graded written cell not marked as the student's answer "
                    "(nbgrader solution: false): nbgrader refuses to make the student's version",
                    "Mark it as an answer: in the cell's metadata set nbgrader solution: true "
                    f'("Manually graded answer" in {TOOLBAR}); or, if the cell is only text, '
                    "make it ungraded (grade: false) and give its points to the answer cell.",
                )
            )
        elif markdown and meta.get("solution") and not meta.get("grade"):
            out.append(
                Problem(
                    where,
                    "it is a written answer that is not graded (nbgrader grade: false): nbgrader "
                    "refuses a markdown answer without points",
                    f'Set grade: true and its points ("Manually graded answer" in {TOOLBAR}).',
                )
            )
        if meta.get("grade") and "points" not in meta:
            out.append(
                Problem(
                    where,
                    "it is graded but has no points: nbgrader refuses it",
                    "Give it its points in the cell's nbgrader metadata (points: N).",
                )
            )
        elif meta.get("grade") and (
            isinstance(meta["points"], bool) or not isinstance(meta["points"], (int, float))
        ):
            out.append(
                Problem(
                    where,
                    f"its points are {json.dumps(meta['points'])}, not a number: nbgrader "
                    "refuses it",
                    f"Write the points as a number, without quotes (points: "
                    f"{_as_written(meta['points'])}).",
                )
            )
        elif meta.get("grade") and _number(meta.get("points")) == 0:
            out.append(
                Problem(
                    where,
                    "it is graded but worth 0 points, so a wrong answer there loses nothing",
                    "Give it its points in the cell's nbgrader metadata (points: N) and in the "
                    "question's heading and the header's table, or make it ungraded "
                    "(grade: false) and remove its check.",
                )
            )
    return out


def ungraded_check_problems(ps: ProblemSet) -> list[Problem]:
    """Cells that carry a check but are not graded: the check never scores."""
    try:
        python = set(load_checks(ps.name, ps.course).CHECKS)
    except ModuleNotFoundError:
        python = set()
    out = []
    for index, cell in enumerate(ps.source.cells):
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id")
        course = cell.get("metadata", {}).get("course", {})
        declared = isinstance(course, Mapping) and course.get("check") is not None
        hidden = HIDDEN_TESTS in cell.source
        if (
            cell.cell_type != "code"
            or meta.get("grade")
            or not (declared or hidden or gid in python)
        ):
            continue
        if declared:
            which = "declares a check (course.check)"
        elif gid in python:
            which = f"has a check in CHECKS of {ps.course.checks_label(ps.name)}"
        else:
            which = f"holds {HIDDEN_TESTS} (the answers it records for the grader)"
        flags = "nbgrader grade: false" if meta else "it has no nbgrader metadata"
        out.append(
            Problem(
                _where(ps, index, cell),
                f"it {which} but is not graded ({flags}), so its check never scores and its "
                "points are not counted",
                f"Make it a graded test cell{'' if meta else ' again'}: "
                f"{'' if gid else 'its grade_id (the question with _visible or _hidden), '}"
                f'grade: true and its points ("Autograder tests" in {TOOLBAR})'
                f"{'' if declared or gid in python else ', and its course.check'}; or, if it is "
                "not a test, remove its check.",
            )
        )
    return out


def cell_problems(ps: ProblemSet) -> list[Problem]:
    """Every problem of the cells' nbgrader metadata (see the module docstring)."""
    return [*duplicate_problems(ps), *flag_problems(ps), *ungraded_check_problems(ps)]
