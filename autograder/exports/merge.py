"""One truth for grades: the gradebook's hand-graded scores and the late policy, into records.

The grader's records hold the checks' scores; the written answers are graded by hand in the
formgrader, which stores each as the cell's ``Grade.manual_score`` in the course's gradebook
(nbgrader ``api.py``; the formgrader's ``PUT /formgrader/api/grade/<id>`` sets it). Every
writer of grades (``grades.csv``, the feedback, each export) reads the records through
:func:`annotate`, which adds

- ``manual``: ``{grade_id: manual_score}`` for every cell of the student's submission with a
  hand-given score (written answers, and overrides of checks), read from the gradebook;
- ``status``: ``graded`` once every written answer has its score in the gradebook (else
  ``awaiting-manual-grading``, as the grader wrote it);
- ``late``: the :class:`autograder.late.Lateness` of the file the record was graded from
  (its LMS mark and file time, kept in the record as ``lms`` and ``submitted_at``), under the
  course's policy (:mod:`autograder.late`).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from autograder.late import LatePolicy, load_policy

__all__ = ["manual_scores", "annotate"]


def manual_scores(course: str | Path, problem_set: str) -> dict[str, dict[str, float]]:
    """``{student: {grade_id: manual_score}}`` of ``problem_set`` in the course's gradebook
    (empty when the course has no gradebook or the problem set is not in it)."""
    db = Path(course) / "gradebook.db"
    if not db.is_file():
        return {}
    from nbgrader.api import (Assignment, BaseCell, Grade, Gradebook, SubmittedAssignment,
                              SubmittedNotebook)

    found: dict[str, dict[str, float]] = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        rows = gb.db.query(SubmittedAssignment.student_id, BaseCell.name, Grade.manual_score) \
            .join(BaseCell, BaseCell.id == Grade.cell_id) \
            .join(SubmittedNotebook, SubmittedNotebook.id == Grade.notebook_id) \
            .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id) \
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id) \
            .filter(Assignment.name == problem_set, Grade.manual_score.isnot(None))
        for student, cell, score in rows:
            found.setdefault(student, {})[cell] = float(score)
    return found


def annotate(records: list[dict], problem_set: str, course: str | Path | None = None,
             policy: LatePolicy | None = None, assessed: Collection[str] = ()) -> list[dict]:
    """Copies of ``records`` with ``manual`` (from ``course``'s gradebook when given, else as
    the record has it) and ``late`` (under ``policy``, default the course's file; kept as it is
    for the ``assessed`` students, whose lateness the caller assessed under the same policy)."""
    manual = manual_scores(course, problem_set) if course is not None else None
    rule = (policy or load_policy()).for_problem_set(problem_set)
    out = []
    for record in records:
        record = dict(record)
        if manual is not None:
            record["manual"] = manual.get(record["student_id"], {})
        if manual is not None and record.get("status") in ("awaiting-manual-grading", "graded"):
            hand = [c["grade_id"] for c in record["scores"] if c["points"] is None]
            done = all(record["manual"].get(g) is not None for g in hand)
            record["status"] = "graded" if done else "awaiting-manual-grading"
        lms = record.get("lms") or {}
        if (record.get("status") not in ("unmatched", "unreadable-file")
                and record["student_id"] not in assessed):
            record["late"] = rule.assess(record["student_id"], record.get("submitted_at"),
                                         bool(lms.get("late"))).to_dict()
        out.append(record)
    return out
