"""The ``record(...)`` calls of a notebook's hidden cells: which case each graded cell records,
for which function, under which inputs.

A hidden part records each case it checks (:mod:`coursedata.grading`)::

    record("gaussian_small", gaussian_mle, **inputs("ps3_mle", "gaussian_small"))

This module reads those lines once, for everything that needs them: the release's validation
(:mod:`autograder.authoring.validate`: a case recorded under another case's inputs), the inventory
of the checks (:mod:`autograder.checks.inventory`: a case recorded but never declared), the rules
(:mod:`autograder.grading.rulebook`: which functions are graded) and the class report
(:mod:`autograder.grading.recorded`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

__all__ = [
    "RecordCall",
    "record_calls",
    "cases_by_cell",
    "cases_by_function",
    "answer_parameters",
    "parameter_orders",
]

_RECORD = re.compile(
    r"""record\(\s*["'](?P<case>[^"']+)["']\s*,\s*(?P<func>[A-Za-z_][A-Za-z0-9_]*)"""
    r"""(?:\s*,\s*\*\*inputs\(\s*["'](?P<ps>[^"']+)["']\s*,\s*["'](?P<inputs>[^"']+)["']\s*\))?"""
)


@dataclass(frozen=True)
class RecordCall:
    """One ``record(case, function, **inputs(inputs_problem_set, inputs_case))`` of a graded
    cell; the last two are ``None`` when the call passes its arguments another way."""

    grade_id: str
    case: str
    function: str
    inputs_case: str | None = None
    inputs_problem_set: str | None = None


def _grade_id(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, dict) else None


def record_calls(notebook) -> list[RecordCall]:
    """Every ``record(...)`` of ``notebook``'s graded code cells, in notebook order."""
    return [
        RecordCall(gid, m["case"], m["func"], m["inputs"], m["ps"])
        for cell in notebook.cells
        if cell.cell_type == "code" and (gid := _grade_id(cell))
        for m in _RECORD.finditer(cell.source)
    ]


def cases_by_cell(notebook) -> dict[str, tuple[str, ...]]:
    """``{grade_id: the cases it records, in order}`` over the notebook's graded code cells
    (a cell that records nothing maps to ``()``)."""
    out: dict[str, tuple[str, ...]] = {
        gid: () for cell in notebook.cells if cell.cell_type == "code" and (gid := _grade_id(cell))
    }
    for call in record_calls(notebook):
        out[call.grade_id] += (call.case,)
    return out


def cases_by_function(notebook) -> dict[str, list[str]]:
    """``{function: [case, ...]}``: the cases recorded for each graded function."""
    out: dict[str, list[str]] = {}
    for call in record_calls(notebook):
        out.setdefault(call.function, []).append(call.case)
    return out


def answer_parameters(notebook) -> dict[str, list[str]]:
    """``{function: its parameters in order}`` for every function the notebook's graded cells
    define: the answer cells' (nbgrader ``solution``: the signatures the students are given),
    and those a test cell defines for its ``record`` calls (an answer's wins)."""
    out: dict[str, list[str]] = {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not (isinstance(meta, dict) and meta.get("grade_id")):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and (meta.get("solution") or node.name not in out):
                out[node.name] = [a.arg for a in node.args.posonlyargs + node.args.args]
    return out


def parameter_orders(notebook) -> dict[str, list[str]]:
    """``{case: the parameters of the function it records, in order}``: the order in which the
    case's inputs are written, since ``record`` passes them by position."""
    params = answer_parameters(notebook)
    return {r.case: params[r.function] for r in record_calls(notebook) if r.function in params}
