"""Command line: ``python -m autograder grade ASSIGNMENT SUBMISSIONS --out DIR``.

Grades a whole class in parallel, with every submission's code in a sandboxed kernel, and writes
``DIR/grades.csv``, ``DIR/feedback/<student>/<notebook>.html`` and ``DIR/report.html``; with
``--gradebook`` the scores also go into the course's nbgrader gradebook (never from a trial run
that did not ask). Re-running skips unchanged submissions. With
``--scheduler tcp://HOST:8786`` (or ``local:N``) the notebooks are graded on a Dask cluster's
workers instead of local processes (:mod:`autograder.run.cluster`); this process still writes every
result.

``python -m autograder release NAME...`` releases problem sets to students
(:mod:`autograder.authoring.release`); ``python -m autograder formgrader`` opens nbgrader's
formgrader on the course for hand-grading (:mod:`autograder.gradebook.formgrader`).

``python -m autograder new NAME`` creates a problem set with one worked example question
(:mod:`autograder.authoring.scaffold`); ``python -m autograder check-problem-set NAME`` says
whether a problem set's source is sound (:mod:`autograder.authoring.selfcheck`); ``python -m
autograder add-question PS`` adds a question to one (:mod:`autograder.authoring.addquestion`);
``python -m autograder new-term`` archives a term's grading (:mod:`autograder.gradebook.term`).

``python -m autograder similarity ASSIGNMENT SUBMISSIONS --out DIR`` writes
``DIR/similarity.html``, the pairs of submissions whose code is most alike
(:mod:`autograder.pages.similarity`); ``python -m autograder export ASSIGNMENT --out DIR`` merges the
hand-graded scores and writes the LMS files (:mod:`autograder.exports`); ``python -m autograder
gradescope ASSIGNMENT --out DIR`` writes the ``autograder.zip`` Gradescope runs
(:mod:`autograder.run.gradescope`).

Each subcommand is a module of :mod:`autograder.commands` (its arguments and its ``main``); this
module only assembles the command line from them.
"""

from __future__ import annotations

import argparse

from autograder.commands import (
    add_question,
    check_problem_set,
    export,
    formgrader,
    grade,
    gradescope,
    new,
    new_term,
    release,
    similarity,
)

#: The subcommands, in the order ``--help`` lists them.
COMMANDS = {
    "grade": grade,
    "release": release,
    "new": new,
    "add-question": add_question,
    "check-problem-set": check_problem_set,
    "new-term": new_term,
    "similarity": similarity,
    "export": export,
    "formgrader": formgrader,
    "gradescope": gradescope,
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="autograder", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return COMMANDS[args.command].main(args)


if __name__ == "__main__":
    raise SystemExit(main())
