"""The command lines, one module per subcommand of ``python -m autograder``.

Each module has ``add_parser(subparsers)``, which declares the subcommand's arguments, and
``main(args) -> int``, which calls the library and returns the exit code;
:mod:`autograder.__main__` only assembles them:

- :mod:`.grade`: grade every submission of a problem set (:mod:`autograder.run.batch`);
- :mod:`.release`: release problem sets to students (:mod:`autograder.authoring.release`);
- :mod:`.add_question`: add a question to a problem set (:mod:`autograder.authoring.addquestion`);
- :mod:`.check_problem_set`: the author's self-check (:mod:`autograder.authoring.selfcheck`);
- :mod:`.new_term`: archive a term and start the next (:mod:`autograder.gradebook.term`);
- :mod:`.similarity`: which submissions' code is alike (:mod:`autograder.pages.similarity`);
- :mod:`.export`: merge hand-grading and write the LMS files (:mod:`autograder.exports`);
- :mod:`.formgrader`: nbgrader's formgrader on the course (:mod:`autograder.gradebook.formgrader`);
- :mod:`.gradescope`: Gradescope's ``autograder.zip``, and grading inside it
  (:mod:`autograder.run.gradescope`).
"""

from __future__ import annotations

import sys

__all__ = ["chosen_course"]


def chosen_course(args):
    """The course of ``args.course``, or None (with the error printed) when it lacks the
    problem set ``args.assignment``."""
    from autograder.course import Course

    course = Course(args.course)
    known = course.problem_sets()
    if args.assignment not in known:
        where = f"{course.root}/source" if known else f"{course.root} (no source/<name>/ folder)"
        print(
            f"error: unknown problem set {args.assignment!r} in {where}; "
            f"choose one of {', '.join(known) or 'none'}",
            file=sys.stderr,
        )
        return None
    return course
