"""``grades.csv``: one row per student, the same numbers as the gradebook and every export.

Columns: ``student_id``, ``status``, one per graded cell (a hand-given score replaces the
check's, as in the gradebook; a written answer is empty until graded), ``autograded_total``,
``autograded_max``, ``manual_max``, ``manual_total`` (the hand-graded points given so far),
``late_days``, ``late_penalty`` (points), ``final`` (autograded + hand-graded − penalty; empty
until every written answer is graded, or where the grader failed) and ``notes``.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence, Set
from pathlib import Path

from autograder.grades.summary import inert, number, summarize
from autograder.grading.record import Record, as_record

__all__ = ["COLUMNS", "write_grades_csv"]

COLUMNS = [
    "autograded_total",
    "autograded_max",
    "manual_max",
    "manual_total",
    "late_days",
    "late_penalty",
    "final",
    "notes",
]


def write_grades_csv(
    records: Sequence[Record | dict],
    cells: list[str],
    path: str | Path,
    absent: Set[str] = frozenset(),
) -> None:
    """Write ``grades.csv`` atomically; ``absent`` students (no file in the latest input) keep
    their row with a note."""
    lines = [["student_id", "status", *cells, *COLUMNS]]
    for rec in map(as_record, records):
        summary = summarize(rec)
        scored = summary.auto is not None  # no score where the grader failed
        pts = {s.grade_id: rec.points(s) if scored else None for s in rec.scores}
        notes = (
            ["no file in the latest run's input; grade from an earlier run"]
            if rec.student_id in absent
            else []
        ) + list(rec.notes)
        if rec.late is not None and rec.late.days:
            notes.append(f"late: {rec.late.reason}")
        lines.append(
            [
                rec.student_id,
                str(rec.status),
                *[number(pts.get(c)) for c in cells],
                number(summary.auto),
                number(summary.max_auto),
                number(summary.max_manual),
                number(summary.manual) if scored else "",
                str(summary.late_days),
                number(summary.penalty) if scored else "",
                number(summary.final),
                inert(" | ".join(notes)[:500]),
            ]
        )
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(lines)
    os.replace(tmp, path)
