"""Nothing hidden leaves the grader: the text a student reads is cleared of hidden tests' source
and of the hidden inputs' values.

The student's code runs next to the hidden checks, in the same kernel: it can read the source of
every cell that ran (IPython's ``In``, ``_ih``), and the seeded inputs the grader wrote into its
results folder. Whatever it reads, it can put into the text of an exception, and that text
reaches the feedback (a recorded case's error, a cell's error in the notes) or a check's message
("yours is ..."). :class:`Secrets` clears such text before it leaves the grader (the
pipeline's :func:`~autograder.grading.pipeline.conceal` step, over every score's message and
every note):

- every line of a hidden block of the source notebook (between nbgrader's ``### BEGIN HIDDEN
  TESTS`` and ``### END HIDDEN TESTS``, ``nbgrader/preprocessors/clearhiddentests.py``), and any
  ``record(...)`` or ``inputs(...)`` call, becomes :data:`HIDDEN`;
- every number of four significant digits or more that is, to the digits shown, a value of a
  declared case's inputs becomes :data:`HIDDEN` (the numbers of a message, "yours is 0.5",
  "shape (40, 6)", are shorter or are not inputs).

This clears what the hidden parts are, quoted as text; it cannot recognise an input re-encoded by
the student's code (base64, digits reversed). The grader's own messages name the inputs by shape
and scalar value, as :mod:`autograder.checks.declared` words them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from autograder.grading.problemset import ProblemSet

__all__ = ["HIDDEN", "Secrets", "secrets_of"]

#: What stands in for a hidden line or value.
HIDDEN = "[hidden]"
_BLOCK = re.compile(r"#+\s*BEGIN HIDDEN TESTS(.*?)#+\s*END HIDDEN TESTS", re.S)
_CALL = re.compile(r"\b(?:record|inputs)\s*\([^)\n]*\)?")
_MARKER = re.compile(r"#*\s*(?:BEGIN|END) HIDDEN TESTS")
_NUMBER = re.compile(r"(?<![\w.])-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
#: A number shorter than this (significant digits) is never taken for an input.
MIN_DIGITS = 4
#: The values of the inputs kept for matching (the largest data sets are cut here).
MAX_VALUES = 2**22


@dataclass(frozen=True)
class Secrets:
    """What must not leave the grader for one problem set.

    Attributes
    ----------
    lines : tuple of str
        The hidden blocks' lines, stripped, longest first (those of 8 characters or more).
    values : numpy.ndarray
        The declared cases' input values, sorted, unique, finite.
    """

    lines: tuple[str, ...]
    values: np.ndarray

    def conceal(self, text: str) -> str:
        """``text`` with every hidden line, hidden call and input value replaced by
        :data:`HIDDEN`."""
        for line in self.lines:
            if line in text:
                text = text.replace(line, HIDDEN)
        text = _MARKER.sub(HIDDEN, _CALL.sub(HIDDEN, text))
        return _NUMBER.sub(self._number, text)

    def _number(self, match: re.Match) -> str:
        token = match.group(0)
        mantissa, _, exponent = token.lower().partition("e")
        digits = mantissa.lstrip("-").replace(".", "").lstrip("0")
        if len(digits) < MIN_DIGITS or self.values.size == 0:
            return token
        decimals = len(mantissa.partition(".")[2])
        unit = 10.0 ** (int(exponent or 0) - decimals)
        value = float(token)
        at = int(np.searchsorted(self.values, value - 0.51 * unit))
        hit = at < self.values.size and self.values[at] <= value + 0.51 * unit
        return HIDDEN if hit else token


def _hidden_lines(ps: ProblemSet) -> tuple[str, ...]:
    lines = {
        line.strip()
        for cell in ps.source.cells
        if cell.cell_type == "code"
        for block in _BLOCK.findall(cell.source)
        for line in block.splitlines()
    }
    return tuple(sorted((x for x in lines if len(x) >= 8), key=len, reverse=True))


def _input_values(ps: ProblemSet) -> np.ndarray:
    from autograder.checks.declared import declared_cases, generate_case

    found = []
    for case in declared_cases(ps.source).values():
        try:
            made = generate_case(case)
        except Exception:  # noqa: BLE001 - a broken declaration is reported by its check
            continue
        for value in made.values():
            array = np.asarray(value)
            if array.dtype.kind in "iuf":
                found.append(array.astype(float).ravel()[:MAX_VALUES])
    if not found:
        return np.empty(0)
    values = np.unique(np.concatenate(found))
    return values[np.isfinite(values)]


#: ``{(problem set, hash of its source): Secrets}``, computed once per process.
_CACHE: dict[tuple[str, int], Secrets] = {}


def secrets_of(ps: ProblemSet) -> Secrets:
    """The :class:`Secrets` of ``ps`` (computed once per process and source notebook)."""
    key = (ps.name, hash(str(ps.source)))
    if key not in _CACHE:
        _CACHE[key] = Secrets(_hidden_lines(ps), _input_values(ps))
    return _CACHE[key]
