"""The checks of a problem set: its declared checks and its hand-written ones, in one mapping.

:func:`checks_for` is what scoring calls; a cell whose cases do not match (an author's typo) gets
a check that raises :class:`AuthoringError`, so the mistake is a fault of the grader, never the
students' zero. :func:`equivalent_forms` gathers the answers' declared symmetries.
"""

from __future__ import annotations

from functools import partial

from autograder.checks import load_checks
from autograder.checks.declared import build_checks
from autograder.checks.declared import equivalent_forms as declared_forms
from autograder.checks.inventory import cell_faults
from autograder.checks.outcome import Outcome

__all__ = ["AuthoringError", "checks_for", "equivalent_forms"]


def checks_for(problem_set) -> dict:
    """``{grade_id: check}``: the checks declared in ``problem_set``'s source notebook, and the
    hand-written ``CHECKS`` of its module, which win (``problem_set`` has ``name`` and
    ``source``, e.g. an :class:`autograder.grading.problemset.ProblemSet`).

    A cell whose cases do not match (a case scored but never recorded, recorded without inputs:
    :func:`autograder.checks.inventory.cell_faults`) gets a check that raises
    :class:`AuthoringError`, so the mistake is a fault of the grader, not the students' zero.
    """
    python = load_checks(problem_set.name, getattr(problem_set, "course", None))
    checks = {**build_checks(problem_set.source), **python.CHECKS}
    for gid, message in cell_faults(problem_set).items():
        if gid in checks:
            checks[gid] = partial(_refuse, message)
    return checks


class AuthoringError(RuntimeError):
    """A problem set whose source would mis-grade a cell (an instructor's mistake)."""


def _refuse(message: str, answers) -> Outcome:
    raise AuthoringError(message)


def equivalent_forms(problem_set) -> dict:
    """The answers' symmetries, ``{(function, output, transform): reason}``: those declared in
    the source notebook and the module's ``EQUIVALENT_FORMS``."""
    python = load_checks(problem_set.name, getattr(problem_set, "course", None))
    return {**declared_forms(problem_set.source), **getattr(python, "EQUIVALENT_FORMS", {})}
