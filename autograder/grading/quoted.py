"""Written answers that state another student's numbers, in a problem set with variants.

In a problem set with per-student variants (:mod:`autograder.checks.personal`) that declares the
values its written answers should state (``"expected"``), every student's expected values differ.
A number in a student's written answer that is not one of their own expected values but is,
as written, one of a classmate's (that value rounded to the digits the student wrote, at least
two significant digits, so a ``2`` or a ``0.5`` proves nothing) suggests an answer copied from
that classmate: it is listed for a person, both students named, on the similarity page and the
class report. It changes no grade.

A number is no evidence, and never listed, when it states one of the writer's own values, or a
value common to many variants: one that, as written, states a value of at least
:data:`COMMON_SHARE` of the variants (:func:`common_share`, measured on :data:`SAMPLE` variants
drawn with a key of its own). Problem set 4's ``0.50`` is such a number: the prior's mean, and
the MAP estimate of every student whose coin took twice as many flips as runs.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from autograder.checks.personal import draw
from autograder.grading.problemset import InvalidNotebook, ProblemSet, read_notebook_bytes

__all__ = [
    "QuotedNumber",
    "numbers_in",
    "states",
    "sample_values",
    "common_share",
    "written_answers",
    "quoted_numbers",
]

_NUMBER = re.compile(r"(?<![\w.])[-+−]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
#: The significant digits a number must have to be evidence.
MIN_DIGITS = 2
#: The share of variants a number may state a value of and still be evidence (below it).
COMMON_SHARE = 0.005
#: How many variants :func:`common_share` measures on, and the key they are drawn with (not the
#: course's: the measure is the draw's, whoever the class is).
SAMPLE = 4000
_SAMPLE_KEY = b"quoted-numbers: the sample of variants".ljust(32, b"\0")


@dataclass(frozen=True)
class QuotedNumber:
    """A number in ``student``'s written answer that is ``other``'s expected value."""

    student: str
    other: str
    cell: str  # the written answer's grade_id
    label: str  # which of ``other``'s expected values
    quoted: str  # the number as the student wrote it
    value: float  # ``other``'s value


def numbers_in(text: str) -> list[str]:
    """The numbers written in ``text``, as written (a minus sign ``−`` read as ``-``).

    >>> numbers_in("θ = 0.4375, so 43.8 % (N = 12); 1e-3")
    ['0.4375', '43.8', '12', '1e-3']
    """
    return [m.replace("−", "-") for m in _NUMBER.findall(text)]


def _digits(quoted: str) -> tuple[int, int]:
    """``(significant digits, decimals)`` of a number as written."""
    mantissa, _, exponent = quoted.lower().lstrip("+-").partition("e")
    whole, _, decimals = mantissa.partition(".")
    significant = len((whole + decimals).lstrip("0"))
    return significant, len(decimals) - (int(exponent) if exponent else 0)


def states(quoted: str, value: float) -> bool:
    """Whether ``quoted`` states ``value``: ``value`` rounded to the decimals written, with at
    least :data:`MIN_DIGITS` significant digits written.

    >>> states("0.44", 0.4375), states("0.4375", 0.4375), states("0.43", 0.4375)
    (True, True, False)
    >>> states("2", 2.0)
    False
    """
    significant, decimals = _digits(quoted)
    if significant < MIN_DIGITS or not math.isfinite(value):
        return False
    return abs(float(quoted) - value) <= 0.5 * 10.0**-decimals * (1 + 1e-9)


def sample_values(ps: ProblemSet) -> list[list[float]]:
    """The expected values of each of :data:`SAMPLE` variants of ``ps`` (a problem set whose
    variants declare them), drawn with the sample's key."""
    spec = ps.variants
    assert spec is not None
    return [
        list(spec.expected_values(draw(spec, ps.name, f"sample-{i}", _SAMPLE_KEY)).values())
        for i in range(SAMPLE)
    ]


def common_share(sample: list[list[float]], quoted: str) -> float:
    """The share of the variants of ``sample`` (:func:`sample_values`) one of whose expected
    values ``quoted`` states."""
    return sum(any(states(quoted, v) for v in values) for values in sample) / len(sample)


def written_answers(ps: ProblemSet, data: bytes) -> list[tuple[str, str]]:
    """``(grade_id, text)`` of every written answer (a Markdown answer cell) of the notebook
    ``data``, matched as grading matches them; none for a file that is no notebook."""
    try:
        assembled = ps.assemble(read_notebook_bytes(data)).notebook
    except InvalidNotebook:
        return []
    answers = set(ps.solution_ids)
    return [
        (c.metadata["nbgrader"]["grade_id"], c.source)
        for c in assembled.cells
        if c.cell_type == "markdown"
        and c.get("metadata", {}).get("nbgrader", {}).get("grade_id") in answers
    ]


def quoted_numbers(ps: ProblemSet, submissions: Iterable[tuple[str, bytes]]) -> list[QuotedNumber]:
    """Every number of a student's written answer that is a classmate's expected value and none
    of their own (see the module docstring), over ``(student, notebook bytes)``; none for a
    problem set whose variants declare no expected values."""
    spec = ps.variants
    if spec is None or spec.expected is None:
        return []
    items = list(submissions)
    expected = {s: ps.for_student(s).expected_values for s, _ in items}
    found = []
    sample: list[list[float]] = []  # drawn when a number first needs it
    for student, data in items:
        for cell, text in written_answers(ps, data):
            for quoted in numbers_in(text):
                if any(states(quoted, v) for v in expected[student].values()):
                    continue  # the writer's own value
                others = [
                    QuotedNumber(student, other, cell, label, quoted, value)
                    for other, values in expected.items()
                    if other != student
                    for label, value in values.items()
                    if states(quoted, value)
                ]
                if others and not sample:
                    sample = sample_values(ps)
                if others and common_share(sample, quoted) < COMMON_SHARE:
                    found += others
    return found
