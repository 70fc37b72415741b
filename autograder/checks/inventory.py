"""What grades a problem set, cell by cell: for the self-check and the release's validation.

:func:`inventory` lists every graded cell of a source notebook with its check (declared in the
notebook, hand-written in ``<course>/checks/<problem set>.py``, graded by hand, or missing), the
cases its hidden part records, and the cases its check reads. :func:`problems` turns that into what
would mis-grade, each in words that say what to change and where: a cell both declared and
hand-written, a reference that does not resolve, a case recorded but with no inputs, inputs
declared but never recorded, a declared check reading a case no cell records, a declaration that
cannot be read, a declared input that cannot be drawn (a graded cell without a check and a check
without a cell are :mod:`autograder.authoring.validate`'s). Nothing runs a notebook: this reads the
source only (and imports the references a declaration names, and draws its inputs).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.checks import load_checks
from autograder.checks.declared import (
    DeclarationError,
    build_checks,
    declarations,
    generate_input,
    resolve,
)
from autograder.checks.record_calls import cases_by_cell

__all__ = ["CellInventory", "inventory", "problems", "cell_faults"]


@dataclass(frozen=True)
class CellInventory:
    """One graded cell and what scores it.

    Attributes
    ----------
    grade_id : str
    points : float
    check : str
        ``"declared"``, ``"python"`` (the module's ``CHECKS``), ``"both"`` (an error),
        ``"manual"`` (a written answer) or ``"missing"`` (an error).
    records : tuple of str
        The cases its hidden part records (``record("case", ...)``).
    reads : tuple of str or None
        The cases a declared check reads; ``None`` for a Python check (known only when it runs).
    references : tuple of str
        The references (``"module:function"``) of the cases a declared check reads.
    """

    grade_id: str
    points: float
    check: str
    records: tuple[str, ...] = ()
    reads: tuple[str, ...] | None = None
    references: tuple[str, ...] = ()


def inventory(problem_set) -> list[CellInventory]:
    """Every graded cell of ``problem_set`` (a :class:`~autograder.grading.problemset.ProblemSet`), in
    notebook order, with its check and cases. Raises :class:`DeclarationError` when a declaration
    cannot be read."""
    declared = declarations(problem_set.source)
    owner = {c: case for d in declared.values() for c, case in d.cases.items()}
    checks = build_checks(problem_set.source)
    python = load_checks(problem_set.name, getattr(problem_set, "course", None)).CHECKS
    records = cases_by_cell(problem_set.source)
    out = []
    for cell in problem_set.grade_cells:
        gid = cell.grade_id
        is_declared = gid in checks
        if not cell.autograded:
            kind = "manual"
        elif is_declared and gid in python:
            kind = "both"
        else:
            kind = "declared" if is_declared else "python" if gid in python else "missing"
        reads = tuple(declared[gid].scored) if is_declared else None
        references = tuple(dict.fromkeys(owner[c].reference for c in reads or ()))
        out.append(CellInventory(gid, cell.points, kind, records.get(gid, ()), reads, references))
    return out


def problems(problem_set) -> list[str]:
    """What would make ``problem_set``'s checks mis-grade, one sentence each (empty when nothing).

    A graded cell without any check and a Python check without a cell are
    :func:`autograder.authoring.validate.check_problems`' (one reporter for each fault)."""
    name = problem_set.name
    try:
        cells = inventory(problem_set)
        declared = declarations(problem_set.source)
    except DeclarationError as exc:
        return [f"{name}: a declared check cannot be read: {exc}"]
    found = []
    for c in cells:
        if c.check == "both":
            where = getattr(problem_set, "course", None)
            where = where.checks_label(name) if where else f"checks/{name}.py"
            found.append(
                f"{name}: {c.grade_id} has both a declared check and a Python one in "
                f"{where}; keep one"
            )
        for reference in c.references:
            try:
                resolve(reference)
            except DeclarationError as exc:
                found.append(f"{name}: {c.grade_id}: reference {exc}")
    for d in declared.values():  # an input that cannot be drawn fails every student's run
        for case in d.cases.values():
            for given in case.inputs:
                try:
                    generate_input(given)
                except Exception as exc:  # noqa: BLE001 - the author's mistake, named
                    found.append(
                        f"{name}: {d.grade_id}: the inputs of case {case.name!r} cannot "
                        f"be made: {exc} (input {given.key!r})"
                    )
    found += [message for _, message in _case_faults(problem_set, cells, declared)]
    return found


def _case_faults(problem_set, cells, declared) -> list[tuple[str, str]]:
    """``(grade_id, message)`` for every case recorded, declared or scored where the others do
    not match: the cell named is the one whose points the mismatch would cost."""
    name = problem_set.name
    recorded = {
        case: gid for gid, cases in cases_by_cell(problem_set.source).items() for case in cases
    }
    inputs = {case for d in declared.values() for case in d.cases}  # all declared
    found = []
    for case, gid in sorted(recorded.items()):
        if case not in inputs:
            found.append(
                (
                    gid,
                    f"{name}: {gid} records case {case!r}, whose inputs are declared "
                    "nowhere: add it to the cell's course.check cases",
                )
            )
    for d in declared.values():
        for case in d.cases:
            if case not in recorded:
                found.append(
                    (
                        d.grade_id,
                        f"{name}: {d.grade_id} declares case {case!r}, which "
                        f"no hidden part records: add record({case!r}, ...) "
                        "to its hidden part",
                    )
                )
    for c in cells:
        for case in c.reads or ():
            if case not in recorded:
                found.append(
                    (
                        c.grade_id,
                        f"{name}: {c.grade_id} scores case {case!r}, which no "
                        "cell records: every student would lose its points",
                    )
                )
    return found


def cell_faults(problem_set) -> dict[str, str]:
    """``{grade_id: message}`` for the cells whose cases do not match (see :func:`problems`):
    :func:`autograder.checks.registry.checks_for` makes their checks fail as faults of the grader, so an
    authoring mistake is never a student's zero. Empty when a declaration cannot be read (its
    checks fail on their own)."""
    try:
        cells = inventory(problem_set)
        declared = declarations(problem_set.source)
    except DeclarationError:
        return {}
    out: dict[str, str] = {}
    for gid, message in _case_faults(problem_set, cells, declared):
        out.setdefault(gid, message)
    return out
