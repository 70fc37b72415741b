"""Score a submission's recorded answers with the trusted checks, outside the student's kernel.

A check gives each cell a fraction of its points; this module multiplies, and gives a visible
cell 0 when its test raised as the notebook ran (:data:`VISIBLE_FAILED`). What a verdict is worth
is the check's: :mod:`autograder.checks.declared` for a declared cell (a visible cell is all or
nothing), the course's ``course/checks/NAME.py`` for a Python check; the student's own check
(:mod:`coursedata.check`) must give the same verdict
(``tests/autograder/grading/test_visible_verdict.py``).

Every check runs within :func:`coursedata.compare.bounded`: its message states the student's
values by a few classes only (orders of magnitude, one/some/most/all entries). In the grader every
cell, a visible one too, runs beside the hidden tests (their record lines inserted, every case's
inputs written), so the student's code could encode what it read there into the values it returns,
and a message that echoed them would carry it out. The student's own check
(:mod:`coursedata.check`) shows a visible cell's values in full, in their notebook.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass

from autograder.checks import Answers
from autograder.checks.answers import AnswerUnavailable
from autograder.checks.declared import declared_cases
from autograder.checks.registry import checks_for
from autograder.grading.causes import name_causes
from autograder.grading.problemset import GradedSet, ProblemSet
from autograder.grading.recorded import cell_cases
from coursedata.compare import bounded
from coursedata.naming import VISIBLE, test_kind

__all__ = [
    "CellScore",
    "score_results",
    "check_coverage",
    "failed_visible_cells",
    "VISIBLE_FAILED",
    "GRADER_FAULT",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CellScore:
    """The score of one graded cell.

    ``points`` is ``None`` for a cell graded by hand (a written answer). ``error`` is ``None``
    unless the trusted check itself failed (a fault of the grader, not of the student): then it
    holds the formatted traceback, for the instructor only, the cell scores 0.0 and ``message``
    says only that the check could not run; ``case`` is then the case whose inputs or answer
    the check read last (the one it was computing when it raised), if any.
    """

    grade_id: str
    points: float | None
    max_points: float
    message: str
    error: str | None = None
    case: str | None = None

    def to_dict(self) -> dict:
        """The score as a record holds it (``case`` only when a check named one)."""
        data = asdict(self)
        if self.case is None:
            del data["case"]
        return data


def check_coverage(problem_set: ProblemSet) -> None:
    """Raise ``ValueError`` unless every autograded cell has exactly one trusted check."""
    checks = checks_for(problem_set)
    cells = {c.grade_id for c in problem_set.grade_cells if c.autograded}
    if cells != set(checks):
        raise ValueError(
            f"{problem_set.name}: autograded cells without a check: "
            f"{sorted(cells - set(checks))}; checks without a cell: "
            f"{sorted(set(checks) - cells)}"
        )


#: The message of a visible cell whose test failed in the student's kernel.
VISIBLE_FAILED = (
    "the visible test of this cell failed when your notebook ran (see the error "
    "under the cell): its points need the visible test to pass"
)
#: The message of a cell whose trusted check failed (a fault of the grader).
GRADER_FAULT = (
    "this check could not be run because of a fault in the grader, not in your "
    "answer; the instructor has been told, and this score is not final"
)


def failed_visible_cells(notebook) -> frozenset[str]:
    """The ``grade_id`` of every visible test cell of ``notebook`` whose run ended with an error.

    ``notebook`` is the executed notebook (outputs included). Only an error output counts: a
    cell that raised, or was stopped by the time limit.
    """
    failed = set()
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
        if not (isinstance(grade_id, str) and test_kind(grade_id) == VISIBLE):
            continue
        if any(
            isinstance(o, dict) and o.get("output_type") == "error" for o in cell.get("outputs", [])
        ):
            failed.add(grade_id)
    return frozenset(failed)


class _ReadingAnswers(Answers):
    """The answers of ``answers`` (each file read once, there), noting the cases a check reads
    (``read``) and the case whose inputs or answer it read last (``last``)."""

    def __init__(self, answers: Answers):
        super().__init__(answers.problem_set, answers.results_dir, answers.declared)
        self.answers = answers
        self.read: set[str] = set()
        self.last: str | None = None

    def inputs(self, case: str) -> dict:
        self.last = case
        return self.answers.inputs(case)

    def get(self, case: str) -> tuple:
        self.read.add(case)
        self.last = case
        return self.answers.get(case)


def score_results(
    problem_set: GradedSet, results, executed, tainted: Mapping[str, str] | None = None
) -> list[CellScore]:
    """Score every graded cell of ``problem_set`` from the arrays in ``results_dir``.

    Parameters
    ----------
    problem_set : GradedSet
        A :class:`ProblemSet`, or a view of some of its graded cells.
    results : path-like or Answers
        The folder the notebook's hidden cells wrote into, or its answers (shared with another
        reader, so that each file is read once).
    executed : notebook or iterable of str
        The executed notebook (its visible cells that ended with an error are found with
        :func:`failed_visible_cells`), or directly the ``grade_id`` of the visible cells whose
        test failed in the kernel. Such a cell scores zero whatever its check says: its points
        mean that its visible test passed. The kernel is untrusted, so this only ever takes
        points away.
    tainted : mapping, optional
        ``{case: message}``: recorded cases computed by a function that broke the problem set's
        rules (:func:`autograder.grading.rulebook.judge`). A cell whose check reads one, or whose hidden
        part may record one (:func:`autograder.grading.recorded.cell_cases`), scores zero with that
        message.

    Returns
    -------
    list of CellScore
        One per graded cell, in notebook order. A student's malformed or missing answer
        (:class:`AnswerUnavailable`) scores zero with its message; any other exception in a check
        is a fault of the grader: the cell scores zero, its ``error`` holds the traceback for the
        instructor, and the student's message does not. No failure stops the grading of the
        other cells. A cell that lost points and whose function uses another answer function that
        lost points too says so (:func:`autograder.grading.causes.name_causes`).
    """
    if isinstance(executed, dict):  # a notebook (nbformat.NotebookNode is a dict)
        failed = failed_visible_cells(executed)
    elif isinstance(executed, Iterable) and not isinstance(executed, (str, bytes)):
        failed = frozenset(executed)
    else:
        raise TypeError("executed must be the executed notebook or a collection of grade_ids")
    checks = checks_for(problem_set)
    answers = _ReadingAnswers(
        results
        if isinstance(results, Answers)
        else Answers(problem_set.name, results, declared_cases(problem_set.source))
    )
    tainted = dict(tainted or {})
    may_read = cell_cases(problem_set) if tainted else {}
    scores = []
    for cell in problem_set.grade_cells:
        if not cell.autograded:
            scores.append(CellScore(cell.grade_id, None, cell.points, "graded by hand"))
            continue
        error = case = None
        answers.read, answers.last = set(), None
        try:
            with bounded():
                outcome = checks[cell.grade_id](answers)
            points, message = outcome.fraction * cell.points, outcome.message
        except AnswerUnavailable as exc:
            points, message = 0.0, str(exc)
        except Exception:  # noqa: BLE001 - a fault of the grader must not stop grading
            error, case = traceback.format_exc(), answers.last
            log.error(
                "check %s/%s failed (a grader fault):\n%s", problem_set.name, cell.grade_id, error
            )
            points, message = 0.0, GRADER_FAULT
        if error is None and cell.grade_id in failed and points > 0:
            points, message = 0.0, VISIBLE_FAILED
        broken = sorted((answers.read | set(may_read.get(cell.grade_id, ()))) & tainted.keys())
        if error is None and broken:
            points, message = 0.0, tainted[broken[0]]
        scores.append(CellScore(cell.grade_id, round(points, 6), cell.points, message, error, case))
    return name_causes(scores, executed) if isinstance(executed, dict) else scores
