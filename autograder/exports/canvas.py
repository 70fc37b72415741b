"""Canvas's gradebook import CSV.

The layout is the one Canvas's own gradebook export writes and its import reads back
(canvas-lms ``app/models/course.rb``, ``gradebook_to_csv``): the columns ``Student``, ``ID``,
``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment titled
``<assignment name> (<assignment id>)`` (``Assignment#title_with_id``), and a second row
``Points Possible`` under it. ``ID`` is Canvas's user id, which the download's file names carry
(:class:`autograder.intake.lms.LmsInfo`); a student graded from a plain folder has no Canvas id and
gets their student id as ``SIS Login ID`` instead. A student of an anonymously graded
assignment has only an anonymous id, which the import cannot match: no row, and a line saying
so (their feedback still goes back through the re-upload zip, by its attachment id).

Only this problem set's column is written, holding the final score (late penalty taken off); a
student whose score is not final (written answers pending, grader failed, no notebook) gets an
empty cell, which the import leaves unchanged. The penalty itself is in ``grades.csv`` and each
student's feedback, not a second column here: the import would read any other column as a
further assignment.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from autograder.grades.summary import inert, number, summarize
from autograder.grading.record import Record, as_record

__all__ = ["canvas_column", "write_canvas_csv", "HEADER"]

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def canvas_column(name: str, assignment_id: str | int | None = None) -> str:
    """The assignment's column title: ``Problem set 3 (1234)`` (the id from Canvas's export or
    the assignment's address); without an id Canvas matches the column by its title."""
    if assignment_id is not None and not str(assignment_id).isdigit():
        raise ValueError(
            f"a Canvas assignment id is a number (the end of the assignment's "
            f"address, .../assignments/1234); got {assignment_id!r}"
        )
    return f"{name} ({assignment_id})" if assignment_id is not None else name


def write_canvas_csv(records: Sequence[Record | dict], path: str | Path, column: str) -> list[str]:
    """Write the import file; return one line per student whose cell was left empty, and why."""
    rows = [HEADER + [column]]
    summaries = [(r, summarize(r)) for r in map(as_record, records)]
    top = max((s.max_points for _, s in summaries), default=0.0)
    rows.append(["Points Possible", "", "", "", "", number(top)])
    skipped = []
    for record, summary in summaries:
        lms = record.lms if record.lms is not None and record.lms.system == "canvas" else None
        if lms is not None and lms.anonymous:
            skipped.append(
                f"{record.student_id}: an anonymous id, which Canvas's import cannot match: "
                f"enter the score in SpeedGrader (the feedback zip re-uploads by attachment id)"
            )
            continue
        rows.append(
            [
                inert(lms.name if lms else record.student_id),
                lms.user_id if lms else "",
                "",
                "" if lms else record.student_id,
                "",
                number(summary.final),
            ]
        )
        if summary.final is None:
            skipped.append(f"{record.student_id}: left empty, {summary.why_not}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return skipped
