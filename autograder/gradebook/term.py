"""The term rollover: archive a term's grading and start the next with a clean course.

``python -m autograder new-term [--archive DIR] [--outputs DIR ...]`` moves what a term's grading
left in the course folder into ``DIR`` (default ``<course>/archive/term-<date>``):

- ``gradebook.db``, nbgrader's gradebook (every score, hand-grading included);
- ``submitted/``, ``autograded/``, ``feedback/``: the formgrader's copies of the notebooks;
- each ``--outputs`` folder, a grading run's ``--out`` (``grades.csv``, ``records/``, the feedback
  pages, the reports and the LMS exports), moved to ``DIR/outputs/<its name>``.

It keeps what the next term starts from: the source notebooks, rubrics, policies and the
published releases. The next ``release`` makes a fresh gradebook, so a changed problem set is
released and graded with no trace of last term's cells. Nothing is deleted: every move is a
rename (or a copy then delete across file systems), an archive folder that exists already is
refused, and ``DIR/MANIFEST.txt`` lists what was moved from where.
"""

from __future__ import annotations

import datetime as _dt
import shutil
from dataclasses import dataclass
from pathlib import Path

from autograder.course import Course

__all__ = ["TERM_FILES", "Archived", "archive_term"]

#: What a term's grading leaves in the course folder.
TERM_FILES = ("gradebook.db", "submitted", "autograded", "feedback")


@dataclass(frozen=True)
class Archived:
    """What :func:`archive_term` moved: ``(from, to)`` pairs, and the archive folder."""

    folder: Path
    moved: tuple[tuple[Path, Path], ...]


def default_archive(course: Course, today: _dt.date | None = None) -> Path:
    """``<course>/archive/term-YYYY-MM-DD`` (today's date)."""
    return course.root / "archive" / f"term-{(today or _dt.date.today()).isoformat()}"


def archive_term(
    course: Course, archive: Path | None = None, outputs: tuple[Path, ...] = ()
) -> Archived:
    """Move the term's gradebook, formgrader copies and grading outputs into ``archive``.

    Raises
    ------
    ValueError
        If ``archive`` exists, an ``outputs`` folder does not, or there is nothing to archive.
    """
    archive = Path(archive or default_archive(course)).resolve()
    if archive.exists():
        raise ValueError(f"{archive} exists already; choose another --archive folder")
    sources = [
        (course.root / name, archive / name) for name in TERM_FILES if (course.root / name).exists()
    ]
    for out in outputs:
        out = Path(out).resolve()
        if not out.is_dir():
            raise ValueError(f"--outputs {out}: no such folder (a grading run's --out)")
        if archive.is_relative_to(out):
            raise ValueError(f"--archive {archive} is inside --outputs {out}")
        sources.append((out, archive / "outputs" / out.name))
    if not sources:
        raise ValueError(
            f"{course.root} has no term to archive (no gradebook.db, submitted/, "
            f"autograded/ or feedback/), and no --outputs were given"
        )
    if len({to for _, to in sources}) != len(sources):
        raise ValueError("two --outputs folders have the same name; archive them one at a time")
    archive.mkdir(parents=True)
    moved = []
    for src, dest in sources:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(src), str(dest))
        moved.append((src, dest))
    (archive / "MANIFEST.txt").write_text(
        f"Term archived {_dt.datetime.now().astimezone().isoformat(timespec='seconds')} "
        f"from {course.root}\n"
        + "".join(f"{dest.relative_to(archive)}\t<- {src}\n" for src, dest in moved)
    )
    return Archived(archive, tuple(moved))
