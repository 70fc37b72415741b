"""The term rollover, as an instructor meets it, with the commands of grading.md.

Last term, problem set 3 had no question 5 (``gamma_score``); it was released, and dave's
submission graded into the course's gradebook. This term the instructor adds the question back
(the source notebook as it is in the repository) and:

- ``release`` with the course's gradebook: nbgrader refuses to change a notebook with
  submissions; the release explains it in one line with the command to run, and the published
  release is still there;
- ``release`` with a scratch gradebook (``--db-url``, as ``make`` did) succeeds, and ``grade
  --gradebook`` then adds the new cells to the gradebook instead of crashing with a ``KeyError``;
- a gradebook whose cells the source no longer has (last term's) is refused with the same advice;
- ``new-term`` archives the gradebook, the formgrader's copies and the grading outputs, after
  which ``release`` and ``grade --gradebook`` start the new term cleanly.

Real nbgrader runs, real grading in the sandbox, in a copy of the course.
"""

from __future__ import annotations

import csv
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.settings import COURSE_DIR
from tests import ROOT

PS = "ps3_mle"
NEW_QUESTION = {"gamma_score", "gamma_score_visible", "gamma_score_hidden"}


def _run(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "autograder", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def _without_question_5(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb.cells = [c for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") not in NEW_QUESTION
                and not c.source.startswith("## Question 5")]
    return nb


def _grade_ids(db: Path, table: str) -> set[str]:
    with sqlite3.connect(db) as con:
        return {name for (name,) in con.execute(
            f"select base_cell.name from {table} join base_cell on base_cell.id = "
            f"{table}.id")}


def _dave_grades(db: Path) -> set[str]:
    with sqlite3.connect(db) as con:
        return {name for (name,) in con.execute(
            "select base_cell.name from grade join base_cell on base_cell.id = grade.cell_id "
            "join submitted_notebook on submitted_notebook.id = grade.notebook_id "
            "join submitted_assignment on submitted_assignment.id = "
            "submitted_notebook.assignment_id where submitted_assignment.student_id = 'dave'")}


@pytest.fixture(scope="module")
def last_term(tmp_path_factory):
    """A course whose gradebook holds last term's problem set 3 (no question 5) and dave's
    graded submission; its source is this term's (question 5 added)."""
    tmp = tmp_path_factory.mktemp("term")
    course = tmp / "course"
    course.mkdir()
    shutil.copy(COURSE_DIR / "nbgrader_config.py", course)
    shutil.copytree(COURSE_DIR / "source" / PS, course / "source" / PS)
    shutil.copytree(COURSE_DIR / "checks", course / "checks")
    shutil.copytree(COURSE_DIR / "rubrics", course / "rubrics")
    source = course / "source" / PS / f"{PS}.ipynb"
    this_term = source.read_bytes()
    nbformat.write(_without_question_5(nbformat.read(source, as_version=4)), source)
    # Last term's release, with nbgrader as an instructor ran it (its text still says 19
    # autograded points: the validation would refuse it, rightly, so it is not ours).
    subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", PS, "--force",
                    f"--CourseDirectory.root={course}"], cwd=course, check=True,
                   capture_output=True, env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
                                             "HOME": str(tmp)})
    released = course / "release" / PS / f"{PS}.ipynb"
    submissions = tmp / "submissions"
    (submissions / "dave").mkdir(parents=True)
    shutil.copy(released, submissions / "dave" / f"{PS}.ipynb")
    done = _run("grade", PS, submissions, "--out", tmp / "out-last", "--gradebook",
                "--course", course, "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    source.write_bytes(this_term)
    return course, submissions, released.read_bytes()


@pytest.mark.slow
def test_release_explains_the_refusal_and_keeps_the_published_release(last_term):
    course, _, published = last_term
    done = _run("release", PS, "--course", course)
    assert done.returncode == 2, done.stdout + done.stderr
    # One line, with the command to run (beside the placeholder site's banner).
    [line] = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert "holds submissions of an earlier term" in line
    assert f"python -m autograder new-term --course {course}" in line
    assert "Traceback" not in done.stderr
    assert (course / "release" / PS / f"{PS}.ipynb").read_bytes() == published
    assert not list(course.glob(".release-*")), "the scratch folder is removed"


@pytest.mark.slow
def test_grade_adds_the_new_cells_to_the_gradebook(last_term, tmp_path):
    """Released through a scratch gradebook (as make did), then graded into the course's: the
    new question's cells join the gradebook, dave gets a row, and the exit status is 0."""
    course, submissions, _ = last_term
    done = _run("release", PS, "--course", course, "--quiet",
                "--db-url", f"sqlite:///{tmp_path / 'scratch.db'}")
    assert done.returncode == 0, done.stderr
    assert "gamma_score" in (course / "release" / PS / f"{PS}.ipynb").read_text()
    assert not NEW_QUESTION & _grade_ids(course / "gradebook.db", "grade_cells")
    out = tmp_path / "out"
    done = _run("grade", PS, submissions, "--out", out, "--gradebook", "--course", course,
                "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "KeyError" not in done.stderr
    [row] = list(csv.DictReader((out / "grades.csv").open()))
    assert row["student_id"] == "dave"
    db = course / "gradebook.db"
    assert {"gamma_score_visible", "gamma_score_hidden"} <= _grade_ids(db, "grade_cells")
    assert "gamma_score" in _grade_ids(db, "solution_cells")
    assert {"gamma_score_visible", "gamma_score_hidden"} <= _dave_grades(db)
    with sqlite3.connect(db) as con:
        [(max_score,)] = con.execute("select max_score from grade_cells join base_cell on "
                                     "base_cell.id = grade_cells.id where name = "
                                     "'gamma_score_hidden'")
    assert max_score == 2.0


@pytest.mark.slow
def test_a_gradebook_of_removed_cells_is_refused_and_new_term_starts_afresh(last_term,
                                                                            tmp_path):
    course, submissions, _ = last_term
    source = course / "source" / PS / f"{PS}.ipynb"
    this_term = source.read_bytes()
    # The gradebook (from the test above, or last term's) is checked against a source without
    # a question whose cells it holds with dave's grades.
    nb = nbformat.read(source, as_version=4)
    nb.cells = [c for c in nb.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") != "gamma_mle_hidden"]
    nbformat.write(nb, source)
    done = _run("grade", PS, submissions, "--out", tmp_path / "refused", "--gradebook",
                "--course", course, "--quiet")
    source.write_bytes(this_term)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "gamma_mle_hidden" in done.stderr and "new-term --course" in done.stderr
    assert not (tmp_path / "refused" / "grades.csv").exists()

    # new-term archives the term, outputs included; then release and grade start afresh.
    out_last = course.parent / "out-last"
    archive = tmp_path / "archive-2026"
    done = _run("new-term", "--course", course, "--archive", archive, "--outputs", out_last)
    assert done.returncode == 0, done.stderr
    for name in ("gradebook.db", "submitted", "autograded"):
        assert (archive / name).exists() and not (course / name).exists(), name
    assert (archive / "outputs" / "out-last" / "grades.csv").is_file()
    assert not out_last.exists()
    assert "gradebook.db\t<- " in (archive / "MANIFEST.txt").read_text()
    assert _dave_grades(archive / "gradebook.db")  # last term's grades are kept, archived
    again = _run("new-term", "--course", course, "--archive", archive)
    assert again.returncode == 2 and "exists already" in again.stderr

    done = _run("release", PS, "--course", course, "--quiet")
    assert done.returncode == 0, done.stderr
    assert "gamma_score_hidden" in _grade_ids(course / "gradebook.db", "grade_cells")
    assert not _dave_grades(course / "gradebook.db")


@pytest.mark.slow
def test_grading_into_a_new_gradebook_leaves_the_published_release(tmp_path):
    """``grade --gradebook`` on a course whose gradebook lacks the problem set records its cells
    as the release does, without writing over the release students have."""
    course = tmp_path / "course"
    (course / "release" / PS).mkdir(parents=True)
    shutil.copy(COURSE_DIR / "nbgrader_config.py", course)
    shutil.copytree(COURSE_DIR / "source" / PS, course / "source" / PS)
    shutil.copytree(COURSE_DIR / "checks", course / "checks")
    published = course / "release" / PS / f"{PS}.ipynb"
    students_have = nbformat.read(course / "source" / PS / f"{PS}.ipynb", as_version=4)
    students_have.metadata["released"] = "with the kit's address, last week"
    nbformat.write(students_have, published)
    before = published.read_bytes()
    (tmp_path / "subs" / "erin").mkdir(parents=True)
    shutil.copy(course / "source" / PS / f"{PS}.ipynb", tmp_path / "subs" / "erin")
    done = _run("grade", PS, tmp_path / "subs", "--out", tmp_path / "out", "--gradebook",
                "--course", course, "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert published.read_bytes() == before
    assert "gamma_score_hidden" in _grade_ids(course / "gradebook.db", "grade_cells")
    assert sorted(p.name for p in course.iterdir() if p.name.startswith(".")) == []


def test_new_term_refuses_what_it_cannot_archive(tmp_path):
    """Nothing to archive, an --outputs folder that does not exist: refused, nothing moved."""
    course = tmp_path / "course"
    shutil.copytree(COURSE_DIR / "source" / PS, course / "source" / PS)
    shutil.copytree(COURSE_DIR / "checks", course / "checks")
    done = _run("new-term", "--course", course)
    assert done.returncode == 2 and "has no term to archive" in done.stderr
    (course / "gradebook.db").write_bytes(b"last term")
    done = _run("new-term", "--course", course, "--outputs", tmp_path / "grading-out" / PS)
    assert done.returncode == 2 and "no such folder (a grading run's --out)" in done.stderr
    assert (course / "gradebook.db").read_bytes() == b"last term"
    assert not (course / "archive").exists()
    done = _run("new-term", "--course", course)
    assert done.returncode == 0, done.stderr
    [archived] = (course / "archive").iterdir()
    assert archived.name.startswith("term-") and (archived / "gradebook.db").is_file()
    assert f"python -m autograder release NAME --course {course}" in done.stdout
