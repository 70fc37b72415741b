"""Command line: ``python -m autograder grade ASSIGNMENT SUBMISSIONS --out DIR``.

Grades a whole class in parallel, with every submission's code in a sandboxed kernel, and writes
``DIR/grades.csv``, ``DIR/feedback/<student>/<notebook>.html`` and ``DIR/report.html``; with
``--gradebook`` the scores also go into the course's nbgrader gradebook (never from a trial run
that did not ask). Re-running skips unchanged submissions. With
``--scheduler tcp://HOST:8786`` (or ``local:N``) the notebooks are graded on a Dask cluster's
workers instead of local processes (:mod:`autograder.cluster`); this process still writes every
result.

``python -m autograder release NAME...`` releases problem sets to students
(:mod:`autograder.release`); ``python -m autograder formgrader`` opens nbgrader's formgrader on the
course for hand-grading (:mod:`autograder.formgrader`).

``python -m autograder similarity ASSIGNMENT SUBMISSIONS --out DIR`` writes
``DIR/similarity.html``, the pairs of submissions whose code is most alike
(:mod:`autograder.similarity`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from autograder import settings
from autograder.problemset import list_problem_sets
from autograder.settings import COURSE_DIR
from autograder.visibility import MODES


def _scheduler(value: str) -> str:
    from autograder.cluster import parse_scheduler

    try:
        parse_scheduler(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    grade = sub.add_parser("grade", help="grade every submission of a problem set")
    grade.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    grade.add_argument("submissions", type=Path,
                       help="folder <student>/<notebook>.ipynb, a zip of it, or an LMS zip")
    grade.add_argument("--out", type=Path, required=True, help="output folder")
    grade.add_argument("--workers", type=int, default=None,
                       help="parallel grading processes (default: number of CPUs)")
    grade.add_argument("--scheduler", type=_scheduler, default=None, metavar="ADDRESS",
                       help="grade on a Dask cluster: its scheduler's address (tcp://HOST:8786), "
                            "or local:N for a local cluster of N single-threaded workers")
    grade.add_argument("--timeout", type=float, default=settings.CELL_TIMEOUT_S,
                       help=f"seconds per cell (default {settings.CELL_TIMEOUT_S:g}); a notebook "
                            f"gets {settings.NOTEBOOK_CELLS}x that in all")
    grade.add_argument("--memory", type=int, default=settings.MEMORY_MB,
                       help=f"MB per kernel (default {settings.MEMORY_MB})")
    grade.add_argument("--gradebook", action="store_true",
                       help="also record the scores in the course's nbgrader gradebook (for the "
                            "formgrader and `nbgrader export`); without it nothing outside --out "
                            "changes")
    grade.add_argument("--course", type=Path, default=COURSE_DIR,
                       help=f"nbgrader course folder: its source notebooks, rubrics, late.toml, "
                            f"feedback.toml and releases grade, and --gradebook updates its "
                            f"gradebook (default {COURSE_DIR}, or $AUTOGRADER_COURSE)")
    grade.add_argument("--dry-run", action="store_true",
                       help="regrade into a scratch copy and print, per student whose score "
                            "changes, the old and new score and the cells that changed; write "
                            "nothing")
    grade.add_argument("--hidden-feedback", choices=MODES, default=None,
                       help="what the feedback shows of hidden checks: full messages, "
                            "pass-fail only, or none (default: course/feedback.toml, else full)")
    grade.add_argument("--late-policy", type=Path, default=None, metavar="FILE",
                       help="late policy (default: course/late.toml if it exists, else none)")
    grade.add_argument("--quiet", action="store_true", help="no progress bar")
    grade.add_argument("--unsafe", action="store_true",
                       help="run student code WITHOUT the sandbox (only where it cannot be built)")
    release = sub.add_parser("release", help="release problem sets to students: nbgrader's "
                             "student version, with the student kit's address filled in")
    release.add_argument("names", nargs="+", metavar="NAME",
                         help=f"problem set: {', '.join(list_problem_sets())}")
    release.add_argument("--course", type=Path, default=COURSE_DIR, help="nbgrader course folder")
    release.add_argument("--db-url", default=None,
                         help="nbgrader gradebook URL (default: the course's gradebook.db)")
    release.add_argument("--quiet", action="store_true", help="print nothing on success")
    similar = sub.add_parser("similarity", help="which submissions' code is alike: "
                             "DIR/similarity.html, evidence for a person to judge (no grade "
                             "changes)")
    similar.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    similar.add_argument("submissions", type=Path,
                         help="folder <student>/<notebook>.ipynb, a zip of it, or an LMS zip")
    similar.add_argument("--out", type=Path, required=True, help="output folder")
    similar.add_argument("--top", type=int, default=50, help="pairs listed (default 50)")
    similar.add_argument("--course", type=Path, default=COURSE_DIR,
                         help=f"nbgrader course folder (default {COURSE_DIR})")
    export = sub.add_parser("export", help="merge the hand-graded scores of the gradebook into "
                            "a grading run's grades.csv and feedback, and write the LMS files")
    export.add_argument("assignment", help=f"problem set: {', '.join(list_problem_sets())}")
    export.add_argument("--out", type=Path, required=True,
                        help="the grading run's output folder (exports go to OUT/exports/)")
    export.add_argument("--course", type=Path, default=COURSE_DIR,
                        help=f"nbgrader course whose gradebook holds the hand-graded scores "
                             f"(default {COURSE_DIR})")
    for name, what in (("canvas", "Canvas gradebook import CSV"),
                       ("moodle", "Moodle grading worksheet and gradebook import CSV"),
                       ("gradescope", "Gradescope results.json per student"),
                       ("feedback-archive", "feedback pages zipped for the LMS's bulk upload")):
        export.add_argument(f"--{name}", action="store_true", help=f"{what} (default: all)")
    export.add_argument("--lms-name", default=None,
                        help="the assignment's (grade item's) title in the LMS (default: the "
                             "problem set's name)")
    export.add_argument("--canvas-id", default=None,
                        help="the Canvas assignment id (the number ending its address)")
    export.add_argument("--moodle-identifier", default="username",
                        choices=("username", "useremail", "useridnumber", "userid"),
                        help="what the student ids are, for Moodle's gradebook import")
    export.add_argument("--hidden-feedback", choices=MODES, default=None,
                        help="what the feedback shows of hidden checks (default: "
                             "course/feedback.toml, else full)")
    export.add_argument("--late-policy", type=Path, default=None, metavar="FILE",
                        help="late policy (default: course/late.toml if it exists, else none)")
    formgrader = sub.add_parser("formgrader", help="open nbgrader's formgrader on the course "
                                "(hand-grading; its Autograde button points to `grade`)")
    formgrader.add_argument("--course", type=Path, default=COURSE_DIR,
                            help=f"nbgrader course folder (default {COURSE_DIR})")
    formgrader.add_argument("--port", type=int, default=8899, help="port (default 8899)")
    formgrader.add_argument("--token", default=None,
                            help="the server's access token (default: a random one, printed)")
    formgrader.add_argument("--browser", action="store_true", help="open a web browser")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "release":
        from autograder.release import main as release_main

        return release_main(args)
    if args.command == "similarity":
        return _similarity(args)
    if args.command == "formgrader":
        from autograder.formgrader import main as formgrader_main

        return formgrader_main(args)
    if args.command == "export":
        from autograder.exports.command import main as export_main

        return export_main(args)
    from autograder.batch import grade_class
    from autograder.problemset import ProblemSet
    from autograder.task import GradingOptions

    course = _course(args)
    if course is None:
        return 2
    if args.scheduler is not None and args.workers is not None:
        print("error: --workers sets the local pool; with --scheduler the cluster's workers "
              "grade (start them with `dask worker ... --nworkers N`)", file=sys.stderr)
        return 2
    if not args.unsafe and args.scheduler is None:  # a cluster's workers are checked themselves
        from autograder.sandbox import sandbox_available

        ok, reason = sandbox_available()
        if not ok:
            print(f"error: the sandbox for student code cannot be built here ({reason}).\n"
                  "Install bubblewrap (Debian: apt-get install bubblewrap) and allow user "
                  "namespaces, or pass --unsafe to grade without it.", file=sys.stderr)
            return 2
    for name, value in (("--workers", args.workers), ("--timeout", args.timeout),
                        ("--memory", args.memory)):
        if value is not None and value <= 0:
            print(f"error: {name} must be positive; got {value}", file=sys.stderr)
            return 2
    from autograder.exports.command import read_records
    from autograder.late import load_policy
    from autograder.regrade import diff_records, format_diff
    from autograder.visibility import load_visibility

    try:
        policy = load_policy(args.late_policy, course=course)
        visibility = load_visibility(args.assignment, args.hidden_feedback, course=course)
        before = {r["student_id"]: r for r in read_records(args.out, args.assignment)}
        if args.dry_run:
            return _dry_run(args, course, before, policy, visibility)
        ps = ProblemSet(args.assignment, course)  # loaded once for the whole run
        gradebook = None
        if args.gradebook:
            from autograder.gradebook import GradebookWriter

            gradebook = GradebookWriter(ps, course.root)
        options = GradingOptions(cell_timeout_s=args.timeout, memory_mb=args.memory,
                                 notebook_timeout_s=settings.NOTEBOOK_CELLS * args.timeout,
                                 unsafe=args.unsafe)
        log = (lambda *a: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
        try:
            records = grade_class(ps, args.submissions, args.out,
                                  workers=args.workers, options=options, gradebook=gradebook,
                                  quiet=args.quiet, log=log, scheduler=args.scheduler,
                                  visibility=visibility, policy=policy, course=course)
        finally:
            if gradebook is not None:
                gradebook.close()
        from autograder.exports.command import export_again

        # The exports state what grades.csv and the feedback now state.
        export_again(args.assignment, args.out, course.root, log=log)
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if before:
        changes = diff_records(before, {r["student_id"]: r for r in records})
        print(format_diff(changes, len(records) - len(changes)))
    counts = Counter(r["status"] for r in records)
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    print(f"{len(records)} submissions in {args.out}/grades.csv ({summary})")
    if counts["grader-error"]:
        print(f"error: the grader failed on {counts['grader-error']} submission(s); their "
              f"tracebacks are in {args.out}/report.html. Fix the grader and run the same "
              f"command again: only those are graded again.", file=sys.stderr)
        return 3
    attention = [f"{counts[s]} handed in no notebook for {args.assignment} ('{s}')"
                 if s == "unmatched" else f"{counts[s]} handed in a file that could not be read "
                 f"('{s}': ask them for it again)" for s in ("unmatched", "unreadable-file")
                 if counts[s]]
    if attention:
        print(f"warning: students need attention: {'; '.join(attention)}; see their rows in "
              f"{args.out}/grades.csv and {args.out}/collection.txt", file=sys.stderr)
        return 1
    return 0


def _course(args):
    """The course of ``args.course``, or None (with the error printed) when it lacks the
    problem set ``args.assignment``."""
    from autograder.course import Course

    course = Course(args.course)
    known = course.problem_sets()
    if args.assignment not in known:
        where = f"{course.root}/source" if known else f"{course.root} (no source/<name>/ folder)"
        print(f"error: unknown problem set {args.assignment!r} in {where}; "
              f"choose one of {', '.join(known) or 'none'}", file=sys.stderr)
        return None
    return course


def _dry_run(args, course, before: dict, policy, visibility) -> int:
    """``grade --dry-run``: grade into a scratch copy of the run's records (unchanged
    submissions are skipped as usual), print the diff, write nothing."""
    import shutil
    import tempfile

    from autograder.batch import grade_class
    from autograder.regrade import diff_records, format_diff
    from autograder.task import GradingOptions

    options = GradingOptions(cell_timeout_s=args.timeout, memory_mb=args.memory,
                             notebook_timeout_s=settings.NOTEBOOK_CELLS * args.timeout,
                             unsafe=args.unsafe)
    with tempfile.TemporaryDirectory(prefix="regrade-") as scratch:
        if (args.out / "records").is_dir():
            shutil.copytree(args.out / "records", Path(scratch) / "records")
        records = grade_class(args.assignment, args.submissions, scratch, workers=args.workers,
                              options=options, gradebook=None, quiet=args.quiet,
                              log=(lambda *a: None), scheduler=args.scheduler,
                              visibility=visibility, policy=policy, course=course)
    changes = diff_records(before, {r["student_id"]: r for r in records})
    print(format_diff(changes, len(records) - len(changes)))
    print(f"dry run: nothing written (run the same command without --dry-run to write "
          f"{args.out} and{' the gradebook' if args.gradebook else ' no gradebook'})")
    return 0


def _similarity(args) -> int:
    from autograder.collect import collect_submissions
    from autograder.problemset import ProblemSet
    from autograder.similarity import write_similarity

    course = _course(args)
    if course is None:
        return 2
    ps = ProblemSet(args.assignment, course)
    try:
        found = collect_submissions(args.submissions, ps.notebook_name)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pairs = write_similarity(ps, found.submissions, args.out, top=args.top)
    best = f"; most alike: {pairs[0].a} and {pairs[0].b} ({pairs[0].score:.0%})" if pairs else ""
    print(f"{len(found.submissions)} submissions compared, {len(pairs)} pairs listed in "
          f"{args.out}/similarity.html{best}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
