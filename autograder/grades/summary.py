"""One student's grade as every export states it: autograded, hand-graded, late penalty, final.

A cell's points are the hand-given score when the gradebook has one (``Grade.manual_score``: a
written answer's, or an override of a check in the formgrader), else the check's, as nbgrader's
``Grade.score``. The final score is ``autograded + hand-graded − penalty`` (the penalty a percentage of the two,
:func:`autograder.late.penalty_points`). It exists only when it is the student's: not where the
grader failed (``grader-error``), no notebook was found (``unmatched``), or a written answer
still waits for its hand-graded score; those rows say why instead, and the exports leave the
LMS's cell untouched (an empty cell is "no change" to an LMS import).
"""

from __future__ import annotations

from dataclasses import dataclass

from autograder.late import penalty_points

__all__ = ["Summary", "summarize", "number", "inert", "cell_points"]


def cell_points(score: dict, manual: dict) -> float | None:
    """A cell's points as nbgrader's ``Grade.score`` counts them: the hand-given score when
    there is one (a written answer's, or an instructor's override of a check), else the
    check's."""
    given = manual.get(score["grade_id"])
    return given if given is not None else score["points"]


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
    status: str
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


def summarize(record: dict) -> Summary:
    """The :class:`Summary` of one record (see :mod:`autograder.exports` for its fields)."""
    status = str(record["status"])
    manual_given = record.get("manual") or {}
    hand = [s["grade_id"] for s in record["scores"] if s["points"] is None]
    auto = None if status == "grader-error" else sum(
        cell_points(s, manual_given) for s in record["scores"] if s["points"] is not None)
    if status == "invalid-notebook":  # nothing was handed in that a human could grade
        manual, pending = float(sum(manual_given.get(g) or 0.0 for g in hand)), ()
    else:
        manual = float(sum(manual_given[g] for g in hand if manual_given.get(g) is not None))
        pending = tuple(g for g in hand if manual_given.get(g) is None)
    late = record.get("late") or {}
    earned = (auto or 0.0) + manual
    penalty = penalty_points(late, earned)
    why = ""
    if status == "grader-error":
        why = "the grader failed on this submission; grade it again"
    elif status == "unmatched":
        why = "no notebook for this problem set was handed in"
    elif status == "unreadable-file":
        why = "the file handed in could not be read; ask the student for it again"
    elif pending:
        why = f"written answers not graded yet: {', '.join(pending)}"
    final = None if why else round(earned - penalty, 2)
    return Summary(record["student_id"], status, auto, manual, pending,
                   float(record.get("max_auto", 0.0)), float(record.get("max_manual", 0.0)),
                   int(late.get("days", 0)), float(late.get("percent", 0.0)), penalty, final,
                   why)
