"""Why a submission's answers went missing, said once: the real cause, then the checks it hit.

When a student's cell fails (a syntax error, a refused import, a name never defined), when a cell
runs out of time, or when the kernel dies, every check of a function that never ran would say the
same vague thing ("your function was not run"), once per hidden case. :func:`explain` reads the
executed notebook, finds each cause in the order the notebook met it, and rewrites those messages
to point at the cause that stopped them, which it also states once, in the notes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re

import nbformat

from autograder.grading.scoring import CellScore
from autograder.status import Status
from coursedata.rules import covers

__all__ = ["explain", "NOT_RUN"]

#: How the trusted checks begin the message of an answer that was never recorded.
NOT_RUN = "your function was not run by this check"
_FILE = re.compile(r"\s*\((?:[^()]*\.py|<[^>]*>), line (\d+)\)")


def _gid(cell) -> str | None:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, dict) else None


def _error(cell) -> tuple[str, str] | None:
    """(name, value) of the error that ended ``cell``, or None.

    A cell stopped at its time limit shows the ``KeyboardInterrupt`` of the interrupt first and
    the grader's ``CellTimeoutError`` after it: the time limit is the cause.
    """
    errors = [
        (str(o.get("ename", "Error")), str(o.get("evalue", "")))
        for o in cell.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    timeouts = [e for e in errors if e[0] == "CellTimeoutError"]
    found = timeouts or errors
    return found[0] if found else None


#: What the kernel's guard refused when it raised ``ForgedCode`` (:mod:`coursedata.guard`).
FORGED = "code may not claim another file's name (a library's or a test's)"

#: The grader's words for a cell stopped at its time limit (:mod:`autograder.sandbox.kernel`).
_LIMIT = re.compile(r"the cell did not finish within (\d{1,5}(?:\.\d{1,3})?) s")


def _module(value: str, forbidden: tuple[str, ...] | None = None) -> str:
    """The package a forbidden import names (the first word of the error's text): the entry of
    ``forbidden`` (the problem set's) that covers it, else "a module"; without ``forbidden``, a
    package by that name that can be found here. (Any of the hundreds of packages installed was
    a name of the student's choosing: the error is the kernel's report.)"""
    word = value.split(" ", 1)[0]
    if forbidden is not None:
        return next((e for e in forbidden if covers(e, word)), "a module")
    top = word.split(".", 1)[0]
    try:
        found = top.isidentifier() and importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        found = False
    return top if found else "a module"


def _describe(name: str, value: str, forbidden: tuple[str, ...] | None = None) -> str:
    """An error in a student's words: ``SyntaxError at line 3: invalid syntax``."""
    line = _FILE.search(value)
    value = _FILE.sub("", value).strip()
    where = f" at line {line.group(1)}" if line else ""
    # The name and the value are the kernel's report, which the student's code can write: what
    # is stated of them below is the grader's own words, or a module that exists here.
    if name == "CellTimeoutError":
        limit = _LIMIT.fullmatch(value)
        said = (
            f"the cell did not finish within {limit.group(1)} s" if limit else "it ran out of time"
        )
        return f"was stopped: {said} (the time limit per cell)"
    if name.rpartition(".")[2] == "ForgedCode":  # the guard's refusal, never its message
        return f"was refused{where} by the problem set's rules: {FORGED}"
    if name == "ForbiddenModule":  # the rule itself is stated once, in the rules' note
        return f"stopped{where}: it imports {_module(value, forbidden)}, which the problem set's rules forbid"
    if "not available in the sandbox" in value:
        return (
            "imported a module that graded notebooks may not use "
            "(this package is not available in the sandbox)"
        )
    return f"raised {name}{where}: {value[:200]}" if value else f"raised {name}{where}"


#: A cell as the sandbox's note names it, by its index, and the list of those the cell limit
#: interrupted (:func:`autograder.sandbox.execute_notebook`).
_INDEXED = re.compile(r"\bcell (\d+)\b")
_INTERRUPTED = re.compile(r"(cell limit: )(\d+(?:, \d+)*)")


def name_cells(message: str, nb: nbformat.NotebookNode, solution_ids: list[str]) -> str:
    """The sandbox's ``message`` on running ``nb`` with each cell named as the student knows it
    (their answer cell, a test, or the cell after one), not by its index: a student who adds
    cells chooses the index, a number out of the sandbox (issue 37)."""
    names, previous = [], None
    for cell in nb.cells:
        gid = _gid(cell)
        names.append(_where(gid, previous, solution_ids))
        previous = gid or previous

    def named(index: str) -> str:
        return names[int(index)] if int(index) < len(names) else "a cell"

    message = _INTERRUPTED.sub(
        lambda m: m.group(1) + "; ".join(dict.fromkeys(map(named, m.group(2).split(", ")))),
        message,
    )
    return _INDEXED.sub(lambda m: named(m.group(1)), message)


def _where(gid: str | None, previous: str | None, solution_ids: list[str]) -> str:
    """A cell in the student's words: their answer cell, a test, or a plain cell after one."""
    if gid in solution_ids:
        return f"your cell {gid!r}"
    if gid:
        return f"test {gid!r}"
    return f"the cell after {previous!r}" if previous else "the first code cell"


def explain(
    nb: nbformat.NotebookNode | None,
    status: Status | str,
    scores: list[CellScore],
    solution_ids: list[str],
    forbidden: tuple[str, ...] | None = None,
) -> tuple[list[str], list[CellScore]]:
    """Find why answers are missing and say it once.

    Parameters
    ----------
    nb : NotebookNode or None
        The executed notebook (rebuilt by :meth:`ProblemSet.assemble`), if it ran.
    status : str
        How the run ended: ``"ok"``, ``"timeout"`` or ``"crashed"``.
    scores : list of CellScore
        The trusted checks' scores, in notebook order.
    solution_ids : list of str
        ``grade_id`` of the problem set's answer cells.
    forbidden : tuple of str, optional
        What the problem set's rules forbid: a forbidden import is named by its entry only.

    Returns
    -------
    notes : list of str
        One sentence per failed cell, in notebook order: which cell failed and how. (Where a
        timeout or a crash stopped the notebook, the executor's own note says so.)
    scores : list of CellScore
        ``scores`` with every "not run" message replaced by the cause that came before it.
    """
    if nb is None:
        return [], scores
    causes: dict[str, str | None] = {}  # graded cell -> the last cause met before it, if any
    notes: list[str] = []
    current = previous = None
    for cell in nb.cells:
        gid = _gid(cell)
        if cell.get("cell_type") == "code":
            error = _error(cell)
            ran = cell.get("execution_count") is not None or cell.get("outputs")
            stopped = not ran and Status(status).stopped
            if stopped:  # the executor's own note says where and why it stopped
                how = "ran out of time" if status == Status.TIMEOUT else "stopped (its kernel died)"
                current = f"your notebook {how} before this test ran (see the note above)"
            elif error and (gid in solution_ids or gid is None or error[0] == "CellTimeoutError"):
                current = f"{_where(gid, previous, solution_ids)} {_describe(*error, forbidden)}"
                notes.append(current[0].upper() + current[1:])
        if gid:
            causes[gid] = current
            previous = gid
    fixed = [
        dataclasses.replace(s, message=f"not run: {causes[s.grade_id]}")
        if s.message.startswith(NOT_RUN) and causes.get(s.grade_id)
        else s
        for s in scores
    ]
    return notes, fixed
