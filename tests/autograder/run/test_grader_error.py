"""A fault of the grader is never a student's zero: a deliberately broken check gives the
submission the status ``grader-error``, keeps its traceback for the instructor (the record, the
report, the log) and out of the student's feedback, shows no score in ``grades.csv``, makes the
command exit non-zero, and is graded again on the next run."""

from __future__ import annotations

import csv
import json

import pytest

import autograder.run.batch as batch
import autograder.run.output as output
from autograder.__main__ import main
from autograder.grading.problemset import ProblemSet
from autograder.intake.collect import Submission
from autograder.run.output import OutputWriter
from autograder.run.task import GradingOptions, grade_task

PS = ProblemSet("ps1_pca")
pytestmark = pytest.mark.slow  # one real (unsandboxed) kernel: the reference notebook


def _broken(answers):
    return {"center": 1}["centre"]  # a mistyped case name in the check


@pytest.fixture(scope="module")
def record():
    checks = __import__("course.checks.ps1_pca", fromlist=["CHECKS"]).CHECKS
    with pytest.MonkeyPatch.context() as patch:  # a hand-written check wins over the declared one
        patch.setitem(checks, "center_hidden", _broken)
        return grade_task(PS.name, "alice", PS.path.read_bytes(), GradingOptions(unsafe=True))


def test_a_broken_check_is_a_grader_error_with_the_traceback_for_the_instructor(record):
    assert record.status == "grader-error"
    assert "KeyError: 'centre'" in record.grader_error and "_broken" in record.grader_error
    by_id = {s.grade_id: s for s in record.scores}
    broken = by_id["center_hidden"]
    assert "Traceback" not in broken.message and "centre" not in broken.message
    assert "fault in the grader" in broken.message
    others = [s for g, s in by_id.items() if g != "center_hidden" and s.points is not None]
    assert all(s.points == s.max_points for s in others), "the other cells are graded"


def test_the_outputs_show_no_score_and_keep_the_traceback_from_the_student(record, tmp_path):
    writer = OutputWriter(PS, tmp_path, "fp", None)
    sub = Submission("alice", PS.path.read_bytes(), "alice/ps1_pca.ipynb")
    writer.write(record, sub)
    writer.finish()
    [row] = list(csv.DictReader((tmp_path / "grades.csv").open()))
    assert row["status"] == "grader-error"
    assert row["autograded_total"] == "" and row["center_visible"] == ""
    feedback = (tmp_path / "feedback" / "alice" / "ps1_pca.html").read_text()
    assert "Traceback" not in feedback and "centre" not in feedback
    assert "KeyError: &#x27;centre&#x27;" in (tmp_path / "report.html").read_text() or \
        "KeyError: 'centre'" in (tmp_path / "report.html").read_text()
    assert not writer.is_current(sub), "a grader error is graded again on the next run"
    saved = json.loads(writer.record_path("alice").read_text())
    assert saved["grader_error"] == record.grader_error
    # The written answers' marking scheme is one click from the report, never in the feedback.
    assert "href='marking-scheme.html'" in (tmp_path / "report.html").read_text()
    scheme = (tmp_path / "marking-scheme.html").read_text()
    assert "derivation" in scheme and "Model answer" in scheme
    assert "Model answer" not in feedback


def test_the_command_exits_non_zero_and_names_the_report(record, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(batch, "grade_class", lambda *a, **k: [record])
    code = main(["grade", PS.name, str(tmp_path), "--out", str(tmp_path / "out"), "--unsafe",
                 "--quiet"])
    assert code == 3
    assert "the grader failed on 1 submission" in capsys.readouterr().err


@pytest.mark.parametrize("text", ["=HYPERLINK(\"http://x\")", "+1", "-2+3", "@SUM(A1)"])
def test_a_note_that_looks_like_a_formula_stays_text_in_the_spreadsheet(text):
    assert output.inert(text) == "'" + text
    assert output.inert("your cell 'f' raised =1") == "your cell 'f' raised =1"
