"""Moodle: the assignment's grading worksheet, and the gradebook's CSV import.

**Grading worksheet** (Assignment → Submissions → "Upload grading worksheet", the offline grading
worksheet of ``assignfeedback_offline``). Its importer finds its columns by their titles
(moodle ``mod/assign/feedback/offline/importgradeslib.php``): ``Identifier`` holding
``Participant <id>`` (the participant id of the download's folder names, ``hiddenuser`` +
unique id), ``Grade``, ``Last modified (grade)`` (read with PHP's ``strtotime``; Moodle skips a
row whose grade was changed in Moodle after it), and one column per feedback plugin titled by
its name, ``Feedback comments``. Only students graded from a Moodle download have a participant
id; the others are reported, not written.

**Gradebook import** (Gradebook → Import → CSV file, ``grade/import/csv``). Any columns: at
import the instructor maps one column to a user field (``userid``, ``username``,
``useridnumber`` or ``useremail``, moodle ``grade/import/csv/classes/load_data.php``) and each
other column to a grade item, an item's feedback, or nothing. The file has the identifier
column (the student id, titled by what it holds, ``username`` by default), the problem set's
column with the final score, ``Late penalty`` (points; map it to nothing, or to an item of its
own) and ``Feedback``. Moodle looks each identifier up in its ``user`` table (``id``,
``username``, ``idnumber`` or ``email``, ``check_user_exists``), and one it does not find stops
the whole import (``cleanup_import``, "user mapping error"). So a student graded from a Moodle
assignment download is not written there: their id holds the assignment's participant id
(``get_uniqueid_for_user``, an id of ``assign_user_mapping``, per assignment), which is none of
those fields; the worksheet carries their grade. Nor is an id that cannot be what the column
holds (a ``userid`` that is not a number, a ``useremail`` without ``@``). Each is reported.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

from autograder.grades.summary import Summary, inert, number, summarize
from autograder.grading.record import Record, as_record

__all__ = ["write_moodle_worksheet", "write_moodle_gradebook", "WORKSHEET_HEADER", "IDENTIFIERS"]

WORKSHEET_HEADER = [
    "Identifier",
    "Full name",
    "Grade",
    "Maximum Grade",
    "Last modified (grade)",
    "Feedback comments",
]
#: What the gradebook import's identifier column can be mapped to, and its title here.
IDENTIFIERS = {
    "username": "Username",
    "useremail": "Email address",
    "useridnumber": "ID number",
    "userid": "User id",
}


def _comment(summary: Summary) -> str:
    parts = [
        f"Autograded {number(summary.auto)} / {number(summary.max_auto)}",
        f"written answers {number(summary.manual)} / {number(summary.max_manual)}",
    ]
    if summary.penalty:
        parts.append(
            f"late penalty -{number(summary.penalty)} ({summary.late_days} day(s) late, "
            f"{number(summary.late_percent)}%)"
        )
    return "; ".join(parts) + ". The feedback file explains every question."


def _write(path: str | Path, rows: list[list[str]]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


def write_moodle_worksheet(
    records: Sequence[Record | dict], path: str | Path, now: datetime | None = None
) -> list[str]:
    """Write the grading worksheet; return one line per student not written or left empty."""
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    rows, skipped = [WORKSHEET_HEADER], []
    for record in map(as_record, records):
        lms, summary = record.lms, summarize(record)
        if lms is None or lms.system != "moodle":
            skipped.append(
                f"{record.student_id}: not written, no Moodle participant id "
                f"(not graded from a Moodle download)"
            )
            continue
        if summary.final is None:
            skipped.append(f"{record.student_id}: left empty, {summary.why_not}")
        rows.append(
            [
                f"Participant {lms.user_id}",
                inert(lms.name),
                number(summary.final),
                number(summary.max_points),
                stamp if summary.final is not None else "",
                inert(_comment(summary)) if summary.final is not None else "",
            ]
        )
    _write(path, rows)
    return skipped


def _not_an_identifier(record: Record, identifier: str) -> str:
    """Why ``record``'s student id cannot be a Moodle user's ``identifier`` (empty if it can)."""
    student = record.student_id
    if record.lms is not None and record.lms.system == "moodle":
        return (
            f"graded from a Moodle download: its id holds the assignment's participant id "
            f"{record.lms.user_id}, not a Moodle user's {identifier}, and Moodle stops the whole "
            f"import at an identifier it does not find; its grade is in moodle-worksheet.csv "
            f"(Assignment -> Submissions -> Upload grading worksheet)"
        )
    if identifier == "userid" and not student.isdigit():
        return "not a Moodle user id (a number); Moodle would stop the whole import at it"
    if identifier == "useremail" and "@" not in student:
        return "not an email address; Moodle would stop the whole import at it"
    return ""


def write_moodle_gradebook(
    records: Sequence[Record | dict], path: str | Path, item: str, identifier: str = "username"
) -> list[str]:
    """Write the gradebook import file; ``item`` titles the grade column (the grade item's
    name), ``identifier`` says what the student ids are (a key of :data:`IDENTIFIERS`)."""
    if identifier not in IDENTIFIERS:
        raise ValueError(
            f"the Moodle identifier must be one of {', '.join(IDENTIFIERS)}; got {identifier!r}"
        )
    rows = [[IDENTIFIERS[identifier], item, "Late penalty", "Feedback"]]
    skipped = []
    for record in map(as_record, records):
        summary = summarize(record)
        unfit = _not_an_identifier(record, identifier)
        if unfit:
            skipped.append(f"{summary.student_id}: not written, {unfit}")
            continue
        if summary.final is None:
            skipped.append(f"{summary.student_id}: left empty, {summary.why_not}")
        rows.append(
            [
                inert(summary.student_id),
                number(summary.final),
                number(summary.penalty) if summary.final is not None else "",
                inert(_comment(summary)) if summary.final is not None else "",
            ]
        )
    _write(path, rows)
    return skipped
