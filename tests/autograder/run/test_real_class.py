"""A real class's download, graded end to end: every student keeps their own row, and the course
chosen with ``--course`` governs every course file.

The download is built here the way real ones go wrong: archive members damaged in their bytes
(a flipped byte under a stored member's checksum, a deflate stream that no longer decodes), a
header that understates a member's size, an empty file, a member far over the size limit, and two
students with one Canvas name (``smithjohn``) and different user ids, one with a correct notebook
and one blank. They are graded together with honest submissions by ``python -m autograder
grade`` in the sandbox, then exported. The damage is made with :mod:`tests.autograder.intake.test_collect`'s
helpers, which edit the zip format's documented fields (APPNOTE.TXT: the local header's sizes at
offset 22, the central directory's at 24).
"""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.grading.problemset import ProblemSet
from autograder.sandbox import sandbox_available
from tests import ROOT
from tests import submissions as sb
from tests.autograder.intake.test_collect import (
    _canvas_zip,
    break_stream,
    flip_data,
    understate_size,
)
from tests.environment import require
from tests.psharness import generate_release

AVAILABLE, REASON = sandbox_available()
pytestmark = require(AVAILABLE, f"no sandbox here: {REASON}")
PS, NB = "ps3_mle", "ps3_mle.ipynb"
WRONG = ("gaussian_mle", "sigma = np.sqrt(np.sum((x - mu) ** 2) / x.size)",
         "sigma = np.sqrt(np.sum((x - mu) ** 2) / (x.size - 1))")
DAMAGED = {"crcann-102": "checksum", "zlibbob-103": "compressed data does not decode",
           "shortcat-104": "damaged", "bigeve-106": "over the 50 MB limit",
           "emptydan-105": "the file is empty"}


#: Their users are slow (tests/conftest.py): an nbgrader release, then grading runs.
SLOW_FIXTURES = ("course_a",)


@pytest.fixture(scope="module")
def course_a(tmp_path_factory) -> Path:
    """A released copy of the course."""
    root = tmp_path_factory.mktemp("course-a")
    generate_release([PS], root)
    shutil.copytree(ROOT / "course" / "rubrics", root / "rubrics")
    return root


@pytest.fixture(scope="module")
def notebooks(course_a) -> dict[str, bytes]:
    builder = sb.Builder(ProblemSet(PS).path, course_a / "release" / PS / NB)
    return {"correct": sb.to_bytes(builder.correct()), "blank": sb.to_bytes(builder.blank()),
            "wrong": sb.to_bytes(sb.replace(builder.correct(), *WRONG))}


def grade(download: Path, out: Path, course: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade", PS, str(download),
                           "--out", str(out), "--workers", "2", "--quiet", "--course",
                           str(course)], cwd=ROOT, capture_output=True, text=True, timeout=900)


def rows(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_a_damaged_download_with_shared_names_grades_every_student_on_their_own_row(
        tmp_path, course_a, notebooks):
    good = notebooks["correct"]
    members = {
        "doejane_101_5001_ps3_mle.ipynb": good,
        "crcann_102_5002_ps3_mle.ipynb": good,
        "zlibbob_103_5003_ps3_mle.ipynb": good,
        "shortcat_104_5004_ps3_mle.ipynb": good,
        "emptydan_105_5005_ps3_mle.ipynb": b"",
        "bigeve_106_5006_ps3_mle.ipynb": b" " * (51 * 2**20),
        "smithjohn_107_5007_ps3_mle.ipynb": good,
        "smithjohn_108_5008_ps3_mle.ipynb": notebooks["blank"],
    }
    raw = _canvas_zip(members, stored=("crcann_102_5002_ps3_mle.ipynb",))
    flip_data(raw, "crcann_102_5002_ps3_mle.ipynb")
    break_stream(raw, "zlibbob_103_5003_ps3_mle.ipynb")
    understate_size(raw, "shortcat_104_5004_ps3_mle.ipynb", 1000)
    (tmp_path / "download").mkdir()
    download = tmp_path / "download" / "canvas.zip"
    download.write_bytes(bytes(raw))
    out = tmp_path / "out"

    done = grade(download, out, course_a)
    assert done.returncode == 1, done.stdout + done.stderr  # students need attention
    assert "Traceback" not in done.stderr
    assert "5 handed in a file that could not be read" in done.stderr
    table = rows(out / "grades.csv")
    assert set(table) == {"doejane-101", "smithjohn-107", "smithjohn-108", *DAMAGED}
    full = float(table["doejane-101"]["autograded_max"])
    assert float(table["doejane-101"]["autograded_total"]) == full > 0
    assert float(table["smithjohn-107"]["autograded_total"]) == full
    assert float(table["smithjohn-108"]["autograded_total"]) == 0  # the blank one: their own
    collection = (out / "collection.txt").read_text()
    for student, reason in DAMAGED.items():
        assert table[student]["status"] == "unreadable-file", student
        assert reason in table[student]["notes"], student
        assert table[student]["final"] == ""  # no grade until the file is handed in again
        assert reason in collection
        page = (out / "feedback" / student / "ps3_mle.html").read_text()
        assert "could not be read" in page and "not a mark against your work" in page

    done = subprocess.run([sys.executable, "-m", "autograder", "export", PS, "--out", str(out),
                           "--course", str(course_a), "--canvas-id", "4242"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with (out / "exports" / "canvas.csv").open(newline="") as f:
        canvas = {row[1]: row for row in list(csv.reader(f))[2:]}
    assert set(canvas) == {"101", "102", "103", "104", "105", "106", "107", "108"}
    assert canvas["107"][0] == canvas["108"][0] == "smithjohn"  # the name; the ID tells them apart
    scores = {user: json.loads((out / "exports" / "gradescope" / f"smithjohn-{user}" /
                                "results.json").read_text())["tests"] for user in ("107", "108")}
    earned = {user: sum(t["score"] for t in tests) for user, tests in scores.items()}
    assert earned == {"107": full, "108": 0}
    with zipfile.ZipFile(out / "exports" / "feedback-canvas.zip") as z:
        names = z.namelist()
    assert any(n.startswith("smithjohn_107_5007_") for n in names)
    assert any(n.startswith("smithjohn_108_5008_") for n in names)


def _course_b(course_a: Path, base: Path) -> Path:
    """Course A with other points for a check, a late policy, a rubric and hidden feedback."""
    root = base / "course-b"
    shutil.copytree(course_a, root, ignore=shutil.ignore_patterns("gradebook.db"))
    path = root / "source" / PS / NB
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "gaussian_mle_hidden":
            cell.metadata.nbgrader.points = 5
    nbformat.write(nb, path)
    (root / "late.toml").write_text(f"[{PS}]\ndeadline = 2026-11-19T23:59:00+00:00\n"
                                    f"percent_per_day = 10\ncap_percent = 50\n")
    (root / "feedback.toml").write_text(f'[{PS}]\nhidden = "none"\n')
    rubric = root / "rubrics" / f"{PS}.md"
    rubric.write_text(rubric.read_text().replace("marking scheme", "marking scheme of term B", 1))
    return root


def test_each_course_folder_grades_with_its_own_points_policies_and_rubric(
        tmp_path, course_a, notebooks):
    course_b = _course_b(course_a, tmp_path)
    (tmp_path / "download").mkdir()
    download = tmp_path / "download" / "canvas.zip"
    with zipfile.ZipFile(download, "w") as z:
        # marked late by Canvas (whose zip times are the download's, after the deadline too)
        for name, kind in (("doejane_LATE_101_5001_ps3_mle.ipynb", "correct"),
                           ("leeann_103_5003_ps3_mle.ipynb", "wrong")):
            z.writestr(zipfile.ZipInfo(name, (2026, 11, 20, 12, 0, 0)), notebooks[kind])
    tables, pages = {}, {}
    for tag, course in (("a", course_a), ("b", course_b)):
        out = tmp_path / f"out-{tag}"
        done = grade(download, out, course)
        assert done.returncode == 0, done.stdout + done.stderr
        tables[tag] = rows(out / "grades.csv")
        pages[tag] = {"scheme": (out / "marking-scheme.html").read_text(),
                      "feedback": (out / "feedback" / "leeann-103" / "ps3_mle.html").read_text()}
    a, b = tables["a"], tables["b"]
    assert float(b["doejane-101"]["autograded_max"]) == float(a["doejane-101"]["autograded_max"]) + 3
    assert float(b["doejane-101"]["gaussian_mle_hidden"]) == 5
    assert float(a["doejane-101"]["gaussian_mle_hidden"]) == 2
    assert a["doejane-101"]["late_days"] == "0" and b["doejane-101"]["late_days"] == "1"
    assert "term B" in pages["b"]["scheme"] and "term B" not in pages["a"]["scheme"]
    withheld = "The details of this hidden check are not shown yet."
    assert withheld in pages["b"]["feedback"] and withheld not in pages["a"]["feedback"]
