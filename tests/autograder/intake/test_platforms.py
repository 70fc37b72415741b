"""Every platform's download, in its real format, graded as who each student is.

Each archive is built as its platform writes it (the source is cited by each builder) with three
students of problem set 1: the answers typed in (on time), the release untouched (blank, on
time) and the answers typed in after the deadline. The fast tests read the archives
(:func:`collect_submissions`: identity, time, format); the slow ones grade them end to end with
``python -m autograder grade`` in the sandbox and read ``grades.csv``, the records and
``collection.txt``. A download that gives nobody, or only part of the class, exits 1 with the
reason on the last line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import struct
import subprocess
import sys
import time
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder.grading.problemset import ProblemSet
from autograder.intake.collect import collect_submissions
from autograder.sandbox import sandbox_available
from tests import ROOT
from tests import submissions as sb
from tests.downloads import canvas_file
from tests.environment import require
from tests.psharness import generate_release

AVAILABLE, REASON = sandbox_available()
PS = "ps1_pca"
NB = ProblemSet(PS).notebook_name
DEADLINE = datetime(2026, 11, 20, 23, 59, tzinfo=timezone.utc)
POLICY = f"""
[{PS}]
deadline = {DEADLINE.isoformat()}
percent_per_day = 10
"""
ON_TIME = datetime(2026, 11, 19, 21, 3, 12, tzinfo=timezone.utc)
LATE = datetime(2026, 11, 22, 8, 30, 5, tzinfo=timezone.utc)  # 1 day 8.5 hours late: 2 days
#: The three students: what they hand in and when.
STUDENTS = {"correct": ("correct", ON_TIME), "blank": ("blank", ON_TIME), "late": ("correct", LATE)}


def _days_late(when: datetime) -> int:
    """The policy's days late, computed here from its words (per day or part of a day)."""
    return max(0, math.ceil((when - DEADLINE) / timedelta(days=1)))


#: When the instructor downloads: every member's time in the zip, unless a builder says otherwise.
DOWNLOADED = datetime(2026, 11, 28, 10, 0, 0, tzinfo=timezone.utc)


def _zip(path: Path, members: dict[str, bytes | tuple[bytes, datetime]]) -> Path:
    """A zip of ``members`` (bytes, or bytes and the member's time; default :data:`DOWNLOADED`:
    the copy's time, which is not when the student handed it in)."""
    with zipfile.ZipFile(path, "w") as z:
        for name, member in members.items():
            data, when = member if isinstance(member, tuple) else (member, DOWNLOADED)
            z.writestr(zipfile.ZipInfo(name, when.utctimetuple()[:6]), data)
    return path


# ------------------------------------------------------------------------------------------------
# The downloads, as each platform writes them


def canvas_anonymous(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """Canvas with anonymous grading: ``[LATE_]anon_<anonymous id>_<attachment id>_<file>``
    (canvas-lms ``lib/content_zipper.rb``: ``get_filename`` writes ``anon_<anonymous_id>`` for
    the name and the user id when ``anonymize_students?``, ``LATE`` before it for a late
    submission; ``add_upload_submission`` adds ``_<attachment id>_<display name>``). Returns the
    members and each student's expected id. Every member's time is the download's,
    :data:`DOWNLOADED` (after the deadline): ``add_attachment_to_zip`` calls
    ``zipfile.get_output_stream(filename)`` with no time, and rubyzip's ``Zip::Entry`` defaults
    to ``::Zip::DOSTime.now`` (rubyzip ``lib/zip/entry.rb``, ``initialize``)."""
    ids = {"correct": ("Vh2iS", 5001), "blank": ("q8ZkT", 5002), "late": ("Mn3pR", 5003)}
    members, expected = {}, {}
    for who, (kind, when) in STUDENTS.items():
        anonymous, attachment = ids[who]
        late = "LATE_" if when > DEADLINE else ""
        members[f"{late}anon_{anonymous}_{attachment}_{NB}"] = notebooks[kind]
        expected[who] = f"anon-{anonymous}"
    return members, expected


def _receipt(name: str, user: str, when: datetime, file: str) -> str:
    """A Blackboard receipt (the layout CodeGra.de parses: te5in/CodeGra.de
    ``psef/blackboard.py``), its time in US Eastern time as a US server writes it."""
    local = when.astimezone(timezone(timedelta(hours=-5)))
    stamp = local.strftime("%A, %B %-d, %Y %-I:%M:%S %p") + " EST"
    return (
        f"Name: {name} ({user})\nAssignment: PS1 PCA\nDate Submitted: {stamp}\n"
        f"Current Grade: Needs Grading\n\nSubmission Field:\nThere is no student submission "
        f"text data for this assignment.\n\nComments:\nThere are no student comments for this "
        f"assignment.\n\nFiles:\n\tOriginal filename: {NB}\n\tFilename: {file}\n"
    )


def blackboard(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """Blackboard Learn's "Assignment File Download": ``<Assignment>_<username>_attempt_
    <YYYY-MM-DD-HH-MM-SS>_<file>`` and ``..._attempt_<stamp>.txt`` per attempt
    (kwurst/bb-file-cleanup ``README.md``; the receipt: te5in/CodeGra.de ``psef/blackboard.py``).
    The late student has an older attempt too, which is not graded; one username has an
    underscore, which only the receipt gives right."""
    users = {"correct": ("Jane Doe", "jdoe"), "blank": ("Ann Lee", "a_lee"),
             "late": ("John Roe", "jroe")}
    members, expected = {}, {}
    for who, (kind, when) in STUDENTS.items():
        name, user = users[who]
        attempts = [(notebooks["blank"], ON_TIME - timedelta(days=1))] if who == "late" else []
        for data, at in attempts + [(notebooks[kind], when)]:
            eastern = at.astimezone(timezone(timedelta(hours=-5)))
            prefix = f"PS1 PCA_{user}_attempt_{eastern:%Y-%m-%d-%H-%M-%S}"
            members[f"{prefix}_{NB}"] = data
            members[f"{prefix}.txt"] = _receipt(name, user, at, f"{prefix}_{NB}").encode()
        expected[who] = user
    return members, expected


def _nbgrader_stamp(when: datetime) -> str:
    """nbgrader's timestamp: ``strftime("%Y-%m-%d %H:%M:%S.%f %Z")`` in its zone, UTC by default
    (nbgrader ``exchange/abc/exchange.py``)."""
    return when.strftime("%Y-%m-%d %H:%M:%S.%f %Z")


def nbgrader_inbound(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """nbgrader's exchange: ``inbound/<student>+<ps>+<timestamp>+<random>/`` with the time in
    ``timestamp.txt`` (nbgrader ``exchange/default/submit.py``). The late student submitted
    twice; the newer is graded."""
    members, expected = {}, {}
    for who, (kind, when) in STUDENTS.items():
        tries = [(notebooks["blank"], ON_TIME - timedelta(hours=3))] if who == "late" else []
        for n, (data, at) in enumerate(tries + [(notebooks[kind], when)]):
            stamp = _nbgrader_stamp(at)
            folder = f"inbound/{who}+{PS}+{stamp}+R{n}nd0m-Str_"
            members[f"{folder}/{NB}"] = data
            members[f"{folder}/timestamp.txt"] = stamp.encode()
        expected[who] = who
    return members, expected


def nbgrader_submitted(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """nbgrader's course folder after ``nbgrader collect``: ``submitted/<student>/<ps>/`` with
    ``timestamp.txt`` (nbgrader ``exchange/default/collect.py``, ``coursedir.py``)."""
    members, expected = {}, {}
    for who, (kind, when) in STUDENTS.items():
        members[f"submitted/{who}/{PS}/{NB}"] = notebooks[kind]
        members[f"submitted/{who}/{PS}/timestamp.txt"] = _nbgrader_stamp(when).encode()
        expected[who] = who
    return members, expected


def d2l(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """D2L Brightspace's download: ``<id>-<id> - <First Last> - <Mon D, YYYY HMM PM>/<file>``
    and ``index.html`` (cgmb/d2lmf ``d2lmf/d2lmf.py``, ``parse_submission_dirname``; the time
    as in its ``README.md``, ``Oct 11, 2015 803 PM``), times to the minute. The late student
    submitted twice; the newer is graded."""
    names = {"correct": "Jane Doe", "blank": "Zoë O'Neil", "late": "John Roe"}
    members, expected = {"index.html": b"<html><body>Submissions</body></html>"}, {}
    for n, (who, (kind, when)) in enumerate(STUDENTS.items()):
        tries = [(notebooks["blank"], ON_TIME)] if who == "late" else []
        for k, (data, at) in enumerate(tries + [(notebooks[kind], when)]):
            stamp = f"{at:%b} {at.day}, {at.year} {int(at.strftime('%I'))}{at:%M %p}"
            members[f"{118000 + 10 * n + k}-{2557369 + n} - {names[who]} - {stamp}/{NB}"] = data
        expected[who] = {"Zoë O'Neil": "zoe-o-neil"}.get(names[who], names[who].lower().replace(" ", "-"))
    return members, expected


def github_clones(notebooks: dict[str, bytes], root: Path) -> tuple[Path, dict[str, str]]:
    """GitHub Classroom's repositories as ``gh classroom clone student-repos`` leaves them:
    ``<slug>-submissions/<slug>-<username>/`` (github/gh-classroom ``cmd/gh-classroom/clone/
    student-repos/student-repos.go``), each a real git repository whose last commit is at the
    student's time; the files' own times are today's, as a clone's are."""
    folder = root / "ps1-pca-submissions"
    expected = {}
    for who, (kind, when) in STUDENTS.items():
        user = {"correct": "janedoe", "blank": "ann-lee", "late": "jroe42"}[who]
        clone = folder / f"ps1-pca-{user}"
        clone.mkdir(parents=True)
        (clone / NB).write_bytes(notebooks[kind])
        stamp = f"{int(when.timestamp())} +0000"
        env = {"PATH": os.environ["PATH"], "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
               "GIT_AUTHOR_NAME": user, "GIT_AUTHOR_EMAIL": f"{user}@example.edu",
               "GIT_COMMITTER_NAME": user, "GIT_COMMITTER_EMAIL": f"{user}@example.edu",
               "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
        for command in (["init", "-q"], ["add", NB], ["commit", "-q", "-m", "Done"]):
            subprocess.run(["git", *command], cwd=clone, env=env, check=True, capture_output=True)
        expected[who] = user
    return folder, expected


#: Gradescope's group of two: the partner of the "correct" student, who gets their grade.
PARTNER = "1004"


def gradescope(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """Gradescope's "Export Submissions": ``assignment_<id>_export/submission_<id>/<file>`` and
    ``submission_metadata.yml`` keyed by those folders, ``:submitters`` with ``:name``, ``:sid``
    and ``:email`` (hazelgrove/hazel ``src/haz3lschool/Gradescope-Utils-2023.02.17/bin/
    join.pl`` reads it so), ``:created_at`` a time with its offset. The "correct" submission is
    a group's: its partner is :data:`PARTNER`."""
    people = {"correct": [("Jane Doe", "1001"), ("Max Poe", PARTNER)],
              "blank": [("Ann Lee", "1002")], "late": [("John Roe", "1003")]}
    root = "assignment_4242_export"
    members, expected, metadata = {}, {}, []
    for n, (who, (kind, when)) in enumerate(STUDENTS.items()):
        key = f"submission_{90001 + n}"
        members[f"{root}/{key}/{NB}"] = notebooks[kind]
        local = when.astimezone(timezone(timedelta(hours=-8)))
        metadata.append(f"{key}:\n  :submitters:\n")
        for name, sid in people[who]:
            email = name.lower().replace(" ", ".") + "@example.edu"
            metadata.append(f"  - :name: {name}\n    :sid: '{sid}'\n    :email: {email}\n")
        metadata.append(f"  :created_at: {local:%Y-%m-%d %H:%M:%S}.{local:%f}000 -08:00\n"
                        f"  :score: 0.0\n  :history: []\n")
        expected[who] = people[who][0][1]
    members[f"{root}/submission_metadata.yml"] = "".join(metadata).encode()
    return members, expected


def canvas_groups(notebooks: dict[str, bytes]) -> tuple[dict[str, bytes], dict[str, str]]:
    """Canvas's download of a group assignment graded as a group, with the group set's export
    beside it (:func:`_canvas_group_set`): each group's submission once, its representative's,
    named after the group (canvas-lms ``app/models/assignment.rb``, ``representatives``;
    ``lib/content_zipper.rb``), a student in no group under their display name. The "correct"
    submission is a group of two, its partner :data:`CANVAS_PARTNER`."""
    people = [("Jane Doe", "104", "Team 7"), ("Max Poe", "108", "Team 7"),
              ("Ann Lee", "110", "Café Crew"), ("John Roe", "103", "")]
    files = {"correct": canvas_file("Team 7", 104, 5004, NB),
             "blank": canvas_file("Café Crew", 110, 5010, NB),
             "late": canvas_file("John Roe", 103, 5003, NB, late=True)}
    members = {files[who]: notebooks[kind] for who, (kind, _) in STUDENTS.items()}
    members["PS1 groups.csv"] = _canvas_group_set(people)
    return members, {"correct": "jane-doe-104", "blank": "ann-lee-110", "late": "johnroe-103"}


#: The partner of the Canvas group of :func:`canvas_groups`.
CANVAS_PARTNER = "max-poe-108"


DOWNLOADS = {
    "canvas-anonymous": (canvas_anonymous, "Canvas (anonymous grading)"),
    "canvas-groups": (canvas_groups, "Canvas and Canvas (group assignment)"),
    "blackboard": (blackboard, "Blackboard Learn"),
    "nbgrader-inbound": (nbgrader_inbound, "nbgrader (exchange inbound or submitted)"),
    "nbgrader-submitted": (nbgrader_submitted, "nbgrader (exchange inbound or submitted)"),
    "gradescope": (gradescope, "Gradescope (Export Submissions)"),
    "d2l": (d2l, "D2L Brightspace"),
}
#: Seconds a download's times can be off by (D2L writes the minute).
PRECISION = {"d2l": 60}
#: The downloads that give no time (their zip stamps the download's) and mark a late file
#: instead: one day late by the late policy's words (``autograder/intake/late.py``).
MARKED = {"canvas-anonymous", "canvas-groups"}
#: Students a download gives besides the three (a group's partner), and whose grade they share.
PARTNERS = {"gradescope": {PARTNER: "correct"}, "canvas-groups": {CANVAS_PARTNER: "correct"}}


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory):
    """The correct and the blank notebook of problem set 1, from a real release."""
    base = tmp_path_factory.mktemp("platforms", numbered=True)
    (base / "release").mkdir()
    release = generate_release([PS], base / "release")
    builder = sb.Builder(ProblemSet(PS).path, release / PS / NB)
    books = {"correct": sb.to_bytes(builder.correct()), "blank": sb.to_bytes(builder.blank())}
    return base, books


# ------------------------------------------------------------------------------------------------
# Reading the downloads (no kernel)


@pytest.mark.parametrize("platform", DOWNLOADS)
def test_each_download_gives_each_student_their_identity_and_time(platform, tmp_path):
    books = {"correct": b'{"correct": 1}', "blank": b'{"blank": 1}'}
    build, title = DOWNLOADS[platform]
    members, expected = build(books)
    found = collect_submissions(_zip(tmp_path / "download.zip", members), NB)
    assert found.platform == title and not found.lost and not found.unmatched, found.notes
    got = {s.student_id: s for s in found.submissions}
    partners = PARTNERS.get(platform, {})
    assert set(got) == set(expected.values()) | set(partners)
    for partner, who in partners.items():
        assert got[partner].data == got[expected[who]].data
        assert got[partner].submitted_at == got[expected[who]].submitted_at
    for who, (kind, when) in STUDENTS.items():
        sub = got[expected[who]]
        assert sub.data == books[kind], who  # the newest attempt, not the older one
        if platform in MARKED:  # the zip's time is the download's: no evidence
            assert sub.submitted_at is None and sub.lms.late == (when > DEADLINE), who
            continue
        assert sub.submitted_at == pytest.approx(when.timestamp(), abs=PRECISION.get(platform, 1))
    canvas = {s.lms.late for s in found.submissions if s.lms.system == "canvas"}
    assert canvas in (set(), {True, False})


def test_canvas_anonymous_ids_are_kept_for_the_re_upload(tmp_path):
    members, _ = canvas_anonymous({"correct": b"1", "blank": b"2"})
    found = collect_submissions(_zip(tmp_path / "c.zip", members), NB)
    late = next(s for s in found.submissions if s.student_id == "anon-Mn3pR")
    assert (late.lms.anonymous, late.lms.late, late.lms.attachment_id) == (True, True, "5003")
    assert late.lms.prefix == "anon_Mn3pR_5003_"


@pytest.mark.parametrize("platform, evidence, said", [
    ("blackboard", "lms", "marks no file late"),  # receipts give times, no mark
    ("blackboard", "both", ""),
    ("canvas-anonymous", "lms", ""),  # Canvas marks LATE_
    ("canvas-anonymous", "file-time", "gives no time"),  # its zip's times are the download's
    ("canvas-anonymous", "both", ""),
])
def test_a_policy_that_reads_evidence_the_download_lacks_says_nobody_is_late(
        tmp_path, platform, evidence, said):
    """``evidence = "lms"`` reads only the platform's late mark (``autograder/intake/late.py``),
    which only Canvas writes (``LATE_``: canvas-lms ``lib/content_zipper.rb``); on Blackboard
    it would make nobody late, and the run says so instead of staying silent."""
    from autograder.intake.late import load_policy
    from autograder.run.batch import evidence_notes

    members, _ = DOWNLOADS[platform][0]({"correct": b"1", "blank": b"2"})
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB)
    (tmp_path / "late.toml").write_text(f'{POLICY}evidence = "{evidence}"\n')
    rule = load_policy(tmp_path / "late.toml").for_problem_set(PS)
    notes = evidence_notes(rule, found)
    if not said:
        assert notes == []
        late = [rule.assess(s.student_id, s.submitted_at, s.lms.late).days
                for s in found.submissions]
        assert max(late) > 0  # the evidence is there: the late student is late
        return
    (note,) = notes
    assert said in note and "nobody is counted late" in note and found.platform in note
    assert all(rule.assess(s.student_id, s.submitted_at, s.lms.late).days == 0
               for s in found.submissions)


@pytest.mark.parametrize("tz, form, written", [
    ("Asia/Singapore", "%Y-%m-%d %H:%M:%S.%f %Z", "+08"),  # the default format; %Z is "+08"
    ("Asia/Singapore", "%Y-%m-%d %H:%M:%S.%f %z", "+0800"),
    ("America/Sao_Paulo", "%Y-%m-%d %H:%M:%S.%f %Z", "-03"),
    ("Asia/Singapore", "iso", "+08:00"),
])
def test_nbgrader_stamps_with_a_numeric_zone_give_each_student_their_time(
        tmp_path, tz, form, written):
    """nbgrader stamps a submission with ``datetime.now(gettz(timezone)).strftime(
    timestamp_format)`` (nbgrader ``exchange/abc/exchange.py``, ``set_timestamp``; the default
    format ``"%Y-%m-%d %H:%M:%S.%f %Z"``, any format dateutil reads back is allowed), in the
    folder's name and in ``timestamp.txt`` (``exchange/default/submit.py``). A zone whose
    abbreviation is its offset writes ``+08``: the ``+`` in the folder's name splits no
    student off, and the offset is read."""
    from dateutil.tz import gettz

    members, whens = {}, {"jdoe": ON_TIME, "aroe": LATE}
    for who, when in whens.items():
        local = when.astimezone(gettz(tz))
        stamp = local.isoformat(" ") if form == "iso" else local.strftime(form)
        assert stamp.endswith(written), stamp
        folder = f"inbound/{who}+{PS}+{stamp}+AbCdEfGhIjKl"
        members[f"{folder}/{NB}"] = who.encode()
        members[f"{folder}/timestamp.txt"] = stamp.encode()
    found = collect_submissions(_zip(tmp_path / "inbound.zip", members), NB)
    assert not found.lost and not found.unmatched, found.notes
    got = {s.student_id: s for s in found.submissions}
    assert set(got) == set(whens)
    for who, when in whens.items():
        assert got[who].data == who.encode() and got[who].submitted_at == when.timestamp()
    del members[next(m for m in members if m.startswith("inbound/aroe") and m.endswith(".txt"))]
    found = collect_submissions(_zip(tmp_path / "no-txt.zip", members), NB)  # the folder's time
    assert {s.student_id: s.submitted_at for s in found.submissions} == {
        w: t.timestamp() for w, t in whens.items()}


def test_a_gradescope_student_known_by_an_email_with_a_plus_is_graded(tmp_path):
    """Gradescope's metadata gives each submitter's ``:sid`` and ``:email`` (hazelgrove/hazel
    ``src/haz3lschool/Gradescope-Utils-2023.02.17/bin/join.pl``); without an SIS id the email is
    the student, and an address with a ``+`` (sub-addressing, RFC 5233) is a valid one."""
    members, _ = gradescope({"correct": b"1", "blank": b"2"})
    key = "assignment_4242_export/submission_metadata.yml"
    text = members[key].decode()
    assert "    :sid: '1002'\n    :email: ann.lee@example.edu" in text
    members[key] = text.replace("    :sid: '1002'\n    :email: ann.lee@example.edu",
                                "    :sid: ''\n    :email: ann.lee+ml@example.edu").encode()
    found = collect_submissions(_zip(tmp_path / "g.zip", members), NB)
    assert not found.lost, found.notes
    ann = next(s for s in found.submissions if s.student_id == "ann.lee+ml@example.edu")
    assert ann.data == b"2"


def test_a_blackboard_attempt_without_its_receipt_is_read_in_the_receipts_zone(tmp_path):
    """The stamp in an attempt's name is the server's local time (``_attempt_<YYYY-MM-DD-HH-MM-
    SS>``, kwurst/bb-file-cleanup ``README.md``), the zone the receipts' ``Date Submitted``
    names (te5in/CodeGra.de ``psef/blackboard.py``): EST here, never UTC."""
    members, _ = blackboard({"correct": b"1", "blank": b"2"})
    receipt = next(n for n in members if n.endswith(".txt") and "_jdoe_" in n)
    del members[receipt]
    found = collect_submissions(_zip(tmp_path / "b.zip", members), NB)
    jdoe = next(s for s in found.submissions if s.student_id == "jdoe")
    assert jdoe.submitted_at == ON_TIME.timestamp()
    assert any("_jdoe_" in n and "read in EST" in n for n in found.notes), found.notes


def test_a_newer_blackboard_attempt_with_another_file_name_is_graded(tmp_path):
    """Blackboard keeps every attempt, each file under its own name (kwurst/bb-file-cleanup
    ``README.md``); a student who renamed the notebook in a second attempt is graded on the
    second, and the first is noted, not graded."""
    members, _ = blackboard({"correct": b"1", "blank": b"2"})
    at = LATE + timedelta(hours=1)
    eastern = at.astimezone(timezone(timedelta(hours=-5)))
    prefix = f"PS1 PCA_jdoe_attempt_{eastern:%Y-%m-%d-%H-%M-%S}"
    renamed = "ps1_pca_final.ipynb"
    members[f"{prefix}_{renamed}"] = b"final"
    members[f"{prefix}.txt"] = _receipt("Jane Doe", "jdoe", at, f"{prefix}_{renamed}").encode()
    found = collect_submissions(_zip(tmp_path / "b.zip", members), NB)
    jdoe = next(s for s in found.submissions if s.student_id == "jdoe")
    assert jdoe.data == b"final" and jdoe.submitted_at == at.timestamp()
    older = next(n for n in members if "_jdoe_" in n and n.endswith(NB) and prefix not in n)
    assert any(n.startswith(f"{older}: not graded, an older attempt") for n in found.notes)
    assert not found.lost


def test_lms_forces_the_format(tmp_path):
    members, _ = blackboard({"correct": b"1", "blank": b"2"})
    download = _zip(tmp_path / "b.zip", members)
    forced = collect_submissions(download, NB, lms="folder")
    assert forced.platform.startswith("a folder per student") or not forced.submissions
    assert forced.lost, "read as a folder, the Blackboard files belong to no student"
    with pytest.raises(ValueError, match="unknown --lms"):
        collect_submissions(download, NB, lms="sakai")


# ------------------------------------------------------------------------------------------------
# Graded end to end

#: Their users are slow (tests/conftest.py): a grading run.
SLOW_FIXTURES = ("graded", "notebooks")


def _grade(base: Path, download: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    policy = base / "late.toml"
    policy.write_text(POLICY)
    return subprocess.run(
        [sys.executable, "-m", "autograder", "grade", PS, str(download), "--out", str(out),
         "--workers", "2", "--quiet", "--course", str(base / "release"),
         "--late-policy", str(policy), *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=900)


GITHUB = "GitHub Classroom (cloned repositories)"


def test_github_classroom_clones_are_on_time_by_their_last_commit(tmp_path):
    books = {"correct": b'{"correct": 1}', "blank": b'{"blank": 1}'}
    folder, expected = github_clones(books, tmp_path)
    found = collect_submissions(folder.parent, NB)
    assert found.platform == GITHUB and not found.lost and not found.unmatched, found.notes
    got = {s.student_id: s for s in found.submissions}
    assert set(got) == set(expected.values())
    for who, (kind, when) in STUDENTS.items():
        assert got[expected[who]].data == books[kind]
        assert got[expected[who]].submitted_at == when.timestamp()  # not the file's time


def test_clones_given_as_their_submissions_folder_keep_the_usernames(tmp_path):
    """``gh classroom clone student-repos`` clones into ``<slug>-submissions/<slug>-<username>/``
    (github/gh-classroom ``cmd/gh-classroom/clone/student-repos/student-repos.go``); given that
    folder itself, the slug is its name's, so usernames that begin alike (``mary-ann``,
    ``mary-jo``) keep their first word."""
    books = {"correct": b'{"correct": 1}', "blank": b'{"blank": 1}'}
    folder, _ = github_clones(books, tmp_path)
    users = {"janedoe": "mary-ann", "ann-lee": "mary-jo", "jroe42": "mary-lou"}
    for old, new in users.items():
        (folder / f"ps1-pca-{old}").rename(folder / f"ps1-pca-{new}")
    found = collect_submissions(folder, NB)
    assert found.platform == GITHUB
    assert {s.student_id for s in found.submissions} == set(users.values()), found.notes


def test_a_zip_of_clones_gives_no_time_and_the_policy_says_so(tmp_path):
    from autograder.intake.late import load_policy

    books = {"correct": b'{"correct": 1}', "blank": b'{"blank": 1}'}
    folder, expected = github_clones(books, tmp_path)
    members = {str(f.relative_to(tmp_path)): f.read_bytes()
               for f in sorted(folder.rglob("*")) if f.is_file()}
    found = collect_submissions(_zip(tmp_path / "clones.zip", members), NB)
    assert found.platform == GITHUB and {s.student_id for s in found.submissions} == set(
        expected.values())
    assert all(s.submitted_at is None for s in found.submissions)
    (tmp_path / "late.toml").write_text(POLICY)
    rule = load_policy(tmp_path / "late.toml").for_problem_set(PS)
    late = rule.assess("jroe42", None)
    assert late.days == 0 and "no evidence" in late.reason


@pytest.fixture(scope="module", params=[*DOWNLOADS, "github"])
def graded(request, notebooks):
    """One platform's download graded: (its name, the command's result, output folder, ids)."""
    require(AVAILABLE, f"no sandbox here: {REASON}")
    base, books = notebooks
    if request.param == "github":
        download, expected = github_clones(books, base / "github")
        out = base / "out-github"
        return request.param, _grade(base, download.parent, out), out, expected
    build, _ = DOWNLOADS[request.param]
    members, expected = build(books)
    download = _zip(base / f"{request.param}.zip", members)
    out = base / f"out-{request.param}"
    return request.param, _grade(base, download, out), out, expected


def test_every_student_is_graded_as_who_they_are(graded):
    platform, done, out, expected = graded
    assert done.returncode == 0, done.stdout + done.stderr
    title = DOWNLOADS[platform][1] if platform in DOWNLOADS else GITHUB
    assert f"format: {title}" in done.stderr.splitlines()
    assert (out / "collection.txt").read_text().splitlines()[0] == f"format: {title}"
    with (out / "grades.csv").open(newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    partners = PARTNERS.get(platform, {})
    assert set(rows) == set(expected.values()) | set(partners)
    records = {r["student_id"]: r for r in
               (json.loads(p.read_text()) for p in (out / "records").glob("*.json"))}
    correct, blank, late = (records[expected[w]] for w in ("correct", "blank", "late"))
    total = sum(s["max_points"] for s in correct["scores"] if s["points"] is not None)
    points = {w: sum(s["points"] or 0 for s in records[expected[w]]["scores"])
              for w in STUDENTS}
    assert points["correct"] == points["late"] == total > points["blank"] == 0
    assert correct["late"]["days"] == blank["late"]["days"] == 0
    days = 1 if platform in MARKED else _days_late(LATE)  # the mark is one day
    assert late["late"]["days"] == days and days == (1 if platform in MARKED else 2)
    assert late["late"]["percent"] == 10 * days
    for partner, who in partners.items():  # a group's member gets the group's grade
        assert rows[partner]["autograded_total"] == rows[expected[who]]["autograded_total"]
        assert records[partner]["late"]["days"] == records[expected[who]]["late"]["days"]


# ------------------------------------------------------------------------------------------------
# The exit status tells the truth


def test_a_run_that_grades_nobody_exits_1_and_says_why_last(notebooks):
    """Read as a folder per student, a Blackboard download gives every notebook to nobody: the
    run must not exit 0 (it did, with 0 rows)."""
    require(AVAILABLE, f"no sandbox here: {REASON}")
    base, books = notebooks
    members, _ = blackboard(books)
    download = _zip(base / "nobody.zip", members)
    done = _grade(base, download, base / "out-nobody", "--lms", "folder")
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error: nobody was graded:"), last
    assert "belong to no student" in last and "collection.txt" in last
    collection = (base / "out-nobody" / "collection.txt").read_text().splitlines()
    assert collection[0] == "format: a folder per student (as --lms says)"
    assert sum(line.startswith("lost: ") for line in collection) == 4  # 4 notebooks, 3 students
    dry = _grade(base, download, base / "out-nobody-dry", "--lms", "folder", "--dry-run")
    assert dry.returncode == 1, dry.stdout + dry.stderr  # a dry run exits as the run would
    assert dry.stderr.strip().splitlines()[-1].startswith("error: nobody was graded:")
    assert not (base / "out-nobody-dry" / "collection.txt").exists()  # and writes nothing


def test_a_run_that_grades_part_of_the_class_exits_1_and_says_why_last(notebooks):
    """One student's notebook in nbgrader's ``submitted`` folder and one notebook beside the
    student folders, which nbgrader's layout gives to nobody."""
    require(AVAILABLE, f"no sandbox here: {REASON}")
    base, books = notebooks
    members = {f"submitted/alice/{PS}/{NB}": books["correct"],
               f"submitted/alice/{PS}/timestamp.txt": _nbgrader_stamp(ON_TIME).encode(),
               f"submitted/{NB}": books["correct"]}
    done = _grade(base, _zip(base / "part.zip", members), base / "out-part")
    assert done.returncode == 1, done.stdout + done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("warning: not all of the class was graded:"), last
    assert f"submitted/{NB}" in last
    with (base / "out-part" / "grades.csv").open(newline="") as f:
        assert [r["student_id"] for r in csv.DictReader(f)] == ["alice"]
    dry = _grade(base, _zip(base / "part.zip", members), base / "out-part-dry", "--dry-run")
    assert dry.returncode == 1, dry.stdout + dry.stderr
    last = dry.stderr.strip().splitlines()[-1]
    assert last.startswith("warning: not all of the class was graded:") and "dry-run" in last


@pytest.mark.parametrize("graded", ["blackboard"], indirect=True)
def test_the_blackboard_grades_go_back_by_username(graded):
    """``export`` writes the Grade Center upload (Blackboard Learn help, "Uploading External
    Grade Center Items": a header row, every value quoted, the student's user name, a column
    without an id added as a new one), each username with its final score in ``grades.csv``."""
    _, _, out, expected = graded
    base = out.parent
    exported = subprocess.run(
        [sys.executable, "-m", "autograder", "export", PS, "--out", str(out), "--blackboard",
         "--course", str(base / "release"), "--late-policy", str(base / "late.toml"),
         "--lms-name", "PS1 PCA"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    text = (out / "exports" / "blackboard.csv").read_text()
    lines = text.splitlines()
    assert lines[0] == '"Username","PS1 PCA"'
    with (out / "grades.csv").open(newline="") as f:
        finals = {r["student_id"]: r["final"] for r in csv.DictReader(f)}
    with (out / "exports" / "blackboard.csv").open(newline="") as f:
        uploaded = {row[0]: row[1] for row in list(csv.reader(f))[1:]}
    assert uploaded == {user: finals[user] for user in expected.values()}
    assert "a_lee" in uploaded  # the username with an underscore, from its receipt


@pytest.mark.parametrize("graded", ["canvas-anonymous"], indirect=True)
def test_anonymous_canvas_feedback_goes_back_by_attachment_and_no_grade_by_a_wrong_id(graded):
    """Canvas's gradebook import matches a student by user id or SIS id, which an anonymous
    download does not have: no row is written for them, and the export says so; the feedback
    zip keeps the download's ``anon_<id>_<attachment id>_`` prefix for "Re-Upload Submissions"
    (canvas-lms ``app/models/assignment.rb``, ``infer_comment_context_from_filename``)."""
    _, _, out, expected = graded
    base = out.parent
    exported = subprocess.run(
        [sys.executable, "-m", "autograder", "export", PS, "--out", str(out), "--canvas",
         "--feedback-archive", "--course", str(base / "release"),
         "--late-policy", str(base / "late.toml")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    with (out / "exports" / "canvas.csv").open(newline="") as f:
        assert list(csv.reader(f))[2:] == []  # no anonymous id passed off as a user id
    for student in expected.values():
        assert f"canvas.csv: {student}: an anonymous id" in exported.stderr
    with zipfile.ZipFile(out / "exports" / "feedback-canvas.zip") as z:
        names = set(z.namelist())
    stem = Path(NB).stem
    assert names == {f"anon_Vh2iS_5001_{stem}-feedback.html", f"anon_q8ZkT_5002_{stem}-feedback.html",
                     f"anon_Mn3pR_5003_{stem}-feedback.html"}


def test_a_plain_folder_named_like_gh_s_submissions_is_still_a_plain_folder(tmp_path):
    """Only a clone's ``.git`` says GitHub Classroom: a class folder named ``..-submissions``
    (as grading.md names the download) keeps its file times for the late policy."""
    members = {f"ps1_pca-submissions/alice/{NB}": (b"{}", ON_TIME),
               f"ps1_pca-submissions/bob/{NB}": (b"{}", LATE)}
    found = collect_submissions(_zip(tmp_path / "class.zip", members), NB)
    assert found.platform == "a folder per student"
    assert {s.student_id: s.submitted_at for s in found.submissions} == {
        "alice": pytest.approx(ON_TIME.timestamp()), "bob": pytest.approx(LATE.timestamp())}


def test_a_d2l_time_of_one_digit_hour_is_read_to_the_minute(tmp_path):
    """``103 PM`` is 1:03 PM (Brightspace writes the hour without a colon: ``Oct 11, 2015 803
    PM`` in cgmb/d2lmf's ``README.md``), not 10:03: every minute of a day, written so, is read
    back as the time it names."""
    day = datetime(2026, 11, 19, tzinfo=timezone.utc)
    members = {}
    for minute in range(0, 24 * 60, 7):
        at = day + timedelta(minutes=minute)
        stamp = f"{at:%b} {at.day}, {at.year} {int(at.strftime('%I'))}{at:%M %p}"
        members[f"{100 + minute}-{200 + minute} - Student {minute} - {stamp}/{NB}"] = b"{}"
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB)
    assert len(found.submissions) == len(members)
    for sub in found.submissions:
        minute = int(sub.student_id.rsplit("-", 1)[-1])
        assert sub.submitted_at == (day + timedelta(minutes=minute)).timestamp(), sub.student_id


def test_two_d2l_folders_of_one_name_are_said(tmp_path):
    """Brightspace's download names students, not accounts: two folders of one name are graded as
    one student's submissions (the newest), and the instructor is told which folders."""
    members, _ = d2l({"correct": b"1", "blank": b"2"})
    members["999001-999002 - Jane Doe - Nov 18, 2026 103 PM/" + NB] = b"3"
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB)
    said = [n for n in found.notes if "carry the name of jane-doe" in n]
    assert len(said) == 1 and "999001-999002 - Jane Doe" in said[0], found.notes


@pytest.mark.parametrize("abbreviation, region", [("CST", "America/Chicago"),
                                                  ("PST", "America/Los_Angeles"),
                                                  ("EST", "America/New_York"),
                                                  ("CET", "Europe/Paris")])
def test_a_receipts_zone_abbreviation_is_read_as_its_offset(tmp_path, abbreviation, region):
    """A Blackboard receipt's ``Date Submitted`` in a US or European server's standard time: the
    abbreviation is the offset (compared with the region's zone on a winter date). ``CST`` names
    China's and Cuba's zones too, so the course's deadline, in the server's zone, says which."""
    members, receipt = _receipt_in(region, ON_TIME, abbreviation)
    found = collect_submissions(_zip(tmp_path / "b.zip", members), NB,
                                course_offset=ON_TIME.astimezone(ZoneInfo(region)).utcoffset())
    jdoe = next(s for s in found.submissions if s.student_id == "jdoe")
    assert jdoe.submitted_at == ON_TIME.timestamp()
    assert not [n for n in found.notes if "_jdoe_" in n and "no time zone" in n], found.notes


def _receipt_in(region: str, when: datetime, abbreviation: str) -> tuple[dict[str, bytes], str]:
    """The Blackboard download with jdoe's receipt dated ``when`` as a server in ``region``
    writes it (its abbreviation, tzdata's ``%Z`` there, checked to be ``abbreviation``); jdoe's
    attempt stamp in the name is in that zone too."""
    members, _ = blackboard({"correct": b"1", "blank": b"2"})
    receipt = next(n for n in members if n.endswith(".txt") and "_jdoe_" in n)
    local = when.astimezone(ZoneInfo(region))
    assert local.tzname() == abbreviation
    text = members[receipt].decode().replace(
        next(line for line in members[receipt].decode().splitlines()
             if line.startswith("Date Submitted:")),
        f"Date Submitted: {local:%A, %B} {local.day}, {local.year} "
        f"{int(local.strftime('%I'))}:{local:%M:%S %p} {abbreviation}")
    members[receipt] = text.encode()
    return members, receipt


#: Servers whose zone's abbreviation (tzdata's ``%Z``) names several zones, and a date on which
#: it does (Ireland's ``IST`` is its summer time).
AMBIGUOUS_SERVERS = [("CST", "America/Chicago", ON_TIME), ("CST", "Asia/Shanghai", ON_TIME),
                     ("CST", "America/Havana", ON_TIME), ("IST", "Asia/Kolkata", ON_TIME),
                     ("IST", "Asia/Jerusalem", ON_TIME),
                     ("IST", "Europe/Dublin", ON_TIME - timedelta(days=150))]


def _regions_in(abbreviation: str, offset: timedelta) -> list[str]:
    """The oracle: the regions of :data:`AMBIGUOUS_SERVERS` that write ``abbreviation`` and are
    at ``offset`` on some day of the year, by tzdata."""
    days = [datetime(2026, 1, 1, 12, tzinfo=timezone.utc) + timedelta(days=d) for d in range(365)]
    return [region for abbr, region, _ in AMBIGUOUS_SERVERS if abbr == abbreviation
            and any(day.astimezone(ZoneInfo(region)).utcoffset() == offset for day in days)]


@pytest.mark.parametrize("abbreviation, region, when", AMBIGUOUS_SERVERS)
def test_an_ambiguous_zone_abbreviation_is_read_only_where_the_course_settles_it(
        tmp_path, abbreviation, region, when):
    """``CST`` is Chicago's, Shanghai's and Havana's; ``IST`` India's, Israel's and Ireland's
    (tzdata, read here through :mod:`zoneinfo`). A Blackboard receipt in such a zone is read in
    the one the course's deadline (in the server's zone) settles, when only that one is ever at
    the deadline's offset (Havana's −05:00 is Chicago's summer time too: not settled); with no
    deadline, or one in a zone none of them is in, the attempt has no time (never a guess) and
    the note names the receipt, the zones and how to settle it. The attempt stays graded."""
    members, receipt = _receipt_in(region, when, abbreviation)
    download = _zip(tmp_path / "b.zip", members)
    course = when.astimezone(ZoneInfo(region)).utcoffset()
    assert course is not None
    found = collect_submissions(download, NB, course_offset=course)
    jdoe = next(s for s in found.submissions if s.student_id == "jdoe")
    settled = _regions_in(abbreviation, course) == [region]
    assert jdoe.submitted_at == (when.timestamp() if settled else None), found.notes
    elsewhere = timedelta(hours=-10)  # Honolulu: in none of the zones these abbreviations name
    for offset in (None, elsewhere) if settled else (None, elsewhere, course):
        found = collect_submissions(download, NB, course_offset=offset)
        jdoe = next(s for s in found.submissions if s.student_id == "jdoe")
        assert jdoe.submitted_at is None
        said = [n for n in found.notes if "_jdoe_" in n and "ambiguous" in n]
        assert said and receipt.removesuffix(".txt") in said[0], found.notes
        assert region.split("/")[1] in said[0] and "late.toml" in said[0], said
        assert "no evidence" in said[0], said


@pytest.mark.parametrize("abbreviation, region, when",
                         [AMBIGUOUS_SERVERS[1], AMBIGUOUS_SERVERS[3]])
def test_an_nbgrader_stamp_in_an_ambiguous_zone_is_read_only_where_the_course_settles_it(
        tmp_path, abbreviation, region, when):
    """nbgrader writes its timestamp with ``%Z`` in the exchange's zone (nbgrader
    ``exchange/abc/exchange.py``): an exchange in Shanghai writes ``CST``, in Kolkata ``IST``.
    The course's deadline settles it; without a deadline the submission has no time, and the
    note names its ``timestamp.txt``."""
    stamp = _nbgrader_stamp(when.astimezone(ZoneInfo(region)))
    assert stamp.endswith(f" {abbreviation}"), stamp
    folder = f"inbound/jdoe+{PS}+{stamp}+AbCdEfGhIjKl"
    download = _zip(tmp_path / "inbound.zip",
                    {f"{folder}/{NB}": b"1", f"{folder}/timestamp.txt": stamp.encode()})
    offset = when.astimezone(ZoneInfo(region)).utcoffset()
    found = collect_submissions(download, NB, course_offset=offset)
    assert [s.submitted_at for s in found.submissions] == [when.timestamp()], found.notes
    found = collect_submissions(download, NB)
    assert [(s.student_id, s.submitted_at) for s in found.submissions] == [("jdoe", None)]
    said = [n for n in found.notes if n.startswith(f"{folder}/timestamp.txt") and "ambiguous" in n]
    assert said and "late.toml" in said[0], found.notes


def test_a_blackboard_username_with_an_underscore_keeps_it_without_a_receipt(tmp_path):
    """``a_lee``'s attempt without its receipt: the username is what lies between the assignment
    (which the other receipts name) and ``_attempt_``, not the part after the last ``_``."""
    members, expected = blackboard({"correct": b"1", "blank": b"2"})
    receipt = next(n for n in members if n.endswith(".txt") and "_a_lee_" in n)
    del members[receipt]
    found = collect_submissions(_zip(tmp_path / "b.zip", members), NB)
    assert {s.student_id for s in found.submissions} == set(expected.values())


@pytest.mark.parametrize("machine", ["UTC", "America/Chicago", "Asia/Kolkata"])
def test_a_zips_times_are_the_same_on_every_grading_machine(tmp_path, monkeypatch, machine):
    """A member's DOS time carries no zone: it is read as UTC whatever the grading machine's zone,
    and a member's extended timestamp (the ``UT`` extra field, 0x5455: PKWARE's APPNOTE.TXT 4.6,
    Info-ZIP's ``proginfo/extrafld.txt``), which is POSIX seconds, is used where there is one."""
    monkeypatch.setenv("TZ", machine)
    time.tzset()
    try:
        members, _ = d2l({"correct": b"1", "blank": b"2"})
        path = tmp_path / "z.zip"
        with zipfile.ZipFile(path, "w") as z:
            for name, data in members.items():
                z.writestr(zipfile.ZipInfo(name, ON_TIME.utctimetuple()[:6]), data)
            z.writestr(zipfile.ZipInfo("plain/" + NB, ON_TIME.utctimetuple()[:6]), b"3")
            extended = zipfile.ZipInfo("exact/" + NB, (1990, 1, 1, 0, 0, 0))
            extended.extra = struct.pack("<HHBi", 0x5455, 5, 1, int(LATE.timestamp()))
            z.writestr(extended, b"4")
        found = collect_submissions(path, NB, lms="folder")
        got = {s.student_id: s.submitted_at for s in found.submissions}
        assert got["plain"] == ON_TIME.timestamp() and got["exact"] == LATE.timestamp(), got
        entries = collect_submissions(path, NB)
        assert {s.lms.system for s in entries.submissions} == {"d2l"}
    finally:
        monkeypatch.undo()
        time.tzset()


@pytest.mark.parametrize("forced", ["moodle", "canvas"])
def test_a_forced_format_the_files_do_not_fit_invents_nobody(tmp_path, forced):
    """Canvas's anonymous download forced with ``--lms moodle``: no name is a Moodle name, so
    every notebook is lost with the reason, never split at its first ``_`` into students named
    ``anon`` and ``LATE``. (Forced with ``--lms canvas`` it is read as it is.)"""
    members, expected = canvas_anonymous({"correct": b"1", "blank": b"2"})
    found = collect_submissions(_zip(tmp_path / "c.zip", members), NB, lms=forced)
    students = {s.student_id for s in found.submissions}
    if forced == "canvas":
        assert students == set(expected.values())
    else:
        assert not students and len(found.lost) == len(members), found.notes
        assert all("--lms moodle" in why for why in found.lost), found.lost


@pytest.mark.parametrize("forced", ["moodle", "canvas"])
@pytest.mark.parametrize("platform", ["nbgrader-submitted", "d2l"])
def test_a_name_format_forced_on_folders_invents_no_student(tmp_path, platform, forced):
    """Canvas writes no folders (canvas-lms ``lib/content_zipper.rb`` puts every file at the
    zip's top), and Moodle's folders are ``<Full Name>_<id>_assignsubmission_<plugin>`` (moodle
    ``mod/assign/classes/downloader.php``): forced on nbgrader's ``submitted/<student>/`` or D2L's
    folders, no folder is a student; every notebook is lost with the reason."""
    members, _ = DOWNLOADS[platform][0]({"correct": b"1", "blank": b"2"})
    found = collect_submissions(_zip(tmp_path / "f.zip", members), NB, lms=forced)
    notebooks = [m for m in members if m.endswith(".ipynb")]
    assert not found.submissions and not found.unmatched, found.notes
    assert len(found.lost) == len(notebooks)
    assert all(f"--lms {forced}" in why for why in found.lost), found.lost


def test_a_download_zipped_again_is_read_as_the_download(tmp_path):
    """The class's download zipped once more (a common way to pass it on): the inner archive is
    read as the download itself, with a note; a zip that holds itself ends, as a stated loss."""
    members, expected = d2l({"correct": b"1", "blank": b"2"})
    inner = _zip(tmp_path / "inner.zip", members)
    outer = _zip(tmp_path / "outer.zip", {"PS1 download.zip": inner.read_bytes()})
    found = collect_submissions(outer, NB)
    assert {s.student_id for s in found.submissions} == set(expected.values())
    assert any("PS1 download.zip" in n and "read as the download" in n for n in found.notes)
    deep = outer
    for level in range(6):
        deep = _zip(tmp_path / f"deep{level}.zip", {f"again{level}.zip": deep.read_bytes()})
    found = collect_submissions(deep, NB)
    assert not found.submissions and found.notes, found


def _moodle_worksheet(rows: list[tuple[str, str, str]]) -> bytes:
    """Moodle's grading worksheet of a team assignment (Submissions → "Download grading
    worksheet"): the grading table's columns as it downloads them (moodle
    ``mod/assign/gradingtable.php``: ``recordid`` titled ``Identifier`` holding ``Participant
    <id>``, the full name, the identity fields, the status, ``team`` titled ``Group`` with the
    group's name or ``Default group`` (``col_team``), the grade columns)."""
    header = ["Identifier", "Full name", "Email address", "Status", "Group", "Grade",
              "Maximum Grade", "Grade can be changed", "Last modified (submission)",
              "Last modified (grade)", "Feedback comments"]
    lines = [header] + [[f"Participant {pid}", name, f"{name.split()[0].lower()}@example.edu",
                         "Submitted for grading", group, "", "20.00", "Yes",
                         "Thursday, 19 November 2026, 9:03 PM", "-", ""]
                        for pid, name, group in rows]
    out = io.StringIO()
    csv.writer(out).writerows(lines)
    return out.getvalue().encode("utf-8")


#: A team assignment's participants: participant id, full name, group ("Default group": none).
TEAMS = [("201", "Jane Doe", "Team_Alpha"), ("202", "Ann Lee", "Team_Alpha"),
         ("203", "John Roe", "Default group")]


def moodle_teams(with_worksheet: bool) -> dict[str, bytes]:
    """A Moodle team assignment's download: one folder per group, named by
    ``downloader::get_student_prefix`` (moodle ``mod/assign/classes/downloader.php``):
    ``clean_filename(<group name, _ as space>_<group id>)``, and ``Default group`` with no id for
    the students in no group, then ``_assignsubmission_file``; each group's files once."""
    members = {f"Team Alpha_42_assignsubmission_file/{NB}": b"team",
               f"Default group_assignsubmission_file/{NB}": b"alone"}
    if with_worksheet:
        members["Grades-STAT101-PS1 PCA-17.csv"] = _moodle_worksheet(TEAMS)
    return members


def test_a_moodle_team_submission_gives_each_member_their_row(tmp_path):
    """With the assignment's grading worksheet in the download, each member of a group gets the
    group's files under the id and participant id an individual Moodle download gives them (the
    oracle: the same participants downloaded one folder each). Without it, the members are not
    known: the ``Default group`` folder is lost with the reason, and the notes say the worksheet
    is needed."""
    alone = {f"{name}_{pid}_assignsubmission_file/{NB}": pid.encode()
             for pid, name, _ in TEAMS}
    individual = {s.lms.user_id: s.student_id
                  for s in collect_submissions(_zip(tmp_path / "one.zip", alone), NB).submissions}
    found = collect_submissions(_zip(tmp_path / "teams.zip", moodle_teams(True)), NB)
    assert not found.lost and not found.unmatched, found.notes
    got = {s.student_id: s for s in found.submissions}
    assert set(got) == set(individual.values())
    for pid, _, group in TEAMS:
        sub = got[individual[pid]]
        assert sub.lms.user_id == pid and sub.submitted_at is None
        assert sub.data == (b"alone" if group == "Default group" else b"team")
    assert "team" in found.platform.lower()
    assert any("grading worksheet" in n for n in found.notes)
    found = collect_submissions(_zip(tmp_path / "bare.zip", moodle_teams(False)), NB)
    assert not found.submissions, "a group's id is not a participant's"
    assert len(found.lost) == 2 and all("grading worksheet" in why for why in found.lost)
    assert any("Default group" in why for why in found.lost), found.lost
    assert any("'Team Alpha' (group id 42" in why for why in found.lost), found.lost


def test_a_deadline_in_the_servers_zone_settles_its_ambiguous_receipts(notebooks):
    """A Blackboard server in Shanghai writes its receipts in ``CST`` (tzdata's ``%Z`` for
    Asia/Shanghai), which is Chicago's and Havana's abbreviation too. With the deadline written
    at +08:00 in ``late.toml`` the run reads each receipt in Shanghai's zone: the late student
    is late by the receipt's time, the others on time, and no note calls a time ambiguous."""
    require(AVAILABLE, f"no sandbox here: {REASON}")
    base, books = notebooks
    members, expected = blackboard(books)
    for name in [n for n in members if n.endswith(".txt")]:
        text = members[name].decode()
        line = next(t for t in text.splitlines() if t.startswith("Date Submitted:"))
        eastern = datetime.strptime(line.removeprefix("Date Submitted: "),
                                    "%A, %B %d, %Y %I:%M:%S %p EST")
        local = eastern.replace(tzinfo=timezone(timedelta(hours=-5))).astimezone(
            ZoneInfo("Asia/Shanghai"))
        members[name] = text.replace(line, local.strftime(
            "Date Submitted: %A, %B %-d, %Y %-I:%M:%S %p %Z")).encode()
        assert members[name].decode().count(" CST\n") == 1
    out = base / "out-shanghai"
    policy = base / "shanghai.toml"
    deadline = DEADLINE.astimezone(ZoneInfo("Asia/Shanghai")).isoformat()
    policy.write_text(f"[{PS}]\ndeadline = {deadline}\npercent_per_day = 10\n")
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", PS, str(_zip(base / "sh.zip", members)),
         "--out", str(out), "--workers", "2", "--quiet", "--course", str(base / "release"),
         "--late-policy", str(policy)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["student_id"]: r for r in
               (json.loads(p.read_text()) for p in (out / "records").glob("*.json"))}
    for who, (_, when) in STUDENTS.items():
        assert records[expected[who]]["late"]["days"] == _days_late(when), who
    assert _days_late(LATE) > 0
    assert "ambiguous" not in (out / "collection.txt").read_text()


@pytest.mark.parametrize("region", ["Asia/Tokyo", "America/Chicago", "UTC"])
def test_d2l_times_are_read_in_the_zone_of_the_courses_deadline(tmp_path, region):
    """Brightspace names each folder with the downloading user's wall-clock time and no zone
    (``Oct 11, 2015 803 PM``, cgmb/d2lmf ``README.md``). A course in Tokyo whose student hands in
    at 11:30 PM, half an hour before a midnight deadline, is on time; in Chicago, 1:30 AM the
    next day is late. Read as UTC they were the other way round. The deadline in ``late.toml``,
    written at the course's offset, gives the zone; the note says which was used."""
    from autograder.intake.late import load_policy

    deadline = datetime(2026, 11, 20, 23, 59, tzinfo=ZoneInfo(region))
    whens = {"Jane Doe": deadline - timedelta(minutes=29),
             "John Roe": deadline + timedelta(minutes=91)}
    members = {"index.html": b"<html></html>"}
    for n, (name, when) in enumerate(whens.items()):
        local = when.astimezone(ZoneInfo(region))  # what the instructor's Brightspace writes
        stamp = f"{local:%b} {local.day}, {local.year} {int(local.strftime('%I'))}{local:%M %p}"
        members[f"{118000 + n}-{2557369 + n} - {name} - {stamp}/{NB}"] = name.encode()
    offset = deadline.utcoffset()
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB, course_offset=offset)
    got = {s.lms.name: s.submitted_at for s in found.submissions}
    assert got == {name: when.timestamp() for name, when in whens.items()}, found.notes
    (tmp_path / "late.toml").write_text(
        f"[{PS}]\ndeadline = {deadline.isoformat()}\npercent_per_day = 10\n")
    rule = load_policy(tmp_path / "late.toml").for_problem_set(PS)
    days = {s.lms.name: rule.assess(s.student_id, s.submitted_at).days
            for s in found.submissions}
    assert days == {"Jane Doe": 0, "John Roe": 1}
    assert any("read at the offset of the course's deadline" in n for n in found.notes)
    bare = collect_submissions(_zip(tmp_path / "d.zip", members), NB)  # no deadline: UTC, said
    assert any("read as UTC, for the course gives no deadline" in n for n in bare.notes)


@pytest.mark.parametrize("layout", ["submitted", "inbound"])
def test_nbgraders_course_folders_give_only_this_problem_sets_submissions(tmp_path, layout):
    """nbgrader keeps every problem set of the course in one ``submitted/<student>/<ps>/``
    (``nbgrader collect``, ``exchange/default/collect.py``) and one exchange ``inbound/
    <student>+<ps>+<timestamp>+<random>/`` (``exchange/default/submit.py``). Grading one
    problem set from them reads only its folders: a student who handed in only another set has
    no row (they were graded on that set's notebook, "the only notebook they handed in"), and the
    other set's files are noted, not lost."""
    from autograder.grading.problemset import list_problem_sets

    other = next(p for p in list_problem_sets() if p != PS)
    other_nb = ProblemSet(other).notebook_name
    members = {}
    for student, ps, nb, data in [("alice", PS, NB, b"alice-1"), ("alice", other, other_nb, b"a2"),
                                  ("bob", other, other_nb, b"bob-2")]:
        stamp = _nbgrader_stamp(ON_TIME if ps == PS else LATE)
        folder = (f"submitted/{student}/{ps}" if layout == "submitted"
                  else f"inbound/{student}+{ps}+{stamp}+AbCdEfGhIjKl")
        members[f"{folder}/{nb}"] = data
        members[f"{folder}/timestamp.txt"] = stamp.encode()
    download = _zip(tmp_path / "course.zip", members)
    found = collect_submissions(download, NB, problem_set=PS)
    assert [(s.student_id, s.data, s.submitted_at) for s in found.submissions] == [
        ("alice", b"alice-1", ON_TIME.timestamp())], found.notes
    assert not found.unmatched and not found.lost
    said = [n for n in found.notes if f"handed in for {other}, not {PS}" in n]
    assert len(said) == 2 and any("bob" in n for n in said), found.notes


def test_a_moodle_group_the_worksheet_does_not_list_is_not_a_participant(tmp_path):
    """A team download's folder is a group's, named ``<group>_<group id>`` (moodle
    ``mod/assign/classes/downloader.php``, ``get_student_prefix``), even when the worksheet
    beside it does not list the group (made after the worksheet was downloaded): it was graded
    as a participant whose participant id was the group id, and ``moodle-worksheet.csv`` gave
    that grade to ``Participant 43``. It is not graded, and the reason says to download the
    worksheet again."""
    members = moodle_teams(True)
    members[f"Team Beta_43_assignsubmission_file/{NB}"] = b"beta"
    found = collect_submissions(_zip(tmp_path / "teams.zip", members), NB)
    worksheet = {pid for pid, _, _ in TEAMS}
    assert {s.lms.user_id for s in found.submissions} == worksheet, found.notes
    (lost,) = found.lost
    assert lost.startswith(f"Team Beta_43_assignsubmission_file/{NB}")
    assert "does not list" in lost and "worksheet again" in lost


def test_a_non_english_moodle_team_download_grades_no_group_as_a_participant(tmp_path):
    """The students in no group's folder is ``get_string('defaultteam', 'mod_assign')`` in the
    downloading user's language, without a group id (``downloader.php``,
    ``get_student_prefix``): ``Standard-Gruppe`` on a German site (Moodle's German language
    pack, ``assign.php``). A participant's folder always carries an id, so that folder says the
    download is a team one in any language: without a worksheet the groups' folders are not
    graded, each with the reason, instead of the groups graded as participants and the default
    group's folder lost as "not a valid student id"."""
    members = {f"Team Alpha_42_assignsubmission_file/{NB}": b"team",
               f"Standard-Gruppe_assignsubmission_file/{NB}": b"alone"}
    found = collect_submissions(_zip(tmp_path / "de.zip", members), NB)
    assert not found.submissions and len(found.lost) == 2, found.notes
    assert all("team submission" in why and "grading worksheet" in why for why in found.lost)
    assert found.platform == "Moodle (team submissions)"


def test_a_stray_file_in_a_blackboard_download_loses_nobody(tmp_path):
    """Windows Explorer leaves ``Thumbs.db`` and ``desktop.ini`` in a folder it shows, and an
    instructor keeps notes beside the attempts: Blackboard's download was then not recognised
    (every file had to be an attempt's), and every notebook was lost as "'PS1 PCA' is not a valid
    student id". The attempts and receipts decide; the stray files are noted."""
    members, expected = blackboard({"correct": b"1", "blank": b"2"})
    members.update({"Thumbs.db": b"\xd0\xcf", "desktop.ini": b"[.ShellClassInfo]",
                    "grading notes.txt": b"check Q3 by hand"})
    found = collect_submissions(_zip(tmp_path / "b.zip", members), NB)
    assert found.platform == "Blackboard Learn" and not found.lost, found.notes
    assert {s.student_id for s in found.submissions} == set(expected.values())
    assert any(n.startswith("grading notes.txt: not graded") for n in found.notes), found.notes
    assert any(n.startswith("Thumbs.db: ignored") for n in found.notes), found.notes


@pytest.mark.parametrize("folder", ["stat101-ps1_pca submissions", "dl"])
def test_a_one_student_canvas_download_in_its_folder_keeps_the_students_ids(tmp_path, folder):
    """Canvas's zip unzipped into a folder and zipped again, with one student so far (its file
    ``<name>_[LATE_]<user id>_<attachment id>_<file>`` or ``anon_<id>_<attachment id>_<file>``,
    canvas-lms ``lib/content_zipper.rb``): the folder was taken for the student (graded as
    ``dl``, or lost as "not a valid student id"). Its file's names say who it is."""
    cases = {f"doejane_LATE_101_5001_{NB}": ("doejane-101", True),
             f"anon_Vh2iS_5002_{NB}": ("anon-Vh2iS", False)}
    for name, (student, late) in cases.items():
        found = collect_submissions(_zip(tmp_path / "c.zip", {f"{folder}/{name}": b"1"}), NB)
        assert [(s.student_id, s.lms and s.lms.late) for s in found.submissions] == [
            (student, late)], found.notes
        assert not found.lost


def _canvas_group_set(rows: list[tuple[str, str, str]]) -> bytes:
    """A Canvas group set's CSV export (canvas-lms ``GET /api/v1/group_categories/:id/export``;
    the columns and values as ``spec/apis/v1/group_categories_api_spec.rb`` checks them: the
    user's display name, Canvas user id, SIS id, login, sections, group name, group id, SIS
    group id), one row per student, the group empty for a student in none."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["name", "canvas_user_id", "user_id", "login_id", "sections", "group_name",
                     "canvas_group_id", "group_id"])
    for name, user, group in rows:
        writer.writerow([name, user, "", f"u{user}", "STAT 101", group,
                         "77" if group else "", ""])
    return out.getvalue().encode()


def test_a_canvas_group_assignment_gives_each_member_their_row(tmp_path):
    """A group assignment graded as a group: Canvas's zip holds each group's submission once,
    its representative's, named after the group (canvas-lms ``app/models/assignment.rb``,
    ``representatives``: "the students name will be changed to the group's name";
    ``lib/content_zipper.rb`` lower-cases it and drops what is not a word character). A
    student in no group keeps their display name. With the group set's export beside the files,
    each member gets the group's file, its LATE mark and attachment id, under their own user id;
    without it, only the representative had a row (``team7-104``) and nothing was said."""
    people = [("Jane Doe", "104", "Team 7"), ("Max Poe", "108", "Team 7"),
              ("Lee Kim", "109", "Team 7"), ("Ann Lee", "110", "Café Crew"),
              ("Bo Chen", "111", "Café Crew"), ("John Roe", "103", "")]
    members = {f"team7_104_5004_{NB}": b"team7", f"cafécrew_LATE_111_5011_{NB}": b"cafe",
               f"johnroe_103_5003_{NB}": b"alone"}
    bare = collect_submissions(_zip(tmp_path / "bare.zip", members), NB)
    assert any(n.startswith("Canvas: if this is a group assignment") for n in bare.notes)
    members["PS1 groups.csv"] = _canvas_group_set(people)
    found = collect_submissions(_zip(tmp_path / "groups.zip", members), NB)
    assert not found.lost and not found.unmatched, found.notes
    got = {s.lms.user_id: s for s in found.submissions}
    assert set(got) == {user for _, user, _ in people}
    for _, user, group in people:
        sub = got[user]
        expected = {"Team 7": b"team7", "Café Crew": b"cafe", "": b"alone"}[group]
        assert sub.data == expected and sub.lms.late == (group == "Café Crew"), user
    assert got["108"].lms.attachment_id == "5004" and got["108"].student_id == "max-poe-108"
    assert got["103"].student_id == "johnroe-103"  # no group: the file is the student's own
    assert "Canvas (group assignment)" in found.platform
    assert not any(n.startswith("Canvas: if this is a group assignment") for n in found.notes)


def test_a_canvas_group_set_re_saved_by_excel_still_gives_each_member_their_row(tmp_path):
    """The group set's export (canvas-lms, as ``_canvas_group_set`` builds it) opened and saved
    again by Excel in a European locale: ``;`` between the fields and the system's code page
    (cp1252) for "Zoë". It was not read as a group set, so only the representative had a row."""
    people = [("Zoë Doe", "104", "Team 7"), ("Max Poe", "108", "Team 7")]
    text = _canvas_group_set(people).decode("utf-8-sig").replace(",", ";")
    members = {f"team7_104_5004_{NB}": b"t", "groups.csv": text.encode("cp1252")}
    found = collect_submissions(_zip(tmp_path / "g.zip", members), NB)
    assert {(s.lms.user_id, s.lms.name, s.data) for s in found.submissions} == {
        (user, name, b"t") for name, user, _ in people}


def test_a_student_in_two_group_sets_is_graded_with_the_group_the_file_names(tmp_path):
    """Two group sets' exports beside one download (the project teams and the lab pairs): Jane
    is in both. The file named after her project team is graded for each of its members; before,
    the second export replaced her first group, so her teammate had no row."""
    teams = [("Jane Doe", "104", "Team 7"), ("Max Poe", "108", "Team 7")]
    pairs = [("Jane Doe", "104", "Pair 3"), ("Lee Kim", "109", "Pair 3")]
    for first, second in (("a.csv", "b.csv"), ("b.csv", "a.csv")):  # either export read last
        members = {f"team7_104_5004_{NB}": b"team7", first: _canvas_group_set(teams),
                   second: _canvas_group_set(pairs)}
        found = collect_submissions(_zip(tmp_path / f"{first}.zip", members), NB)
        assert {(s.lms.user_id, s.data) for s in found.submissions} == {
            ("104", b"team7"), ("108", b"team7")}, first


def test_a_canvas_group_set_beside_an_individual_assignment_changes_nobody(tmp_path):
    """The group set's export beside an individual assignment's download: each file carries its
    student's sortable name, not their group's, so it stays theirs alone."""
    members = {f"doejane_104_5004_{NB}": b"1", f"poemax_108_5008_{NB}": b"2",
               "groups.csv": _canvas_group_set([("Jane Doe", "104", "Team 7"),
                                                ("Max Poe", "108", "Team 7")])}
    found = collect_submissions(_zip(tmp_path / "c.zip", members), NB)
    assert {(s.student_id, s.data) for s in found.submissions} == {
        ("doejane-104", b"1"), ("poemax-108", b"2")}


@pytest.mark.parametrize("graded", ["canvas-groups"], indirect=True)
def test_each_canvas_group_member_gets_the_grade_and_the_group_one_feedback_file(graded):
    """``canvas.csv`` (Canvas's gradebook import matches the ``ID`` column, the user id) has a
    row for every member of a group; the feedback zip for "Re-Upload Submissions" has the
    group's file once, under the download's name, which Canvas gives to every member
    (``generate_comments_from_files``: ``group_students``), and says so of the others."""
    _, _, out, expected = graded
    base = out.parent
    exported = subprocess.run(
        [sys.executable, "-m", "autograder", "export", PS, "--out", str(out), "--canvas",
         "--feedback-archive", "--course", str(base / "release"),
         "--late-policy", str(base / "late.toml")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert exported.returncode == 0, exported.stdout + exported.stderr
    with (out / "exports" / "canvas.csv").open(newline="") as f:
        ids = {row[1] for row in list(csv.reader(f))[2:]}
    assert ids == {"104", "108", "110", "103"}
    with zipfile.ZipFile(out / "exports" / "feedback-canvas.zip") as z:
        names = sorted(z.namelist())
    stem = Path(NB).stem
    assert names == sorted(f"{p}_{stem}-feedback.html" for p in
                           ("team7_104_5004", "cafécrew_110_5010", "johnroe_103_5003"))
    assert f"{CANVAS_PARTNER}: left out, their group's file" in exported.stderr


class _NoUtf8Flag(zipfile.ZipInfo):
    """A member as Info-ZIP's ``zip`` writes it on Linux: the name's UTF-8 bytes, without the
    UTF-8 flag (general purpose bit 11, PKWARE's APPNOTE.TXT 4.4.4)."""

    def _encodeFilenameFlags(self):  # noqa: N802 (zipfile's own name)
        return self.filename.encode("utf-8"), self.flag_bits


def test_a_download_zipped_again_by_info_zip_keeps_every_name(tmp_path):
    """The class's download unzipped and zipped again (``zip -r``): names without the UTF-8
    flag were read as CP437, ``Zoë O'Neil`` as ``Zo├½ O'Neil``, student ``zo12-o-neil-203``
    where the folder itself gives ``zoe-o-neil-203`` (another student on a regrade, or for an
    extension), a Canvas group "Café Crew" no longer its export's, a D2L student split in two.
    Each download read from such a zip names everyone as its folder does."""
    for platform in ("d2l", "canvas-groups"):
        members, _ = DOWNLOADS[platform][0]({"correct": b"1", "blank": b"2"})
        folder = tmp_path / platform
        for name, data in members.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        again = tmp_path / f"{platform}.zip"
        with zipfile.ZipFile(again, "w") as z:
            for name, data in members.items():
                z.writestr(_NoUtf8Flag(name, DOWNLOADED.utctimetuple()[:6]), data)
        with zipfile.ZipFile(again) as z:
            assert not any(i.flag_bits & 0x800 for i in z.infolist())
        oracle = collect_submissions(folder, NB)
        found = collect_submissions(again, NB)
        assert any(not n.isascii() for n in members)
        assert [(s.student_id, s.lms.name, s.data) for s in found.submissions] == [
            (s.student_id, s.lms.name, s.data) for s in oracle.submissions], found.notes
        assert not found.lost


@pytest.mark.parametrize("platform", ["canvas-groups", "moodle-teams"])
@pytest.mark.parametrize("given", ["folder", "zip"])
def test_the_lms_zip_beside_its_group_csv_is_read_with_it(tmp_path, platform, given):
    """The LMS's zip as downloaded, with the group set's export (Canvas) or the grading worksheet
    (Moodle) put beside it, in a folder or zipped with it: what the notes ask for ("add the group
    set's CSV export to the download"). Only a zip alone was opened, so the folder was read as
    files named <student>_<file>: the zip "belongs to no student", nobody graded. The oracle: the
    same files in one zip."""
    if platform == "canvas-groups":
        members, _ = canvas_groups({"correct": b"1", "blank": b"2"})
    else:
        members = moodle_teams(True)
    sheet = next(name for name in members if name.endswith(".csv"))
    files = {name: data for name, data in members.items() if name != sheet}
    oracle = collect_submissions(_zip(tmp_path / "oracle.zip", members), NB)
    download = _zip(tmp_path / "download.zip", files)
    if given == "folder":
        path = tmp_path / "dl"
        path.mkdir()
        (path / "submissions.zip").write_bytes(download.read_bytes())
        (path / sheet).write_bytes(members[sheet])
    else:
        path = _zip(tmp_path / "both.zip", {"dl/submissions.zip": download.read_bytes(),
                                            f"dl/{sheet}": members[sheet]})
    found = collect_submissions(path, NB)
    assert oracle.submissions and not oracle.lost
    assert [(s.student_id, s.lms, s.data) for s in found.submissions] == [
        (s.student_id, s.lms, s.data) for s in oracle.submissions], found.notes
    assert found.platform == oracle.platform and not found.lost
    assert any("submissions.zip" in n and "read as the download" in n for n in found.notes)


def _excel_european(csv_bytes: bytes) -> bytes:
    """A CSV file opened and saved again by Excel in a European locale: ``;`` between the
    fields (the decimal mark being ``,``) and the system's code page, cp1252."""
    rows = list(csv.reader(io.StringIO(csv_bytes.decode("utf-8-sig"))))
    out = io.StringIO()
    csv.writer(out, delimiter=";").writerows(rows)
    return out.getvalue().encode("cp1252")


def _excel_unicode_text(csv_bytes: bytes) -> bytes:
    """A CSV file saved by Excel as "Unicode Text": UTF-16 with its byte-order mark, tabs."""
    rows = list(csv.reader(io.StringIO(csv_bytes.decode("utf-8-sig"))))
    out = io.StringIO()
    csv.writer(out, delimiter="\t").writerows(rows)
    return out.getvalue().encode("utf-16")


@pytest.mark.parametrize("save", [_excel_european, _excel_unicode_text])
def test_a_moodle_worksheet_saved_again_by_a_spreadsheet_still_gives_each_member(tmp_path, save):
    """The grading worksheet (``_moodle_worksheet``), which Moodle means to be edited offline,
    opened and saved again by Excel: its groups' folders were lost as if no worksheet had been
    given ("add the assignment's grading worksheet"). The oracle: the worksheet as downloaded."""
    members = moodle_teams(True)
    oracle = collect_submissions(_zip(tmp_path / "oracle.zip", members), NB)
    sheet = next(name for name in members if name.endswith(".csv"))
    members[sheet] = save(members[sheet])
    found = collect_submissions(_zip(tmp_path / "saved.zip", members), NB)
    assert oracle.submissions and not oracle.lost
    assert [(s.student_id, s.lms, s.data) for s in found.submissions] == [
        (s.student_id, s.lms, s.data) for s in oracle.submissions], found.notes
    assert not found.lost


def test_a_canvas_group_set_saved_as_unicode_text_is_read(tmp_path):
    """The group set's export saved by Excel as "Unicode Text" and named .csv: it was taken for
    a stray file, and Max Poe, the group's other member, had no row."""
    people = [("Jane Doe", "104", "Team 7"), ("Max Poe", "108", "Team 7")]
    members = {f"team7_104_5004_{NB}": b"t",
               "groups.csv": _excel_unicode_text(_canvas_group_set(people))}
    found = collect_submissions(_zip(tmp_path / "g.zip", members), NB)
    assert {(s.lms.user_id, s.data) for s in found.submissions} == {("104", b"t"), ("108", b"t")}
    assert not found.lost


@pytest.mark.parametrize("export, unread", [
    ("header only", {"104", "108"}),
    ("ids as Excel shows long numbers", {"170000000000108"}),
])
def test_a_canvas_group_set_that_cannot_be_read_is_said_and_fails_the_run(tmp_path, export,
                                                                          unread):
    """A CSV with a group set export's columns (``_canvas_group_set``) that cannot be read: its
    rows cut away, or the user ids of a sharded Canvas (15 digits) saved by Excel as it shows
    them (``1.70000000000108E+14``). It was graded as nothing: a stray file, or an export of
    fewer members, with the run complete. Now each member it leaves out is said, and the run is
    not complete (``lost``); the members it does give keep their row."""
    people = [("Jane Doe", "170000000000104", "Team 7"), ("Max Poe", "170000000000108", "Team 7")]
    text = _canvas_group_set(people).decode()
    if export == "header only":
        text = text.splitlines()[0] + "\n"
        people = [("Jane Doe", "104", "Team 7"), ("Max Poe", "108", "Team 7")]
    else:
        text = text.replace("170000000000108", "1.70000000000108E+14")
    representative = people[0][1]
    members = {f"team7_{representative}_5004_{NB}": b"t", "groups.csv": text.encode()}
    found = collect_submissions(_zip(tmp_path / "g.zip", members), NB)
    graded = {s.lms.user_id for s in found.submissions}
    assert graded == {representative} | ({user for _, user, _ in people} - unread)
    assert found.lost and all(w.startswith("groups.csv: ") for w in found.lost), found.lost
    assert any("group set" in w for w in found.lost)
    assert not any("groups.csv: not graded, it belongs to no student" in n for n in found.notes)


@pytest.mark.parametrize("layout", ["submitted", "inbound"])
@pytest.mark.parametrize("form", ["%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%f%z"])
def test_nbgrader_stamps_in_another_format_nbgrader_reads_give_the_time(tmp_path, layout, form):
    """A course that sets ``Exchange.timestamp_format`` to a format with no zone or to ISO 8601:
    nbgrader allows any format ``dateutil`` reads back (``exchange/abc/exchange.py``,
    ``_valid_timestamp_format``) and reads the stamp with ``utils.parse_utc``, a time with no
    zone as UTC. The stamp was not read: the late student was on time ("no evidence"), and an
    inbound folder named with it was no submission at all. The oracle is nbgrader's own
    ``parse_utc``."""
    from nbgrader.utils import parse_utc

    members, whens = {}, {"jdoe": ON_TIME, "aroe": LATE}
    for who, when in whens.items():
        stamp = when.astimezone(timezone(timedelta(hours=-6))).strftime(form)
        if "%z" not in form:
            stamp = when.strftime(form)  # nbgrader's zone is UTC unless the course sets one
        folder = (f"submitted/{who}/{PS}" if layout == "submitted"
                  else f"inbound/{who}+{PS}+{stamp}+AbCdEfGhIjKl")
        members[f"{folder}/{NB}"] = who.encode()
        members[f"{folder}/timestamp.txt"] = stamp.encode()
        oracle = parse_utc(stamp).replace(tzinfo=timezone.utc)
        whens[who] = oracle
    found = collect_submissions(_zip(tmp_path / "nb.zip", members), NB, problem_set=PS)
    assert not found.lost and not found.unmatched, found.notes
    assert {s.student_id: s.submitted_at for s in found.submissions} == {
        who: when.timestamp() for who, when in whens.items()}, found.notes


@pytest.mark.parametrize("deadline, handed_in", [
    # a deadline in summer time, a folder a week later in winter time (Nov 1, 2026: US change)
    (datetime(2026, 10, 30, 23, 59), datetime(2026, 11, 6, 23, 30)),
    # a deadline in winter time, a folder after the change to summer time (Mar 8, 2026)
    (datetime(2026, 3, 6, 23, 59), datetime(2026, 3, 10, 0, 30)),
])
def test_d2l_times_across_a_change_of_summer_time_are_read_in_the_courses_zone(
        tmp_path, deadline, handed_in):
    """A Chicago course's D2L folders (the downloading user's wall clock, no zone: cgmb/d2lmf
    ``README.md``) on the other side of a change to or from summer time than the deadline. Read
    at the deadline's offset, each was an hour off, and the days late with it (7 for 8, 4 for
    3). With the zone's name in the late policy (``time_zone``) they are read in it; the oracle
    is ``zoneinfo``. A deadline whose offset is not the zone's on its date is refused."""
    from autograder.intake.late import load_policy

    chicago = ZoneInfo("America/Chicago")
    deadline, handed_in = deadline.replace(tzinfo=chicago), handed_in.replace(tzinfo=chicago)
    stamp = (f"{handed_in:%b} {handed_in.day}, {handed_in.year} "
             f"{int(handed_in.strftime('%I'))}{handed_in:%M %p}")
    members = {"index.html": b"<html></html>",
               f"118000-2557369 - Jane Doe - {stamp}/{NB}": b"jane"}
    policy = tmp_path / "late.toml"
    policy.write_text(f'[{PS}]\ndeadline = {deadline.isoformat()}\ntime_zone = "America/Chicago"'
                      f"\npercent_per_day = 10\n")
    rule = load_policy(policy).for_problem_set(PS)
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB, course_offset=rule.zone)
    (sub,) = found.submissions
    assert sub.submitted_at == handed_in.timestamp(), found.notes
    assert rule.assess(sub.student_id, sub.submitted_at).days == _ceil_days(handed_in, deadline)
    assert any("read in the course's time_zone, America/Chicago" in n for n in found.notes)
    at_offset = collect_submissions(_zip(tmp_path / "d.zip", members), NB,
                                    course_offset=deadline.utcoffset())
    assert any("summer time is an hour off" in n for n in at_offset.notes)
    wrong = deadline.astimezone(timezone(deadline.utcoffset() + timedelta(hours=1)))
    policy.write_text(f'[{PS}]\ndeadline = {wrong.isoformat()}\ntime_zone = "America/Chicago"'
                      f"\npercent_per_day = 10\n")
    with pytest.raises(ValueError, match="not at America/Chicago's offset"):
        load_policy(policy)


def _ceil_days(when: datetime, deadline: datetime) -> int:
    """Days late by the policy's words: per day (24 hours) or part of a day, in real time (two
    times of one ``ZoneInfo`` subtract as wall-clock times, so both are taken to UTC first)."""
    late = when.astimezone(timezone.utc) - deadline.astimezone(timezone.utc)
    return max(0, math.ceil(late / timedelta(days=1)))


@pytest.mark.parametrize("lms_file", [f"Jane Doe_101_assignsubmission_file/{NB}",
                                      canvas_file("Doe, Jane", 101, 5001, NB)])
def test_a_students_lms_file_and_a_plain_copy_keep_the_lms_ids(tmp_path, lms_file):
    """A student twice through two forms: their file in the LMS's download (Moodle's folder,
    canvas-lms ``lib/content_zipper.rb``'s name) and a copy they e-mailed, put in a folder named
    as the grader names them. The plain copy, newer in the download, was graded with no LMS ids
    (no ``Participant 101`` in the worksheet's export, no Canvas row), and the note said the two
    were handed in "at the same time" although the LMS's copy has no such time."""
    alone = collect_submissions(_zip(tmp_path / "alone.zip", {lms_file: b"lms"}), NB)
    (lms_sub,) = alone.submissions
    later = DOWNLOADED + timedelta(days=1)
    members = {lms_file: b"lms", f"{lms_sub.student_id}/{NB}": (b"mail", later)}
    found = collect_submissions(_zip(tmp_path / "two.zip", members), NB)
    (sub,) = found.submissions
    assert sub.data == b"mail" and sub.lms == lms_sub.lms, found.notes
    assert not any("at the same time" in n for n in found.notes)
    assert any(n.startswith(lms_file) and "look at both" in n for n in found.notes)


@pytest.mark.parametrize("folder", [f"{canvas_file('Doe, Jane', 101, 5001, 'ps1.zip')}",
                                    "Jane Doe_101_assignsubmission_file/ps1.zip",
                                    "118000-2557369 - Jane Doe - Nov 19, 2026 903 PM/ps1.zip"])
def test_a_zip_a_student_handed_in_is_opened(tmp_path, folder):
    """A student who handed in their folder zipped (Canvas, Moodle, D2L take any file): the
    notebook inside, with the checkpoints and macOS's ``__MACOSX`` beside it, was no notebook
    ("no notebook (.ipynb) among the files handed in"). It is graded, with the student's LMS
    ids; the oracle is the same notebook handed in as itself."""
    notebook = folder.replace("ps1.zip", NB)
    oracle = collect_submissions(_zip(tmp_path / "oracle.zip", {notebook: b"jane"}), NB)
    theirs = _zip(tmp_path / "ps1.zip", {f"ps1/{NB}": b"jane",
                                         f"ps1/.ipynb_checkpoints/{NB[:-6]}-checkpoint.ipynb": b"x",
                                         f"__MACOSX/ps1/._{NB}": b"junk"})
    found = collect_submissions(_zip(tmp_path / "d.zip", {folder: theirs.read_bytes()}), NB)
    (sub,) = found.submissions
    (want,) = oracle.submissions
    assert (sub.student_id, sub.lms, sub.data) == (want.student_id, want.lms, b"jane"), found.notes
    assert not found.unmatched and not found.lost


def test_a_students_zip_is_read_as_strictly_as_the_class_download(tmp_path):
    """A student's zip is listed by the rules of the class's own download: a member that climbs
    out of the archive was dropped without a word, Windows Explorer's ``Thumbs.db`` counted as
    one of the student's files, and a Windows zipper's ``\\`` in a path was kept in a file's
    name. The oracle is the same members in the class's download, read by the same rules."""
    members = {f"ps1\\{NB}": b"jane", "../escape.txt": b"x", "ps1/Thumbs.db": b"junk"}
    folder = "Jane Doe_101_assignsubmission_file"
    theirs = _zip(tmp_path / "ps1.zip", members)
    found = collect_submissions(_zip(tmp_path / "d.zip", {f"{folder}/ps1.zip":
                                                          theirs.read_bytes()}), NB)
    (sub,) = found.submissions
    assert sub.data == b"jane" and sub.origin.endswith(f"ps1/{NB}"), found.notes
    oracle = collect_submissions(_zip(tmp_path / "o.zip", members), NB)
    for said in ("../escape.txt: refused", "Thumbs.db: ignored"):
        assert any(said in n for n in oracle.notes), oracle.notes
        assert any(n.startswith(f"{folder}/ps1.zip/") and said in n for n in found.notes), (
            found.notes)
    assert any("opened: 1 file(s)" in n for n in found.notes), found.notes


def test_a_moodle_worksheet_in_another_language_gives_each_member(tmp_path):
    """A German site's team download and grading worksheet. ``gradingtable.php`` titles the
    columns with language strings (``get_string('recordid', 'assign')``, ``get_string(
    'fullname')``, ``get_string('submissionteam', 'assign')``) and writes each participant as
    ``get_string('hiddenuser', 'assign')`` and their id (``col_recordid``), the group's name or
    ``defaultteam`` (``col_team``); Moodle's German language pack (``assign.php``) has
    ``recordid`` = ``ID``, ``hiddenuser`` = ``Teilnehmer/in``, ``submissionteam`` = ``Gruppe``,
    ``defaultteam`` = ``Standard-Gruppe``. The other titles are left as ``_moodle_worksheet``
    writes them (their German strings are not taken from the pack here, and the reader does not
    use them). The worksheet was not read: every folder lost, "add the worksheet". The oracle
    is the English worksheet of the same participants."""
    english = _moodle_worksheet(TEAMS)
    oracle = collect_submissions(_zip(tmp_path / "en.zip", moodle_teams(True)), NB)
    rows = list(csv.reader(io.StringIO(english.decode())))
    header = ["ID" if t == "Identifier" else "Gruppe" if t == "Group" else t for t in rows[0]]
    body = [[c.replace("Participant ", "Teilnehmer/in ").replace("Default group",
                                                                "Standard-Gruppe")
             for c in row] for row in rows[1:]]
    out = io.StringIO()
    csv.writer(out).writerows([header, *body])
    members = {f"Team Alpha_42_assignsubmission_file/{NB}": b"team",
               f"Standard-Gruppe_assignsubmission_file/{NB}": b"alone",
               "Bewertungen.csv": out.getvalue().encode()}
    found = collect_submissions(_zip(tmp_path / "de.zip", members), NB)
    assert not found.lost and oracle.submissions, found.notes
    assert [(s.student_id, s.lms, s.data) for s in found.submissions] == [
        (s.student_id, s.lms, s.data) for s in oracle.submissions]
    assert any("its titles are not English" in n for n in found.notes)


def test_a_canvas_user_under_two_names_is_one_student(tmp_path):
    """Two Canvas downloads put together, the student's name changed between them (canvas-lms
    ``lib/content_zipper.rb`` names the file after the sortable name at the time): user 101 was
    two students, ``doejane-101`` and ``smithjane-101``, two rows for one person in canvas.csv.
    Of one user's files the newest attachment is graded (Canvas numbers attachments in order:
    1000 is newer than 999, which sorts after it as text)."""
    members = {canvas_file("Doe, Jane", 101, 999, NB): b"old",
               canvas_file("Smith, Jane", 101, 1000, NB): b"new",
               canvas_file("Roe, John", 102, 998, NB): b"john"}
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB)
    got = {s.lms.user_id: (s.student_id, s.data) for s in found.submissions}
    assert got == {"101": ("smithjane-101", b"new"), "102": ("roejohn-102", b"john")}, found.notes
    assert any("Canvas user 101 is named doejane-101, smithjane-101" in n for n in found.notes)
    again = {canvas_file("Doe, Jane", 101, 999, NB): b"old",
             canvas_file("Doe, Jane", 101, 1000, NB.replace(".ipynb", " (1).ipynb")): b"new"}
    (sub,) = collect_submissions(_zip(tmp_path / "e.zip", again), NB).submissions
    assert sub.data == b"new"


def test_the_lms_zip_beside_the_instructors_own_files_is_read(tmp_path):
    """Canvas's zip in a folder with the instructor's rubric and notes: only a zip alone, or with
    CSVs, was opened, so the whole class was "not graded, it belongs to no student"."""
    members, expected = canvas_anonymous({"correct": b"1", "blank": b"2"})
    path = tmp_path / "dl"
    path.mkdir()
    (path / "submissions.zip").write_bytes(_zip(tmp_path / "s.zip", members).read_bytes())
    (path / "rubric.pdf").write_bytes(b"%PDF")
    (path / "notes.txt").write_text("late: ask John")
    found = collect_submissions(path, NB)
    assert {s.student_id for s in found.submissions} == set(expected.values()), found.notes
    assert any(n.startswith("rubric.pdf: not graded") for n in found.notes)


def test_a_canvas_attachment_downloaded_anonymous_and_named_is_one_student(tmp_path):
    """The download made under anonymous grading and the one made after it, put together: the
    same attachment as ``anon_Vh2iS_5001_…`` and ``abbottjane_101_5001_…`` (canvas-lms
    ``lib/content_zipper.rb``). It was two rows, ``anon-Vh2iS`` and ``abbottjane-101``, for one
    person; now one student, named (the named copy graded, whose path sorts first), with a
    note."""
    members = {f"anon_Vh2iS_5001_{NB}": b"jane", canvas_file("Abbott, Jane", 101, 5001, NB): b"jane",
               f"anon_Qx7pL_5002_{NB}": b"ann"}
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB)
    got = {s.student_id: (s.data, s.lms.user_id) for s in found.submissions}
    assert got == {"abbottjane-101": (b"jane", "101"), "anon-Qx7pL": (b"ann", "Qx7pL")}, found.notes
    assert any("Canvas user 101 is named abbottjane-101, anon-Vh2iS" in n for n in found.notes)


def test_a_newer_blackboard_attempt_without_a_notebook_is_said_to_be_newer(tmp_path):
    """Jane's second attempt holds only a PDF (receipts as ``_receipt`` writes them, te5in/
    CodeGra.de ``psef/blackboard.py``): her notebook of the first attempt is graded, and the PDF
    was noted as "an older attempt" although it is the newer one."""
    members = {}
    for when, file in ((ON_TIME, NB), (ON_TIME + timedelta(days=1), "ps1.pdf")):
        eastern = when.astimezone(timezone(timedelta(hours=-5)))
        prefix = f"PS1 PCA_jdoe_attempt_{eastern:%Y-%m-%d-%H-%M-%S}"
        members[f"{prefix}_{file}"] = file.encode()
        members[f"{prefix}.txt"] = _receipt("Jane Doe", "jdoe", when, f"{prefix}_{file}").encode()
    found = collect_submissions(_zip(tmp_path / "b.zip", members), NB)
    (sub,) = found.submissions
    assert sub.data == NB.encode() and sub.submitted_at == ON_TIME.timestamp()
    (pdf,) = [n for n in found.notes if n.split(":")[0].endswith("_ps1.pdf")]
    assert "a newer attempt" in pdf and "older" not in pdf, pdf


def test_a_zip_in_nbgraders_submitted_folder_is_the_students(tmp_path):
    """One student's zip in nbgrader's ``submitted/<student>/<ps>/`` beside its
    ``timestamp.txt`` (nbgrader ``exchange/default/collect.py``) is that student's, at that time:
    not the class's download zipped again beside a stray file."""
    theirs = _zip(tmp_path / "ps1.zip", {f"ps1/{NB}": b"alice"})
    members = {f"submitted/alice/{PS}/ps1.zip": theirs.read_bytes(),
               f"submitted/alice/{PS}/timestamp.txt": _nbgrader_stamp(ON_TIME).encode()}
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB, problem_set=PS)
    assert [(s.student_id, s.data, s.submitted_at) for s in found.submissions] == [
        ("alice", b"alice", ON_TIME.timestamp())], found.notes


def test_a_d2l_time_in_the_repeated_hour_is_said(tmp_path):
    """``Nov 1, 2026 130 AM`` in Chicago came twice (summer time ended at 2 AM: ``zoneinfo``'s
    ``fold``): the folder cannot say which, so it is read as the first and the note says so."""
    members = {"index.html": b"<html></html>",
               f"118000-2557369 - Jane Doe - Nov 1, 2026 130 AM/{NB}": b"jane",
               f"118001-2557370 - John Roe - Nov 1, 2026 330 AM/{NB}": b"john"}
    chicago = ZoneInfo("America/Chicago")
    found = collect_submissions(_zip(tmp_path / "d.zip", members), NB, course_offset=chicago)
    first = datetime(2026, 11, 1, 1, 30, tzinfo=chicago)
    assert first.timestamp() != first.replace(fold=1).timestamp()  # the oracle: it came twice
    got = {s.lms.name: s.submitted_at for s in found.submissions}
    assert got["Jane Doe"] == first.timestamp(), found.notes
    said = [n for n in found.notes if "came twice" in n]
    assert len(said) == 1 and "Jane Doe" in said[0], said
