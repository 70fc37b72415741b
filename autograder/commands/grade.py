"""``python -m autograder grade ASSIGNMENT SUBMISSIONS --out DIR``: grade a whole class.

Grades every submission in parallel, with its code in a sandboxed kernel, and writes
``DIR/grades.csv``, ``DIR/feedback/<student>/<notebook>.html`` and ``DIR/report.html``
(:func:`autograder.run.batch.grade_class`); with ``--gradebook`` the scores also go into the course's
nbgrader gradebook (never from a trial run that did not ask). Re-running skips unchanged
submissions and prints the students whose scores changed (:mod:`autograder.run.regrade`); with
``--dry-run`` it prints them and writes nothing, and exits as the run would (not 0 when a
file would end without a row or the grader would fail). With ``--scheduler tcp://HOST:8786`` (or
``local:N``) the notebooks are graded on a Dask cluster's workers instead of local processes
(:mod:`autograder.run.cluster`); this process still writes every result. A folder exported before is
exported again with the same settings (:func:`autograder.run.export.export_again`).

The download's format is recognised by what it holds (a Canvas, Moodle, Blackboard Learn or
nbgrader download, a folder per student: :mod:`autograder.intake.collect`), printed (on the
standard error, with the notes, so that the standard output stays the run's results), and
written at the top of ``DIR/collection.txt``; ``--lms NAME`` reads it as that format instead.

Exit codes: 0 when every submission was graded, 1 when not all of the class was (students with no
notebook or a file that could not be read, notebooks the download gives to no student, or
nobody graded at all), 2 for a bad command line or course, 3 when the grader failed on a
submission. When it is not 0, the last line says why.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

from autograder import settings
from autograder.commands import chosen_course
from autograder.grading.problemset import list_problem_sets
from autograder.intake.collect import FORMATS
from autograder.pages.visibility import MODES
from autograder.settings import COURSE_DIR
from autograder.status import Status

__all__ = ["add_parser", "main"]


def _scheduler(value: str) -> str:
    from autograder.run.cluster import parse_scheduler

    try:
        parse_scheduler(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def add_parser(sub) -> argparse.ArgumentParser:
    """Declare ``grade`` and its arguments in ``sub`` (the subparsers of the command line)."""
    grade = sub.add_parser("grade", help="grade every submission of a problem set")
    grade.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    grade.add_argument(
        "submissions",
        type=Path,
        help="folder <student>/<notebook>.ipynb, a zip of it, or an LMS zip",
    )
    grade.add_argument("--out", type=Path, required=True, help="output folder")
    grade.add_argument(
        "--workers",
        type=int,
        default=None,
        help="parallel grading processes (default: number of CPUs)",
    )
    grade.add_argument(
        "--scheduler",
        type=_scheduler,
        default=None,
        metavar="ADDRESS",
        help="grade on a Dask cluster: its scheduler's address (tcp://HOST:8786), "
        "or local:N for a local cluster of N single-threaded workers",
    )
    grade.add_argument(
        "--timeout",
        type=float,
        default=settings.CELL_TIMEOUT_S,
        help=f"seconds per cell (default {settings.CELL_TIMEOUT_S:g}); a notebook "
        f"gets {settings.NOTEBOOK_CELLS}x that in all",
    )
    grade.add_argument(
        "--memory",
        type=int,
        default=settings.MEMORY_MB,
        help=f"MB per kernel (default {settings.MEMORY_MB})",
    )
    grade.add_argument(
        "--gradebook",
        action="store_true",
        help="also record the scores in the course's nbgrader gradebook (for the "
        "formgrader and `nbgrader export`); without it nothing outside --out "
        "changes",
    )
    grade.add_argument(
        "--course",
        type=Path,
        default=COURSE_DIR,
        help=f"nbgrader course folder: its source notebooks, rubrics, late.toml, "
        f"feedback.toml and releases grade, and --gradebook updates its "
        f"gradebook (default {COURSE_DIR}, or $AUTOGRADER_COURSE)",
    )
    grade.add_argument(
        "--dry-run",
        action="store_true",
        help="regrade into a scratch copy and print, per student whose score "
        "changes, the old and new score and the cells that changed; write "
        "nothing",
    )
    grade.add_argument(
        "--hidden-feedback",
        choices=MODES,
        default=None,
        help="what the feedback shows of hidden checks: full messages, "
        "pass-fail only, or none (default: course/feedback.toml, else full)",
    )
    grade.add_argument(
        "--late-policy",
        type=Path,
        default=None,
        metavar="FILE",
        help="late policy (default: course/late.toml if it exists, else none)",
    )
    grade.add_argument(
        "--lms",
        choices=FORMATS,
        default=None,
        metavar="NAME",
        help=f"read the submissions as this format ({', '.join(FORMATS)}); default: the one "
        f"their files show",
    )
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.add_argument(
        "--unsafe",
        action="store_true",
        help="run student code WITHOUT the sandbox (only where it cannot be built)",
    )
    return grade


def main(args) -> int:
    """The ``grade`` subcommand; returns the exit code (see the module docstring)."""
    from autograder.checks.personal import SecretMissing
    from autograder.grading.problemset import ProblemSet
    from autograder.run.batch import grade_class
    from autograder.run.task import GradingOptions

    course = chosen_course(args)
    if course is None:
        return 2
    if args.scheduler is not None and args.workers is not None:
        print(
            "error: --workers sets the local pool; with --scheduler the cluster's workers "
            "grade (start them with `dask worker ... --nworkers N`)",
            file=sys.stderr,
        )
        return 2
    if not args.unsafe and args.scheduler is None:  # a cluster's workers are checked themselves
        from autograder.sandbox import sandbox_available

        ok, reason = sandbox_available()
        if not ok:
            print(
                f"error: the sandbox for student code cannot be built here ({reason}).\n"
                "Install bubblewrap (Debian: apt-get install bubblewrap) and allow user "
                "namespaces, or pass --unsafe to grade without it.",
                file=sys.stderr,
            )
            return 2
        from autograder.sandbox import cgroup

        if os.geteuid() != 0:  # what is then not enforced, said plainly
            from autograder.sandbox.disk import UNCAPPED

            print(f"warning: {UNCAPPED}", file=sys.stderr)
        version, why = cgroup.available()
        if version is None:
            print(f"warning: {cgroup.UNLIMITED}; here {why}", file=sys.stderr)
        elif not args.quiet:
            print(f"limits per submission: {why}", file=sys.stderr)
    for name, value in (
        ("--workers", args.workers),
        ("--timeout", args.timeout),
        ("--memory", args.memory),
    ):
        if value is not None and value <= 0:
            print(f"error: {name} must be positive; got {value}", file=sys.stderr)
            return 2
    from autograder.intake.late import load_policy
    from autograder.pages.visibility import load_visibility
    from autograder.run.export import read_records
    from autograder.run.regrade import diff_records, format_diff

    try:
        policy = load_policy(args.late_policy, course=course)
        visibility = load_visibility(args.assignment, args.hidden_feedback, course=course)
        before = {r.student_id: r for r in read_records(args.out, args.assignment)}
        if args.dry_run:
            return _dry_run(args, course, before, policy, visibility)
        ps = ProblemSet(args.assignment, course)  # loaded once for the whole run
        found: list = []  # the collection, as grade_class reports it

        def collected(collection) -> None:
            found.append(collection)
            print(f"format: {collection.platform}", file=sys.stderr, flush=True)

        gradebook = None
        if args.gradebook:
            from autograder.gradebook.writer import GradebookWriter

            gradebook = GradebookWriter(ps, course.root)
        options = GradingOptions(
            cell_timeout_s=args.timeout,
            memory_mb=args.memory,
            notebook_timeout_s=settings.NOTEBOOK_CELLS * args.timeout,
            unsafe=args.unsafe,
        )
        log = (lambda *a: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
        try:
            records = grade_class(
                ps,
                args.submissions,
                args.out,
                workers=args.workers,
                options=options,
                gradebook=gradebook,
                quiet=args.quiet,
                log=log,
                scheduler=args.scheduler,
                visibility=visibility,
                policy=policy,
                course=course,
                lms=args.lms,
                collected=collected,
            )
        finally:
            if gradebook is not None:
                gradebook.close()
        from autograder.run.export import export_again

        # The exports state what grades.csv and the feedback now state.
        export_again(args.assignment, args.out, course.root, log=log)
    except (ValueError, RuntimeError, SecretMissing) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if before:
        changes = diff_records(before, {r.student_id: r for r in records})
        print(format_diff(changes, len(records) - len(changes)))
    counts = Counter(r.status for r in records)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"{len(records)} submissions in {args.out}/grades.csv ({summary})")
    return _status(args, counts, found[0] if found else None)


def _status(args, counts: Counter, found, dry: bool = False) -> int:
    """The exit status of a run whose records have ``counts`` of each status: 3 when the grader
    failed on one, 1 when not all of the class was graded, else 0; the reason on the last line
    (``dry``: a dry run, whose outputs are not written)."""
    if counts[Status.GRADER_ERROR]:
        where = "the run's output" if dry else f"{args.out}/report.html"
        print(
            f"error: the grader failed on {counts[Status.GRADER_ERROR]} submission(s); their "
            f"tracebacks are in {where}. Fix the grader and run the same "
            f"command again: only those are graded again.",
            file=sys.stderr,
        )
        return 3
    return _incomplete(args, counts, found, dry)


def _incomplete(args, counts: Counter, found, dry: bool = False) -> int:
    """1, with the reason as the last line, when not all of the class was graded; else 0
    (``found``: the run's collection, None when it reported none; ``dry``: a dry run)."""
    lost = (
        f"{len(found.lost)} file(s) in the download belong to no student, or are group "
        f"lists that could not be read ({found.platform}: "
        f"{found.lost[0]}{'; ...' if len(found.lost) > 1 else ''})"
        if found is not None and found.lost
        else ""
    )
    attention = [
        f"{counts[s]} handed in no notebook for {args.assignment} ('{s}')"
        if s == Status.UNMATCHED
        else f"{counts[s]} handed in a file that could not be read ('{s}': ask them for it again)"
        for s in (Status.UNMATCHED, Status.UNREADABLE)
        if counts[s]
    ] + ([lost] if lost else [])
    where = (
        "run without --dry-run for collection.txt and grades.csv"
        if dry
        else f"see {args.out}/collection.txt and {args.out}/grades.csv"
    )
    if found is not None and not found.submissions:
        why = "; ".join(attention) or "the submissions hold no notebook"
        print(f"error: nobody was graded: {why}; {where}", file=sys.stderr)
        return 1
    if attention:
        print(
            f"warning: not all of the class was graded: {'; '.join(attention)}; {where}",
            file=sys.stderr,
        )
        return 1
    return 0


def _dry_run(args, course, before: dict, policy, visibility) -> int:
    """``grade --dry-run``: grade into a scratch copy of the run's records (unchanged
    submissions are skipped as usual), print the diff, write nothing."""
    import shutil
    import tempfile

    from autograder.run.batch import grade_class
    from autograder.run.regrade import diff_records, format_diff
    from autograder.run.task import GradingOptions

    options = GradingOptions(
        cell_timeout_s=args.timeout,
        memory_mb=args.memory,
        notebook_timeout_s=settings.NOTEBOOK_CELLS * args.timeout,
        unsafe=args.unsafe,
    )
    found: list = []  # the collection, as grade_class reports it
    with tempfile.TemporaryDirectory(prefix="regrade-") as scratch:
        if (args.out / "records").is_dir():
            shutil.copytree(args.out / "records", Path(scratch) / "records")
        records = grade_class(
            args.assignment,
            args.submissions,
            scratch,
            workers=args.workers,
            options=options,
            gradebook=None,
            quiet=args.quiet,
            log=(lambda *a: None),
            scheduler=args.scheduler,
            visibility=visibility,
            policy=policy,
            course=course,
            lms=args.lms,
            collected=found.append,
        )
    changes = diff_records(before, {r.student_id: r for r in records})
    print(format_diff(changes, len(records) - len(changes)))
    print(
        f"dry run: nothing written (run the same command without --dry-run to write "
        f"{args.out} and{' the gradebook' if args.gradebook else ' no gradebook'})"
    )
    counts = Counter(r.status for r in records)
    return _status(args, counts, found[0] if found else None, dry=True)
