"""The typed record and the status type: one reader and writer, old records still read.

``old_records/`` beside this file holds records a grading run wrote before
:mod:`autograder.grading.record` existed (a real run of the grader of that time on the
submissions beside them: graded, late, timeout, crashed, grader-error, unmatched, unreadable;
see its README). Today's grader reads every one of them, resumes from them (grading again only
the grader's fault) and regrades against them; a record it cannot read is refused with the file
and the key named. No module of the grader spells a status word outside :mod:`autograder.status`
(a scan of the source).
"""

from __future__ import annotations

import ast
import csv
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from autograder.__main__ import main
from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record, RecordError, load_record, load_records
from autograder.run.task import grader_fingerprint
from autograder.sandbox import sandbox_available
from autograder.status import RECORDED, Status
from tests import ROOT
from tests.environment import require

OLD = Path(__file__).with_name("old_records")
PS = ProblemSet("ps1_pca")
AVAILABLE, REASON = sandbox_available()
#: The status of each old record, as the grader of that time wrote it (its README).
OLD_STATUSES = {"correct": "awaiting-manual-grading", "wrong": "awaiting-manual-grading",
                "loop": "timeout", "exit-late": "crashed", "broken-check": "grader-error",
                "notes-only": "unmatched", "empty-file": "unreadable-file"}


def _old_json() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((OLD / "records").glob("*.json"))}


# --- reading old records ------------------------------------------------------------------------

def test_every_old_record_loads_with_its_status():
    records = load_records(OLD / "records", PS.name)
    assert {r.student_id: r.status for r in records} == OLD_STATUSES
    assert all(isinstance(r.status, Status) for r in records)


def test_an_old_record_written_again_keeps_every_key_and_value():
    for student, old in _old_json().items():
        new = load_record(OLD / "records" / f"{student}.json").to_json()
        assert {k: new[k] for k in old} == old, student
        assert set(new) - set(old) <= {"manual", "late", "submitted_at", "started_at", "flags",
                                        "breaches", "recorded"}, student


def test_old_records_say_what_the_old_files_said():
    old = _old_json()
    records = {r.student_id: r for r in load_records(OLD / "records", PS.name)}
    for student, data in old.items():
        r = records[student]
        assert r.total == data["total"] and r.max_auto == data["max_auto"], student
        assert r.max_manual == data["max_manual"], student
        assert [(s.grade_id, s.points) for s in r.scores] == \
            [(s["grade_id"], s["points"]) for s in data["scores"]], student
    assert records["wrong"].late.days == 2 and records["wrong"].late.percent == 20.0
    assert records["notes-only"].late is None and records["notes-only"].recorded == {}
    assert "KeyError: 'centre'" in records["broken-check"].grader_error
    assert records["loop"].status.stopped and records["exit-late"].status.stopped
    assert not records["broken-check"].status.scored


# --- records it cannot read ---------------------------------------------------------------------

def _write(folder: Path, student: str, **change) -> Path:
    data = {**_old_json()["correct"], "student_id": student, **change}
    data = {k: v for k, v in data.items() if v is not None}
    path = folder / f"{student}.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("change, says", [
    ({"status": "graded-twice"}, r"unknown status 'graded-twice'; a record's status is one of "
                                 r"graded, awaiting-manual-grading"),
    ({"status": "ok"}, r"unknown status 'ok'; .* unmatched, grader-error$"),  # a run's, only
    ({"bonus": 3}, r"unknown key 'bonus': a record holds"),
    ({"scores": None}, r"no 'scores'"),
    ({"problem_set": None}, r"no 'problem_set'"),
    ({"total": "twenty"}, None),  # derived from the scores, never read
    ({"late": {"days": "two", "percent": 1}}, r"wrong kind \(ValueError"),
    ({"scores": [{"grade_id": "center_visible", "points": 1.0}]}, r"wrong kind \(KeyError"),
    ({"scores": [{"grade_id": "x", "points": 1, "max_points": 1, "hint": "?"}]},
     r"a score holds .* not 'hint'"),
])
def test_a_record_it_cannot_read_is_named_with_its_key(tmp_path, change, says):
    path = _write(tmp_path, "zoe", **change)
    if says is None:
        load_record(path)
        return
    with pytest.raises(RecordError, match=says) as caught:
        load_record(path)
    assert str(path) in str(caught.value)


def test_missing_optional_fields_get_their_documented_defaults(tmp_path):
    bare = {"student_id": "ann", "problem_set": PS.name, "status": "timeout",
            "scores": [{"grade_id": "center_visible", "points": 0.0, "max_points": 1.0,
                        "message": "m"}]}
    record = Record.from_json(bare)
    assert (record.sha256, record.notes, record.elapsed_s, record.started_at) == ("", (), 0.0, None)
    assert (record.timings, record.recorded, record.manual) == ({}, {}, {})
    assert (record.flags, record.breaches, record.lms, record.late) == ((), (), None, None)
    assert record.scores[0].error is None and record.fingerprint is None


def test_grade_and_export_refuse_a_broken_record_with_a_message(tmp_path, capsys):
    out = tmp_path / "out"
    (out / "records").mkdir(parents=True)
    shutil.copy(OLD / "records" / "correct.json", out / "records")
    _write(out / "records", "zoe", status="graded-twice")
    (out / "records" / "notes.json").write_text("{not json")  # an editor's leftover: passed over
    subs = tmp_path / "subs"
    shutil.copytree(OLD / "submissions" / "correct", subs / "correct")
    assert main(["grade", PS.name, str(subs), "--out", str(out), "--unsafe", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "zoe.json: unknown status 'graded-twice'" in err
    assert "Traceback" not in err
    assert main(["export", PS.name, "--out", str(out)]) == 2
    assert "zoe.json: unknown status 'graded-twice'" in capsys.readouterr().err


# --- resuming and regrading across the upgrade --------------------------------------------------

def _class(tmp_path: Path, fingerprint: str | None) -> tuple[Path, Path]:
    """The old run's submissions (with their file times) and its records, in ``tmp_path``; with
    ``fingerprint``, every record says it was written by that grader."""
    subs, out = tmp_path / "submissions", tmp_path / "out"
    shutil.copytree(OLD / "submissions", subs)
    deadline = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc).timestamp()
    for path in subs.rglob("*"):
        if path.is_file():
            os.utime(path, (deadline - 3600,) * 2)
    os.utime(subs / "wrong" / PS.notebook_name, (deadline + 2 * 86400,) * 2)
    (out / "records").mkdir(parents=True)
    for student, data in _old_json().items():
        if fingerprint is not None:
            data["fingerprint"] = fingerprint
        (out / "records" / f"{student}.json").write_text(json.dumps(data, indent=1))
    return subs, out


def _grade(subs: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade", PS.name, str(subs),
                           "--out", str(out), "--late-policy", str(OLD / "late.toml"),
                           "--timeout", "3", "--workers", "2", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def _rows(out: Path) -> dict[str, dict]:
    with (out / "grades.csv").open() as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


@pytest.mark.slow
def test_grade_resumes_from_old_records(tmp_path):
    require(AVAILABLE, f"no sandbox here: {REASON}")
    # The upgrade changed nothing that decides a grade: the old records carry today's
    # fingerprint (a changed fingerprint regrades everything: test_fingerprint.py).
    subs, out = _class(tmp_path, grader_fingerprint(PS))
    before = {p.name: p.read_text() for p in (out / "records").glob("*.json")}
    run = _grade(subs, out)
    assert run.returncode == 1, run.stderr  # students need attention: unmatched, unreadable
    assert "4 of 5 submissions unchanged since the last run" in run.stderr
    auto = sum(c.points for c in PS.grade_cells if c.autograded)  # the course's, not pinned
    assert run.stdout.startswith("regrade: 1 student(s) change, 6 unchanged\n  broken-check: "
                                 f"– -> {auto:g} [grader-error -> awaiting-manual-grading]")
    after = {p.name: p.read_text() for p in (out / "records").glob("*.json")}
    for student in ("correct", "wrong", "loop", "exit-late"):  # not graded again, not rewritten
        assert after[f"{student}.json"] == before[f"{student}.json"], student
    regraded = load_record(out / "records" / "broken-check.json")
    assert regraded.status == Status.AWAITING_MANUAL and regraded.grader_error is None
    assert regraded.total == regraded.max_auto == auto
    rows = _rows(out)
    assert {s: rows[s]["status"] for s in rows} == {**OLD_STATUSES,
                                                    "broken-check": "awaiting-manual-grading"}
    assert rows["wrong"]["late_days"] == "2" and rows["wrong"]["autograded_total"] == "18"
    assert rows["notes-only"]["notes"].startswith("not graded, no notebook")
    report = (out / "report.html").read_text()
    assert "id='grader-errors'" not in report and "exit-late" in report


@pytest.mark.slow
def test_a_regrade_diffs_against_old_records_and_writes_nothing(tmp_path):
    require(AVAILABLE, f"no sandbox here: {REASON}")
    subs, out = _class(tmp_path, None)  # the old grader's fingerprint: everything is graded
    before = {p.name: p.read_text() for p in (out / "records").glob("*.json")}
    run = _grade(subs, out, "--dry-run", "--quiet")
    assert run.returncode == 1, run.stderr  # as the real run: unmatched and unreadable files
    lines = run.stdout.splitlines()
    assert lines[0] == "regrade: 1 student(s) change, 6 unchanged", run.stdout
    assert re.fullmatch(r"  broken-check: – -> 20 \[grader-error -> awaiting-manual-grading\] "
                        r"\(center_hidden 0 -> \d+\)", lines[1]), lines[1]
    assert {p.name: p.read_text() for p in (out / "records").glob("*.json")} == before
    assert not (out / "grades.csv").exists()


# --- one status type ----------------------------------------------------------------------------

#: Every word a status is spelt with.
WORDS = frozenset(map(str, Status))


def _status_literals(path: Path, name: str) -> list[str]:
    """``name:line: 'word'`` for each string literal of the file ``path`` that is a status word.

    Not counted: a subscript's key (``kwargs["timeout"]``: a parameter's name, not a status),
    and ``"ok"`` on a line that does not mention a status (the CSS class of a cell with full
    marks).
    """
    text = path.read_text(encoding="utf-8")
    lines, tree = text.splitlines(), ast.parse(text)
    keys = {id(n.slice) for n in ast.walk(tree) if isinstance(n, ast.Subscript)}
    found = sorted((node.lineno, node.value) for node in ast.walk(tree)
                   if isinstance(node, ast.Constant) and node.value in WORDS
                   and id(node) not in keys
                   and (node.value != Status.OK
                        or "status" in lines[node.lineno - 1].lower()))
    return [f"{name}:{line}: {word!r}" for line, word in found]


def test_no_status_word_is_spelt_outside_the_status_type():
    files = [p for folder in ("autograder", "_ext", "coursedata")
             for p in sorted((ROOT / folder).rglob("*.py"))
             if p != ROOT / "autograder" / "status.py"]
    assert len(files) > 40
    found = [hit for p in files for hit in _status_literals(p, str(p.relative_to(ROOT)))]
    assert found == [], "use autograder.status.Status:\n" + "\n".join(found)


def test_the_scan_finds_a_status_word(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('def f(r, kwargs):\n    if r.status == "timeout":\n        return {"ok": 1}\n'
                     '    return kwargs["timeout"], r.status == "ok"\n')
    assert _status_literals(probe, "probe.py") == ["probe.py:2: 'timeout'", "probe.py:4: 'ok'"]


def test_the_status_type_holds_every_word_the_student_reads():
    assert RECORDED == tuple(s for s in Status if s is not Status.OK)
    for status in RECORDED:
        assert status.explanation.endswith(".") and len(status.explanation) > 40, status
    assert Status.OK not in RECORDED
    assert [s for s in RECORDED if not s.scored] == [Status.GRADER_ERROR]
    assert {s for s in RECORDED if s.why_no_final} == {Status.GRADER_ERROR, Status.UNMATCHED,
                                                        Status.UNREADABLE}
