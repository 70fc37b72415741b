"""``python -m autograder new-term``: archive a term's grading and start the next.

Moves the gradebook, nbgrader's ``submitted``/``autograded``/``feedback`` folders and the given
grading runs into an archive folder (:func:`autograder.gradebook.term.archive_term`). Exit codes: 0 when the
term is archived, 2 when nothing was moved (the reason printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.course import Course
from autograder.gradebook.term import archive_term
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``new-term`` and its arguments in ``sub`` (the subparsers of the command line)."""
    term = sub.add_parser(
        "new-term",
        help="archive a term's gradebook, formgrader copies and "
        "grading outputs, and start the next term",
    )
    term.add_argument("--course", type=Path, default=COURSE_DIR, help="nbgrader course folder")
    term.add_argument(
        "--archive",
        type=Path,
        default=None,
        metavar="DIR",
        help="where to move the term (default: COURSE/archive/term-<date>)",
    )
    term.add_argument(
        "--outputs",
        type=Path,
        nargs="*",
        default=(),
        metavar="DIR",
        help="grading runs' --out folders to archive with it",
    )
    return term


def main(args) -> int:
    """The ``new-term`` subcommand (arguments declared by :func:`add_parser`)."""
    course = Course(args.course)
    try:
        done = archive_term(course, args.archive, tuple(args.outputs or ()))
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for src, dest in done.moved:
        print(f"archived {src} -> {dest}")
    print(
        f"The term is archived in {done.folder}. Release the problem sets for the new term "
        f"(python -m autograder release NAME --course {course.root}): the release makes a "
        f"fresh gradebook."
    )
    return 0
