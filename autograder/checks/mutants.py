"""Mutants: realistic wrong answers, declared next to the answer they mutate.

A mutant is a mistake a student makes, written as an exact text replacement in the reference
answer. The author declares it in the metadata of the solution cell it edits (nbgrader
``solution: true``, ``grade_id`` the function's name), ``metadata.course.mutants``::

    "course": {"mutants": [                                  # gaussian_mle
      {"name": "median instead of mean", "find": "mu = x.mean()", "replace": "mu = np.median(x)"},
      {"name": "unbiased 1/(N-1) variance", "find": "/ x.size)", "replace": "/ (x.size - 1))",
       "visible": true}
    ]}

Keys of a mutant
----------------
``name``
    The mistake in words; unique among the cell's mutants.
``find``, ``replace``
    ``find`` must occur exactly once in the cell's source; the mutant is that source with it
    replaced by ``replace``.
``loses``
    Optional: the ``grade_id`` of the autograded test cells whose points together must drop.
    Default: the question's ``_visible`` and ``_hidden`` test cells (the cell's ``grade_id`` with
    the suffix), those that exist.
``visible``
    Optional, default false. True: the question's visible test alone catches the mistake (its
    cell loses points and its ``assert`` fails in the student's kernel), so a student sees it
    before submitting; for a rule the question states in words.

Graded, every mutant must lose points where it says (``python -m autograder check-problem-set
NAME --mutants``, and the repository's ``tests/course/test_problem_sets.py``). Like the declared checks,
mutants are the grader's: :func:`autograder.checks.declaration.strip` removes them from every
released notebook and from the notebook the grading kernel runs (their ``replace`` strings are
wrong answers, their ``find`` strings lines of the solution).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass

from autograder.checks.declaration import DeclarationError
from coursedata.naming import HIDDEN, VISIBLE, test_id, test_kind

__all__ = ["KEY", "Mutant", "mutants", "mutated"]

#: The key of a solution cell's ``metadata.course`` holding its mutants (one of
#: :data:`autograder.checks.declaration.GRADER_KEYS`, stripped from every release).
KEY = "mutants"
_KEYS = {"name", "find", "replace", "loses", "visible"}


@dataclass(frozen=True)
class Mutant:
    """One realistic mistake made on the reference answer of one solution cell.

    Attributes
    ----------
    name : str
        The mistake in words (unique among its cell's mutants).
    cell : str
        The ``grade_id`` of the solution cell it edits.
    find, replace : str
        The exact text replaced (once in the cell's source) and its replacement.
    loses : tuple of str
        The autograded test cells whose points together must drop.
    visible : bool
        Whether the question's visible test alone must catch it (see :attr:`seen_by`).
    """

    name: str
    cell: str
    find: str
    replace: str
    loses: tuple[str, ...]
    visible: bool = False

    @property
    def seen_by(self) -> str | None:
        """The visible test cell that alone must catch this mistake, failing in the kernel: the
        ``_visible`` cell of :attr:`loses` when :attr:`visible` is declared or when it is the
        only cell the mutant loses on; ``None`` when the mutant may pass its visible test."""
        shown = [c for c in self.loses if test_kind(c) == VISIBLE]
        if self.visible or (len(self.loses) == 1 and shown):
            return shown[0]
        return None


def _source(cell) -> str:
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def _nbgrader(cell) -> Mapping:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, Mapping) else {}


def _declared(cell) -> list | None:
    meta = cell.get("metadata", {}).get("course", {})
    return meta.get(KEY) if isinstance(meta, Mapping) else None


def _autograded_tests(notebook) -> list[str]:
    """The ``grade_id`` of every autograded test cell (graded, not an answer), in order."""
    return [
        _nbgrader(c)["grade_id"]
        for c in notebook.get("cells", [])
        if _nbgrader(c).get("grade") and not _nbgrader(c).get("solution")
    ]


def _mutant(spec, cell: str, source: str, tests: list[str], where: str) -> Mutant:
    if (
        not isinstance(spec, Mapping)
        or not {"name", "find", "replace"} <= set(spec)
        or set(spec) - _KEYS
    ):
        raise DeclarationError(
            f"{where}: a mutant is {{'name', 'find', 'replace'}} with optional "
            f"'loses' and 'visible'; got {spec!r}"
        )
    name, find, replace = spec["name"], spec["find"], spec["replace"]
    if not all(isinstance(v, str) and v for v in (name, find)) or not isinstance(replace, str):
        raise DeclarationError(
            f"{where}: 'name' and 'find' are non-empty strings, 'replace' a string; got {spec!r}"
        )
    where = f"{where}, mutant {name!r}"
    found = source.count(find)
    if found != 1:
        raise DeclarationError(
            f"{where}: its 'find' text {find!r} occurs {found} times in the "
            "cell's source; it must occur exactly once (copy a longer, exact "
            "piece of the reference answer)"
        )
    if replace == find:
        raise DeclarationError(f"{where}: 'replace' equals 'find', so the answer is unchanged")
    loses = spec.get(
        "loses", [t for t in (test_id(cell, VISIBLE), test_id(cell, HIDDEN)) if t in tests]
    )
    if "loses" not in spec and not loses:
        raise DeclarationError(
            f"{where}: no test cell {cell}_visible or {cell}_hidden; name the "
            "cells it must lose points on in 'loses'"
        )
    if not isinstance(loses, list) or not loses:
        raise DeclarationError(
            f"{where}: 'loses' is a non-empty list of test cells' grade_id; got {loses!r}"
        )
    unknown = [t for t in loses if t not in tests]
    if unknown:
        raise DeclarationError(
            f"{where}: 'loses' names {unknown}, which are not autograded test "
            f"cells; they are {tests}"
        )
    visible = spec.get("visible", False)
    if not isinstance(visible, bool):
        raise DeclarationError(f"{where}: 'visible' is true or false; got {visible!r}")
    if visible and sum(test_kind(t) == VISIBLE for t in loses) != 1:
        raise DeclarationError(
            f"{where}: 'visible': true needs exactly one _visible cell among "
            f"the cells it loses on; 'loses' is {list(loses)}"
        )
    return Mutant(name, cell, find, replace, tuple(loses), visible)


def mutants(notebook, name: str = "the notebook") -> list[Mutant]:
    """Every mutant a notebook's solution cells declare, in the notebook's order.

    Parameters
    ----------
    notebook : nbformat.NotebookNode or dict
        A source notebook (nbgrader metadata on its cells).
    name : str
        How messages name the notebook (e.g. ``ps3_mle.ipynb``).

    Returns
    -------
    list of Mutant

    Raises
    ------
    DeclarationError
        A mutant that cannot be made or graded, naming its cell and what to change: declared on
        a cell that is not an answer, ``find`` not exactly once in the cell's source, ``loses``
        naming no autograded test cell, a name used twice in a cell, a malformed entry.
    """
    tests = _autograded_tests(notebook)
    out: list[Mutant] = []
    for cell in notebook.get("cells", []):
        declared = _declared(cell)
        if declared is None:
            continue
        gid = _nbgrader(cell).get("grade_id")
        where = f"{name}, cell `{gid or _source(cell)[:40]}`"
        if not (gid and _nbgrader(cell).get("solution") and cell.get("cell_type") == "code"):
            raise DeclarationError(
                f"{where}: mutants belong in the metadata of an answer cell "
                "(a code cell nbgrader marks as a solution)"
            )
        if not isinstance(declared, list):
            raise DeclarationError(
                f"{where}: metadata.course.{KEY} is a list of mutants; got "
                f"{type(declared).__name__}"
            )
        out += [_mutant(spec, gid, _source(cell), tests, where) for spec in declared]
    names = [(m.cell, m.name) for m in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise DeclarationError(
            f"{name}, cell `{twice[0][0]}`: the mutant name {twice[0][1]!r} is "
            "used twice in the cell; name each mistake once"
        )
    return out


def mutated(notebook, mutant: Mutant):
    """A copy of ``notebook`` whose answer cell ``mutant.cell`` holds the answer with
    ``mutant.find`` replaced by ``mutant.replace`` (every other cell as it is)."""
    out = copy.deepcopy(notebook)
    [cell] = [c for c in out["cells"] if _nbgrader(c).get("grade_id") == mutant.cell]
    source = _source(cell)
    if source.count(mutant.find) != 1:
        raise DeclarationError(
            f"cell `{mutant.cell}`, mutant {mutant.name!r}: its 'find' text "
            f"occurs {source.count(mutant.find)} times; it must occur once"
        )
    cell["source"] = source.replace(mutant.find, mutant.replace)
    return out
