"""Blackboard Learn's Grade Center upload ("Work Offline" → "Upload").

The Grade Center matches a row by the student's user name and a column by its Column ID; a
column without one is added as a new column (a text column with 0 points possible, to edit after
the upload); a comma-separated file has a header row and every value in quotes (Blackboard Learn
help, "Uploading External Grade Center Items",
library.blackboard.com/ref/36ba3329-e441-488a-93ce-7a55543cc999/Content/Grade%20Center/
Uploading%20External%20Grade%20Center%20Items.htm). The file has ``Username`` (the username of
the download's receipts, :mod:`autograder.intake.blackboard`) and the problem set's column, the
final score; a student not graded from a Blackboard download has no username and is reported,
as is one without a final score (left empty, which the upload leaves unchanged).
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from autograder.grades.summary import inert, number, summarize
from autograder.grading.record import Record, as_record

__all__ = ["write_blackboard_csv", "HEADER"]

HEADER = ["Username"]


def write_blackboard_csv(
    records: Sequence[Record | dict], path: str | Path, column: str
) -> list[str]:
    """Write the upload file; return one line per student left out or left empty, and why."""
    rows, skipped = [HEADER + [column]], []
    for record in map(as_record, records):
        lms = record.lms
        if lms is None or lms.system != "blackboard":
            skipped.append(f"{record.student_id}: not graded from a Blackboard download")
            continue
        summary = summarize(record)
        rows.append([inert(lms.user_id), number(summary.final)])
        if summary.final is None:
            skipped.append(f"{record.student_id}: left empty, {summary.why_not}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    return skipped
