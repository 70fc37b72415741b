"""One mistake costs once, and its feedback says where it is.

A question's function may call an earlier one (``select_bandwidth`` maximises
``loo_log_likelihood``): a mistake in the earlier function then also makes the later one's
answers wrong, although the later function itself may be right. :func:`name_causes` adds to each
cell that lost points a note naming the earlier graded functions its function calls that lost
points in their own questions, so the student looks there first. It reads the student's answer
cells statically (which functions call which) and never changes a score.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from autograder.naming import question_of, test_kind

__all__ = ["calls", "name_causes"]


def _answer_functions(notebook) -> dict[str, dict[str, ast.FunctionDef]]:
    """``{answer grade_id: {function: its definition}}`` for the notebook's answer cells."""
    out: dict[str, dict[str, ast.FunctionDef]] = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if (
            cell.get("cell_type") != "code"
            or not isinstance(meta, dict)
            or not meta.get("solution")
        ):
            continue
        try:
            tree = ast.parse(cell.get("source", ""))
        except SyntaxError:
            continue
        out[str(meta.get("grade_id"))] = {
            n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)
        }
    return out


def calls(notebook) -> dict[str, set[str]]:
    """``{answer grade_id: the answer functions of other cells its functions call by name}``."""
    cells = _answer_functions(notebook)
    owner = {f: gid for gid, fs in cells.items() for f in fs}
    out = {}
    for gid, functions in cells.items():
        called = {
            n.func.id
            for f in functions.values()
            for n in ast.walk(f)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        out[gid] = {f for f in called if owner.get(f, gid) != gid}
    return out


def _named_in_tests(notebook, owner: dict[str, str]) -> dict[str, set[str]]:
    """``{question: the answer functions its test cells name}``, for a question without an answer
    cell of its own (an end-to-end test of several functions)."""
    out: dict[str, set[str]] = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        if cell.get("cell_type") != "code" or not gid or not test_kind(gid):
            continue
        try:
            names = {
                n.id for n in ast.walk(ast.parse(cell.get("source", ""))) if isinstance(n, ast.Name)
            }
        except SyntaxError:
            continue
        out.setdefault(question_of(gid), set()).update(names & owner.keys())
    return out


def _lost(score) -> bool:
    return score.points is not None and score.points < score.max_points


def name_causes(scores: Iterable, notebook) -> list:
    """``scores`` (:class:`autograder.grading.scoring.CellScore`), each cell that lost points with
    a note naming the earlier answer functions its function calls that lost points too."""
    scores = list(scores)
    owner = {f: gid for gid, fs in _answer_functions(notebook).items() for f in fs}
    graph = {**_named_in_tests(notebook, owner), **calls(notebook)}
    lost_answers = {question_of(s.grade_id) for s in scores if test_kind(s.grade_id) and _lost(s)}
    out = []
    for s in scores:
        answer = question_of(s.grade_id) if test_kind(s.grade_id) else None
        causes = sorted(f for f in graph.get(answer, ()) if owner[f] in lost_answers - {answer})
        if _lost(s) and causes and s.error is None:
            names = ", ".join(causes)
            s = replace(
                s,
                message=f"{s.message} (this uses your {names}, which loses points in "
                "its own question: that mistake may be the cause here, so fix it first)",
            )
        out.append(s)
    return out
