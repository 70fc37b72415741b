"""``python -m autograder new NAME``: create a problem set with one worked example question.

Writes ``COURSE/source/NAME/NAME.ipynb`` and its marking scheme ``COURSE/rubrics/NAME.md``
(:func:`autograder.authoring.scaffold.create`) and says what to do next. Exit codes: 0 when
created, 2 when the name is refused (nothing is written).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.authoring.scaffold import ScaffoldError, create
from autograder.course import Course
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``new`` and its arguments in ``sub`` (the subparsers of the command line)."""
    new = sub.add_parser(
        "new",
        help="create a problem set with one worked autograded question "
        "and one written question, ready to edit and release",
    )
    new.add_argument("name", metavar="NAME", help="the new problem set's name, e.g. ps7_mixtures")
    new.add_argument("--course", type=Path, default=COURSE_DIR, help="nbgrader course folder")
    new.add_argument(
        "--title",
        default=None,
        metavar="TEXT",
        help="the notebook's title (default: 'Problem set NAME')",
    )
    new.add_argument(
        "--variants",
        action="store_true",
        help="give every student their own numbers (a hidden case on their own seed, question "
        "2 on their own sample): also writes COURSE/checks/NAME.py, the draw of each "
        "student's numbers (authoring.md, 'Giving every student their own numbers')",
    )
    return new


def main(args) -> int:
    """The ``new`` subcommand (arguments declared by :func:`add_parser`)."""
    course = Course(args.course)
    try:
        made = create(args.name, course, args.title, args.variants)
    except (ScaffoldError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rubric = "created" if made.rubric_created else "section appended"
    print(
        f"Created the problem set {made.name} "
        f"({made.autograded} autograded + {made.by_hand} graded by hand = "
        f"{made.autograded + made.by_hand} points):\n"
        f"  {made.notebook}\n"
        f"      question 1: gaussian_mle, a visible and a hidden test checked by declarations\n"
        f"      (metadata course.check) against solutions.mle:gaussian_mle\n"
        f"      question 2: a written answer graded by hand\n"
        f"{_variant_lines(made, course)}"
        f"  {made.rubric} ({rubric}: the marking scheme of question 2)\n"
        f"Next: edit the notebook into your questions (keep the header's points and table in\n"
        f"step with the cells), then\n"
        f"  python -m autograder check-problem-set {made.name} --course {course.root}\n"
        f"  python -m autograder release {made.name} --course {course.root}"
    )
    return 0


def _variant_lines(made, course: Course) -> str:
    """What ``--variants`` added, or nothing."""
    if not made.variants:
        return ""
    return (
        "      every student's own numbers: the cells student_identity and variant after the\n"
        "      setup, a hidden case on the student's own seed, question 2 on their own sample\n"
        f"  {course.checks_module(made.name)} (the draw of each student's numbers and the\n"
        "      value question 2 should state; release it for a class with --roster)\n"
    )
