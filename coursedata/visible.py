"""A visible cell's verdict in the student's check: the grader's, on the same inputs.

At grading, a visible cell earns its points when its visible test passes and what its hidden
part recorded matches the reference on the cell's own inputs, compared with the declared
tolerances. The release gives the student's check what that takes, in the visible cell's
``metadata.course.visible`` (written by :mod:`autograder.authoring.visible`): the cell's
``record(...)`` calls (case, function, problem set), each case's inputs as the grader writes
them, the reference's values, and how each is compared. :func:`prepare` writes the inputs and
adds the ``record`` lines to the cells it runs; :func:`verdict` reads what was recorded and
judges it with the grader's own reader and comparisons (:mod:`coursedata.results`): the first
problem, or ``None``.

A visible cell whose check is written in Python by the course cannot be judged here
(``unchecked``): its ``record`` lines still run where the grader runs them, on the same inputs, so
that a function that raises on them fails here as at grading, and the check's line says what it
cannot compare.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from coursedata.compare import Output
from coursedata.grading import INPUTS_FOLDER
from coursedata.results import AnswerUnavailable, problems, read

__all__ = ["KEY", "Case", "VisibleCheck", "visible_checks", "prepare", "verdict"]

#: The key of a released visible cell's ``metadata.course`` that holds what the check needs.
KEY = "visible"


@dataclass(frozen=True)
class Case:
    """One recorded case of a visible cell: its inputs (the bytes of their ``.npz``), the
    reference's values, and how each value is compared and described (``expected`` is ``None``
    where the cell's check is the course's Python: then only a raise can be judged)."""

    name: str
    inputs: bytes
    expected: tuple[np.ndarray, ...] | None = None
    outputs: tuple[Output, ...] = ()
    whats: tuple[str, ...] = ()


@dataclass(frozen=True)
class VisibleCheck:
    """What the check can judge of one visible cell (``unchecked``: only its visible test)."""

    grade_id: str
    calls: tuple[tuple[str, str, str], ...] = ()
    cases: tuple[Case, ...] = ()
    at: int = 0  # the line of the cell where the grader runs the record lines

    @property
    def record(self) -> str:
        """The lines the grader runs in this cell (its hidden part), as the check runs them."""
        if not self.calls:
            return ""
        return "from coursedata.grading import inputs, record\n" + "\n".join(
            f"record({case!r}, {function}, **inputs({ps!r}, {case!r}))"
            for case, function, ps in self.calls)

    @property
    def unchecked(self) -> bool:
        """Whether the check cannot compare the cell's values with the reference's."""
        return not self.cases or any(case.expected is None for case in self.cases)


def _arrays(text: str) -> tuple[np.ndarray, ...]:
    with np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False) as z:
        return tuple(np.array(z[f"out_{i}"]) for i in range(len(z.files)))


def _case(name: str, spec: dict) -> Case:
    return Case(name, base64.b64decode(spec["inputs"]), _arrays(spec["expected"]),
                tuple(Output(**o) for o in spec["outputs"]), tuple(spec["whats"]))


def visible_checks(nb) -> dict[str, VisibleCheck]:
    """``{grade_id: VisibleCheck}`` for every visible cell of a released notebook that carries
    ``metadata.course.visible``."""
    out = {}
    for cell in nb.cells:
        meta = cell.get("metadata", {})
        spec = meta.get("course", {}).get(KEY) if isinstance(meta.get("course"), dict) else None
        gid = meta.get("nbgrader", {}).get("grade_id")
        if not isinstance(spec, dict) or not gid:
            continue
        cases = tuple(_case(n, s) for n, s in spec.get("cases", {}).items()) + tuple(
            Case(str(n), base64.b64decode(s)) for n, s in spec.get("inputs", {}).items())
        calls = tuple((str(c), str(f), str(p)) for c, f, p in spec.get("calls", [])
                      if str(f).isidentifier())
        at = spec.get("at", 0)
        out[gid] = VisibleCheck(gid, calls, cases, at if isinstance(at, int) and at >= 0 else 0)
    return out


def prepare(nb, checks: dict[str, VisibleCheck], folder: Path) -> None:
    """Write the cases' inputs into ``folder/inputs/`` and add each cell's ``record`` lines where
    the grader runs them (:attr:`VisibleCheck.at`), in ``nb`` (in place: the copy the check runs,
    never the student's file), so that a function that keeps state between calls (a mutable
    default, a global) meets the same calls in the same order as at grading.

    The kernel must run with ``GRADER_RESULTS_DIR`` set to ``folder`` (:data:`RESULTS_ENV`).
    """
    inputs = Path(folder) / INPUTS_FOLDER
    inputs.mkdir(parents=True, exist_ok=True)
    for check in checks.values():
        for case in check.cases:
            (inputs / f"{case.name}.npz").write_bytes(case.inputs)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in checks and checks[gid].record:
            lines = cell.source.split("\n")
            at = min(checks[gid].at, len(lines))
            cell.source = "\n".join([*lines[:at], checks[gid].record, *lines[at:]])


def verdict(check: VisibleCheck, folder: Path) -> str | None:
    """The first problem of what the cell recorded in ``folder``, as the grader sees it (all or
    nothing over its cases and their values), or ``None`` when it earns the cell's points (as far
    as the check can know: where a case has no expected values, only that the function ran and
    returned numbers)."""
    for case in check.cases:
        if case.expected is None:
            try:
                read(folder, case.name)
            except AnswerUnavailable as exc:
                return str(exc)
            continue
        for problem in problems(partial(read, folder, case.name), case.outputs, case.expected,
                                case.whats):
            if problem:
                return problem
    return None
