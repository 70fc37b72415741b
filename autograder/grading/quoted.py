"""Written answers that state another student's numbers, in a problem set with variants.

In a problem set with per-student variants (:mod:`autograder.checks.personal`) that declares the
values its written answers should state (``"expected"``), every student's expected values differ.
A number in a student's written answer that is not one of their own expected values but is,
as written, one of a classmate's (that value rounded or cut to the digits the student wrote, at
least two significant digits, so a ``2`` or a ``0.5`` proves nothing) suggests an answer copied
from that classmate: it is listed for a person, both students named, on the similarity page and
the class report. It changes no grade. A number is read as it may be written
(:func:`readings`): ``0.7895``, ``.7895`` or ``0,7895`` (a decimal comma), ``78.95 %`` (a
percentage, ``\\%`` in LaTeX too), ``195/247`` or ``\\frac{195}{247}`` (a fraction, read
exactly).

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
    "Reading",
    "numbers_in",
    "readings",
    "states",
    "sample_values",
    "common_share",
    "written_answers",
    "quoted_numbers",
]

_NUMBER = re.compile(r"(?<![\w.])[-+−]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
#: A decimal number with a comma for its decimal point, a percentage, a fraction (plain or LaTeX).
_COMMA = re.compile(r"(?<![\w.,])([-+−]?\d+),(\d+)(?!\w|[.,]\d)")
_PERCENT = re.compile(
    r"(?<![\w.])([-+−]?(?:\d+(?:[.,]\d+)?|[.,]\d+))\s*(?:\\?%|\s?percent\b|\s?per\s?cent\b)"
)
_FRACTION = re.compile(
    r"(?<![\w.])([-+−]?\d+)\s*/\s*(\d+)(?!\w|[.,]\d)"
    r"|\\[dt]?frac\s*\{\s*([-+−]?\d+)\s*\}\s*\{\s*(\d+)\s*\}"
)
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


@dataclass(frozen=True)
class Reading:
    """One way a number is written in an answer (:func:`readings`)."""

    written: str  # as written
    value: float
    unit: float  # one unit of the last digit written, in ``value``'s scale; 0 for a fraction
    digits: int  # significant digits written (a fraction: its longer term's)


def numbers_in(text: str) -> list[str]:
    """The decimal numbers written in ``text``, as written (a minus sign ``−`` read as ``-``).

    >>> numbers_in("θ = 0.4375, so 43.8 % (N = 12); 1e-3, or .25")
    ['0.4375', '43.8', '12', '1e-3', '.25']
    """
    return [m.replace("−", "-") for m in _NUMBER.findall(text)]


def _digits(quoted: str) -> tuple[int, int]:
    """``(significant digits, decimals)`` of a number as written."""
    mantissa, _, exponent = quoted.lower().lstrip("+-").partition("e")
    whole, _, decimals = mantissa.partition(".")
    significant = len((whole + decimals).lstrip("0"))
    return significant, len(decimals) - (int(exponent) if exponent else 0)


def _decimal(written: str, number: str, scale: float = 1.0) -> Reading:
    """The reading of the decimal ``number`` (a point for its decimal mark) written as
    ``written``, divided by ``scale`` (100 for a percentage)."""
    significant, decimals = _digits(number)
    return Reading(written, float(number) / scale, 10.0**-decimals / scale, significant)


def readings(text: str) -> list[Reading]:
    """Every number written in ``text``, each way it may be read: a decimal (``0.7895``,
    ``.7895``), a decimal comma (``0,7895``), a percentage (``78.95 %``, ``78.95\\%``), a
    fraction (``195/247``, ``\\frac{195}{247}``, read exactly). A number may have more than
    one reading (``0,7895`` is also ``0`` and ``7895``).

    >>> [(r.written, round(r.value, 6)) for r in readings(r"0,25 or 25 % or \\frac{1}{4}")]
    [('0', 0.0), ('25', 25.0), ('25', 25.0), ('1', 1.0), ('4', 4.0), ('0,25', 0.25), \
('25 %', 0.25), ('\\\\frac{1}{4}', 0.25)]
    """
    found = [_decimal(n, n) for n in numbers_in(text)]
    for m in _COMMA.finditer(text):
        found.append(_decimal(m[0], f"{m[1]}.{m[2]}".replace("−", "-")))
    for m in _PERCENT.finditer(text):
        found.append(_decimal(m[0], m[1].replace(",", ".").replace("−", "-"), 100.0))
    for m in _FRACTION.finditer(text):
        top, bottom = (m[1], m[2]) if m[1] is not None else (m[3], m[4])
        if int(bottom):
            digits = max(len(top.lstrip("+-−").lstrip("0")), len(bottom.lstrip("0")))
            found.append(Reading(m[0], int(top.replace("−", "-")) / int(bottom), 0.0, digits))
    return found


def states(quoted: Reading | str, value: float) -> bool:
    """Whether ``quoted`` (a :class:`Reading`, or a decimal as written) states ``value``:
    ``value`` rounded or cut to the decimals written (a fraction: ``value`` itself), with at
    least :data:`MIN_DIGITS` significant digits written.

    >>> states("0.44", 0.4375), states("0.4375", 0.4375), states("0.43", 0.4375)
    (True, True, True)
    >>> states("0.42", 0.4375), states("2", 2.0)
    (False, False)
    """
    reading = _decimal(quoted, quoted) if isinstance(quoted, str) else quoted
    if reading.digits < MIN_DIGITS or not math.isfinite(value):
        return False
    written, tolerance = reading.value, reading.unit * (1 + 1e-9)
    if not reading.unit:
        return math.isclose(written, value, rel_tol=1e-9, abs_tol=1e-12)
    rounded = abs(written - value) <= 0.5 * tolerance
    cut = written * value >= 0 and abs(written) <= abs(value) < abs(written) + tolerance
    return rounded or cut


def sample_values(ps: ProblemSet) -> list[list[float]]:
    """The expected values of each of :data:`SAMPLE` variants of ``ps`` (a problem set whose
    variants declare them), drawn with the sample's key."""
    spec = ps.variants
    assert spec is not None
    return [
        list(spec.expected_values(draw(spec, ps.name, f"sample-{i}", _SAMPLE_KEY)).values())
        for i in range(SAMPLE)
    ]


def common_share(sample: list[list[float]], quoted: Reading | str) -> float:
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
            for quoted in readings(text):
                if any(states(quoted, v) for v in expected[student].values()):
                    continue  # the writer's own value
                others = [
                    QuotedNumber(student, other, cell, label, quoted.written, value)
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
