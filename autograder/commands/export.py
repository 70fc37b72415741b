"""``python -m autograder export PS --out DIR``: merge hand-grading, then write the LMS files.

What it does is :mod:`autograder.run.export`'s (the records, ``grades.csv`` and the feedback
rewritten, then ``DIR/exports/``); this module declares its arguments and exit codes.

Exit codes: 0 when the files were written, 2 for a folder without records or a bad setting.
"""

from __future__ import annotations

from pathlib import Path

from autograder.grading.problemset import list_problem_sets
from autograder.pages.visibility import MODES
from autograder.run.export import FORMATS, export
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``export`` and its arguments in ``sub`` (the subparsers of the command line)."""
    export = sub.add_parser(
        "export",
        help="merge the hand-graded scores of the gradebook into "
        "a grading run's grades.csv and feedback, and write the LMS files",
    )
    export.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    export.add_argument(
        "--out",
        type=Path,
        required=True,
        help="the grading run's output folder (exports go to OUT/exports/)",
    )
    export.add_argument(
        "--course",
        type=Path,
        default=COURSE_DIR,
        help=f"nbgrader course whose gradebook holds the hand-graded scores (default {COURSE_DIR})",
    )
    for name, what in (
        ("canvas", "Canvas gradebook import CSV"),
        ("moodle", "Moodle grading worksheet and gradebook import CSV"),
        ("blackboard", "Blackboard Learn Grade Center upload CSV"),
        ("gradescope", "Gradescope results.json per student"),
        ("feedback-archive", "feedback pages zipped for the LMS's bulk upload"),
    ):
        export.add_argument(f"--{name}", action="store_true", help=f"{what} (default: all)")
    export.add_argument(
        "--lms-name",
        default=None,
        help="the assignment's (grade item's) title in the LMS (default: the problem set's name)",
    )
    export.add_argument(
        "--canvas-id", default=None, help="the Canvas assignment id (the number ending its address)"
    )
    export.add_argument(
        "--moodle-identifier",
        default="username",
        choices=("username", "useremail", "useridnumber", "userid"),
        help="what the student ids are, for Moodle's gradebook import",
    )
    export.add_argument(
        "--hidden-feedback",
        choices=MODES,
        default=None,
        help="what the feedback shows of hidden checks (default: course/feedback.toml, else full)",
    )
    export.add_argument(
        "--late-policy",
        type=Path,
        default=None,
        metavar="FILE",
        help="late policy (default: course/late.toml if it exists, else none)",
    )
    return export


def main(args) -> int:
    """The ``export`` subcommand (arguments declared by :func:`add_parser`)."""
    import sys

    formats = tuple(f for f in FORMATS if getattr(args, f.replace("-", "_"))) or FORMATS
    try:
        export(
            args.assignment,
            args.out,
            args.course,
            formats=formats,
            canvas_name=args.lms_name,
            canvas_id=args.canvas_id,
            moodle_identifier=args.moodle_identifier,
            hidden_feedback=args.hidden_feedback,
            late_policy=args.late_policy,
            log=lambda m: print(m, file=sys.stderr if m.startswith("note") else sys.stdout),
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
