"""The coordinator's writer: the gradebook and ``grades.csv`` agree, batches lose nothing.

Records are made the way :func:`autograder.run.task.failed_record` makes them (real problem set, real
grade cells), with scores varied per student; the gradebook is a real nbgrader gradebook of a
temporary copy of the course, read back through nbgrader's own API.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import warnings

import pytest
from nbgrader.api import Gradebook

from autograder.gradebook.writer import GradebookWriter
from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record
from autograder.intake.collect import Collection, Submission, Unmatched
from autograder.run.batch import _roster_notes
from autograder.run.output import OutputWriter
from autograder.run.schedule import _Flight, _with_wait
from autograder.run.task import failed_record
from autograder.status import Status
from tests.psharness import generate_release

PS = ProblemSet("ps1_pca")


#: Their users are slow (tests/conftest.py): an nbgrader release.
SLOW_FIXTURES = ("course",)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    generate_release([PS.name], root)
    return root


def _record(student: str, k: int) -> tuple[Record, Submission]:
    """A record whose autograded cells score ``k``-dependent points (never above the maximum)."""
    sub = Submission(student, f"notebook of {student}".encode(), f"{student}/{PS.notebook_name}")
    record = failed_record(PS, sub, "unused", Status.AWAITING_MANUAL)
    scores = [dataclasses.replace(score, points=float((i + k) % (int(score.max_points) + 1)),
                                  message=f"cell {i} of {student}")
              if score.points is not None else score for i, score in enumerate(record.scores)]
    return dataclasses.replace(record, scores=tuple(scores), copies=None), sub


def _gradebook_scores(course) -> dict[str, dict[str, float | None]]:
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {}
        for sub in gb.assignment_submissions(PS.name):
            nb = gb.find_submission_notebook(PS.name, "ps1_pca", sub.student_id)
            out[sub.student_id] = {g.name: g.auto_score for g in nb.grades}
        return out


def _csv_scores(out) -> dict[str, dict[str, float | None]]:
    with (out / "grades.csv").open() as f:
        rows = list(csv.DictReader(f))
    return {r["student_id"]: {c.grade_id: float(r[c.grade_id]) if r[c.grade_id] else None
                              for c in PS.grade_cells} for r in rows}


def test_batched_gradebook_agrees_with_grades_csv(course, tmp_path):
    gradebook = GradebookWriter(PS, course)
    writer = OutputWriter(PS, tmp_path, "fp", gradebook)
    writer.BATCH = 4
    expected = {}
    for k in range(11):
        record, sub = _record(f"s{k:02d}", k)
        writer.write(record, sub)
        expected[sub.student_id] = {s.grade_id: s.points for s in record.scores}
    writer.finish()
    gradebook.close()
    in_gradebook = _gradebook_scores(course)
    assert {s: in_gradebook[s] for s in expected} == expected
    assert _csv_scores(tmp_path) == expected
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        nb = gb.find_submission_notebook(PS.name, "ps1_pca", "s03")
        manual = {g.name: g.needs_manual_grade for g in nb.grades if g.auto_score is None}
        assert manual and all(manual.values()), "written answers wait for a human"


def test_an_interrupted_batch_leaves_no_record_without_its_gradebook_entry(course, tmp_path):
    gradebook = GradebookWriter(PS, course)
    real = gradebook.record_many
    calls = []

    def failing(items):
        calls.append(len(items))
        if len(calls) == 2:
            raise KeyboardInterrupt  # the instructor presses Ctrl-C mid-transaction
        return real(items)

    gradebook.record_many = failing
    writer = OutputWriter(PS, tmp_path, "fp", gradebook)
    writer.BATCH = 3
    subs = []
    with pytest.raises(KeyboardInterrupt):
        for k in range(7):
            record, sub = _record(f"i{k}", k)
            subs.append(sub)
            writer.write(record, sub)
    gradebook.close()
    written = {p.stem for p in (tmp_path / "records").glob("*.json")}
    in_gradebook = set(_gradebook_scores(course))
    assert written == {"i0", "i1", "i2"}, "only the committed batch is marked done"
    assert written <= in_gradebook
    assert not in_gradebook & {"i3", "i4", "i5"}, "the failed transaction was rolled back"
    # A resumed run skips the committed batch and grades the interrupted one again.
    resumed = OutputWriter(PS, tmp_path, "fp", None)
    assert [s.student_id for s in subs if not resumed.is_current(s)] == ["i3", "i4", "i5"]


def test_absent_and_new_students_are_reported_and_absent_rows_kept(tmp_path):
    writer = OutputWriter(PS, tmp_path, "fp", None)
    for k, student in enumerate(["ann", "ben", "cat"]):
        writer.write(*_record(student, k))
    found = Collection([Submission("ann", b"x", "ann"), Submission("dan", b"x", "dan")],
                       [Unmatched("eve", ("eve/notes.txt",), "no notebook")], [])
    absent, notes = _roster_notes(found, writer.students())
    assert absent == {"ben", "cat"}
    assert any("new since the last run" in n and "dan, eve" in n for n in notes)
    assert any("ben, cat" in n and "earlier grades are kept" in n for n in notes)
    writer.finish(absent)
    with (tmp_path / "grades.csv").open() as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert rows["ben"]["notes"].startswith("no file in the latest run's input")
    assert not rows["ann"]["notes"].startswith("no file")
    assert _roster_notes(found, set()) == (set(), []), "a first run has nothing to report"


def test_waiting_time_is_measured_from_hand_out_to_start():
    flight = _Flight(Submission("a", b"", ""), deadline=0.0, alone=False)
    record = Record("a", PS.name, Status.AWAITING_MANUAL, (), started_at=flight.handed_out + 2.5,
                    timings={"execute_s": 1.0})
    timings = _with_wait(record, flight).timings
    assert timings == {"wait_s": 2.5, "execute_s": 1.0}
    crashed = Record("a", PS.name, Status.CRASHED, ())
    assert _with_wait(crashed, flight) == crashed


def test_records_stay_plain_json(tmp_path):
    writer = OutputWriter(PS, tmp_path, "fp", None)
    record, sub = _record("zed", 1)
    writer.write(record, sub)
    saved = json.loads((tmp_path / "records" / "zed.json").read_text())
    assert saved["status"] == "awaiting-manual-grading" == Status.AWAITING_MANUAL
    assert "copies" not in saved
