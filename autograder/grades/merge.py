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
- ``late``: the :class:`autograder.intake.late.Lateness` of the file the record was graded from
  (its LMS mark and file time, kept in the record as ``lms`` and ``submitted_at``), under the
  course's policy (:mod:`autograder.intake.late`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from pathlib import Path

from autograder.grading.record import Record, as_record
from autograder.intake.late import LatePolicy, LateRule, load_policy
from autograder.status import Status

__all__ = ["manual_scores", "annotate"]


def manual_scores(course: str | Path, problem_set: str) -> dict[str, dict[str, float]]:
    """``{student: {grade_id: manual_score}}`` of ``problem_set`` in the course's gradebook
    (empty when the course has no gradebook or the problem set is not in it)."""
    db = Path(course) / "gradebook.db"
    if not db.is_file():
        return {}
    from nbgrader.api import (
        Assignment,
        BaseCell,
        Grade,
        Gradebook,
        SubmittedAssignment,
        SubmittedNotebook,
    )

    found: dict[str, dict[str, float]] = {}
    with Gradebook(f"sqlite:///{db}") as gb:
        rows = (
            gb.db.query(SubmittedAssignment.student_id, BaseCell.name, Grade.manual_score)
            .join(BaseCell, BaseCell.id == Grade.cell_id)
            .join(SubmittedNotebook, SubmittedNotebook.id == Grade.notebook_id)
            .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id)
            .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
            .filter(Assignment.name == problem_set, Grade.manual_score.isnot(None))
        )
        for student, cell, score in rows:
            found.setdefault(student, {})[cell] = float(score)
    return found


def annotate(
    records: Sequence[Record | dict],
    problem_set: str,
    course: str | Path | None = None,
    policy: LatePolicy | None = None,
    assessed: Collection[str] = (),
) -> list[Record]:
    """Copies of ``records`` (records, or their JSON objects) with ``manual`` (from
    ``course``'s gradebook when given, else as the record has it), the status it gives, and
    ``late`` (under ``policy``, default the course's file; kept as it is for the ``assessed``
    students, whose lateness the caller assessed under the same policy)."""
    manual = manual_scores(course, problem_set) if course is not None else None
    rule = (policy or load_policy()).for_problem_set(problem_set)
    return [
        _annotated(as_record(r), manual, rule, as_record(r).student_id in assessed) for r in records
    ]


def _annotated(
    record: Record,
    manual: dict[str, dict[str, float]] | None,
    rule: LateRule,
    assessed: bool = False,
) -> Record:
    status, given, late = record.status, record.manual, record.late
    if manual is not None:
        given = manual.get(record.student_id, {})
        if status.complete:  # graded once every written answer has its hand-graded score
            done = all(given.get(g) is not None for g in record.hand_graded)
            status = Status.GRADED if done else Status.AWAITING_MANUAL
    if status.file_read and not assessed:
        late = rule.assess(
            record.student_id, record.submitted_at, bool(record.lms and record.lms.late)
        )
    return dataclasses.replace(record, status=status, manual=given, late=late)
