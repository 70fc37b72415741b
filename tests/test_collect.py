"""Collecting a class's submissions: every file ends in a submission, an unmatched student or a
note, and bad input gets a clear error. Pure file handling: no kernel, no sandbox."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from autograder.collect import collect_submissions

NB = "ps3_mle.ipynb"


def _zip(path: Path, members: dict[str, bytes], dates: dict[str, tuple] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, (dates or {}).get(name, (2026, 11, 1, 12, 0, 0)))
            z.writestr(info, data)
    return path


def _accounted(found, name: str) -> bool:
    """Whether the file ``name`` ends in a submission, an unmatched row, or a note."""
    return (any(s.origin == name for s in found.submissions)
            or any(name in u.files for u in found.unmatched)
            or any(n.startswith(f"{name}:") for n in found.notes))


def test_a_messy_lms_archive_leaves_no_file_unaccounted(tmp_path):
    members = {
        "alice_101_ps3_mle.ipynb": b"alice old",
        "alice_101_ps3_mle (1).ipynb": b"alice new",
        "bob_LATE_102_PS3_MLE.ipynb": b"bob",
        "carol_103_homework3.ipynb": b"carol",
        "dave_104_draft.ipynb": b"dave 1",
        "dave_104_final.ipynb": b"dave 2",
        "erin_105_report.pdf": b"%PDF",
        "frank_106_ps3_mle-2.ipynb": b"frank",
        ".DS_Store": b"",
        "__MACOSX/._alice_101_ps3_mle.ipynb": b"junk",
        "../mallory_107_ps3_mle.ipynb": b"escape",
        "/etc/oscar_108_ps3_mle.ipynb": b"absolute",
    }
    dates = {"alice_101_ps3_mle.ipynb": (2026, 11, 1, 9, 0, 0),
             "alice_101_ps3_mle (1).ipynb": (2026, 11, 2, 9, 0, 0)}
    found = collect_submissions(_zip(tmp_path / "lms.zip", members, dates), NB)
    graded = {s.student_id: s.data for s in found.submissions}
    assert graded == {"alice": b"alice new", "bob": b"bob", "carol": b"carol", "frank": b"frank"}
    assert {u.student_id for u in found.unmatched} == {"dave", "erin"}
    for name in members:
        assert _accounted(found, name), f"{name} is neither graded nor mentioned"
    refused = [n for n in found.notes if "refused" in n]
    assert len(refused) == 2 and "mallory" not in graded and "oscar" not in graded
    assert any("carol_103_homework3.ipynb: graded as ps3_mle.ipynb" in n for n in found.notes)
    assert any(n.startswith("alice_101_ps3_mle.ipynb: not graded") and "newer" in n
               for n in found.notes)


def test_the_newest_copy_in_a_folder_wins_whatever_its_name(tmp_path):
    alice = tmp_path / "class" / "alice"
    alice.mkdir(parents=True)
    (alice / "ps3_mle.ipynb").write_bytes(b"old")
    (alice / "ps3_mle (1).ipynb").write_bytes(b"new")
    os.utime(alice / "ps3_mle.ipynb", (1_700_000_000, 1_700_000_000))
    os.utime(alice / "ps3_mle (1).ipynb", (1_700_000_900, 1_700_000_900))
    (tmp_path / "class" / "bob").mkdir()
    (tmp_path / "class" / "bob" / "ps3_mle.ipynb").write_bytes(b"bob")
    found = collect_submissions(tmp_path / "class", NB)
    assert {s.student_id: s.data for s in found.submissions} == {"alice": b"new", "bob": b"bob"}
    assert any("ps3_mle.ipynb: not graded" in n for n in found.notes)


def test_wrapped_folders_one_student_and_stray_files(tmp_path):
    found = collect_submissions(_zip(tmp_path / "a.zip", {
        "ps3/alice/ps3_mle.ipynb": b"a", "ps3/bob/PS3_MLE.ipynb": b"b",
        "ps3/README.txt": b"read me"}), NB)
    assert [s.student_id for s in found.submissions] == ["alice", "bob"]
    assert any(n.startswith("ps3/README.txt") and "no student" in n for n in found.notes)
    alone = collect_submissions(_zip(tmp_path / "b.zip", {"alice/ps3_mle.ipynb": b"a"}), NB)
    assert [s.student_id for s in alone.submissions] == ["alice"]


def test_an_invalid_student_id_is_noted_not_renamed(tmp_path):
    found = collect_submissions(_zip(tmp_path / "a.zip", {
        "al ice/ps3_mle.ipynb": b"x", "bob/ps3_mle.ipynb": b"b"}), NB)
    assert [s.student_id for s in found.submissions] == ["bob"]
    assert any("'al ice' is not a valid student id" in n for n in found.notes)


@pytest.mark.parametrize("make, message", [
    (lambda p: p / "nowhere", "do not exist"),
    (lambda p: _zip(p / "empty.zip", {}), "is empty"),
    (lambda p: (p / "grades.csv").write_text("a,b") and p / "grades.csv", "neither"),
])
def test_bad_submissions_path_says_what_is_wrong(tmp_path, make, message):
    with pytest.raises(ValueError, match=message):
        collect_submissions(make(tmp_path), NB)


def test_a_folder_without_files_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="hold no files"):
        collect_submissions(tmp_path / "empty", NB)


def test_canvas_names_give_the_lms_ids_and_the_late_mark(tmp_path):
    found = collect_submissions(_zip(tmp_path / "canvas.zip", {
        "doejane_101_5001_ps3_mle.ipynb": b"jane",
        "roejohn_LATE_102_5002_ps3_mle-1.ipynb": b"john",
        "smithann_103_homework.ipynb": b"ann"}, {
        "roejohn_LATE_102_5002_ps3_mle-1.ipynb": (2026, 11, 3, 8, 30, 0)}), NB)
    subs = {s.student_id: s for s in found.submissions}
    jane, john, ann = subs["doejane"], subs["roejohn"], subs["smithann"]
    assert (jane.lms.system, jane.lms.user_id, jane.lms.attachment_id, jane.lms.late) == (
        "canvas", "101", "5001", False)
    assert jane.lms.prefix == "doejane_101_5001_"
    assert (john.lms.user_id, john.lms.attachment_id, john.lms.late) == ("102", "5002", True)
    assert john.lms.prefix == "roejohn_102_5002_"  # Canvas's re-upload reads no LATE
    assert (ann.lms.user_id, ann.lms.attachment_id) == ("103", None)
    from datetime import datetime
    assert datetime.fromtimestamp(john.submitted_at) == datetime(2026, 11, 3, 8, 30, 0)


def test_moodle_folders_and_flat_files_give_participant_ids(tmp_path):
    found = collect_submissions(_zip(tmp_path / "moodle.zip", {
        "Jane Doe_123_assignsubmission_file/ps3_mle.ipynb": b"jane",
        "Jane Doe_123_assignsubmission_file/notes.txt": b"notes",
        "José Núñez_124_assignsubmission_file_/PS3_MLE (1).ipynb": b"jose",
        "Ann Lee_125_assignsubmission_file_ps3_mle.ipynb": b"ann"}), NB)
    subs = {s.student_id: s for s in found.submissions}
    assert set(subs) == {"jane-doe-123", "jose-nunez-124", "ann-lee-125"}
    assert subs["jane-doe-123"].lms.prefix == "Jane Doe_123_assignsubmission_file"
    assert (subs["jose-nunez-124"].lms.system, subs["jose-nunez-124"].lms.user_id) == (
        "moodle", "124")
    assert subs["ann-lee-125"].data == b"ann" and subs["ann-lee-125"].lms.name == "Ann Lee"
    assert any(n.startswith("Jane Doe_123_assignsubmission_file/notes.txt: not graded")
               for n in found.notes)


def test_a_plain_folder_has_no_lms_ids(tmp_path):
    (tmp_path / "c" / "alice").mkdir(parents=True)
    (tmp_path / "c" / "alice" / NB).write_bytes(b"a")
    (sub,) = collect_submissions(tmp_path / "c", NB).submissions
    assert sub.lms is None and sub.submitted_at is not None
