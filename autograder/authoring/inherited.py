"""Which cell states a case's tolerance, so that a tolerance is named once (part of the gate).

A ``_hidden`` cell takes the comparison keys it does not state from its question's ``_visible``
cell (:mod:`autograder.checks.declaration`): a tolerance written once in the visible cell holds
for both cells' cases. A fault of that tolerance (zero, tighter than rounding, so loose that a
wrong answer passes) is one edit, so the gate says it once, for the cell that states it, with
the cells that inherit it (:class:`Said`), rather than once per cell and case.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import nbformat

from autograder.authoring.validate import Problem, nbgrader_meta
from coursedata.naming import HIDDEN, VISIBLE, question_of, test_id, test_kind

#: The keys of a declaration (or of one of its cases) that state an output's tolerance.
TOLERANCE_KEYS = {"rtol", "atol", "outputs"}


def _checks(nb: nbformat.NotebookNode) -> dict[str, Mapping]:
    """``{grade_id: its course.check}`` of the notebook's declared cells."""
    out = {}
    for cell in nb.cells:
        check = cell.get("metadata", {}).get("course", {}).get("check")
        gid = nbgrader_meta(cell).get("grade_id")
        if gid and isinstance(check, Mapping):
            out[gid] = check
    return out


def stating_cell(checks: Mapping[str, Mapping], gid: str, case: str) -> str:
    """The cell whose declaration states the tolerance of ``case`` of the cell ``gid``: ``gid``
    itself, unless it is a ``_hidden`` cell that states none (at the top or in the case) and its
    question's ``_visible`` cell is declared."""
    own = checks.get(gid, {})
    spec = own.get("cases", {}).get(case, {})
    stated = TOLERANCE_KEYS & set(own) or (
        isinstance(spec, Mapping) and "args" in spec and TOLERANCE_KEYS & set(spec)
    )
    visible = test_id(question_of(gid), VISIBLE)
    if test_kind(gid) == HIDDEN and not stated and visible in checks:
        return visible
    return gid


class Fault(NamedTuple):
    """A tolerance fault of ``kind`` (``"zero"``, ``"rounding"``, ``"loose"``) found on one case
    of one cell, for one output: what is wrong and what to change."""

    cell: str
    case: str
    output: str
    kind: str
    what: str
    fix: str


@dataclass
class Said:
    """One fault of one output's tolerance, said once for the cell that states it.

    Attributes
    ----------
    cell : str
        The cell whose declaration states the tolerance.
    output : str
        The output's name.
    what, fix : str
        The fault (as found first) and the change (made in ``cell``'s course.check).
    by_case : bool
        Whether the fault is one of the values (zero, rounding), named with its output and
        cases, not of the comparison (loose), named once per cell with the case it showed on.
    cases : dict
        ``{cell: [case, ...]}``: the cases it was found on, by the cell that declares them.
    """

    cell: str
    output: str
    what: str
    fix: str
    by_case: bool
    cases: dict[str, list[str]] = field(default_factory=dict)

    def problem(self, notebook: str) -> Problem:
        """The problem, naming the cells that inherit the tolerance and, when ``by_case`` (a
        fault of the values, as zero or rounding), the output and the cases it was found on."""
        by_case = self.by_case
        own = self.cases.get(self.cell, [])
        notes = [f"on {_cases(own)}"] if by_case and own else []
        notes += [
            f"`{c}` inherits it" + (f", on {_cases(cases)}" if by_case else "")
            for c, cases in self.cases.items()
            if c != self.cell
        ]
        where = f"{notebook}, cell `{self.cell}`" + (f", output {self.output!r}" if by_case else "")
        if not notes:
            return Problem(where, self.what, self.fix)
        said = f" ({'; '.join(notes)})" if by_case else f", and {' and '.join(notes)}"
        return Problem(where, self.what + said, self.fix)


def _cases(names: list[str]) -> str:
    return ("case " if len(names) == 1 else "cases ") + ", ".join(repr(n) for n in names)


def said_once(nb: nbformat.NotebookNode, notebook: str, found: list[Fault]) -> list[Problem]:
    """The problems of the notebook ``nb`` (named ``notebook``) from the faults ``found``, said
    once per cell that states the tolerance, output and kind, in order (the first ``what`` and
    ``fix`` of each group kept)."""
    checks = _checks(nb)
    said: dict[tuple[str, str, str], Said] = {}
    for gid, case, output, kind, what, fix in found:
        cell = stating_cell(checks, gid, case)
        one = said.setdefault((cell, output, kind), Said(cell, output, what, fix, kind != "loose"))
        one.cases.setdefault(gid, []).append(case)
    return [s.problem(notebook) for s in said.values()]
