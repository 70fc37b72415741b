"""What the student's check needs to give a visible cell the grader's verdict, for the release.

A visible cell's points need its visible test to pass *and* what its hidden part recorded to match
the reference on the cell's own inputs (:mod:`autograder.checks.declared`: all or nothing). The
visible test is in the student's notebook; the rest is given to the student's check here, in the
released cell's ``metadata.course.visible`` (:data:`coursedata.visible.KEY`):

- ``calls``: the cell's hidden ``record(...)`` calls as ``[case, function, problem set]`` (they
  name the cell's cases and functions, nothing else; the check writes the lines the grader runs);
- ``at``: the line of the released cell where the hidden part stood in the source, so that the
  check runs those lines where the grader runs them (before the visible test, in this course);
- ``cases``: for each case, its inputs exactly as the grader writes them, the reference's values,
  each output's comparison and tolerances, and the words that describe it in a message.

None of it is secret: the visible inputs are small, drawn for the visible test, and the expected
values are what the visible test is about. A visible cell whose check is written in Python (the
course's ``CHECKS``) cannot be judged without the reference: it gets its ``calls``, ``at`` and
``inputs`` (each case's inputs) with ``"unchecked": true``, so that the check runs its hidden part
where the grader does and can tell a function that raises on the cell's own inputs; the check's
line says what it cannot compare, never a bare ``ok``.
"""

from __future__ import annotations

import base64
import io
import re

import nbformat
import numpy as np

from autograder.checks.declaration import input_files, is_checked
from autograder.checks.declared import declarations, declared_cases, expected_values
from autograder.checks.record_calls import record_calls
from coursedata.naming import VISIBLE, test_kind
from coursedata.visible import KEY

__all__ = ["payloads", "embed"]

_HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
#: The import of a visible cell's hidden part, the only line beside its ``record`` calls.
_IMPORT = re.compile(r"^from coursedata\.grading import (inputs, record|record, inputs)$")


def _b64(arrays: dict) -> str:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return _text(buffer.getvalue())


def _record_calls(cell: nbformat.NotebookNode, recorded: list) -> list[list[str]] | None:
    """A visible cell's hidden ``record(case, function, **inputs(problem_set, case))`` calls
    (``recorded``: its :func:`~autograder.checks.record_calls.record_calls`) as
    ``[case, function, problem_set]``,
    if its hidden part holds only those, each on a line of its own, and their import."""
    found = _HIDDEN.search(cell.source)
    if found is None:
        return None
    lines = [line.strip() for line in found.group(1).splitlines() if line.strip()]
    calls = [
        [r.case, r.function, r.inputs_problem_set] for r in recorded if r.inputs_case == r.case
    ]
    plain = [line for line in lines if not _IMPORT.match(line)]
    whole = all(line.startswith("record(") and line.endswith("))") for line in plain)
    return calls if calls and whole and len(calls) == len(plain) else None


def _hidden_line(cell: nbformat.NotebookNode) -> int:
    """The line of the released cell where the source's hidden part stood (nbgrader removes it
    with its markers, so the lines before it are the released cell's first lines)."""
    found = _HIDDEN.search(cell.source)
    assert found is not None, "read only for a cell whose hidden part _record_calls read"
    return cell.source[: found.start()].count("\n")


def payloads(source: nbformat.NotebookNode, hand_written: set[str]) -> dict[str, dict]:
    """``{grade_id: metadata.course.visible}`` for every visible cell of the source notebook.

    Parameters
    ----------
    source : nbformat.NotebookNode
        The problem set's source notebook (with its declarations).
    hand_written : set of str
        The cells whose check is the course's Python (``CHECKS``), which wins over a declaration.
    """
    found, cases, files = declarations(source), declared_cases(source), input_files(source)
    recorded: dict[str, list] = {}
    for r in record_calls(source):
        recorded.setdefault(r.grade_id, []).append(r)
    out: dict[str, dict] = {}
    for cell in source.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if cell.cell_type != "code" or not gid or test_kind(gid) != VISIBLE:
            continue
        calls = _record_calls(cell, recorded.get(gid, []))
        declaration = found.get(gid)
        if calls is None or any(case not in files for case, _, _ in calls):
            out[gid] = {"unchecked": True}  # the check runs the visible test alone
        elif declaration is None or gid in hand_written or not is_checked(declaration, cases):
            out[gid] = {
                "calls": calls,
                "at": _hidden_line(cell),
                "inputs": {case: _text(files[case]) for case, _, _ in calls},
                "unchecked": True,  # run as at grading; only a raise can be judged
            }
        else:
            out[gid] = {
                "calls": calls,
                "at": _hidden_line(cell),
                "cases": {n: _case(case, files[n]) for n, case in declaration.cases.items()},
            }
    return out


def _text(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _case(case, inputs: bytes) -> dict:
    expected, whats = expected_values(case)
    return {
        "inputs": _text(inputs),
        "expected": _b64({f"out_{i}": np.asarray(v) for i, v in enumerate(expected)}),
        "outputs": [
            {
                "name": o.name,
                "compare": o.compare,
                "rtol": o.rtol,
                "atol": o.atol,
                "scalar": o.scalar,
            }
            for o in case.outputs
        ],
        "whats": whats,
    }


def embed(release, source, hand_written: set[str]) -> int:
    """Write :func:`payloads` into the visible cells of the released notebook ``release`` (in
    place); return how many cells the student's check can judge as the grader does."""
    found = payloads(source, hand_written)
    for cell in release.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in found:
            cell.metadata.setdefault("course", {})[KEY] = found[gid]
    return sum("cases" in p for p in found.values())
