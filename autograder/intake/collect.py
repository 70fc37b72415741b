"""Find the submissions of a class: a folder, a zip of a folder, or an LMS download.

These layouts are read, each yielding at most one notebook per student:

- a folder ``SUBMISSIONS/<student_id>/<notebook>.ipynb`` (nbgrader's ``submitted`` layout, without
  the assignment level);
- a zip file of such a folder (with or without one top-level folder around it);
- an LMS download: a flat zip (or folder) of files named ``<student>_<ids>_<notebook>.ipynb``,
  as nbgrader's ``zip_collect`` reads them. In a Canvas download
  (``<sortable name>_[LATE_]<user id>_<attachment id>_<file>``) the student is the user id, not
  the name, which two students can share (two John Smiths are both ``smithjohn``): the student id
  is the name and the user id, ``smithjohn-101``, readable and the same in every download of the
  course. Other flat names keep the part before the first underscore as the student;
- a Moodle download: a folder per student, ``<Full Name>_<participant id>_assignsubmission_file``
  (``..._file_`` in Moodle before 3.1's folders, or flat files ``<Full Name>_<participant id>_
  assignsubmission_file_<file>``); the student id is made from the name and the participant id
  (``Jane Doe_123`` gives ``jane-doe-123``);
- every other platform's download, recognised by what it holds and read by its own module
  (:data:`PLATFORMS`: Gradescope's export, nbgrader's ``inbound``/``submitted`` folders,
  Blackboard Learn's attempts and receipts, D2L Brightspace's folders, GitHub Classroom's
  clones), which gives each notebook its student, ids and time. ``lms`` forces a format.

The format recognised is :attr:`Collection.platform`; a notebook that reaches no student is in
:attr:`Collection.lost` as well as in the notes, so that a run that leaves one is not complete.

What the LMS's names say is kept on the :class:`Submission` (:class:`~autograder.intake.lms.LmsInfo`),
for the exports back into the LMS (:mod:`autograder.exports`) and the late policy
(:mod:`autograder.intake.late`); each LMS's names are read by its own module (:data:`LMS_NAMES`):

- Canvas names a downloaded file ``<name>_[LATE_]<user id>_<attachment id>_<file name>``; its
  "re-upload submissions" feature reads the first two all-digit parts of a file's name as the
  user id and the attachment id (canvas-lms ``app/models/assignment.rb``,
  ``infer_comment_context_from_filename``), so both are kept, with the ``LATE`` mark;
- Moodle's folder (or file prefix) is ``clean_filename(<full name with _ as space>_<unique id>)``
  followed by ``_assignsubmission_file`` (moodle ``mod/assign/classes/downloader.php``); the
  unique id is the assignment's participant id, the ``Participant <id>`` of its grading
  worksheet.

Nothing is dropped silently: every file ends in a :class:`Submission`, in an
:class:`Unmatched` student (a row of ``grades.csv`` that names the files), or in a note that says
why it was left out. A student's notebook is found by its name, ignoring case and the copy
suffixes that browsers and LMSs add (``ps3_mle (1).ipynb``, ``ps3_mle-2.ipynb``); of several copies
the newest is graded. A student whose only notebook has another name is graded on it, with a
note. A student who handed in no notebook but a zip (their folder zipped) is graded on the
notebook inside it. Entries are read into memory as bytes and never executed or unpacked to disk here; archive
members whose path is absolute or climbs out of the archive (``..``) are refused.

A file that cannot be read (a damaged archive member: a bad CRC, a compressed stream that does
not decode, a header that lies about the size; a file the system refuses; an empty file; one
that expands past :data:`MAX_FILE_BYTES` while it is read, whatever its header claims) never
stops the collection:
its student becomes an :class:`Unmatched` with status ``unreadable-file`` and the reason, and the
rest of the class is collected.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import io
import re
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import IO

from autograder.intake import blackboard, canvas, d2l, github, gradescope, moodle, nbexchange
from autograder.intake.lms import (
    Claims,
    CourseZone,
    FileLike,
    LmsInfo,
    Owner,
    Platform,
    lms_student,
)
from autograder.status import Status
from coursedata.variants import FOLDER_ID

__all__ = [
    "Submission",
    "LmsInfo",
    "Unmatched",
    "Unreadable",
    "Collection",
    "collect_submissions",
    "parse_lms_name",
    "lms_student",
    "PLATFORMS",
    "FORMATS",
    "ONE_STUDENT",
]

#: A student id: letters, digits and ``. _ @ - +`` (an email such as ``jane+ml@uni.edu``, which
#: Gradescope gives a student without an SIS id, and nbgrader allows in a username).
_STUDENT_ID = FOLDER_ID
_COPY_SUFFIX = re.compile(r"(?:\s*\(\d+\)|[-_ ]\d{1,3}|[-_ ]copy(?:\s*\d+)?)$", re.IGNORECASE)
_JUNK = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")
#: Files a file manager leaves in a folder it shows (Windows Explorer's thumbnail cache and
#: folder settings), ignored like the dot files of the others.
_JUNK_FILES = ("thumbs.db", "desktop.ini")
MAX_FILE_BYTES = 50 * 2**20
#: What reads an LMS's download names: a file's (or, True, a folder's) name to its ids, or None.
NameReader = Callable[[str, bool], "LmsInfo | None"]
#: The LMSs whose download names are read, tried in order (Moodle's names would also match
#: Canvas's pattern): one module each in :mod:`autograder.intake`.
LMS_NAMES: tuple[NameReader, ...] = (moodle.parse_name, canvas.parse_name)
#: The modules of :data:`LMS_NAMES`, by the ``system`` of the names they read.
_NAME_MODULES = {"canvas": canvas, "moodle": moodle}
#: The platforms whose downloads are read whole (their names, receipts and metadata), each
#: recognised by what its download holds, tried in order before the names above.
PLATFORMS: tuple[Platform, ...] = (gradescope, nbexchange, blackboard, d2l, github)
#: What ``--lms`` can force: the platforms, the two read by their names, and a plain folder.
FORMATS = ("canvas", "moodle", *(p.NAME for p in PLATFORMS), "folder")
#: The format of a folder that holds one student's files (the student is the folder's name),
#: whatever its files hold: Gradescope's ``/autograder/submission``, whose files, names and
#: dates are all the student's own (:mod:`autograder.run.gradescope`). Not an ``--lms`` choice.
ONE_STUDENT = "one-student"


def parse_lms_name(
    name: str, folder: bool = False, names: Sequence[NameReader] = LMS_NAMES
) -> LmsInfo | None:
    """The LMS ids in a downloaded file's (or Moodle folder's) name, or None if it has none.

    >>> parse_lms_name("doejane_LATE_101_5001_ps3_mle.ipynb").late
    True
    >>> parse_lms_name("Jane Doe_123_assignsubmission_file", folder=True).user_id
    '123'
    """
    for parse_name in names:
        info = parse_name(name, folder)
        if info is not None:
            return info
    return None


@dataclass(frozen=True)
class Submission:
    """One student's notebook, as submitted (untrusted bytes).

    ``lms`` holds the ids and the late mark of an LMS download's file name (None for a plain
    folder), ``submitted_at`` when it was handed in (POSIX seconds), for the late policy: the
    platform's own record where its download has one (a receipt, ``timestamp.txt``, metadata,
    a commit), else the file's time in the archive or the file system; None when the platform
    gives no time, and for Canvas and Moodle, whose zips stamp every file with the time of the
    download (:data:`autograder.intake.canvas.FILE_TIME`).
    """

    student_id: str
    data: bytes
    origin: str  # where it came from, for messages
    lms: LmsInfo | None = None
    submitted_at: float | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class Unmatched:
    """A student who handed in files, none of which could be graded: none is the problem set's
    notebook (``unmatched``), or the one that is cannot be read (``unreadable-file``)."""

    student_id: str
    files: tuple[str, ...]
    reason: str
    status: Status = Status.UNMATCHED
    lms: LmsInfo | None = None


class Unreadable(Exception):
    """A file of the submissions that cannot be read; the message says why, for the instructor."""


@dataclass
class Collection:
    """What :func:`collect_submissions` found.

    Attributes
    ----------
    submissions : list of Submission
        One per student, sorted by student id.
    unmatched : list of Unmatched
        Students with files but no notebook that could be graded.
    notes : list of str
        Every other file, and why it was left out or how it was matched.
    platform : str
        The format recognised (or forced), in words: ``Canvas``, ``Blackboard Learn``...
    lost : list of str
        The notebooks that reached no student (their names say nobody), and what of a group
        set's export could not be read (members who may miss their group's notebook), each with
        why: a run that leaves one is not complete.
    marks_late : bool
        Whether the download marks a late file (Canvas's ``LATE_``), which the late policy's
        ``evidence = "lms"`` reads; on any other platform that evidence is absent.
    """

    submissions: list[Submission] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    platform: str = ""
    lost: list[str] = field(default_factory=list)
    marks_late: bool = False


@dataclass(frozen=True)
class _Entry:
    parts: tuple[str, ...]  # path below the folders that wrap the whole class, as components
    size: int
    mtime: float | None  # None: no time known (the platform gives none)
    open: Callable[[], IO[bytes]]
    where: str  # the path inside the submissions, for messages
    lms: LmsInfo | None = None  # what the platform says, when read by a platform module
    disk: Path | None = None  # the file on disk, when the submissions are a folder


#: What reading a damaged member or file raises (zipfile: ``BadZipFile`` for a bad CRC or
#: header, ``zlib.error`` or ``EOFError`` for a stream that does not decode, ``NotImplementedError``
#: for an unknown compression, ``RuntimeError`` for an encrypted member; ``OSError`` for a file).
_READ_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    NotImplementedError,
    RuntimeError,
    OSError,
    ValueError,
)
_CHUNK = 2**20


#: The largest download inside a download that is opened (a class's notebooks, zipped twice).
MAX_INNER_BYTES = 2**30
#: How many archives deep a download that holds only an archive is opened.
MAX_DEPTH = 3


def _is_zip(entry: _Entry) -> bool:
    """Whether ``entry`` begins as a zip archive does (a local file header, ``PK\\3\\4``)."""
    try:
        with entry.open() as stream:
            return stream.read(4) == b"PK\x03\x04"
    except _READ_ERRORS:
        return False


def _inner(
    entry: _Entry,
    notebook: str,
    lms: str | None,
    notes: list[str],
    depth: int,
    course_offset: CourseZone = None,
    problem_set: str | None = None,
    beside: Sequence[_Entry] = (),
) -> Collection:
    """The collection of the download inside a download that holds only it (the class's zip,
    zipped again), or it and the CSVs ``beside`` it (a group set's export, a grading worksheet,
    read as if they were in it): read like the outer one, with a note saying so."""
    with tempfile.TemporaryDirectory(prefix="autograder-inner-") as folder:
        inner = Path(folder) / "download.zip"
        try:
            inner.write_bytes(_read(entry, MAX_INNER_BYTES))
        except Unreadable as why:
            raise ValueError(
                f"the download holds only the archive {entry.where}, and {why}"
            ) from None
        found = _collect(inner, notebook, lms, depth, course_offset, problem_set, beside)
    found.notes[:0] = [
        *notes,
        f"{entry.where}: the download holds only this archive"
        + (f" and {', '.join(e.where for e in beside)} beside it" if beside else "")
        + "; read as the download itself",
    ]
    return found


def _read(entry: _Entry, limit: int | None = None) -> bytes:
    """The bytes of ``entry``, at most ``limit`` of them (default :data:`MAX_FILE_BYTES`),
    counted while reading (not from the header's claim).

    Raises
    ------
    Unreadable
        If the file cannot be read (the reason in words) or holds more than ``limit`` bytes.
    """
    limit = MAX_FILE_BYTES if limit is None else limit
    chunks, size = [], 0
    try:
        with entry.open() as stream:
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise Unreadable(
                        f"it expands past the {limit / 2**20:g} MB limit while "
                        f"it is read (its header says {entry.size} bytes)"
                    )
                chunks.append(chunk)
    except _READ_ERRORS as exc:
        raise Unreadable(_damage(exc)) from None
    return b"".join(chunks)


def _damage(exc: BaseException) -> str:
    """In words, why a file could not be read."""
    text = str(exc) or type(exc).__name__
    if isinstance(exc, zipfile.BadZipFile) and "CRC" in text:
        return (
            f"the archive member is damaged (its checksum does not match: {text}); the "
            f"upload or the download was cut or corrupted"
        )
    if isinstance(exc, (zlib.error, EOFError)):
        return (
            f"the archive member is damaged (its compressed data does not decode: {text}); "
            f"the upload or the download was cut or corrupted"
        )
    if isinstance(exc, zipfile.BadZipFile):
        return f"the archive member is damaged ({text})"
    if isinstance(exc, RuntimeError) and "encrypted" in text:
        return "the archive member is encrypted"
    if isinstance(exc, NotImplementedError):
        return f"the archive member uses a compression this grader cannot read ({text})"
    return f"the file cannot be read ({type(exc).__name__}: {text})"


def _zip_time(info: zipfile.ZipInfo) -> float | None:
    """A member's time (POSIX seconds), or None for a date the archive garbled.

    The time is the member's extended timestamp (the ``UT`` extra field, ``0x5455``, which holds
    POSIX seconds: PKWARE's APPNOTE.TXT, section 4.6, and Info-ZIP's ``proginfo/extrafld.txt``)
    where the archive has one; else its DOS date and time, which carry no zone, read as UTC, so
    that a download gives the same times on every grading machine.
    """
    extended = _extended_time(info.extra)
    if extended is not None:
        return extended
    try:
        return datetime(*info.date_time, tzinfo=timezone.utc).timestamp()
    except (ValueError, OverflowError):
        return None


def _extended_time(extra: bytes) -> float | None:
    """The modification time of an extended-timestamp extra field, if ``extra`` holds one."""
    at = 0
    while at + 4 <= len(extra):
        kind, size = struct.unpack_from("<HH", extra, at)
        body = extra[at + 4 : at + 4 + size]
        if kind == 0x5455 and len(body) >= 5 and body[0] & 1:
            return float(struct.unpack_from("<i", body, 1)[0])
        at += 4 + size
    return None


def _member_name(info: zipfile.ZipInfo) -> str:
    """A member's name as the tool that zipped it wrote it. Without the UTF-8 flag (general
    purpose bit 11, PKWARE's APPNOTE.TXT 4.4.4 and appendix D) a name is CP437, which is how
    :mod:`zipfile` decodes it; but Info-ZIP's ``zip`` (Linux's) writes a UTF-8 name without
    the flag, so a name whose bytes are valid UTF-8 is read as UTF-8 (``Zoë``, not ``Zo├½``), as
    the same files read unzipped."""
    if info.flag_bits & 0x800 or info.filename.isascii():
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def _unsafe(name: str) -> bool:
    """True for an archive member whose path is absolute or climbs out of the archive."""
    name = name.replace("\\", "/")
    return (
        name.startswith("/")
        or re.match(r"^[A-Za-z]:", name) is not None
        or ".." in PurePosixPath(name).parts
    )


def _opener(file: Path) -> Callable[[], IO[bytes]]:
    """What opens ``file`` for reading, each time it is called."""
    return lambda: file.open("rb")


def _entries(path: Path, notes: list[str]) -> list[_Entry]:
    """Every file under ``path`` (a folder or a zip archive), junk and unsafe members noted."""
    if not path.exists():
        raise ValueError(f"the submissions {str(path)!r} do not exist")
    entries = []
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file() or p.is_symlink()):
            rel = file.relative_to(path).parts
            if file.is_symlink():
                notes.append(f"{'/'.join(rel)}: refused, a symbolic link")
                continue
            stat = file.stat()
            entries.append(
                _Entry(
                    rel,
                    stat.st_size,
                    stat.st_mtime,
                    _opener(file),
                    "/".join(rel),
                    disk=file,
                )
            )
    elif zipfile.is_zipfile(path):
        try:
            archive = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            raise ValueError(
                f"the archive {str(path)!r} is damaged beyond reading its list of "
                f"files ({exc}); download it again"
            ) from None
        for info, name, parts in _members(archive, "", notes):
            mtime = _zip_time(info)
            if mtime is None:
                notes.append(
                    f"{name}: its date in the archive is not a valid date; "
                    f"it counts as the oldest copy and as on time"
                )
            entries.append(
                _Entry(
                    parts,
                    info.file_size,
                    mtime or 0.0,
                    functools.partial(archive.open, info),
                    name,
                )
            )
        if not archive.infolist():
            raise ValueError(f"the archive {str(path)!r} is empty")
    elif path.suffix.lower() == ".zip":
        raise ValueError(
            f"the archive {str(path)!r} is damaged (its list of files cannot be "
            f"found: the download was cut or corrupted); download it again"
        )
    else:
        raise ValueError(
            f"the submissions {str(path)!r} must be a folder or a .zip archive; "
            f"this file is neither"
        )
    if not entries:
        raise ValueError(f"the submissions {str(path)!r} hold no files")
    return _without_junk(entries, notes)


def _members(
    archive: zipfile.ZipFile, where: str, notes: list[str]
) -> Iterator[tuple[zipfile.ZipInfo, str, tuple[str, ...]]]:
    """Each file of ``archive`` that may be read, in name order: its member, its name (with
    ``/`` between folders, whichever the zipper wrote) and its path's components. A member whose
    path is absolute or leaves the archive is refused and noted (``where`` is the archive's own
    place, or "" for the class's download)."""
    for info in sorted(archive.infolist(), key=lambda i: i.filename):
        if info.is_dir():
            continue
        name = _member_name(info)
        if _unsafe(name):
            _note(
                notes,
                f"{where}{name}: refused, an archive member whose path is absolute or "
                f"leaves the archive",
            )
            continue
        parts = PurePosixPath(name.replace("\\", "/")).parts
        yield info, "/".join(parts), parts


def _junk(parts: tuple[str, ...]) -> bool:
    """True for a file a system or an editor leaves: a dot file, a file manager's
    (:data:`_JUNK_FILES`), or one in a folder of :data:`_JUNK`. A dot folder is kept: a
    clone's ``.git`` is read (:mod:`autograder.intake.github`)."""
    name = parts[-1]
    return name.startswith(".") or name.lower() in _JUNK_FILES or any(p in _JUNK for p in parts)


def _without_junk(entries: list[_Entry], notes: list[str]) -> list[_Entry]:
    """``entries`` without the system and editor files (:func:`_junk`), each noted."""
    for entry in entries:
        if _junk(entry.parts):
            _note(notes, f"{entry.where}: ignored, a system or editor file")
    return [e for e in entries if not _junk(e.parts)]


def _note(notes: list[str], note: str) -> None:
    """Add ``note`` once (a group's zip is opened for each of its members)."""
    if note not in notes:
        notes.append(note)


def _archive_and_beside(entries: list[_Entry]) -> tuple[_Entry | None, list[_Entry]]:
    """The archive a download holds in place of its files, and the files beside it: one zip
    alone (the class's download zipped again), or the LMS's zip with the group set's export or
    the grading worksheet put beside it, in one folder (what the notes ask for), and the
    instructor's other files that are no notebook; None when the download holds anything else,
    or the zip is one student's (:func:`_student_named`)."""
    if not entries or len({e.parts[:-1] for e in entries}) != 1:
        return None, []
    zips = [e for e in entries if e.parts[-1].lower().endswith(".zip") or len(entries) == 1]
    beside = [e for e in entries if e not in zips]
    if (
        len(zips) != 1
        or (beside and any(len(e.parts) > 2 for e in entries))  # the download, or in a folder
        or any(e.parts[-1].lower().endswith(".ipynb") for e in beside)
        or _student_named(zips[0])
        or not _is_zip(zips[0])
    ):
        return None, []
    return zips[0], beside


def _student_named(entry: _Entry) -> bool:
    """Whether a file's path names a student as an LMS does (a zip one student handed in: its
    Canvas name, its Moodle folder, a platform's submission folder), so that it is not a
    download."""
    if any(platform.recognise([entry.parts]) for platform in PLATFORMS):
        return True  # in a platform's submission folder (D2L's, nbgrader's inbound)
    if len(entry.parts) > 1:
        return parse_lms_name(entry.parts[0], folder=True) is not None
    return _lms_file(entry.parts[0])


def _placed(beside: Sequence[_Entry], entries: list[_Entry]) -> list[_Entry]:
    """The files that were beside a download's archive, placed at its top (inside the one folder
    that wraps all its files, when one does), where its own export or worksheet would be."""
    tops = {e.parts[0] for e in entries}
    wrapped = len(tops) == 1 and all(len(e.parts) > 1 for e in entries)
    top = (*tops,) if wrapped else ()
    return [dataclasses.replace(e, parts=(*top, e.parts[-1])) for e in beside]


def _is_wrapper(entries: list[_Entry]) -> bool:
    """True when every file lies in one folder that is not a student's: it holds student
    folders (``class/alice/nb.ipynb``) or an LMS download (``class/alice_1_nb.ipynb`` and
    ``class/bob_2_nb.ipynb``, or one student's ``class/doejane_101_5001_nb.ipynb``), not one
    student's files (``alice/nb.ipynb``)."""
    if (
        not entries
        or len({e.parts[0] for e in entries}) != 1
        or any(len(e.parts) < 2 for e in entries)
    ):
        return False
    if parse_lms_name(entries[0].parts[0], folder=True) is not None:
        return False  # one Moodle student's folder
    if any(len(e.parts) > 2 for e in entries):
        return True
    # the LMS's files; a CSV beside them is a worksheet or a group set's export
    names = [n for n in (e.parts[1] for e in entries) if not n.lower().endswith(".csv")]
    if names and all(_lms_file(n) for n in names):
        return True  # an LMS's download in its folder, be it of one student
    return all("_" in n for n in names) and len({n.split("_", 1)[0] for n in names}) > 1


def _lms_file(name: str) -> bool:
    """Whether ``name`` is a file an LMS's download names: Canvas's with its user and attachment
    ids (``add_upload_submission`` always writes both), Moodle's ``..._assignsubmission_...``."""
    lms = parse_lms_name(name)
    return lms is not None and (lms.system == "moodle" or lms.attachment_id is not None)


def _unwrapped(entries: list[_Entry]) -> list[_Entry]:
    """The entries without the folders that wrap the whole class."""
    while _is_wrapper(entries):
        entries = [dataclasses.replace(e, parts=e.parts[1:]) for e in entries]
    return entries


def _lose(entry: _Entry, why: str, notes: list[str], lost: list[str]) -> None:
    """Note a file that reaches no student; a notebook among them is lost to the run."""
    notes.append(f"{entry.where}: not graded, {why}")
    if entry.parts[-1].lower().endswith(".ipynb"):
        lost.append(f"{entry.where}: {why}")


def _by_student(
    entries: list[_Entry],
    notes: list[str],
    lost: list[str],
    names: Sequence[NameReader] = LMS_NAMES,
    forced: str = "",
) -> tuple[dict[str, list[_Entry]], str]:
    """Group files by student: a folder per student, or the LMS's ``<student>_...`` names; and
    the format recognised, in words. With a format ``forced`` (``--lms``), a file its names do
    not read belongs to nobody (it is never split at its first ``_``, nor its folder taken for a
    student)."""
    entries = _unwrapped(entries)
    teams, entries = _moodle_teams(entries, names, notes)
    canvas_groups, entries = _canvas_groups(entries, names, notes, lost)
    team_download = teams is not None or (
        moodle.parse_name in names
        and any(moodle.no_group(e.parts[0], len(e.parts) > 1) for e in entries)
    )
    flat = all(len(e.parts) == 1 for e in entries)
    groups: dict[str, list[_Entry]] = {}
    systems = set()
    for entry in entries:
        if team_download and _team_entry(entry, teams, groups, notes, lost):
            systems.add("Moodle (team submissions)")
            continue
        student: str | None
        lms = parse_lms_name(entry.parts[0], len(entry.parts) > 1, names)
        members = canvas.group_members(lms, canvas_groups or {}) if lms else []
        for member in members:  # a Canvas group's submission: each member's
            groups.setdefault(lms_student(member), []).append(
                dataclasses.replace(entry, lms=member)
            )
            systems.add("Canvas (group assignment)")
        if members:
            continue
        if lms is not None and (lms.system == "moodle" or flat or _lms_file(entry.parts[0])):
            student = lms_student(lms)
            systems.add("Canvas (anonymous grading)" if lms.anonymous else lms.system.title())
        elif forced and names:  # a name format forced: no folder is taken for a student
            _lose(entry, f"its name is not one --lms {forced} reads", notes, lost)
            continue
        elif flat and names:
            student = entry.parts[0].split("_", 1)[0] if "_" in entry.parts[0] else None
        else:
            student = entry.parts[0] if len(entry.parts) > 1 else None
        if student is None:
            _lose(
                entry,
                "it belongs to no student (put each student's files in a folder named after "
                "them, or use the LMS's <student>_... names)",
                notes,
                lost,
            )
        elif not _STUDENT_ID.match(student):
            _lose(entry, f"{student!r} is not a valid student id", notes, lost)
        else:
            groups.setdefault(student, []).append(entry)
    _one_per_canvas_user(groups, notes)
    if systems:
        title = " and ".join(sorted(systems))
    else:
        title = "files named <student>_<file>" if flat and names else "a folder per student"
    return groups, title


def _attachment(entry: _Entry) -> int:
    """A Canvas file's attachment id (Canvas numbers its attachments in the order they are
    made), -1 for any other file."""
    info = _lms_info(entry)
    return int(info.attachment_id) if info and info.attachment_id else -1


def _named(files: list[_Entry]) -> bool:
    """Whether a student's files name them (not only Canvas's anonymous ids)."""
    return any(not (info and info.anonymous) for info in map(_lms_info, files))


def _one_per_canvas_user(groups: dict[str, list[_Entry]], notes: list[str]) -> None:
    """Give one student the files of every name one Canvas user id carries (two downloads put
    together across a change of the student's name: ``doejane_101_…`` and ``smithjane_101_…``,
    or before and after anonymous grading, ``anon_Vh2iS_5001_…`` being the attachment 5001 of
    ``doejane_101_5001_…``): the name of their newest attachment, with a note."""
    names: dict[str, set[str]] = {}
    owners: dict[str, str] = {}  # a named file's attachment id → its user id
    for student, files in groups.items():
        for info in map(_lms_info, files):
            if info is not None and info.system == "canvas" and not info.anonymous:
                names.setdefault(info.user_id, set()).add(student)
                owners[info.attachment_id or ""] = info.user_id
    for student, files in groups.items():
        for info in map(_lms_info, files):
            if info is not None and info.anonymous and info.attachment_id in owners:
                names[owners[info.attachment_id]].add(student)
    for user, students in sorted(names.items()):
        if len(students) < 2:
            continue
        keep = max(students, key=lambda s: (max(map(_attachment, groups[s])), _named(groups[s]), s))
        for other in sorted(students - {keep}):
            groups[keep] += groups.pop(other)
        notes.append(
            f"Canvas user {user} is named {', '.join(sorted(students))} in the download (downloads "
            f"put together across a change of name): one student, {keep}, the name of their "
            f"newest attachment"
        )


def _moodle_teams(
    entries: list[_Entry], names: Sequence[NameReader], notes: list[str]
) -> tuple[dict[str, list[LmsInfo]] | None, list[_Entry]]:
    """The groups of a Moodle grading worksheet beside the folders (None without one), and the
    download's other files (:mod:`autograder.intake.moodle`, team submissions)."""
    if moodle.parse_name not in names:
        return None, entries
    teams, rest = None, []
    folders = {
        team for e in entries if (team := moodle.team_of(e.parts[0], len(e.parts) > 1)) is not None
    }
    for entry in entries:
        read = (
            moodle.read_teams(_small(entry), folders)
            if len(entry.parts) == 1 and entry.parts[0].lower().endswith(".csv")
            else None
        )
        if read is None:
            rest.append(entry)
            continue
        found, by_content = read
        teams = {**(teams or {}), **found}
        notes.append(
            f"{entry.where}: read as Moodle's grading worksheet of a team assignment: "
            f"{len(found)} group(s), each member of a group's folder graded on it"
            + (
                " (its titles are not English: the participant is its first column, the name "
                "its second, the group the column that names the download's groups)"
                if by_content
                else ""
            )
        )
    return teams, rest


def _canvas_groups(
    entries: list[_Entry], names: Sequence[NameReader], notes: list[str], lost: list[str]
) -> tuple[dict[tuple[str, str], list[LmsInfo]] | None, list[_Entry]]:
    """The groups of the Canvas group sets' CSV exports beside the files (None without one), and
    the download's other files (:mod:`autograder.intake.canvas`, group assignments). What of an
    export cannot be read is lost to the run (its members may go without their group's grade)."""
    if canvas.parse_name not in names:
        return None, entries
    found, rest = None, []
    for entry in entries:
        read, problems = (
            canvas.read_groups(_small(entry))
            if len(entry.parts) == 1 and entry.parts[0].lower().endswith(".csv")
            else (None, [])
        )
        for problem in problems:
            notes.append(f"{entry.where}: {problem}")
            lost.append(f"{entry.where}: {problem}")
        if read is None:
            if not problems:
                rest.append(entry)
            continue
        found = {**(found or {}), **read}
        notes.append(
            f"{entry.where}: read as a Canvas group set's export: "
            f"{len({group for _, group in read})} group(s); a file named after its "
            f"user's group is graded for each member"
        )
    return found, rest


def _team_entry(
    entry: _Entry,
    teams: dict[str, list[LmsInfo]] | None,
    groups: dict[str, list[_Entry]],
    notes: list[str],
    lost: list[str],
) -> bool:
    """In a Moodle team download, give a group's file to each member of its group (by the
    worksheet's ``teams``), or say why it is not graded: the worksheet is missing or does not
    list the group. Whether it was a team's file."""
    folder = len(entry.parts) > 1
    team = moodle.team_of(entry.parts[0], folder)
    if team is None:
        return False
    if teams is not None and team in teams:
        for member in teams[team]:
            groups.setdefault(lms_student(member), []).append(
                dataclasses.replace(entry, lms=member)
            )
        return True
    group = parse_lms_name(entry.parts[0], folder, (moodle.parse_name,))
    which = (
        f"the students in no group ({team!r})"
        if moodle.no_group(entry.parts[0], folder)
        else f"the group {team!r} (group id {group.user_id if group else '?'}, not a participant)"
    )
    why = (
        "which the grading worksheet does not list (a group made after the worksheet was "
        "downloaded, or a worksheet of some groups only): download the worksheet again, with "
        "every group, and put it beside the folders"
        if teams is not None
        else "and the download does not say who its members are: add the assignment's grading "
        "worksheet (Submissions -> Download grading worksheet) to the download, and each member "
        "gets a row"
    )
    _lose(entry, f"a Moodle team submission of {which}, {why}", notes, lost)
    return True


def _platform(entries: list[_Entry], lms: str | None) -> Platform | None:
    """The platform module whose download this is (``lms`` forces one), or None for the
    formats read by their names (Canvas, Moodle, a folder per student)."""
    if lms is not None and lms not in (*FORMATS, ONE_STUDENT):
        raise ValueError(f"unknown --lms {lms!r}; choose from {', '.join(FORMATS)}")
    if lms is not None:
        return next((p for p in PLATFORMS if p.NAME == lms), None)
    paths = [e.parts for e in entries]
    return next((p for p in PLATFORMS if p.recognise(paths)), None)


def _names(lms: str | None) -> tuple[NameReader, ...]:
    """The name readers ``--lms`` leaves: Canvas's or Moodle's alone, none for a folder."""
    return {"canvas": (canvas.parse_name,), "moodle": (moodle.parse_name,), "folder": ()}.get(
        lms or "", LMS_NAMES
    )


def _small(entry: FileLike) -> bytes | None:
    """A platform's small file (a receipt, its metadata), or None when it cannot be read."""
    assert isinstance(entry, _Entry), "a platform reads only the files it was given"
    try:
        return _read(entry, 2**20)
    except Unreadable:
        return None


def _claimed(
    platform: Platform,
    entries: list[_Entry],
    notes: list[str],
    lost: list[str],
    course_offset: CourseZone = None,
    problem_set: str | None = None,
) -> dict[str, list[_Entry]]:
    """Group files by student as the platform's module says (:class:`Claims`); a file the
    platform says was handed in for another problem set than ``problem_set`` is noted, not
    graded."""
    claims: Claims = platform.claim(entries, _small, course_offset)
    notes.extend(claims.notes)
    groups: dict[str, list[_Entry]] = {}
    for entry in entries:
        owners: list[Owner] = claims.owners.get(entry.where, [])
        if not owners and entry.where not in claims.explained:
            _lose(entry, f"the {platform.TITLE} download gives it no student", notes, lost)
        others = {o.problem_set or "" for o in owners if _another(o, problem_set)}
        if others:
            notes.append(
                f"{entry.where}: not graded, handed in for {', '.join(sorted(others))}, "
                f"not {problem_set}"
            )
        for owner in (o for o in owners if not _another(o, problem_set)):
            if not _STUDENT_ID.match(owner.student):
                _lose(entry, f"{owner.student!r} is not a valid student id", notes, lost)
                continue
            groups.setdefault(owner.student, []).append(
                dataclasses.replace(
                    entry,
                    parts=(owner.student, owner.name),
                    mtime=owner.submitted_at,
                    lms=owner.info,
                )
            )
    return groups


def _another(owner: Owner, problem_set: str | None) -> bool:
    """Whether the platform says ``owner``'s file was handed in for another problem set."""
    return None not in (owner.problem_set, problem_set) and owner.problem_set != problem_set


def _matches(name: str, notebook: str, flat: bool) -> bool:
    """Whether the file ``name`` is a copy of ``notebook``, up to case, copy suffixes and, in an
    LMS download, the ``<student>_<ids>_`` prefix."""
    stem, target = name[: -len(".ipynb")].lower(), Path(notebook).stem.lower()
    if flat:
        stem = stem.split("_", 1)[1] if "_" in stem else stem
    return any(
        s == target or (flat and s.endswith("_" + target))
        for s in (stem, _COPY_SUFFIX.sub("", stem).strip())
    )


def _exact(entry: _Entry, notebook: str) -> bool:
    """Whether the file carries exactly the notebook's name (after an LMS prefix)."""
    name = entry.parts[-1]
    return name == notebook or (len(entry.parts) == 1 and name.endswith("_" + notebook))


def _pick(
    student: str, files: list[_Entry], notebook: str, notes: list[str]
) -> tuple[_Entry | None, str]:
    """The student's file to grade (or None, and why), noting every other file."""
    books = [f for f in files if f.parts[-1].lower().endswith(".ipynb")]
    for f in files:
        if f not in books:
            notes.append(f"{f.where}: not graded, not a notebook (.ipynb)")
    named = [f for f in books if _matches(f.parts[-1], notebook, len(f.parts) == 1)]
    if not named and len(books) != 1:
        return None, (
            f"no notebook named {notebook} among {len(books)} notebooks"
            if books
            else "no notebook (.ipynb) among the files handed in"
        )
    if named:
        chosen = max(named, key=lambda f: (f.mtime or 0.0, _attachment(f), _named([f]), f.where))
        if not _exact(chosen, notebook):
            notes.append(f"{chosen.where}: graded as {notebook} for {student}")
    else:
        chosen = books[0]
        notes.append(
            f"{chosen.where}: graded as {notebook} for {student}, the only notebook they handed in"
        )
    for f in books:
        if f is chosen:
            continue
        notes.append(f"{f.where}: not graded, {_why_not(f, chosen, named, student, notebook)}")
    return chosen, ""


def _why_not(
    other: _Entry, chosen: _Entry, named: list[_Entry], student: str, notebook: str
) -> str:
    """Why ``other`` is not graded, ``chosen`` is: a newer copy only where its time is later."""
    if other not in named:
        return f"{student}'s notebook for {notebook} is {chosen.where}"
    if any(_handed_in(f, _lms_info(f)) is None for f in (other, chosen)):
        order = (
            "newer by its file time in the download"
            if (other.mtime or 0.0) < (chosen.mtime or 0.0)
            else "of the same file time in the download, Canvas's newer attachment or its path "
            "sorting last"
        )
        return (
            f"{student} handed in another copy, {chosen.where}, {order}; one of them has no "
            f"time of when it was handed in (an LMS's zip stamps every file with the "
            f"download's): look at both"
        )
    if (other.mtime or 0.0) < (chosen.mtime or 0.0):
        return f"{student} handed in a newer copy, {chosen.where}"
    return (
        f"{student} handed in another copy, {chosen.where}, at the same time; of copies "
        "handed in at the same time the one whose path sorts last is graded"
    )


def collect_submissions(
    path: str | Path,
    notebook: str,
    lms: str | None = None,
    course_offset: CourseZone = None,
    problem_set: str | None = None,
) -> Collection:
    """Read every submission of ``notebook`` under ``path`` (a folder or a ``.zip``).

    Parameters
    ----------
    path : path-like
        A folder or a zip file in one of the layouts of the module docstring.
    notebook : str
        File name of the problem set's notebook, e.g. ``"ps1_pca.ipynb"``.
    lms : str, optional
        The format to read it as (one of :data:`FORMATS`); by default the one its files show.
    course_offset : timedelta or tzinfo, optional
        The course's zone (:data:`autograder.intake.lms.CourseZone`: the late policy's
        ``time_zone``, or its deadline's offset from UTC), which settles a zone abbreviation
        that names several zones (:data:`autograder.intake.lms.AMBIGUOUS`) and is the zone of
        the times that name none (D2L's); without it, or when it does not settle one, a time in
        such a zone is not read and its note says why.
    problem_set : str, optional
        The problem set's id: in a download of the whole course (nbgrader's exchange or
        ``submitted`` folder) only its submissions are read, the others noted.

    Returns
    -------
    Collection
        The submissions, the students without a gradable notebook, a note for every other file,
        the format recognised and the notebooks that reached no student.

    Raises
    ------
    ValueError
        If ``path`` does not exist, is neither a folder nor a zip archive, or holds no files, or
        ``lms`` is no format this grader reads.
    """
    return _collect(Path(path), notebook, lms, 0, course_offset, problem_set)


def _collect(
    path: Path,
    notebook: str,
    lms: str | None,
    depth: int,
    course_offset: CourseZone = None,
    problem_set: str | None = None,
    beside: Sequence[_Entry] = (),
) -> Collection:
    """:func:`collect_submissions` of a download ``depth`` archives deep in the one given, with
    the files ``beside`` the archive it was in (:func:`_archive_and_beside`)."""
    found = Collection()
    entries = _entries(path, found.notes)
    entries += _placed(beside, entries)
    archive, beside_it = _archive_and_beside(entries)
    if archive is not None and depth < MAX_DEPTH:
        return _inner(
            archive, notebook, lms, found.notes, depth + 1, course_offset, problem_set, beside_it
        )
    platform = _platform(entries, lms)
    if platform is not None:
        groups = _claimed(platform, entries, found.notes, found.lost, course_offset, problem_set)
        found.platform = platform.TITLE
    elif lms == ONE_STUDENT:  # each file in the student's folder, as in a folder per student
        inside = [dataclasses.replace(e, parts=(path.name, *e.parts)) for e in entries]
        groups, found.platform = {path.name: inside}, "one student's files"
    else:
        groups, found.platform = _by_student(
            entries, found.notes, found.lost, _names(lms), lms or ""
        )
    found.platform += " (as --lms says)" if lms else ""
    for student in sorted(groups):
        _collect_one(found, student, groups[student], notebook)
    if platform is None:
        _download_times(found)
    return found


def _download_times(found: Collection) -> None:
    """Say which LMS's download stamps its own time on every file (so no file's time is when it
    was handed in), and set whether its download marks a late file."""
    infos = [s.lms for s in found.submissions] + [u.lms for u in found.unmatched]
    systems = {i.system for i in infos if i is not None and i.system in _NAME_MODULES}
    found.marks_late = any(_NAME_MODULES[s].MARKS_LATE for s in systems)
    named = any(i is not None and i.system == "canvas" and not i.anonymous for i in infos)
    if named and not any("as a Canvas group set's export" in n for n in found.notes):
        found.notes.insert(
            0,
            "Canvas: if this is a group assignment graded as a group, the download holds one "
            "file per group, named after the group and one member's user id, and the other "
            "members are not in it: add the group set's CSV export (People -> Groups -> the "
            "group set's menu -> Export) to the download, and each member gets their own row",
        )
    if "moodle" in systems and not any("as Moodle's grading worksheet" in n for n in found.notes):
        found.notes.insert(
            0,
            "Moodle: if this assignment takes team submissions, each folder is a group's, not a "
            "student's, and the download does not name its members: add the assignment's "
            "grading worksheet (Submissions -> Download grading worksheet) to the download, and "
            "each member gets their own row",
        )
    for system in sorted(s for s in systems if not _NAME_MODULES[s].FILE_TIME):
        found.notes.insert(
            0,
            f"{system.title()}'s download stamps every file with the time of the download, not "
            f"when it was handed in: the late policy reads "
            + (
                f"{system.title()}'s LATE mark, not the files' times"
                if _NAME_MODULES[system].MARKS_LATE
                else f"no time from it ({system.title()} marks nothing late)"
            ),
        )


def _collect_one(found: Collection, student: str, files: list[_Entry], notebook: str) -> None:
    """Add ``student``'s notebook to ``found`` (or their unmatched row, and why)."""
    files = _unzipped(files, found.notes)
    chosen, reason = _pick(student, files, notebook, found.notes)
    if chosen is None:
        found.unmatched.append(
            Unmatched(student, tuple(f.where for f in files), reason, lms=_lms_info(files[0]))
        )
        return
    try:
        if chosen.size > MAX_FILE_BYTES:
            raise Unreadable(
                f"{chosen.size / 2**20:.0f} MB is over the {MAX_FILE_BYTES / 2**20:g} MB limit"
            )
        data = _read(chosen)
        if not data:
            raise Unreadable("the file is empty (0 bytes): the upload was probably interrupted")
    except Unreadable as exc:
        found.notes.append(f"{chosen.where}: not graded, {exc}")
        found.unmatched.append(
            Unmatched(student, (chosen.where,), str(exc), Status.UNREADABLE, _lms_info(chosen))
        )
        return
    info = _lms_info(chosen)
    when = _handed_in(chosen, info)
    if info is None:  # a plain copy beside the student's LMS files: their ids stay theirs
        info = next((i for i in map(_lms_info, files) if i is not None), None)
        if info is not None:
            found.notes.append(
                f"{chosen.where}: graded with {student}'s {info.system.title()} ids, "
                f"those of their other files"
            )
    found.submissions.append(Submission(student, data, chosen.where, info, when))


def _unzipped(files: list[_Entry], notes: list[str]) -> list[_Entry]:
    """A student's files, with the files inside the zips they handed in when they handed in no
    notebook (a zip of their folder, as Canvas and Moodle take it): each at its zip's time and
    with its zip's LMS ids. A zip that cannot be read is noted."""
    if any(f.parts[-1].lower().endswith(".ipynb") for f in files):
        return files
    opened = []
    for file in files:
        if not (file.parts[-1].lower().endswith(".zip") and _is_zip(file)):
            opened.append(file)
            continue
        try:
            archive = zipfile.ZipFile(io.BytesIO(_read(file)))
        except (Unreadable, zipfile.BadZipFile) as exc:
            notes.append(f"{file.where}: not opened, {exc}")
            opened.append(file)
            continue
        inside = _without_junk(
            [
                _Entry(
                    (*file.parts, *parts),
                    info.file_size,
                    file.mtime,
                    functools.partial(archive.open, info),
                    f"{file.where}/{name}",
                    file.lms or _lms_info(file),
                )
                for info, name, parts in _members(archive, f"{file.where}/", notes)
            ],
            notes,
        )
        _note(notes, f"{file.where}: a zip the student handed in, opened: {len(inside)} file(s)")
        opened += inside
    return opened


def _handed_in(entry: _Entry, info: LmsInfo | None) -> float | None:
    """When ``entry`` was handed in: the platform's own time, or the file's time; None where the
    LMS's download stamps every file with the time of the download (Canvas, Moodle)."""
    if info is not None and info.system in _NAME_MODULES:
        return entry.mtime if _NAME_MODULES[info.system].FILE_TIME else None
    return entry.mtime


def _lms_info(entry: _Entry) -> LmsInfo | None:
    """The LMS ids of the file graded: a platform's, Moodle's from its folder (or prefix),
    Canvas's from a flat download's file name."""
    if entry.lms is not None:
        return entry.lms
    if len(entry.parts) > 1:
        return parse_lms_name(entry.parts[0], folder=True)
    return parse_lms_name(entry.parts[0])
