"""Find the submissions of a class: a folder, a zip of a folder, or an LMS download.

Three layouts are read, each yielding at most one notebook per student:

- a folder ``SUBMISSIONS/<student_id>/<notebook>.ipynb`` (nbgrader's ``submitted`` layout, without
  the assignment level);
- a zip file of such a folder (with or without one top-level folder around it);
- an LMS download: a flat zip (or folder) of files named ``<student>_<ids>_<notebook>.ipynb``,
  as nbgrader's ``zip_collect`` reads them; the student is the part before the first underscore
  (Canvas's ``<student>_LATE_<ids>_...`` included).

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
import zipfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Callable

__all__ = ["Submission", "Unmatched", "Collection", "collect_submissions"]

_STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
_COPY_SUFFIX = re.compile(r"(?:\s*\(\d+\)|[-_ ]\d{1,3}|[-_ ]copy(?:\s*\d+)?)$", re.IGNORECASE)
_JUNK = ("__MACOSX", ".ipynb_checkpoints", "__pycache__")
MAX_FILE_BYTES = 50 * 2**20


@dataclass(frozen=True)
class Submission:
    """One student's notebook, as submitted (untrusted bytes)."""

    student_id: str
    data: bytes
    origin: str  # where it came from, for messages

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
        if flat:
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
            found.submissions.append(Submission(student, chosen.read(), chosen.where))
    return found
