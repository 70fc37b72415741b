"""What the student reads is cleared of hidden tests' source and hidden inputs' values
(:mod:`autograder.grading.conceal`), and nothing else is changed. A number of fewer than four
significant digits (0.1, a grid's step) is never taken for an input: it cannot be told apart.

Hidden blocks are nbgrader's (``nbgrader/preprocessors/clearhiddentests.py``: the lines between
``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``), read here from the course's source.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from autograder.authoring.graded import sample_variants
from autograder.checks.declared import case_inputs, declared_cases
from autograder.grading.conceal import HIDDEN, secrets_of, visible_cases
from autograder.grading.problemset import ProblemSet, list_problem_sets


@pytest.fixture(scope="module", params=list_problem_sets())
def ps(request):
    ps = ProblemSet(request.param)
    ps.course.use_code()
    return sample_variants(ps)[0]  # with variants: as a sample student is graded


def test_hidden_lines_and_input_values_are_cleared(ps):
    secrets = secrets_of(ps)
    cases = declared_cases(ps.source)
    name = sorted(set(cases) - visible_cases(ps))[0]  # a hidden case (the visible ones' are the release's)
    value = next(v for v in case_inputs(cases, name).values() if np.ndim(v))
    floats = np.ravel(value).astype(float)[:5]
    hidden = [line.strip() for cell in ps.source.cells
              for block in cell.source.split("BEGIN HIDDEN TESTS")[1:]
              for line in block.split("END HIDDEN TESTS")[0].splitlines()[1:]
              if len(line.strip()) >= 8]
    assert hidden
    text = f"ValueError: {hidden!r} {floats.tolist()!r} {np.array2string(floats, precision=5)}"
    cleared = secrets.conceal(text)
    assert not [line for line in hidden if line in cleared]
    assert "record(" not in cleared and "HIDDEN TESTS" not in cleared
    # A value printed as Python prints it, to eight significant digits or more, is the input's;
    # a shorter one (data recorded to three decimals) may match any number shown there.
    long = [repr(float(v)) for v in floats if len(repr(float(v)).strip("-0.").replace(".", "")) >= 8]
    assert [v for v in long if v in cleared] == []
    assert cleared.startswith("ValueError: ") and HIDDEN in cleared


@pytest.mark.parametrize("message", [
    "the mean for X of shape (40, 6) is wrong at index (3,): yours is 0.5, expected about 1.5",
    "your function should return 2 values; it returned 3",
    "not run: your cell 'center' raised NameError at line 3: name 'np' is not defined",
])
def test_the_graders_own_words_are_kept(ps, message):
    assert secrets_of(ps).conceal(message) == message


def test_the_numbers_the_release_prints_are_kept(ps):
    """A number of the problem set's own text or visible tests (an assertion's message: "logits up
    to 1000 in size") is public: it is never taken for a hidden input."""
    public = " ".join(
        m.group(0)
        for cell in ps.source.cells
        for m in re.finditer(r"(?<![\w.])-?\d+\.\d{3,}|(?<![\w.])\d{4,}(?![\w.])",
                             re.sub(r"BEGIN HIDDEN TESTS.*?END HIDDEN TESTS", "", cell.source,
                                    flags=re.S))
    )
    assert secrets_of(ps).conceal(public) == public

