"""Which answers a question's work depends on: the earlier functions a mistake may come from.

A question's function may call an earlier one (``select_bandwidth`` maximises
``loo_log_likelihood``): a mistake in the earlier function then also makes the later one's
answers wrong, although the later function itself may be right. :func:`causes` reads the
student's answer cells statically (which functions call which, and which functions an end-to-end
test names) and, given the questions that lost points, names for each question the earlier answer
functions that may be the cause. The grader's feedback (:mod:`autograder.grading.causes`) and the
student's check (:mod:`coursedata.check`) say it in the same words (:func:`note`).
"""

from __future__ import annotations

import ast

from coursedata.naming import question_of, test_kind

__all__ = ["answer_functions", "calls", "causes", "note"]


def answer_functions(notebook) -> dict[str, dict[str, ast.FunctionDef]]:
    """``{answer grade_id: {function: its definition}}`` for the notebook's answer cells."""
    out: dict[str, dict[str, ast.FunctionDef]] = {}
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not isinstance(meta, dict) or not meta.get("solution"):
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
    cells = answer_functions(notebook)
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


def causes(notebook, lost: set[str]) -> dict[str, list[str]]:
    """``{question: the answer functions of *other* questions in ``lost`` that it uses}``, for
    every question of ``notebook`` (``lost``: the questions that lost points, by name)."""
    owner = {f: gid for gid, fs in answer_functions(notebook).items() for f in fs}
    graph = {**_named_in_tests(notebook, owner), **calls(notebook)}
    return {
        question: sorted(f for f in functions if owner[f] in lost - {question})
        for question, functions in graph.items()
    }


def note(functions: list[str], where: str = "in its own question") -> str:
    """The words that name the earlier functions as the possible cause of a lost cell."""
    return (f" (this uses your {', '.join(functions)}, which loses points {where}: that mistake "
            "may be the cause here, so fix it first)")
