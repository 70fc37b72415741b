"""The single writer of a grading run's output folder (and, when asked, of the gradebook).

Output folder layout::

    DIR/grades.csv                      one row per student
    DIR/report.html                     what the class missed, statuses, timings
    DIR/similarity.html                 whose code is alike (run/batch.py writes it; no grade)
    DIR/marking-scheme.html             the rubric of the hand-graded answers
    DIR/collection.txt                  what collecting the submissions noticed
    DIR/feedback/<student>/<notebook>.html
    DIR/records/<student>.json          the full record (resume state)
    DIR/exports/                        the LMS files (:mod:`autograder.run.export`)

During a run, :class:`OutputWriter` writes it; after hand-grading, ``export`` rewrites the merged
records, their pages and ``grades.csv`` through :func:`rewrite_merged`, and adds ``DIR/exports/``.
Each record is written as soon as it arrives (atomically), so a run killed half-way keeps every
grade already recorded, and a re-run skips submissions whose bytes and grader are unchanged.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Mapping, Sequence, Set
from pathlib import Path

from autograder.grades.gradestable import write_grades_csv
from autograder.grades.merge import annotate
from autograder.grading.problemset import ProblemSet
from autograder.grading.quoted import QuotedNumber
from autograder.grading.record import Record, RecordError, load_record, load_records, save_record
from autograder.intake.collect import Submission, Unmatched
from autograder.intake.late import LatePolicy, load_policy
from autograder.pages.feedback import feedback_html, marking_scheme_html
from autograder.pages.report import report_html
from autograder.pages.visibility import Visibility, load_visibility
from autograder.run.task import failed_record

__all__ = ["OutputWriter", "rewrite_merged", "write_atomic", "inert"]


def write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class OutputWriter:
    """The single writer of the output folder and, when asked, of the course gradebook.

    Parameters
    ----------
    ps : ProblemSet
    out : Path
        The output folder.
    fingerprint : str
        The grader's fingerprint (:func:`autograder.run.task.grader_fingerprint`), kept in records.
    gradebook : autograder.gradebook.writer.GradebookWriter, optional
        Results go there too, in batches: one transaction per :attr:`BATCH` results or per
        :attr:`BATCH_S` seconds, whichever comes first. A result's record (which marks it done
        for a resumed run) is written only after its batch is in the gradebook, so an
        interrupted run leaves no record without its gradebook entry; :meth:`flush` writes the
        last batch and the coordinator calls it even when interrupted.
    visibility : autograder.pages.visibility.Visibility, optional
        What the feedback shows of hidden checks (default: the course's setting for the problem
        set, :func:`autograder.pages.visibility.load_visibility`).
    policy : autograder.intake.late.LatePolicy, optional
        The late policy (default: the course's, :func:`autograder.intake.late.load_policy`); each
        record keeps its file's LMS ids (``lms``), time (``submitted_at``) and lateness
        (``late``), and ``grades.csv`` its penalty.
    """

    BATCH = 64
    BATCH_S = 2.0

    def __init__(
        self,
        ps: ProblemSet,
        out: Path,
        fingerprint: str,
        gradebook=None,
        visibility: Visibility | None = None,
        policy: LatePolicy | None = None,
    ):
        self.ps, self.out, self.fingerprint, self.gradebook = ps, out, fingerprint, gradebook
        self.visibility = visibility or load_visibility(ps.name, course=ps.course)
        self.policy = policy or load_policy(course=ps.course)
        self._pending: list[tuple[Record, Submission, Mapping[str, bytes | None] | None]] = []
        self._assessed: set[str] = set()  # students whose lateness this run assessed
        self._since = time.monotonic()

    def record_path(self, student: str) -> Path:
        return self.out / "records" / f"{student}.json"

    def students(self) -> set[str]:
        """Students with a record of this problem set in the output folder."""
        return {r.student_id for r in self._records()}

    def is_current(self, sub: Submission) -> bool:
        try:
            old = load_record(self.record_path(sub.student_id))
        except (OSError, RecordError):
            return False
        return (
            old.sha256 == sub.sha256 and old.fingerprint == self.fingerprint and old.status.scored
        )  # a grader's fault is tried again

    def write(self, record: Record, sub: Submission) -> None:
        """Write one result: its feedback, the gradebook (batched) and, last, its record."""
        copies = record.copies
        record = dataclasses.replace(
            record,
            fingerprint=self.fingerprint,
            origin=sub.origin,
            lms=sub.lms,
            submitted_at=sub.submitted_at,
            copies=None,
            code=None,
            late=self.policy.for_problem_set(self.ps.name).assess(
                sub.student_id, sub.submitted_at, bool(sub.lms and sub.lms.late)
            ),
        )
        self._assessed.add(sub.student_id)
        if self.gradebook is None:
            self._write_files(record)
            return
        self._pending.append((record, sub, copies))
        if len(self._pending) >= self.BATCH or time.monotonic() - self._since >= self.BATCH_S:
            self.flush()

    def flush(self) -> None:
        """Put the pending results into the gradebook in one transaction, then write them."""
        pending, self._pending = self._pending, []
        self._since = time.monotonic()
        if not pending:
            return
        self.gradebook.record_many(
            [(r, c) for r, _, c in pending if r.status.scored]
        )  # a grader's fault is no score
        for record, _, _ in pending:
            self._write_files(record)

    def _write_files(self, record: Record) -> None:
        stem = Path(self.ps.notebook_name).stem
        write_atomic(
            self.out / "feedback" / record.student_id / f"{stem}.html",
            feedback_html(record, self.visibility),
        )
        # Last: the record marks the submission as done for a resumed run.
        save_record(record, self.record_path(record.student_id))

    def write_unmatched(self, missing: Unmatched) -> bool:
        """Record a student whose files hold no gradable notebook (a row that names them and
        says why: ``unmatched`` or ``unreadable-file``).

        A grade recorded earlier for that student is kept: a run on another archive (or on a
        download whose copy of their file is damaged) never replaces a real submission's grade.
        Returns whether the row was written (False: an earlier grade was kept).
        """
        try:
            if load_record(self.record_path(missing.student_id)).status.file_read:
                return False
        except (OSError, RecordError):
            pass
        why = f"{missing.reason}: {', '.join(missing.files)}"
        sub = Submission(missing.student_id, b"", ", ".join(missing.files), missing.lms)
        record = failed_record(self.ps, sub, f"not graded, {why}", missing.status)
        self._write_files(
            dataclasses.replace(
                record, fingerprint=self.fingerprint, origin=sub.origin, lms=missing.lms
            )
        )
        return True

    def _records(self) -> list[Record]:
        return load_records(self.out / "records", self.ps.name)

    def finish(
        self, absent: Set[str] = frozenset(), quoted: Sequence[QuotedNumber] = ()
    ) -> list[Record]:
        """Write ``grades.csv``, the report and the marking scheme from every record.

        ``absent`` students (graded before, no file in this run's input) keep their row, with a
        note saying so; ``quoted``, the written answers stating another student's numbers, are
        listed in the report. Returns every record of the problem set in the folder.
        """
        self.flush()
        records = self._records()
        # The hand-graded scores: the gradebook's when this run writes it, else the records'
        # (as the last `export` merged them); no score is shown where the grader failed.
        merged = annotate(
            records,
            self.ps.name,
            self.gradebook.course if self.gradebook is not None else None,
            self.policy,
            assessed=self._assessed,
        )
        # The feedback states what grades.csv states: a record the merge changed (hand-graded
        # scores, a status now "graded", lateness) is written again with its page.
        for record, now in zip(records, merged):
            if now != record:
                self._write_files(now)
        write_grades_csv(
            merged, [c.grade_id for c in self.ps.grade_cells], self.out / "grades.csv", absent
        )
        rubric = self.ps.course.rubric(self.ps.name)
        if rubric.is_file():
            write_atomic(
                self.out / "marking-scheme.html",
                marking_scheme_html(self.ps.name, rubric.read_text(encoding="utf-8"), merged),
            )
        write_atomic(
            self.out / "report.html",
            report_html(
                self.ps.name,
                records,
                rubric.is_file(),
                (self.out / "similarity.html").is_file(),
                quoted,
            ),
        )
        return records


def rewrite_merged(ps: ProblemSet, out: Path, merged: list[Record], visibility: Visibility) -> None:
    """Write ``merged`` records (hand-graded scores and lateness merged in,
    :func:`autograder.grades.merge.annotate`) back into the output folder ``out``: each record
    and its feedback page, then ``grades.csv``, so that they state the same scores."""
    stem = Path(ps.notebook_name).stem
    for record in merged:
        save_record(record, out / "records" / f"{record.student_id}.json")
        write_atomic(
            out / "feedback" / record.student_id / f"{stem}.html", feedback_html(record, visibility)
        )
    write_grades_csv(merged, [c.grade_id for c in ps.grade_cells], out / "grades.csv")


def inert(text: str) -> str:
    """A CSV field a spreadsheet shows as text: one that starts like a formula gets a quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text
