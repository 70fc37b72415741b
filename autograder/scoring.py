"""Score a submission's recorded answers with the trusted checks, outside the student's kernel."""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass

from autograder.checks import Answers, load_checks
from autograder.checks.common import AnswerUnavailable
from autograder.problemset import ProblemSet

__all__ = ["CellScore", "score_results", "check_coverage"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CellScore:
    """The score of one graded cell.

    ``points`` is ``None`` for a cell graded by hand (a written answer).
    """

    grade_id: str
    points: float | None
    max_points: float
    message: str

    def to_dict(self) -> dict:
        return asdict(self)


def check_coverage(problem_set: ProblemSet) -> None:
    """Raise ``ValueError`` unless every autograded cell has exactly one trusted check."""
    checks = load_checks(problem_set.name).CHECKS
    cells = {c.grade_id for c in problem_set.grade_cells if c.autograded}
    if cells != set(checks):
        raise ValueError(f"{problem_set.name}: autograded cells without a check: "
                         f"{sorted(cells - set(checks))}; checks without a cell: "
                         f"{sorted(set(checks) - cells)}")


def score_results(problem_set: ProblemSet, results_dir) -> list[CellScore]:
    """Score every graded cell of ``problem_set`` from the arrays in ``results_dir``.

    A check that fails on malformed student output scores zero with a message; it never stops
    the grading of the other cells.
    """
    checks = load_checks(problem_set.name).CHECKS
    answers = Answers(problem_set.name, results_dir)
    scores = []
    for cell in problem_set.grade_cells:
        if not cell.autograded:
            scores.append(CellScore(cell.grade_id, None, cell.points, "graded by hand"))
            continue
        try:
            outcome = checks[cell.grade_id](answers)
            points, message = outcome.fraction * cell.points, outcome.message
        except AnswerUnavailable as exc:
            points, message = 0.0, str(exc)
        except Exception as exc:  # noqa: BLE001 - malformed answers must not stop grading
            log.warning("check %s/%s failed on a submission: %r", problem_set.name,
                        cell.grade_id, exc)
            points, message = 0.0, ("your answer could not be checked (it has an unexpected "
                                    "type or shape)")
        scores.append(CellScore(cell.grade_id, round(points, 6), cell.points, message))
    return scores
