"""Collecting a class's submissions: every file ends in a submission, an unmatched student or a
note, and bad input gets a clear error. Pure file handling: no kernel, no sandbox."""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path

import pytest

from autograder.intake.collect import collect_submissions

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
    assert graded == {"alice-101": b"alice new", "bob-102": b"bob", "carol-103": b"carol",
                      "frank-106": b"frank"}
    assert {u.student_id for u in found.unmatched} == {"dave-104", "erin-105"}
    for name in members:
        assert _accounted(found, name), f"{name} is neither graded nor mentioned"
    refused = [n for n in found.notes if "refused" in n]
    assert len(refused) == 2 and not any(s.startswith(("mallory", "oscar")) for s in graded)
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


#: When the instructor downloaded the Canvas zip below: the time Canvas stamps on every member.
DOWNLOADED = (2026, 11, 25, 16, 40, 0)


def _canvas_download(path: Path, members: dict[str, bytes]) -> Path:
    """A Canvas "Download Submissions" zip as Canvas writes it: ``add_attachment_to_zip``
    (canvas-lms ``lib/content_zipper.rb``) calls ``zipfile.get_output_stream(filename)`` with no
    time, so rubyzip stamps each member with ``::Zip::DOSTime.now`` (rubyzip
    ``lib/zip/entry.rb``, ``Entry#initialize``), a DOS time with no extended timestamp: every
    member carries the moment of the download."""
    return _zip(path, members, dict.fromkeys(members, DOWNLOADED))


def test_canvas_names_give_the_lms_ids_and_the_late_mark(tmp_path):
    found = collect_submissions(_canvas_download(tmp_path / "canvas.zip", {
        "doejane_101_5001_ps3_mle.ipynb": b"jane",
        "roejohn_LATE_102_5002_ps3_mle-1.ipynb": b"john",
        "smithann_103_homework.ipynb": b"ann"}), NB)
    subs = {s.student_id: s for s in found.submissions}
    jane, john, ann = subs["doejane-101"], subs["roejohn-102"], subs["smithann-103"]
    assert (jane.lms.system, jane.lms.user_id, jane.lms.attachment_id, jane.lms.late) == (
        "canvas", "101", "5001", False)
    assert jane.lms.prefix == "doejane_101_5001_"
    assert (john.lms.user_id, john.lms.attachment_id, john.lms.late) == ("102", "5002", True)
    assert john.lms.prefix == "roejohn_102_5002_"  # Canvas's re-upload reads no LATE
    assert (ann.lms.user_id, ann.lms.attachment_id) == ("103", None)
    # the zip's time is the download's, not the student's: no evidence of when it was handed in
    assert (jane.submitted_at, john.submitted_at, ann.submitted_at) == (None, None, None)
    assert "Canvas's LATE mark" in found.notes[0]
    assert found.marks_late


def test_a_canvas_download_made_after_the_deadline_makes_only_the_marked_student_late(tmp_path):
    """Every member of a Canvas zip carries the download's time (see :func:`_canvas_download`),
    here days after the deadline; with the default ``evidence = "both"`` only the student Canvas
    marked ``LATE`` is late, the others are on time."""
    from datetime import datetime, timezone

    from autograder.intake.late import LateRule

    deadline = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)
    assert datetime(*DOWNLOADED, tzinfo=timezone.utc) > deadline
    found = collect_submissions(_canvas_download(tmp_path / "canvas.zip", {
        "doejane_101_5001_ps3_mle.ipynb": b"jane",
        "roejohn_LATE_102_5002_ps3_mle.ipynb": b"john"}), NB)
    rule = LateRule(deadline, percent_per_day=10)
    late = {s.student_id: rule.assess(s.student_id, s.submitted_at, s.lms.late)
            for s in found.submissions}
    assert (late["doejane-101"].days, late["roejohn-102"].days) == (0, 1)
    assert late["roejohn-102"].reason == "marked late by the LMS"
    assert late["doejane-101"].percent == 0 and late["roejohn-102"].percent == 10


def test_a_moodle_download_gives_no_file_time(tmp_path):
    """Moodle's "Download all submissions" streams each file through ``zip_writer::
    add_file_from_stored_file`` (moodle ``files/classes/local/archive_writer/zip_writer.php``,
    called by ``mod/assign/classes/downloader.php``, ``download_zip``), which gives ZipStream no
    time, so ZipStream stamps ``new DateTime()`` (moodle ``lib/zipstream/src/Option/File.php``,
    ``defaultTo``): the download's time, which says nothing of the student. Moodle marks nothing
    late, so the late policy has no evidence and says so."""
    from datetime import datetime, timezone

    from autograder.intake.late import LateRule

    members = {"Jane Doe_123_assignsubmission_file/ps3_mle.ipynb": b"jane"}
    found = collect_submissions(
        _zip(tmp_path / "moodle.zip", members, dict.fromkeys(members, DOWNLOADED)), NB)
    (jane,) = found.submissions
    assert jane.submitted_at is None and not found.marks_late
    assert "Moodle marks nothing late" in found.notes[0]
    late = LateRule(datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)).assess(
        jane.student_id, jane.submitted_at, jane.lms.late)
    assert late.days == 0 and "no evidence" in late.reason


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


# --- A real class's download: damaged members, shared names ---------------------------------

def _canvas_zip(members: dict[str, bytes], stored: tuple[str, ...] = ()) -> bytearray:
    """A Canvas-like download as bytes (deflated members, or ``stored`` ones), to be damaged in
    place."""
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(zipfile.ZipInfo(name, (2026, 11, 20, 12, 0, 0)), data,
                       compress_type=zipfile.ZIP_STORED if name in stored
                       else zipfile.ZIP_DEFLATED)
    return bytearray(buf.getvalue())


def _member(raw: bytearray, name: str) -> tuple[zipfile.ZipInfo, int]:
    """The member's central-directory entry and the offset of its compressed data."""
    import io

    info = zipfile.ZipFile(io.BytesIO(bytes(raw))).getinfo(name)
    start = info.header_offset
    name_len, extra_len = struct.unpack("<HH", raw[start + 26:start + 30])
    return info, start + 30 + name_len + extra_len


def flip_data(raw: bytearray, name: str) -> None:
    """Flip one byte in the middle of the member's data (in a stored member: a CRC error; in a
    deflated one, usually a stream that no longer decodes)."""
    info, data = _member(raw, name)
    raw[data + info.compress_size // 2] ^= 0x55


def break_stream(raw: bytearray, name: str) -> None:
    """Make the deflate stream undecodable: its first block gets the reserved type 3."""
    _, data = _member(raw, name)
    raw[data] = 0x07


def understate_size(raw: bytearray, name: str, size: int) -> None:
    """Patch the member's uncompressed size, in its local header and the central directory."""
    info, _ = _member(raw, name)
    struct.pack_into("<I", raw, info.header_offset + 22, size)
    pos = raw.find(b"PK\x01\x02")
    while pos != -1:
        name_len = struct.unpack("<H", raw[pos + 28:pos + 30])[0]
        if raw[pos + 46:pos + 46 + name_len].decode() == name:
            struct.pack_into("<I", raw, pos + 24, size)
            return
        pos = raw.find(b"PK\x01\x02", pos + 4)
    raise AssertionError(f"{name} not in the central directory")


def test_damaged_members_become_unreadable_rows_and_the_class_is_still_collected(
        tmp_path, monkeypatch):
    from autograder.intake import collect
    from autograder.status import Status

    honest = b'{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}' + b" " * 4000
    members = {
        "doejane_101_5001_ps3_mle.ipynb": honest,
        "crcann_102_5002_ps3_mle.ipynb": honest,          # a flipped byte: bad CRC
        "flipdee_109_5009_ps3_mle.ipynb": honest,         # a flipped byte in deflated data
        "zlibbob_103_5003_ps3_mle.ipynb": honest,         # a stream that does not decode
        "shortcat_104_5004_ps3_mle.ipynb": honest,        # a header that understates the size
        "emptydan_105_5005_ps3_mle.ipynb": b"",           # an empty file
        "bigeve_106_5006_ps3_mle.ipynb": b"\0" * 3_000_000,  # past the (lowered) limit
        "smithjohn_107_5007_ps3_mle.ipynb": honest,       # two John Smiths
        "smithjohn_108_5008_ps3_mle.ipynb": honest.replace(b" ", b"\n"),
    }
    raw = _canvas_zip(members, stored=("crcann_102_5002_ps3_mle.ipynb",))
    flip_data(raw, "crcann_102_5002_ps3_mle.ipynb")
    flip_data(raw, "flipdee_109_5009_ps3_mle.ipynb")
    break_stream(raw, "zlibbob_103_5003_ps3_mle.ipynb")
    understate_size(raw, "shortcat_104_5004_ps3_mle.ipynb", 100)
    path = tmp_path / "download.zip"
    path.write_bytes(bytes(raw))
    monkeypatch.setattr(collect, "MAX_FILE_BYTES", 2 * 2**20)

    found = collect_submissions(path, NB)
    graded = {s.student_id: s for s in found.submissions}
    assert set(graded) == {"doejane-101", "smithjohn-107", "smithjohn-108"}
    assert graded["smithjohn-107"].data == honest
    assert graded["smithjohn-108"].data == honest.replace(b" ", b"\n")
    assert (graded["smithjohn-107"].lms.user_id, graded["smithjohn-108"].lms.user_id) == (
        "107", "108")
    damaged = {u.student_id: u for u in found.unmatched}
    assert set(damaged) == {"crcann-102", "zlibbob-103", "shortcat-104", "bigeve-106",
                            "flipdee-109", "emptydan-105"}
    assert all(u.status == Status.UNREADABLE and u.lms is not None for u in damaged.values())
    assert "checksum" in damaged["crcann-102"].reason
    assert "compressed data does not decode" in damaged["zlibbob-103"].reason
    assert "empty" in damaged["emptydan-105"].reason
    assert "damaged" in damaged["flipdee-109"].reason
    assert "damaged" in damaged["shortcat-104"].reason
    assert "limit" in damaged["bigeve-106"].reason
    assert damaged["bigeve-106"].lms.user_id == "106"
    for name in members:
        assert _accounted(found, name), f"{name} is neither graded nor mentioned"


def test_a_member_is_bounded_while_it_is_read_not_by_its_header(tmp_path):
    """The size counted while decompressing decides, not the header's claim."""
    from autograder.intake.collect import Unreadable, _Entry, _read

    big = tmp_path / "big.ipynb"
    big.write_bytes(b"x" * 300_000)
    entry = _Entry(("big.ipynb",), 10, 0.0, lambda: big.open("rb"), "big.ipynb")
    with pytest.raises(Unreadable, match="expands past"):
        _read(entry, limit=100_000)
    assert _read(entry, limit=400_000) == b"x" * 300_000


def test_an_archive_whose_list_of_files_is_gone_gets_a_clear_error(tmp_path):
    raw = _canvas_zip({"doejane_101_5001_ps3_mle.ipynb": b"{}"})
    cut = tmp_path / "cut.zip"
    cut.write_bytes(bytes(raw[:len(raw) // 2]))  # an interrupted download
    with pytest.raises(ValueError, match="damaged.*download it again"):
        collect_submissions(cut, NB)


def test_a_plain_flat_download_without_ids_keeps_the_name_as_the_student(tmp_path):
    found = collect_submissions(_zip(tmp_path / "flat.zip", {
        "alice_ps3_mle.ipynb": b"a", "bob_ps3_mle.ipynb": b"b"}), NB)
    assert {s.student_id for s in found.submissions} == {"alice", "bob"}


def test_an_extension_for_a_name_that_is_no_student_is_named(tmp_path):
    """An instructor who grants ``smithjohn`` two days in a download whose students are
    ``smithjohn-107`` and ``smithjohn-108`` is told that the extension applies to nobody."""
    from datetime import datetime, timezone

    from autograder.intake.late import LateRule
    from autograder.run.batch import extension_notes

    found = collect_submissions(_zip(tmp_path / "canvas.zip", {
        "smithjohn_107_5007_ps3_mle.ipynb": b"a", "smithjohn_108_5008_ps3_mle.ipynb": b"b"}), NB)
    when = datetime(2026, 11, 22, tzinfo=timezone.utc)
    rule = LateRule(extensions={"smithjohn": when, "smithjohn-108": when})
    notes = extension_notes(rule, found, set())
    assert len(notes) == 1 and "'smithjohn'" in notes[0] and "applies to nobody" in notes[0]
    assert extension_notes(LateRule(extensions={"smithjohn-108": when}), found, set()) == []
