"""Find the submissions of a class: a folder, a zip of a folder, or an LMS download.

Three layouts are read, each yielding one notebook per student:

- a folder ``SUBMISSIONS/<student_id>/<notebook>.ipynb`` (nbgrader's ``submitted`` layout, without
  the assignment level);
- a zip file of such a folder (with or without one top-level folder around it);
- an LMS download: a flat zip (or folder) of files named ``<student>_<ids>_<notebook>.ipynb``,
  as nbgrader's ``zip_collect`` reads them; the student is the part before the first underscore.

Entries are read into memory as bytes and never executed or unpacked to disk here, so a zip's
paths (``../../etc``) cannot write anywhere.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

__all__ = ["Submission", "collect_submissions"]

_STUDENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")
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


def _student_of(parts: tuple[str, ...], notebook: str) -> str | None:
    """The student a path inside a submissions tree belongs to, or None if it is not a submission."""
    name = parts[-1]
    if name.startswith(".") or "__MACOSX" in parts or ".ipynb_checkpoints" in parts:
        return None
    if len(parts) >= 2 and name == notebook:
        return parts[-2]
    lms = re.fullmatch(rf"([^_]+)_.*{re.escape(Path(notebook).stem)}(?:[-_ ]?\(?\d+\)?)?\.ipynb",
                       name)
    return lms.group(1) if lms else None


def collect_submissions(path: str | Path, notebook: str) -> tuple[list[Submission], list[str]]:
    """Read every submission of ``notebook`` under ``path`` (a folder or a ``.zip``).

    Parameters
    ----------
    path : path-like
        A folder or a zip file in one of the layouts of the module docstring.
    notebook : str
        File name of the problem set's notebook, e.g. ``"ps1_pca.ipynb"``.

    Returns
    -------
    submissions : list of Submission
        Sorted by student id. When a student appears twice, the last in sorted path order wins.
    problems : list of str
        Files that were skipped and why (bad student id, too large, duplicate).

    Raises
    ------
    ValueError
        If ``path`` is neither a folder nor a zip file.
    """
    path = Path(path)
    entries: list[tuple[tuple[str, ...], callable, int]] = []
    if path.is_dir():
        for file in sorted(path.rglob("*.ipynb")):
            rel = file.relative_to(path).parts
            entries.append((rel, file.read_bytes, file.stat().st_size))
    elif path.is_file() and zipfile.is_zipfile(path):
        archive = zipfile.ZipFile(path)
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            if info.is_dir():
                continue
            parts = PurePosixPath(info.filename.replace("\\", "/")).parts
            entries.append((parts, lambda i=info: archive.read(i), info.file_size))
    else:
        raise ValueError(f"submissions must be a folder or a .zip file; got {str(path)!r}")
    found: dict[str, Submission] = {}
    problems: list[str] = []
    for parts, read, size in entries:
        student = _student_of(parts, notebook)
        if student is None:
            continue
        where = "/".join(parts)
        if not _STUDENT_ID.match(student):
            problems.append(f"{where}: skipped, {student!r} is not a valid student id")
            continue
        if size > MAX_FILE_BYTES:
            problems.append(f"{where}: skipped, {size / 2**20:.0f} MB is over the "
                            f"{MAX_FILE_BYTES // 2**20} MB limit")
            continue
        if student in found:
            problems.append(f"{where}: replaces {found[student].origin} for student {student}")
        found[student] = Submission(student, read(), where)
    return [found[s] for s in sorted(found)], problems
