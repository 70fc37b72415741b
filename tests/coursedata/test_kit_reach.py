"""The student's kit reaches no library a problem set forbids (issue 37).

Every grading kernel may import the kit (:mod:`coursedata`), whatever the problem set's rules; a
module's attributes are what it imported, so a function of a forbidden library held there is
the student's for a plain ``from coursedata.compare import logsumexp``, which neither the
kernel's guard nor the static reading can tell from the kit's own names.
"""

from __future__ import annotations

import importlib
import pkgutil
import types

import numpy as np
import pytest

import coursedata
from autograder.course import Course
from autograder.grading.problemset import ProblemSet
from coursedata.compare import log_probability_rows
from coursedata.rules import covers


def _kit_modules() -> list[types.ModuleType]:
    return [
        importlib.import_module(f"coursedata.{m.name}")
        for m in pkgutil.iter_modules(coursedata.__path__)
        if m.name != "__main__"
    ] + [coursedata]


def _origin(value) -> str | None:
    if isinstance(value, types.ModuleType):
        return value.__name__
    origin = getattr(value, "__module__", None)
    return origin if isinstance(origin, str) else None


@pytest.mark.parametrize("problem_set", Course.default().problem_sets())
def test_no_kit_module_holds_what_the_rules_forbid(problem_set):
    rules = ProblemSet(problem_set).rules
    forbid = rules.every_forbidden() if rules is not None else ()
    held = [
        f"{module.__name__}.{name} ({origin})"
        for module in _kit_modules()
        for name, value in vars(module).items()
        if (origin := _origin(value)) and any(covers(entry, origin) for entry in forbid)
    ]
    assert held == [], f"{problem_set} forbids {forbid}; the kit holds {held}"


def test_normalised_rows_are_told_from_others_as_scipy_tells_them():
    """The kit's own log-sum-exp against SciPy's (the oracle, imported here only)."""
    from scipy.special import logsumexp

    rng = np.random.default_rng(37)
    joint = rng.normal(scale=30.0, size=(50, 4))
    joint[3, 1] = -np.inf
    normalised = joint - logsumexp(joint, axis=1, keepdims=True)
    assert log_probability_rows(normalised, "p") is None
    off = normalised.copy()
    off[7] += 1e-6
    assert log_probability_rows(off, "p") is not None
    assert log_probability_rows(normalised + 1e-9, "p", atol=1e-8) is None
    assert log_probability_rows(np.full((2, 3), -np.inf), "p") is not None
