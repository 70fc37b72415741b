"""``python -m autograder gradescope PS [--out DIR]``: the ``autograder.zip`` Gradescope runs.

Writes ``DIR/autograder.zip`` (default: the current folder), Gradescope's autograder for one
problem set (:func:`autograder.run.gradescope.build_zip`): ``setup.sh`` and ``run_autograder`` at
its root, the grader and the course's files for that problem set. With ``--wheels FOLDER`` the
wheels there go into the zip and ``setup.sh`` installs from them.

``python -m autograder gradescope PS --run ROOT`` is what ``run_autograder`` calls inside
Gradescope's container (``ROOT`` is ``/autograder``): it grades the one submission and writes
``ROOT/results/results.json`` (:func:`autograder.run.gradescope.run_submission`), in the
bubblewrap sandbox where it can be built, else in the sandbox's container mode (``--sandbox``
chooses).

Exit codes: 0 when the zip was written or the submission graded, 1 when the submission was not
graded (``results.json`` says why), 2 for a bad command line or course.
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.commands import chosen_course
from autograder.grading.problemset import list_problem_sets
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``gradescope`` and its arguments in ``sub`` (the subparsers of the command line)."""
    from autograder.run.gradescope import SANDBOXES

    gs = sub.add_parser(
        "gradescope", help="build autograder.zip for a Gradescope programming assignment"
    )
    gs.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    gs.add_argument(
        "--out", type=Path, default=Path("."), help="folder for autograder.zip (default: here)"
    )
    gs.add_argument(
        "--wheels",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="wheels to put in the zip, for setup.sh to install from",
    )
    gs.add_argument(
        "--course",
        type=Path,
        default=COURSE_DIR,
        help=f"nbgrader course folder (default {COURSE_DIR}, or $AUTOGRADER_COURSE)",
    )
    gs.add_argument(
        "--run",
        type=Path,
        default=None,
        metavar="ROOT",
        help="inside Gradescope (run_autograder): grade the submission of the folder laid "
        "out as /autograder and write ROOT/results/results.json",
    )
    gs.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        default="auto",
        help="with --run: bubblewrap where it can be built, else the container mode (auto); "
        "or one of them",
    )
    return gs


def main(args) -> int:
    """The ``gradescope`` subcommand; returns the exit code (see the module docstring)."""
    from autograder.run.gradescope import build_zip, run_submission

    if args.run is not None:
        if not (args.run / "source" / "course").is_dir():
            print(
                f"error: {args.run} is not laid out as /autograder (no source/course/)",
                file=sys.stderr,
            )
            return 2
        return run_submission(args.assignment, args.run, args.sandbox)
    course = chosen_course(args)
    if course is None:
        return 2
    from autograder.grading.problemset import ProblemSet

    try:
        path = build_zip(ProblemSet(args.assignment, course), args.out, args.wheels)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: upload it as the autograder of a Gradescope programming assignment")
    return 0
