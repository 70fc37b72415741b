"""``python -m autograder check-problem-set NAME``: the author's self-check of a problem set.

Runs :func:`autograder.authoring.selfcheck.self_check` and prints each step with its time and what
to change; ``--mutants`` also grades the mistakes declared next to the answers. Exit codes: 0 when
the problem set is sound, 1 when a check failed, 2 for an unknown problem set.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autograder.authoring.selfcheck import Step, self_check
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``check-problem-set`` and its arguments in ``sub`` (the subparsers of the command
    line)."""
    check = sub.add_parser(
        "check-problem-set",
        help="the author's self-check of a problem set: "
        "reference full marks, blank zero, points, marking scheme, a clean "
        "release, the kit's inputs, generic wrong answers",
    )
    check.add_argument(
        "name", metavar="NAME", help=f"problem set: {', '.join(list_problem_sets())}"
    )
    check.add_argument("--course", type=Path, default=COURSE_DIR, help="nbgrader course folder")
    check.add_argument(
        "--mutants",
        action="store_true",
        help="also grade the realistic mistakes declared next to the answers "
        "(metadata.course.mutants): each must lose points on its question "
        "(a graded run each, a minute or more)",
    )
    return check


def main(args) -> int:
    """The ``check-problem-set`` subcommand (arguments declared by :func:`add_parser`)."""
    start = time.perf_counter()
    try:
        ps = ProblemSet(args.name, Course(args.course))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    def show(step: Step) -> None:
        mark = "ok  " if step.ok else "FAIL"
        detail = f" ({step.detail})" if step.detail else ""
        print(f"{mark} {step.what}{detail} [{step.seconds:.0f} s]", flush=True)
        for problem in step.problems:
            print(f"     - {problem}", flush=True)

    steps = self_check(ps, show, mutants=args.mutants)
    failed = sum(not s.ok for s in steps)
    took = time.perf_counter() - start
    if failed:
        print(f"{ps.name}: {failed} of {len(steps)} checks failed ({took:.0f} s)")
        return 1
    print(f"{ps.name} is sound: {len(steps)} checks passed ({took:.0f} s)")
    return 0
