"""The instructor's loop end to end, with the commands grading.md gives, on problem set 3.

From one Canvas-style download (on time, late, renamed, and two copies of one notebook):
release → grade (sandboxed, ``--gradebook``) → hand-grading through the formgrader's REST API →
export → a dry-run regrade and a real one after a check's tolerance changed. At each step the
gradebook (read through nbgrader's API), ``grades.csv`` and every export agree; the late penalty
is its own column; the regrade diff names exactly the students the change affects; hand-grading
survives the regrade.

The commands run in a copy of the project's code (``autograder``, ``solutions``, ``coursedata``
and the course) so the tolerance can be changed in the copy's check without touching the
checkout; the copy grades exactly as the checkout does (same fingerprint until the change).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.grading.problemset import ProblemSet
from autograder.sandbox import sandbox_available
from tests import ROOT
from tests import submissions as sb
from tests.autograder.commands.test_instructor_commands import BARE_ENV, _free_port, _request
from tests.autograder.intake.test_lms import GRADESCOPE_SCHEMA, NB, PS, WRITTEN
from tests.autograder.intake.test_lms import WRONG as WRONG_SIGMA
from tests.environment import require

AVAILABLE, REASON = sandbox_available()
pytestmark = require(AVAILABLE, f"no sandbox here: {REASON}")

#: The check's declaration lives in the source notebook: σ̂'s tolerance, strict and loosened.
CHECK = "course/source/ps3_mle/ps3_mle.ipynb"
STRICT = '"name": "σ̂ (divisor N)",\n        "rtol": 1e-08'
LOOSE = '"name": "σ̂ (divisor N)",\n        "rtol": 0.5'
POLICY = """
[ps3_mle]
deadline = 2026-11-20T23:59:00+00:00
percent_per_day = 10
cap_percent = 50
"""
#: When the download was made, after the deadline: Canvas stamps every member with it
#: (canvas-lms ``lib/content_zipper.rb`` writes each file with ``get_output_stream(filename)``,
#: no time, and rubyzip's ``Zip::Entry`` defaults to ``::Zip::DOSTime.now``, rubyzip
#: ``lib/zip/entry.rb``): only Canvas's ``LATE`` mark says who is late.
DOWNLOADED = (2026, 11, 24, 10, 0, 0)
# name in the download -> (notebook, time in the archive)
DOWNLOAD = {
    "doejane_101_5001_ps3_mle.ipynb": ("correct", DOWNLOADED),
    "roejohn_LATE_102_5002_ps3_mle.ipynb": ("correct", DOWNLOADED),
    "leeann_103_5003_homework3.ipynb": ("wrong", DOWNLOADED),  # renamed
    "kimbo_104_5004_ps3_mle.ipynb": ("blank", DOWNLOADED),  # an older copy
    # the newer one: Canvas adds -1 to a resubmission's name; the sort of paths picks it
    "kimbo_104_5005_ps3_mle-1.ipynb": ("correct", DOWNLOADED),
}
MANUAL = {"doejane-101": {"lagrange_derivation": 4.0, "bias_derivation": 2.5},
          "roejohn-102": {"lagrange_derivation": 3.0, "bias_derivation": 3.0},
          "leeann-103": {"lagrange_derivation": 1.0, "bias_derivation": 0.0}}
# kimbo's written answers stay ungraded: kimbo has no final score anywhere.


def run(code: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """``python -m autograder ARGS`` in the code copy, with the environment not activated."""
    done = subprocess.run([sys.executable, "-m", "autograder", *args], cwd=code,
                          env=BARE_ENV, capture_output=True, text=True, timeout=timeout)
    return done


#: Their users are slow (tests/conftest.py): the instructor's whole loop, graded.
SLOW_FIXTURES = ("loop",)


@pytest.fixture(scope="module")
def loop():
    # Under /var/tmp, not /tmp: the sandbox's /tmp is private, so the copy's coursedata (which
    # the kernels import) must live elsewhere.
    # Readable by others (mkdtemp's folder is not): the sandboxed kernels import the copy's
    # coursedata as another user.
    with tempfile.TemporaryDirectory(dir="/var/tmp", prefix="instructor-loop-") as tmp:
        os.chmod(tmp, 0o755)
        yield _setup(Path(tmp))


def _setup(base: Path):
    code = base / "code"
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "release", "submitted", "autograded",
                                  "feedback", "gradebook.db", "exchange", ".nbgrader.log")
    for folder in ("autograder", "coursesite", "solutions", "coursedata", "course"):
        shutil.copytree(ROOT / folder, code / folder, ignore=skip)
    (code / "kit").mkdir()
    shutil.copy(ROOT / "kit" / "pyproject.toml", code / "kit")
    shutil.copy(ROOT / "_config.yml", code)
    course = code / "course"
    (course / "late.toml").write_text(POLICY)
    return base, code, course


def _download(loop) -> Path:
    base, code, course = loop
    builder = sb.Builder(ProblemSet(PS).path, course / "release" / PS / NB)
    notebooks = {"correct": builder.correct(), "blank": builder.blank(),
                 "wrong": sb.replace(builder.correct(), *WRONG_SIGMA)}
    # beside the code, not around it: the sandbox hides the download's folder from students
    (base / "download").mkdir()
    path = base / "download" / "canvas-download.zip"
    with zipfile.ZipFile(path, "w") as z:
        for name, (kind, when) in DOWNLOAD.items():
            z.writestr(zipfile.ZipInfo(name, when), sb.to_bytes(notebooks[kind]))
    return path


def gradebook_scores(course: Path) -> dict[str, dict[str, dict]]:
    """Per student and cell: nbgrader's score, manual score and needs_manual_grade."""
    from nbgrader.api import Gradebook

    out = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for sub in gb.assignment_submissions(PS):
            nb = gb.find_submission_notebook(Path(NB).stem, PS, sub.student.id)
            out[sub.student.id] = {g.name: {"score": g.score, "manual": g.manual_score,
                                            "needs": g.needs_manual_grade} for g in nb.grades}
    return out


def grades_csv(out: Path) -> dict[str, dict[str, str]]:
    with (out / "grades.csv").open(newline="", encoding="utf-8") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def assert_gradebook_agrees(course: Path, out: Path) -> None:
    """Every cell of grades.csv is nbgrader's ``Grade.score`` (empty where it is None)."""
    book, table = gradebook_scores(course), grades_csv(out)
    assert set(book) == set(table)
    for student, cells in book.items():
        for cell, grade in cells.items():
            shown = table[student][cell]
            if grade["score"] is None or (cell in WRITTEN and grade["manual"] is None):
                assert shown == "", (student, cell)
            else:
                assert float(shown) == pytest.approx(grade["score"]), (student, cell)


def assert_exports_agree(out: Path) -> None:
    """grades.csv's final column is every export's score (empty where it is not final)."""
    table = grades_csv(out)
    exports = out / "exports"
    with (exports / "canvas.csv").open(newline="") as f:
        canvas = list(csv.reader(f))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Problem set 3 (4242)"]
    assert canvas[1][0] == "Points Possible"
    ids = {"doejane-101": "101", "roejohn-102": "102", "leeann-103": "103", "kimbo-104": "104"}
    by_id = {row[1]: row[5] for row in canvas[2:]}
    with (exports / "moodle-gradebook.csv").open(newline="") as f:
        moodle = {row[0]: row for row in list(csv.reader(f))[1:]}
    for student, row in table.items():
        assert by_id[ids[student]] == row["final"], student
        assert moodle[student][1] == row["final"] and moodle[student][2] == (
            row["late_penalty"] if row["final"] else "")
        results = json.loads((exports / "gradescope" / student / "results.json").read_text())
        jsonschema.validate(results, GRADESCOPE_SCHEMA)
        if row["final"]:
            assert results["score"] == pytest.approx(float(row["final"]))
    with zipfile.ZipFile(exports / "feedback-canvas.zip") as z:
        names = z.namelist()
        assert len(names) == len(table)
        for name in names:
            user, attachment = [p for p in name.split("_") if p.isdigit()][:2]
            assert user in ids.values() and attachment.startswith("500")


def assert_feedback_agrees(out: Path) -> None:
    """Every feedback page states its grades.csv row: the hand-graded total, and whether
    written answers still wait."""
    from autograder.grades.summary import number

    for student, row in grades_csv(out).items():
        page = (out / "feedback" / student / NB.replace(".ipynb", ".html")).read_text()
        waiting = "not all graded yet" in page
        assert waiting == (row["status"] == "awaiting-manual-grading"), student
        assert f"Written answers: <b>{number(float(row['manual_total']))} / " in page, student


def test_the_instructor_loop(loop):
    base, code, course = loop
    started = time.monotonic()
    # 1. release, as written, with the environment not activated
    done = run(code, "release", PS)
    assert done.returncode == 0, done.stderr
    download = _download(loop)
    out = base / "grades" / PS

    # 2. grade into the course's gradebook
    done = run(code, "grade", PS, str(download), "--out", str(out), "--gradebook",
               "--workers", "2", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    table = grades_csv(out)
    assert set(table) == {"doejane-101", "roejohn-102", "leeann-103", "kimbo-104"}
    assert {r["status"] for r in table.values()} == {"awaiting-manual-grading"}
    assert table["roejohn-102"]["late_days"] == "1" and table["doejane-101"]["late_days"] == "0"
    assert all(r["final"] == "" for r in table.values())  # written answers not graded yet
    full = float(table["doejane-101"]["autograded_total"])
    assert float(table["kimbo-104"]["autograded_total"]) == full  # the newer copy was graded
    assert float(table["leeann-103"]["autograded_total"]) < full
    collection = (out / "collection.txt").read_text()
    assert "leeann_103_5003_homework3.ipynb: graded as ps3_mle.ipynb" in collection
    assert "kimbo_104_5004_ps3_mle.ipynb: not graded" in collection
    assert_gradebook_agrees(course, out)

    # 3. hand-grading through the formgrader's REST API
    port, token = _free_port(), "loop-token"
    server = subprocess.Popen([sys.executable, "-m", "autograder", "formgrader", "--port",
                               str(port), "--token", token], cwd=code, env=BARE_ENV,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = f"http://127.0.0.1:{port}/formgrader/api"
    try:
        for _ in range(180):
            try:
                _request(f"{api}/status", token=token)
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.5)
        _, listing = _request(f"{api}/submitted_notebooks/{PS}/{Path(NB).stem}", token=token)
        notebook_ids = {n["student"]: n["id"] for n in json.loads(listing)}
        for student, scores in MANUAL.items():
            _, grades = _request(f"{api}/grades?submission_id={notebook_ids[student]}",
                                 token=token)
            by_name = {g["name"]: g["id"] for g in json.loads(grades)}
            for cell, points in scores.items():
                status, answer = _request(f"{api}/grade/{by_name[cell]}", method="PUT",
                                          token=token,
                                          body=json.dumps({"manual_score": points}).encode())
                assert status == 200 and json.loads(answer)["manual_score"] == points
    finally:
        server.terminate()
        server.wait(timeout=30)
    book = gradebook_scores(course)
    assert book["doejane-101"]["bias_derivation"] == {"score": 2.5, "manual": 2.5, "needs": False}

    # 4. export: hand-graded scores merged; every file agrees
    done = run(code, "export", PS, "--out", str(out), "--lms-name", "Problem set 3",
               "--canvas-id", "4242")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kimbo-104: left empty, written answers not graded yet" in done.stderr
    table = grades_csv(out)
    assert float(table["doejane-101"]["final"]) == full + 6.5
    roejohn = (full + 6.0) * 0.9  # marked late by Canvas: one day, 10 % a day
    assert float(table["roejohn-102"]["late_penalty"]) == pytest.approx((full + 6.0) * 0.1)
    assert float(table["roejohn-102"]["final"]) == pytest.approx(roejohn)
    assert table["kimbo-104"]["final"] == "" and table["kimbo-104"]["manual_total"] == "0"
    assert table["doejane-101"]["status"] == "graded"  # every written answer has its score
    assert table["kimbo-104"]["status"] == "awaiting-manual-grading"
    assert_gradebook_agrees(course, out)
    assert_exports_agree(out)
    page = (out / "feedback" / "roejohn-102" / "ps3_mle.html").read_text()
    assert "Late penalty" in page and "marked late" in page  # Canvas's mark decided
    before_leeann = float(table["leeann-103"]["final"])

    # 5. a check's tolerance changes: the dry run names exactly the students it affects
    check = code / CHECK
    source = check.read_text()
    assert source.count(STRICT) == 1
    check.write_text(source.replace(STRICT, LOOSE))
    snapshot = {p: p.read_bytes() for p in [out / "grades.csv", course / "gradebook.db",
                                             *sorted((out / "records").glob("*.json"))]}
    done = run(code, "grade", PS, str(download), "--out", str(out), "--gradebook",
               "--workers", "2", "--quiet", "--dry-run")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "regrade: 1 student(s) change, 3 unchanged"
    assert lines[1].startswith("  leeann-103: ") and "gaussian_mle" in lines[1]
    assert "dry run: nothing written" in done.stdout
    assert all(p.read_bytes() == data for p, data in snapshot.items())

    # 6. the real regrade writes the same diff; hand-grading is kept
    done = run(code, "grade", PS, str(download), "--out", str(out), "--gradebook",
               "--workers", "2", "--quiet")
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[:2] == lines[:2]
    book = gradebook_scores(course)
    for student, scores in MANUAL.items():
        for cell, points in scores.items():
            assert book[student][cell] == {"score": points, "manual": points, "needs": False}
    assert book["kimbo-104"]["bias_derivation"]["needs"] is True
    table = grades_csv(out)
    assert table["doejane-101"]["status"] == "graded"  # the gradebook's hand-grading, merged
    assert float(table["leeann-103"]["final"]) > before_leeann
    assert float(table["doejane-101"]["final"]) == full + 6.5  # unchanged
    assert_gradebook_agrees(course, out)
    assert_feedback_agrees(out)  # the regrade's pages, before any export
    assert_exports_agree(out)  # exported again with the last export's settings
    done = run(code, "export", PS, "--out", str(out), "--lms-name", "Problem set 3",
               "--canvas-id", "4242")
    assert done.returncode == 0, done.stdout + done.stderr
    assert_gradebook_agrees(course, out)
    assert_exports_agree(out)
    print(f"instructor loop: {time.monotonic() - started:.0f} s")
