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
  hidden case's inputs becomes :data:`HIDDEN` (the numbers of a message, "yours is 0.5",
  "shape (40, 6)", are shorter or are not inputs), unless the match says nothing: the number is
  printed in the released notebook (the problem set's own text and visible tests), or so many
  input values lie that close to it that a number anywhere there would match one (a data set of
  a million values between 0 and 5 matches most numbers shown to six digits, the reference's
  expected values among them). The inputs of the visible cells' cases are not hidden: the release
  gives them to the student's check (:mod:`autograder.authoring.visible`).

This clears what the hidden parts are, quoted as text; it cannot recognise an input re-encoded by
the student's code (base64, digits reversed). So the text of an exception is not shown at all
(:func:`without_error_messages`): in the grader every cell, a visible one too, runs beside the
hidden tests (their record lines inserted, every case's inputs written), so the feedback of every
cell and every note keep the exception's type and the line it names, never its message; the
student sees a visible test's message in their own notebook and in the check. The type is shown
only when it names an exception class of Python or of an imported library (``ValueError``,
``numpy.linalg.LinAlgError``); a class the student's code defined could carry a name of its
choosing. The grader's own messages name the inputs by shape and scalar value, as
:mod:`autograder.checks.declared` words them.
"""

from __future__ import annotations

import builtins
import re
import sys
from dataclasses import dataclass

import numpy as np

from autograder.checks.record_calls import record_calls
from autograder.grading.problemset import ProblemSet
from coursedata.naming import VISIBLE, test_kind

__all__ = [
    "HIDDEN",
    "Secrets",
    "secrets_of",
    "visible_cases",
    "without_counts",
    "without_error_messages",
]

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
#: A match is evidence only when fewer input values than this are expected, by chance, as close to
#: a number as its printed digits allow (from the density of the values around it).
CHANCE = 0.05
#: The window (in units of the number's last digit) over which that density is measured.
_SPREAD = 100


#: An exception as the feedback states it (``your function raised ValueError: ...``, ``raised
#: ValueError at line 3: ...``): its type, the line, and its message, which is all that follows,
#: to the end of the text, with or without the colon (the student's code can write the text).
_RAISED = re.compile(r"\braised ([A-Za-z_][\w.]*)( at line \d+)?(.*)", re.S)
#: What stands in for the message of an exception raised where the grader ran the notebook.
NOT_SHOWN = (
    " (its message is not shown: the grader ran it beside the hidden tests; "
    "your notebook and the check show a visible test's message)"
)

#: What an answer that is not numbers is said to be (:func:`coursedata.results.read`), and what
#: follows: the kernel's text, which names the returned object's class, any name the student's
#: code gives it.
_RETURNED = re.compile(r"\b(what your function returned is not numbers)(.*)", re.S)
NOT_SHOWN_RETURNED = (
    " (what it was is not shown: the grader ran it beside the hidden tests; your notebook and the "
    "check show it for a visible test)"
)

#: What stands in for the name of an exception class that is neither Python's nor a library's.
OWN_CLASS = "an exception of a class the code defined"
#: The libraries whose exception classes are named as they are.
LIBRARIES = ("numpy", "scipy", "sklearn", "pandas")


def known_exception(name: str) -> bool:
    """Whether ``name`` is an exception class of Python (``ValueError``) or of a library already
    imported by the grader (``numpy.linalg.LinAlgError``), looked up here, not taken on trust."""
    return _exception_class(name) is not None


def _exception_class(name: str) -> type | None:
    """The exception class ``name`` leads to (:func:`known_exception`), or None."""
    head, _, rest = name.partition(".")
    if not rest:
        found = getattr(builtins, name, None)
    elif head in LIBRARIES and head in sys.modules:
        found = sys.modules[head]
        for part in rest.split("."):
            found = getattr(found, part, None)
    else:
        found = None
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _canonical(cls: type) -> str:
    """How the feedback names an exception class: by its own module and name, never by the path
    the text took to it (``numpy.ma.core.np.linalg.LinAlgError``: the path, which modules'
    attributes lead back to their package, can spell anything)."""
    if getattr(builtins, cls.__name__, None) is cls:
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def without_error_messages(text: str) -> str:
    """``text`` with the message of every exception it states cut off, and the type's name kept
    only when it is Python's or a library's (:func:`known_exception`): the line stays. In the
    grader, every cell, visible ones too, runs beside the hidden tests (their record lines
    inserted, every case's inputs written), so an exception's text, and the name of a class the
    student's code defined, may carry them, re-encoded."""

    def stated(m: re.Match) -> str:
        found = _exception_class(m.group(1))
        name = _canonical(found) if found is not None else OWN_CLASS
        return f"raised {name}{m.group(2) or ''}{NOT_SHOWN if m.group(3) else ''}"

    def returned(m: re.Match) -> str:
        return m.group(1) + (NOT_SHOWN_RETURNED if m.group(2) else "")

    return _RETURNED.sub(returned, _RAISED.sub(stated, text))


#: The sandbox's words for a count or a code the student's code chooses (the links it left, the
#: status it exits with, the signal it sends itself), and what the feedback says of each.
_COUNTS = (
    (re.compile(r"\bremoved \d+ symbolic links"), lambda m: "removed symbolic links"),
    (
        re.compile(r"\(exit status (\d+)\)"),
        lambda m: m.group(0) if m.group(1) == "0" else "(a non-zero exit status)",
    ),
    (
        re.compile(r"\((?:SIG[A-Z0-9]+|signal \d+)(: [a-z -]+)?\)"),
        lambda m: m.group(0) if m.group(1) else "(a signal)",
    ),
)


def without_counts(text: str) -> str:
    """``text`` with the counts and codes of the sandbox's note that the student's code chooses
    said as classes: the links removed, an exit status other than 0, a signal the grader has no
    word for (a limit's signal keeps its name: it is the grader's). Each was a channel of 7 to
    14 bits out of a run that kept its points."""
    for pattern, said in _COUNTS:
        text = pattern.sub(said, text)
    return text


@dataclass(frozen=True)
class Secrets:
    """What must not leave the grader for one problem set.

    Attributes
    ----------
    lines : tuple of str
        The hidden blocks' lines, stripped, longest first (those of 8 characters or more).
    values : numpy.ndarray
        The hidden cases' input values, sorted, unique, finite.
    public : frozenset of float
        The numbers printed in the released notebook (outside its hidden blocks).
    """

    lines: tuple[str, ...]
    values: np.ndarray
    public: frozenset[float] = frozenset()

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
        shown_input = self._within(value, 0.51 * unit) > 0
        if value in self.public or not shown_input or self._by_chance(value, unit):
            return token
        return HIDDEN

    def _within(self, value: float, half: float) -> int:
        """How many input values lie within ``half`` of ``value``."""
        lo = np.searchsorted(self.values, value - half, side="left")
        hi = np.searchsorted(self.values, value + half, side="right")
        return int(hi - lo)

    def _by_chance(self, value: float, unit: float) -> bool:
        """Whether a number shown to ``unit`` would match an input value there by chance."""
        near = self._within(value, _SPREAD * unit)
        return near * 1.02 / (2 * _SPREAD) >= CHANCE


def _hidden_lines(ps: ProblemSet) -> tuple[str, ...]:
    lines = {
        line.strip()
        for cell in ps.source.cells
        if cell.cell_type == "code"
        for block in _BLOCK.findall(cell.source)
        for line in block.splitlines()
    }
    return tuple(sorted((x for x in lines if len(x) >= 8), key=len, reverse=True))


def visible_cases(ps: ProblemSet) -> set[str]:
    """The cases recorded in visible cells only: their inputs are the release's."""
    calls = record_calls(ps.source)
    visible = {c.case for c in calls if test_kind(c.grade_id) == VISIBLE}
    return visible - {c.case for c in calls if test_kind(c.grade_id) != VISIBLE}


def _public_numbers(ps: ProblemSet) -> frozenset[float]:
    """The numbers of the source notebook's text and code outside its hidden blocks."""
    text = "\n".join(_BLOCK.sub("", cell.source) for cell in ps.source.cells)
    return frozenset(float(m.group(0)) for m in _NUMBER.finditer(text))


def _input_values(ps: ProblemSet) -> np.ndarray:
    from autograder.checks.declared import declared_cases, generate_case

    found = []
    public = visible_cases(ps)
    for name, case in declared_cases(ps.source).items():
        if name in public:
            continue
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
        _CACHE[key] = Secrets(_hidden_lines(ps), _input_values(ps), _public_numbers(ps))
    return _CACHE[key]
