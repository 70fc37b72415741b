"""``python -m autograder similarity ASSIGNMENT SUBMISSIONS --out DIR``: whose code is alike.

Writes ``DIR/similarity.html``, the pairs of submissions whose code is most alike
(:func:`autograder.pages.similarity.write_similarity`): evidence for a person to judge, no grade
changes. Exit codes: 0 when the page was written, 2 for an unknown problem set or unreadable
submissions.
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.commands import chosen_course
from autograder.grading.problemset import list_problem_sets
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``similarity`` and its arguments in ``sub`` (the subparsers of the command
    line)."""
    similar = sub.add_parser(
        "similarity",
        help="which submissions' code is alike: "
        "DIR/similarity.html, evidence for a person to judge (no grade "
        "changes)",
    )
    similar.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    similar.add_argument(
        "submissions",
        type=Path,
        help="folder <student>/<notebook>.ipynb, a zip of it, or an LMS zip",
    )
    similar.add_argument("--out", type=Path, required=True, help="output folder")
    similar.add_argument("--top", type=int, default=50, help="pairs listed (default 50)")
    similar.add_argument(
        "--course",
        type=Path,
        default=COURSE_DIR,
        help=f"nbgrader course folder (default {COURSE_DIR})",
    )
    return similar


def main(args) -> int:
    """The ``similarity`` subcommand (arguments declared by :func:`add_parser`)."""
    from autograder.checks.personal import read_secret
    from autograder.grading.problemset import ProblemSet
    from autograder.grading.quoted import quoted_numbers
    from autograder.intake.collect import collect_submissions
    from autograder.pages.similarity import write_similarity

    course = chosen_course(args)
    if course is None:
        return 2
    ps = ProblemSet(args.assignment, course)
    try:
        if ps.variants is not None:  # each student's expected numbers are drawn from it
            read_secret(ps.course)
        found = collect_submissions(args.submissions, ps.notebook_name, problem_set=ps.name)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    quoted = quoted_numbers(ps, [(s.student_id, s.data) for s in found.submissions])
    pairs = write_similarity(ps, found.submissions, args.out, top=args.top, quoted=quoted)
    best = f"; most alike: {pairs[0].a} and {pairs[0].b} ({pairs[0].score:.0%})" if pairs else ""
    print(
        f"{len(found.submissions)} submissions compared, {len(pairs)} pairs listed in "
        f"{args.out}/similarity.html{best}"
    )
    return 0
