"""``python -m autograder add-question PS ...``: add a question to a problem set in one command.

An autograded question (``--function F --reference MODULE:FUNCTION --case NAME=JSON ...``: the
first case is the visible test's, the others the hidden test's) or a written one
(``--written GRADE_ID``), inserted as question ``--at N`` (default: after the last), the later
questions renumbered (:func:`autograder.authoring.addquestion.add_question`). Exit codes: 0 when
added, 2 when it cannot be (nothing is written).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from autograder.authoring.addquestion import Autograded, QuestionError, Written, add_question
from autograder.course import Course
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``add-question`` and its arguments in ``sub`` (the subparsers of the command
    line)."""
    add = sub.add_parser(
        "add-question",
        help="add an autograded or a written question to a problem set, its cells, "
        "declarations, points and marking-scheme section, renumbering the later questions",
    )
    add.add_argument("name", metavar="PS", help="the problem set")
    add.add_argument("--course", type=Path, default=COURSE_DIR, help="nbgrader course folder")
    add.add_argument(
        "--at",
        type=int,
        default=None,
        metavar="N",
        help="the new question's number (default: after the last)",
    )
    add.add_argument("--title", required=True, help="the question's title (heading and table)")
    kind = add.add_mutually_exclusive_group(required=True)
    kind.add_argument("--function", help="an autograded question: the student's function")
    kind.add_argument("--written", metavar="GRADE_ID", help="a written question: its answer cell")
    add.add_argument(
        "--reference",
        metavar="MODULE:FUNCTION",
        help="the reference the declared checks compare with (autograded)",
    )
    add.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help='a declared case, {argument: input}, e.g. x={"normal": {"seed": 1, '
        "\"n\": 30}}; the first is the visible test's, the others the hidden's",
    )
    add.add_argument(
        "--points",
        type=float,
        nargs="+",
        default=None,
        metavar="P",
        help="autograded: the visible and the hidden test's points (1 2); "
        "written: the answer's points (2)",
    )
    return add


def _names_problem(args) -> None:
    """Refuse what would make a notebook that is not valid: a grade_id or function that is no
    Python name (nbgrader's ids, ``def NAME(``), an empty title, a number below 1."""
    for option, value in (("--function", args.function), ("--written", args.written)):
        if value is not None and not (value.isidentifier() and value.isascii()):
            meant = re.sub(r"\W+", "_", value).strip("_") or "answer"
            raise QuestionError(
                f"{option} {value!r} is not a Python name: write it with letters, digits and "
                f"underscores ({meant}, say)"
            )
    if not args.title.strip():
        raise QuestionError("--title is empty: give the question's title")
    if args.at is not None and args.at < 1:
        raise QuestionError(f"--at {args.at}: questions are numbered from 1")


def _question(args) -> Autograded | Written:
    _names_problem(args)
    if any(not p > 0 for p in args.points or []):
        raise QuestionError(
            f"--points {' '.join(f'{p:g}' for p in args.points)}: give each graded cell points "
            "above 0 (a cell worth 0 counts for nothing)"
        )
    if args.written:
        return Written(args.written, args.title, *(args.points or [])[:1])
    if not args.reference:
        raise QuestionError("an autograded question needs --reference MODULE:FUNCTION")
    cases: dict[str, dict] = {}
    for given in args.case:
        name, sep, spec = given.partition("=")
        try:
            inputs = json.loads(spec) if sep else None
        except json.JSONDecodeError as exc:
            raise QuestionError(f"--case {given!r}: the inputs are not JSON ({exc})") from None
        if not isinstance(inputs, dict):
            raise QuestionError(f"--case {given!r}: write NAME={{argument: input, ...}}")
        if name.strip() in cases:
            raise QuestionError(
                f"--case {given!r}: the name {name.strip()!r} is given to an earlier --case too; "
                "give each case a name of its own"
            )
        cases[name.strip()] = inputs
    points = args.points or [1, 2]
    if len(points) != 2:
        raise QuestionError("--points takes the visible and the hidden test's points")
    return Autograded(args.function, args.reference, cases, args.title, *points)


def main(args) -> int:
    """The ``add-question`` subcommand (arguments declared by :func:`add_parser`)."""
    try:
        at = add_question(args.name, _question(args), args.at, Course(args.course))
    except (QuestionError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{args.name}: question {at} added, the later questions renumbered. Next: write its "
        f"text and answer, then\n"
        f"  python -m autograder check-problem-set {args.name} --course {args.course}"
    )
    return 0
