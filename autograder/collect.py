"""Find the submissions of a class: a folder, a zip of a folder, or an LMS download.

Three layouts are read, each yielding at most one notebook per student:

- a folder ``SUBMISSIONS/<student_id>/<notebook>.ipynb`` (nbgrader's ``submitted`` layout, without
  the assignment level);
- a zip file of such a folder (with or without one top-level folder around it);
- an LMS download: a flat zip (or folder) of files named ``<student>_<ids>_<notebook>.ipynb``,
  as nbgrader's ``zip_collect`` reads them; the student is the part before the first underscore
  (Canvas's ``<student>_LATE_<ids>_...`` included);
- a Moodle download: a folder per student, ``<Full Name>_<participant id>_assignsubmission_file``
  (``..._file_`` in Moodle before 3.1's folders, or flat files ``<Full Name>_<participant id>_
  assignsubmission_file_<file>``); the student id is made from the name and the participant id
  (``Jane Doe_123`` gives ``jane-doe-123``).

What the LMS's names say is kept on the :class:`Submission` (:class:`LmsInfo`), for the exports
back into the LMS (:mod:`autograder.exports`) and the late policy (:mod:`autograder.late`):

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
note. Entries are read into memory as bytes and never executed or unpacked to disk here; archive
members whose path is absolute or climbs out of the archive (``..``) are refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
import unicodedata
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Callable

__all__ = ["Submission", "LmsInfo", "Unmatched", "Collection", "collect_submissions",
           "parse_lms_name"]

_STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
_COPY_SUFFIX = re.compile(r"(?:\s*\(\d+\)|[-_ ]\d{1,3}|[-_ ]copy(?:\s*\d+)?)$", re.IGNORECASE)
_JUNK = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")
MAX_FILE_BYTES = 50 * 2**20
# Canvas: <name>_[LATE_]<user id>_[<attachment id>_]<file>; the name has no underscore.
_CANVAS = re.compile(r"^(?P<name>[^_]+)_(?P<late>LATE_)?(?P<user>\d+)_(?:(?P<attachment>\d+)_)?"
                     r"(?P<file>.+)$")
# Moodle: <full name>_<participant id>_assignsubmission_<plugin>[_<file>] (a folder or a file).
_MOODLE = re.compile(r"^(?P<name>.+?)_(?P<user>\d+)_assignsubmission_(?P<plugin>[a-z]+)"
                     r"(?:_(?P<file>.*))?$")


@dataclass(frozen=True)
class LmsInfo:
    """What an LMS download's file name says about a submission.

    Attributes
    ----------
    system : str
        ``"canvas"`` or ``"moodle"``.
    user_id : str
        Canvas's user id, or Moodle's participant id (the ``Participant <id>`` of the grading
        worksheet).
    name : str
        The name part (Canvas's ``lastfirst`` login-like name, Moodle's full name).
    late : bool
        Whether the LMS marked the file late (Canvas's ``LATE``; Moodle marks nothing).
    attachment_id : str or None
        Canvas's attachment id (needed to re-upload feedback to that submission).
    prefix : str
        The file-name prefix the LMS matches on re-upload: Canvas ``<name>_<user>_<attachment>_``
        (without ``LATE_``), Moodle ``<Full Name>_<id>_assignsubmission_file``.
    """

    system: str
    user_id: str
    name: str
    late: bool = False
    attachment_id: str | None = None
    prefix: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def parse_lms_name(name: str, folder: bool = False) -> LmsInfo | None:
    """The LMS ids in a downloaded file's (or Moodle folder's) name, or None if it has none.

    >>> parse_lms_name("doejane_LATE_101_5001_ps3_mle.ipynb").late
    True
    >>> parse_lms_name("Jane Doe_123_assignsubmission_file", folder=True).user_id
    '123'
    """
    moodle = _MOODLE.match(name)
    if moodle and (folder or moodle.group("file")):
        return LmsInfo("moodle", moodle.group("user"), moodle.group("name"), False, None,
                       f"{moodle.group('name')}_{moodle.group('user')}_assignsubmission_"
                       f"{moodle.group('plugin')}")
    canvas = None if folder else _CANVAS.match(name)
    if canvas:
        attachment = canvas.group("attachment")
        prefix = f"{canvas.group('name')}_{canvas.group('user')}_" + (
            f"{attachment}_" if attachment else "")
        return LmsInfo("canvas", canvas.group("user"), canvas.group("name"),
                       bool(canvas.group("late")), attachment, prefix)
    return None


def _moodle_student(info: LmsInfo) -> str:
    """A student id from Moodle's full name and participant id: ``Jane Doe``, 123 →
    ``jane-doe-123`` (letters folded to ASCII, anything else a hyphen)."""
    ascii_name = unicodedata.normalize("NFKD", info.name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:80]
    return f"{slug}-{info.user_id}" if slug else f"participant-{info.user_id}"


@dataclass(frozen=True)
class Submission:
    """One student's notebook, as submitted (untrusted bytes).

    ``lms`` holds the ids and the late mark of an LMS download's file name (None for a plain
    folder), ``submitted_at`` the file's time (POSIX seconds, from the archive or the file
    system; the LMS sets it when it builds the download), for the late policy.
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
    """A student who handed in files, none of which could be taken as the problem set's notebook."""

    student_id: str
    files: tuple[str, ...]
    reason: str


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
    """

    submissions: list[Submission] = field(default_factory=list)
    unmatched: list[Unmatched] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Entry:
    parts: tuple[str, ...]  # path below the folders that wrap the whole class, as components
    size: int
    mtime: float
    read: Callable[[], bytes]
    where: str  # the path inside the submissions, for messages


def _unsafe(name: str) -> bool:
    """True for an archive member whose path is absolute or climbs out of the archive."""
    name = name.replace("\\", "/")
    return (name.startswith("/") or re.match(r"^[A-Za-z]:", name) is not None
            or ".." in PurePosixPath(name).parts)


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
            entries.append(_Entry(rel, stat.st_size, stat.st_mtime, file.read_bytes,
                                  "/".join(rel)))
    elif zipfile.is_zipfile(path):
        archive = zipfile.ZipFile(path)
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            if info.is_dir():
                continue
            if _unsafe(info.filename):
                notes.append(f"{info.filename}: refused, an archive member whose path is "
                             f"absolute or leaves the archive")
                continue
            parts = PurePosixPath(info.filename.replace("\\", "/")).parts
            mtime = datetime(*info.date_time).timestamp()
            entries.append(_Entry(parts, info.file_size, mtime, lambda i=info: archive.read(i),
                                  info.filename))
        if not archive.infolist():
            raise ValueError(f"the archive {str(path)!r} is empty")
    else:
        raise ValueError(f"the submissions {str(path)!r} must be a folder or a .zip archive; "
                         f"this file is neither")
    kept = []
    for entry in entries:
        if entry.parts[-1].startswith(".") or any(p in _JUNK for p in entry.parts):
            notes.append(f"{entry.where}: ignored, a system or editor file")
        else:
            kept.append(entry)
    if not entries:
        raise ValueError(f"the submissions {str(path)!r} hold no files")
    return kept


def _is_wrapper(entries: list[_Entry]) -> bool:
    """True when every file lies in one folder that is not a student's: it holds student
    folders (``class/alice/nb.ipynb``) or an LMS download (``class/alice_1_nb.ipynb`` and
    ``class/bob_2_nb.ipynb``), not one student's files (``alice/nb.ipynb``)."""
    if not entries or len({e.parts[0] for e in entries}) != 1 or any(len(e.parts) < 2
                                                                    for e in entries):
        return False
    if parse_lms_name(entries[0].parts[0], folder=True) is not None:
        return False  # one Moodle student's folder
    if any(len(e.parts) > 2 for e in entries):
        return True
    names = [e.parts[1] for e in entries]
    return all("_" in n for n in names) and len({n.split("_", 1)[0] for n in names}) > 1


def _by_student(entries: list[_Entry], notes: list[str]) -> dict[str, list[_Entry]]:
    """Group files by student: a folder per student, or the LMS's ``<student>_...`` names."""
    while _is_wrapper(entries):
        entries = [dataclasses.replace(e, parts=e.parts[1:]) for e in entries]
    flat = all(len(e.parts) == 1 for e in entries)
    groups: dict[str, list[_Entry]] = {}
    for entry in entries:
        moodle = parse_lms_name(entry.parts[0], folder=len(entry.parts) > 1)
        if moodle is not None and moodle.system == "moodle":
            student = _moodle_student(moodle)
        elif flat:
            student = entry.parts[0].split("_", 1)[0] if "_" in entry.parts[0] else None
        else:
            student = entry.parts[0] if len(entry.parts) > 1 else None
        if student is None:
            notes.append(f"{entry.where}: not graded, it belongs to no student (put each "
                         f"student's files in a folder named after them, or use the LMS's "
                         f"<student>_... names)")
        elif not _STUDENT_ID.match(student):
            notes.append(f"{entry.where}: not graded, {student!r} is not a valid student id")
        else:
            groups.setdefault(student, []).append(entry)
    return groups


def _matches(name: str, notebook: str, flat: bool) -> bool:
    """Whether the file ``name`` is a copy of ``notebook``, up to case, copy suffixes and, in an
    LMS download, the ``<student>_<ids>_`` prefix."""
    stem, target = name[:-len(".ipynb")].lower(), Path(notebook).stem.lower()
    if flat:
        stem = stem.split("_", 1)[1] if "_" in stem else stem
    return any(s == target or (flat and s.endswith("_" + target))
               for s in (stem, _COPY_SUFFIX.sub("", stem).strip()))


def _exact(entry: _Entry, notebook: str) -> bool:
    """Whether the file carries exactly the notebook's name (after an LMS prefix)."""
    name = entry.parts[-1]
    return name == notebook or (len(entry.parts) == 1 and name.endswith("_" + notebook))


def _pick(student: str, files: list[_Entry], notebook: str,
          notes: list[str]) -> tuple[_Entry | None, str]:
    """The student's file to grade (or None, and why), noting every other file."""
    flat = all(len(f.parts) == 1 for f in files)
    books = [f for f in files if f.parts[-1].lower().endswith(".ipynb")]
    for f in files:
        if f not in books:
            notes.append(f"{f.where}: not graded, not a notebook (.ipynb)")
    named = [f for f in books if _matches(f.parts[-1], notebook, flat)]
    if not named and len(books) != 1:
        return None, (f"no notebook named {notebook} among {len(books)} notebooks" if books
                      else "no notebook (.ipynb) among the files handed in")
    if named:
        chosen = max(named, key=lambda f: (f.mtime, f.where))
        if not _exact(chosen, notebook):
            notes.append(f"{chosen.where}: graded as {notebook} for {student}")
    else:
        chosen = books[0]
        notes.append(f"{chosen.where}: graded as {notebook} for {student}, the only notebook "
                     f"they handed in")
    for f in books:
        if f is chosen:
            continue
        why = (f"{student} handed in a newer copy," if f in named
               else f"{student}'s notebook for {notebook} is")
        notes.append(f"{f.where}: not graded, {why} {chosen.where}")
    return chosen, ""


def collect_submissions(path: str | Path, notebook: str) -> Collection:
    """Read every submission of ``notebook`` under ``path`` (a folder or a ``.zip``).

    Parameters
    ----------
    path : path-like
        A folder or a zip file in one of the layouts of the module docstring.
    notebook : str
        File name of the problem set's notebook, e.g. ``"ps1_pca.ipynb"``.

    Returns
    -------
    Collection
        The submissions, the students without a gradable notebook, and a note for every other
        file.

    Raises
    ------
    ValueError
        If ``path`` does not exist, is neither a folder nor a zip archive, or holds no files.
    """
    path = Path(path)
    found = Collection()
    groups = _by_student(_entries(path, found.notes), found.notes)
    for student in sorted(groups):
        chosen, reason = _pick(student, groups[student], notebook, found.notes)
        if chosen is None:
            found.unmatched.append(Unmatched(student, tuple(f.where for f in groups[student]),
                                             reason))
        elif chosen.size > MAX_FILE_BYTES:
            found.unmatched.append(Unmatched(student, (chosen.where,), (
                f"{chosen.size / 2**20:.0f} MB is over the {MAX_FILE_BYTES // 2**20} MB limit")))
        else:
            found.submissions.append(Submission(student, chosen.read(), chosen.where,
                                                _lms_info(chosen), chosen.mtime))
    return found


def _lms_info(entry: _Entry) -> LmsInfo | None:
    """The LMS ids of the file graded: Moodle's from its folder (or prefix), Canvas's from a
    flat download's file name."""
    if len(entry.parts) > 1:
        return parse_lms_name(entry.parts[0], folder=True)
    return parse_lms_name(entry.parts[0])
