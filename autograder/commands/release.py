"""``python -m autograder release NAME...``: release problem sets to students.

nbgrader's student version of each, with the student kit's address filled in
(:func:`autograder.authoring.release.release`); a warning first while the course site's address is
still the placeholder. A problem set with variants whose earlier release's secret is lost is
refused unless ``--new-secret`` (:func:`autograder.authoring.release.release_secret`). Exit
codes: 0 when every problem set was released, 2 on the first that could
not be (the reason printed).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.authoring.release import (
    kit_url,
    read_roster,
    release,
    site_url,
    warn_if_placeholder,
)
from autograder.checks.personal import secret_file
from autograder.course import Course
from autograder.grading.problemset import list_problem_sets
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``release`` and its arguments in ``sub`` (the subparsers of the command line)."""
    release = sub.add_parser(
        "release",
        help="release problem sets to students: nbgrader's "
        "student version, with the student kit's address filled in",
    )
    release.add_argument(
        "names", nargs="+", metavar="NAME", help=f"problem set: {', '.join(list_problem_sets())}"
    )
    release.add_argument("--course", type=Path, default=COURSE_DIR, help="nbgrader course folder")
    release.add_argument(
        "--db-url", default=None, help="nbgrader gradebook URL (default: the course's gradebook.db)"
    )
    release.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="for a problem set with per-student variants: the class's identities, one a line "
        "(default: the gradebook's students)",
    )
    release.add_argument(
        "--new-secret",
        action="store_true",
        help="the course's secret (variants.secret) is lost: make a new one although earlier "
        "releases' variants were drawn from the lost one (every student gets new numbers: "
        "release every problem set with variants again)",
    )
    release.add_argument("--quiet", action="store_true", help="print nothing on success")
    return release


def main(args) -> int:
    """The ``release`` subcommand (arguments declared by :func:`add_parser`)."""
    try:
        warn_if_placeholder(site_url())
        roster = read_roster(args.roster) if args.roster is not None else None
        secret = secret_file(Course(args.course))
        had_secret = secret.exists()
        for name in args.names:
            # --new-secret is for the one the first problem set with variants makes
            fresh = args.new_secret and (had_secret or not secret.exists())
            folder = release(name, args.course, args.db_url, roster=roster, new_secret=fresh)
            if not args.quiet:
                print(f"{name}: released to {folder} (kit: {kit_url()})")
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
