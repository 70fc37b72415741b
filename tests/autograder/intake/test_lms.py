"""Exports back into the LMS, each file checked against its documented format on a real batch.

One real grading run (sandboxed kernels, ``python -m autograder grade``) of three problem set 3
notebooks from a Canvas download (on time, late, and with a wrong answer); the records it
writes, with the LMS ids the download's names carry (:mod:`autograder.intake.collect`), the late policy
(:mod:`autograder.intake.late`) and hand-graded scores, feed every export. The same notebooks in a
Moodle download give the Moodle participant ids. Formats: see the docstrings of
:mod:`autograder.exports`' modules, which cite their sources.
"""

from __future__ import annotations

import copy
import csv
import json
import subprocess
import sys
import zipfile
from datetime import datetime, timezone
from pathlib import Path

import jsonschema
import pytest

from autograder.exports import (
    canvas_column,
    results_json,
    write_canvas_csv,
    write_feedback_archive,
    write_gradescope,
    write_moodle_gradebook,
    write_moodle_worksheet,
)
from autograder.grades import summarize
from autograder.grading.problemset import ProblemSet
from autograder.intake.collect import collect_submissions
from autograder.intake.late import load_policy
from autograder.pages.visibility import Visibility, load_visibility
from autograder.sandbox import sandbox_available
from tests import ROOT
from tests import submissions as sb
from tests.environment import require
from tests.psharness import generate_release

AVAILABLE, REASON = sandbox_available()
PS, NB = "ps3_mle", "ps3_mle.ipynb"
WRITTEN = ("lagrange_derivation", "bias_derivation")
WRONG = ("gaussian_mle", "sigma = np.sqrt(np.sum((x - mu) ** 2) / x.size)",
         "sigma = np.sqrt(np.sum((x - mu) ** 2) / (x.size - 1))")
DEADLINE = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)
POLICY = f"""
[{PS}]
deadline = {DEADLINE.isoformat()}
percent_per_day = 10
cap_percent = 30
"""
#: When the Canvas zip was downloaded, after the deadline: Canvas stamps every member with it
#: (canvas-lms ``lib/content_zipper.rb`` writes each file with ``get_output_stream(filename)``,
#: no time, and rubyzip's ``Zip::Entry`` defaults to ``::Zip::DOSTime.now``, rubyzip
#: ``lib/zip/entry.rb``), so only Canvas's ``LATE`` mark says who is late.
DOWNLOADED = (2026, 11, 24, 10, 0, 0)
#: Canvas file names: on time, marked LATE (one day late by the mark), a wrong answer.
CANVAS = {"doejane_101_5001_ps3_mle.ipynb": ("correct", DOWNLOADED),
          "roejohn_LATE_102_5002_ps3_mle.ipynb": ("correct", DOWNLOADED),
          "leeann_103_5003_PS3_MLE (1).ipynb": ("wrong", DOWNLOADED)}
MOODLE = {"Jane Doe_201_assignsubmission_file/ps3_mle.ipynb": "correct",
          "Ann Lee_203_assignsubmission_file/ps3_mle.ipynb": "wrong"}

# Gradescope's results.json, as its specification documents it (docs/specs.md of
# gradescope/autograder_samples; formats from gradescope-autograders.readthedocs.io specs).
_VISIBILITY = {"enum": ["visible", "hidden", "after_due_date", "after_published"]}
_FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
GRADESCOPE_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "score": {"type": "number"}, "execution_time": {"type": "number"},
        "output": {"type": "string"}, "output_format": _FORMAT,
        "test_output_format": _FORMAT, "test_name_format": _FORMAT,
        "visibility": _VISIBILITY, "stdout_visibility": _VISIBILITY,
        "extra_data": {"type": "object"}, "leaderboard": {"type": "array"},
        "tests": {"type": "array", "items": {
            "type": "object", "additionalProperties": False,
            "required": ["score", "max_score", "name"],
            "properties": {
                "score": {"type": "number"}, "max_score": {"type": "number"},
                "status": {"enum": ["passed", "failed"]},
                "name": {"type": "string"}, "name_format": _FORMAT,
                "number": {"type": "string"}, "output": {"type": "string"},
                "output_format": _FORMAT, "tags": {"type": "array"},
                "visibility": _VISIBILITY, "extra_data": {"type": "object"}}}}},
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
}


def _zip(path: Path, members: dict[str, tuple[bytes, tuple]]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, (data, when) in members.items():
            z.writestr(zipfile.ZipInfo(name, when), data)
    return path


#: Their users are slow (tests/conftest.py): a grading run.
SLOW_FIXTURES = ("batch",)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    """The graded records, with LMS ids, lateness and hand-graded scores as export reads them."""
    require(AVAILABLE, f"no sandbox here: {REASON}")
    base = tmp_path_factory.mktemp("lms", numbered=True)
    (base / "release").mkdir()
    release = generate_release([PS], base / "release")
    builder = sb.Builder(ProblemSet(PS).path, release / PS / NB)
    notebooks = {"correct": sb.to_bytes(builder.correct()),
                 "wrong": sb.to_bytes(sb.replace(builder.correct(), *WRONG))}
    download = _zip(base / "canvas.zip", {name: (notebooks[kind], when)
                                          for name, (kind, when) in CANVAS.items()})
    out = base / "out"
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", PS, str(download),
                           "--out", str(out), "--workers", "2", "--quiet",
                           "--course", str(base / "release")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    policy = (base / "late.toml")
    policy.write_text(POLICY)
    rule = load_policy(policy).for_problem_set(PS)
    collected = {s.student_id: s for s in collect_submissions(download, NB).submissions}
    records = []
    for path in sorted((out / "records").glob("*.json")):
        record = json.loads(path.read_text())
        sub = collected[record["student_id"]]
        record["lms"] = sub.lms.to_dict()
        record["late"] = rule.assess(sub.student_id, sub.submitted_at, sub.lms.late).to_dict()
        record["manual"] = {"lagrange_derivation": 3.0, "bias_derivation": 2.5}
        records.append(record)
    moodle_download = _zip(base / "moodle.zip", {name: (notebooks[kind], (2026, 11, 20, 9, 0, 0))
                                                 for name, kind in MOODLE.items()})
    moodle = collect_submissions(moodle_download, NB).submissions
    by_bytes = {r["sha256"]: r for r in records}
    moodle_records = [{**copy.deepcopy(by_bytes[s.sha256]), "student_id": s.student_id,
                       "lms": s.lms.to_dict()} for s in moodle]
    return base, out, records, moodle_records


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


def test_the_batch_has_late_and_wrong_students(batch):
    _, _, records, _ = batch
    by = {r["student_id"]: summarize(r) for r in records}
    assert set(by) == {"doejane-101", "roejohn-102", "leeann-103"}
    assert datetime(*DOWNLOADED, tzinfo=timezone.utc) > DEADLINE  # every file's time is late
    assert (by["doejane-101"].late_days, by["roejohn-102"].late_days, by["leeann-103"].late_days) == (0, 1, 0)
    assert by["roejohn-102"].late_percent == 10
    assert by["doejane-101"].auto == by["roejohn-102"].auto > by["leeann-103"].auto
    assert by["roejohn-102"].final == round((by["roejohn-102"].auto + 5.5) * 0.9, 2)
    assert by["doejane-101"].final == by["doejane-101"].auto + 5.5


def test_canvas_gradebook_import(batch, tmp_path):
    _, _, records, _ = batch
    path = tmp_path / "canvas.csv"
    skipped = write_canvas_csv(records, path, canvas_column("Problem set 3", 4242))
    rows = _rows(path)
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "Problem set 3 (4242)"]
    assert rows[1][0] == "Points Possible" and float(rows[1][5]) == records[0]["max_auto"] + 7
    by_id = {r[1]: r for r in rows[2:]}
    assert set(by_id) == {"101", "102", "103"} and all(len(r) == 6 for r in rows)
    finals = {r["lms"]["user_id"]: summarize(r).final for r in records}
    assert {k: float(v[5]) for k, v in by_id.items()} == finals
    assert by_id["102"][0] == "roejohn" and skipped == []
    with pytest.raises(ValueError, match="Canvas assignment id is a number"):
        canvas_column("Problem set 3", "ps3")


def test_canvas_leaves_pending_written_answers_empty(batch, tmp_path):
    _, _, records, _ = batch
    pending = [{**records[0], "manual": {"lagrange_derivation": 3.0}}] + records[1:]
    skipped = write_canvas_csv(pending, tmp_path / "c.csv", "ps3_mle")
    assert _rows(tmp_path / "c.csv")[2][5] == ""
    assert skipped == [f"{records[0]['student_id']}: left empty, written answers not graded "
                       f"yet: bias_derivation"]


def test_moodle_grading_worksheet(batch, tmp_path):
    _, _, records, moodle_records = batch
    now = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)
    path = tmp_path / "worksheet.csv"
    skipped = write_moodle_worksheet(moodle_records + records[:1], path, now=now)
    rows = _rows(path)
    header = rows[0]
    for title in ("Identifier", "Grade", "Last modified (grade)", "Feedback comments"):
        assert title in header  # the columns Moodle's importer looks up by title
    table = [dict(zip(header, r)) for r in rows[1:]]
    assert sorted(t["Identifier"] for t in table) == ["Participant 201", "Participant 203"]
    for t in table:
        assert datetime.fromisoformat(t["Last modified (grade)"]) == now
        assert 0 <= float(t["Grade"]) <= float(t["Maximum Grade"])
    assert skipped == [f"{records[0]['student_id']}: not written, no Moodle participant id "
                       f"(not graded from a Moodle download)"]


def test_moodle_gradebook_import(batch, tmp_path):
    _, _, records, _ = batch
    path = tmp_path / "gradebook.csv"
    write_moodle_gradebook(records, path, item="Problem set 3", identifier="username")
    rows = _rows(path)
    assert rows[0] == ["Username", "Problem set 3", "Late penalty", "Feedback"]
    table = {r[0]: r for r in rows[1:]}
    late = summarize(next(r for r in records if r["student_id"] == "roejohn-102"))
    assert float(table["roejohn-102"][2]) == late.penalty > 0
    assert "late penalty" in table["roejohn-102"][3]
    with pytest.raises(ValueError, match="Moodle identifier must be one of"):
        write_moodle_gradebook(records, path, item="x", identifier="fullname")


def test_moodle_gradebook_writes_only_ids_moodle_can_find(batch, tmp_path):
    """Moodle's gradebook import looks each identifier up in its ``user`` table (``id``,
    ``username``, ``idnumber`` or ``email``) and stops the whole import at one it does not find
    (moodle ``grade/import/csv/classes/load_data.php``: ``map_user_data_with_value``,
    ``check_user_exists``, ``cleanup_import``). A student from a Moodle download is known by the
    assignment's participant id (``mod/assign/classes/downloader.php``, ``get_uniqueid_for_user``),
    which is no user field: not written, reported with the worksheet that carries them; the
    others are written. A ``userid`` column takes only numbers."""
    _, _, records, moodle_records = batch
    path = tmp_path / "gradebook.csv"
    skipped = write_moodle_gradebook(moodle_records + records, path, item="PS3")
    written = [r[0] for r in _rows(path)[1:]]
    assert sorted(written) == sorted(r["student_id"] for r in records)
    for record in moodle_records:
        said = [s for s in skipped if s.startswith(f"{record['student_id']}: not written")]
        assert len(said) == 1 and record["lms"]["user_id"] in said[0], skipped
        assert "moodle-worksheet.csv" in said[0]
    numeric = [{**records[0], "student_id": "4711"}] + records[1:]
    skipped = write_moodle_gradebook(numeric, path, item="PS3", identifier="userid")
    assert [r[0] for r in _rows(path)[1:]] == ["4711"]
    assert len(skipped) == len(records) - 1 and all("not a Moodle user id" in s for s in skipped)


@pytest.mark.parametrize("mode", ["full", "pass-fail", "none"])
def test_gradescope_results_follow_the_spec_and_the_visibility(batch, tmp_path, mode):
    _, _, records, _ = batch
    visibility = Visibility(mode)
    paths = write_gradescope(records, tmp_path / "gs", visibility)
    assert len(paths) == len(records)
    for path, record in zip(paths, records):
        data = json.loads(path.read_text())
        jsonschema.validate(data, GRADESCOPE_SCHEMA)
        assert data["score"] == summarize(record).final
        by_name = {t["name"]: t for t in data["tests"]}
        assert len(data["tests"]) == len(record["scores"])  # written answers scored by hand
        for score in record["scores"]:
            if score["points"] is None:
                continue
            test = next(t for t in data["tests"] if t["score"] == score["points"]
                        and t["name"].startswith(score["grade_id"].rsplit("_", 1)[0]
                                                 .replace("_", " ")))
            if score["grade_id"].endswith("_visible") or mode == "full":
                assert test["visibility"] == "visible"
            if score["grade_id"].endswith("_hidden") and mode == "pass-fail":
                assert test["output"].startswith("Hidden check")
            if score["grade_id"].endswith("_hidden") and mode == "none":
                assert test["visibility"] == "after_published"
        assert by_name  # every record has tests
    wrong = next(r for r in records if r["student_id"] == "leeann-103")
    failed = [t for t in results_json(wrong, visibility)["tests"] if t["status"] == "failed"]
    assert failed and all(t["score"] < t["max_score"] for t in failed)


def test_hidden_feedback_is_withheld_until_its_release_date(tmp_path):
    (tmp_path / "feedback.toml").write_text(
        f'[{PS}]\nhidden = "none"\nrelease_at = 2026-12-01T09:00:00Z\n')
    visibility = load_visibility(PS, path=tmp_path / "feedback.toml")
    score = {"grade_id": "gaussian_mle_hidden", "points": 0.0, "max_points": 2.0,
             "message": "expected sigma 1.234, got 1.250 (tolerance 1e-8)"}
    before = visibility.message(score, datetime(2026, 11, 30, tzinfo=timezone.utc))
    after = visibility.message(score, datetime(2026, 12, 2, tzinfo=timezone.utc))
    assert "1.234" not in before and "2026-12-01" in before and after == score["message"]
    visible = {**score, "grade_id": "gaussian_mle_visible"}
    assert visibility.message(visible) == score["message"]
    assert Visibility("pass-fail").message(score) == "Hidden check failed."
    (tmp_path / "bad.toml").write_text(f'[{PS}]\nhidden = "sometimes"\n')
    with pytest.raises(ValueError, match=r"bad.toml: \[ps3_mle\]: .*one of full, pass-fail"):
        load_visibility(PS, path=tmp_path / "bad.toml")


def test_feedback_archives_are_laid_out_for_bulk_upload(batch, tmp_path):
    _, out, records, moodle_records = batch
    stem = Path(NB).stem
    canvas = tmp_path / "canvas-feedback.zip"
    assert write_feedback_archive(records, out, stem, canvas, "canvas") == []
    with zipfile.ZipFile(canvas) as z:
        names = z.namelist()
        for record in records:
            (name,) = [n for n in names if n.startswith(record["lms"]["prefix"])]
            digits = [p for p in name.split("_") if p.isdigit()][:2]  # what Canvas reads
            assert digits == [record["lms"]["user_id"], record["lms"]["attachment_id"]]
            assert "/" not in name and b"Content-Security-Policy" in z.read(name)
    # Moodle: one folder per participant, named as in the download (feedback pages copied
    # from the Canvas run's students with the same notebook)
    for record in moodle_records:
        source = out / "feedback" / next(r["student_id"] for r in records
                                         if r["sha256"] == record["sha256"])
        target = out / "feedback" / record["student_id"]
        target.mkdir(exist_ok=True)
        (target / f"{stem}.html").write_bytes((source / f"{stem}.html").read_bytes())
    moodle = tmp_path / "moodle-feedback.zip"
    skipped = write_feedback_archive(moodle_records + records[:1], out, stem, moodle, "moodle")
    assert skipped == [f"{records[0]['student_id']}: left out, not graded from a Moodle "
                       f"download"]
    with zipfile.ZipFile(moodle) as z:
        for name in z.namelist():
            folder, file = name.split("/")
            parts = folder.split("_", 4)
            assert parts[1].isdigit() and parts[2:4] == ["assignsubmission", "file"]
            assert file == f"{stem}-feedback.html"
        assert len(z.namelist()) == 2
    with pytest.raises(ValueError, match="one of canvas, moodle, plain"):
        write_feedback_archive(records, out, stem, tmp_path / "x.zip", "blackboard")
