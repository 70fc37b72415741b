"""One student's grade as every export states it: autograded, hand-graded, late penalty, final.

A cell's points are the hand-given score when the gradebook has one (``Grade.manual_score``: a
written answer's, or an override of a check in the formgrader), else the check's, as nbgrader's
``Grade.score`` (:meth:`autograder.grading.record.Record.points`). The final score is
``autograded + hand-graded − penalty`` (the penalty a percentage of the two,
:func:`autograder.intake.late.penalty_points`). It exists only when it is the student's: not where the
grader failed (``grader-error``), no notebook was found (``unmatched``), or a written answer
still waits for its hand-graded score; those rows say why instead, and the exports leave the
LMS's cell untouched (an empty cell is "no change" to an LMS import).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.grading.record import Record, as_record
from autograder.intake.late import penalty_points
from autograder.status import Status

__all__ = ["Summary", "summarize", "number", "inert"]


def inert(text: str) -> str:
    """A CSV text field a spreadsheet shows as text: one starting like a formula gets a quote
    (names and messages come from students' file names and notebooks)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def number(value: float | None) -> str:
    """A score as the exports write it: ``19``, ``17.1``; empty for None."""
    return "" if value is None else f"{round(value, 2):g}"


@dataclass(frozen=True)
class Summary:
    """Attributes: ``auto`` (None where the grader failed), ``manual`` (the hand-graded points
    given so far), ``pending`` (hand-graded cells without a score), ``max_points``,
    ``late_days``, ``late_percent``, ``penalty`` (points), ``final`` (None when not final) and
    ``why_not`` (why there is no final score)."""

    student_id: str
    status: Status
    auto: float | None
    manual: float
    pending: tuple[str, ...]
    max_auto: float
    max_manual: float
    late_days: int
    late_percent: float
    penalty: float
    final: float | None
    why_not: str = ""

    @property
    def max_points(self) -> float:
        return self.max_auto + self.max_manual


def summarize(record: Record | dict) -> Summary:
    """The :class:`Summary` of one record (or its JSON object; see :mod:`autograder.exports`)."""
    record = as_record(record)
    status, given = record.status, record.manual
    hand = record.hand_graded
    auto = (
        None
        if not status.scored
        else sum(
            p for s in record.scores if s.points is not None and (p := record.points(s)) is not None
        )
    )
    if status == Status.INVALID:  # nothing was handed in that a human could grade
        manual, pending = float(sum(given.get(g) or 0.0 for g in hand)), tuple[str, ...]()
    else:
        manual = float(sum(given[g] for g in hand if given.get(g) is not None))
        pending = tuple(g for g in hand if given.get(g) is None)
    earned = (auto or 0.0) + manual
    penalty = penalty_points(record.late, earned)
    why = status.why_no_final or (
        f"written answers not graded yet: {', '.join(pending)}" if pending else ""
    )
    final = None if why else round(earned - penalty, 2)
    late = record.late
    return Summary(
        record.student_id,
        status,
        auto,
        manual,
        pending,
        record.max_auto,
        record.max_manual,
        late.days if late is not None else 0,
        float(late.percent) if late is not None else 0.0,
        penalty,
        final,
        why,
    )
