"""Trusted checks: how each autograded cell of each problem set is scored.

This package is the check engine; the checks of a course's problem sets are the course's own. A
problem set ``NAME`` has a source notebook ``<course>/source/NAME/NAME.ipynb`` and may have a module
``<course>/checks/NAME.py`` (imported as ``course.checks.NAME``, :meth:`autograder.course.Course.
use_code`) whose ``CHECKS`` maps every autograded cell's ``grade_id`` to a
function ``check(answers) -> Outcome``. The function reads the arrays that the cell's hidden part
recorded (see :mod:`coursedata.grading`), regenerates the inputs, computes the reference with
:mod:`solutions`, and returns the fraction of the cell's points earned with a message for the
student. These functions run only in the grader's own process, never in the student's kernel.

Rules every module follows (the self-tests in ``tests/course/test_problem_sets.py`` enforce them):

- a ``_visible`` cell's check holds everything its hidden part recorded to the reference's values,
  all or nothing, as its visible test asserts values; a ``_hidden`` cell gives partial credit only
  for independent parts that must each be right (a property such as "normalised" or "integrates
  to one" only explains a wrong value, it earns nothing alone);
- a malformed student array (shape, 0-d, empty, bool, complex, overflowing) becomes a message,
  never an exception: any exception is reported as a fault of the grader;
- an optional ``EQUIVALENT_FORMS`` maps ``(function, output, transform)`` to the reason a
  transform of the recorded answer is still right (components up to sign, intercepts up to a
  constant); ``output`` is an index, a tuple of indices or ``None`` (all of them).

Most cells need no Python: their check is declared next to the question, in the test cell's
metadata of the source notebook (:mod:`autograder.checks.declared`), and :func:`checks_for`
gives every cell's check, declared or hand-written (the module's ``CHECKS`` wins, and may be
empty or absent when every cell is declared; a problem set may give each student their own
numbers, :mod:`autograder.checks.personal`). :mod:`autograder.checks.inventory` lists, for a
problem set, each graded cell's check and the cases it records and reads.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from autograder.checks.answers import Answers
from autograder.checks.outcome import Outcome
from autograder.course import CODE_PACKAGE, Course

__all__ = ["Answers", "Outcome", "load_checks"]


def load_checks(problem_set: str, course: Course | None = None) -> ModuleType:
    """Import ``course.checks.<problem_set>`` of ``course`` (default: the course in use, else the
    default course): its ``CHECKS`` (none when it defines none) and ``PROBLEM_SET`` (when it
    defines one, the problem set's name).

    A problem set whose checks are all declared needs no module: then an empty one is returned;
    a module of input generators or reference wrappers alone needs neither name.
    """
    if course is not None or CODE_PACKAGE not in sys.modules:
        Course.at(course).use_code()
    name = f"{CODE_PACKAGE}.checks.{problem_set}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name not in (name, f"{CODE_PACKAGE}.checks"):
            raise
        module = ModuleType(name)
        setattr(module, "PROBLEM_SET", problem_set)  # noqa: B010 (a module made here)
        setattr(module, "CHECKS", {})  # noqa: B010
    if not hasattr(module, "CHECKS"):
        setattr(module, "CHECKS", {})  # noqa: B010 (generators or references only)
    if getattr(module, "PROBLEM_SET", problem_set) != problem_set or not isinstance(
        module.CHECKS, dict
    ):
        raise ValueError(
            f"{name} ({getattr(module, '__file__', None)}): PROBLEM_SET, when given, must be "
            f"{problem_set!r}, and CHECKS a dict"
        )
    return module
