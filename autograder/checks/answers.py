"""Reading the answers a submission recorded, and their seeded inputs.

:class:`Answers` gives the recorded answers as tuples of arrays; :func:`unpack` and :func:`scalar`
also check how many values there are and their shape. Each raises :class:`AnswerUnavailable`
with a message for the student when an answer was not recorded, raised an error, or is malformed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from autograder.checks.results_file import Limits, examine, load
from coursedata.compare import your_shape
from coursedata.grading import inputs
from coursedata.results import MAX_RESULT_BYTES, NOT_REGULAR, AnswerUnavailable, read
from coursedata.results import unpack as unpack_values

__all__ = ["AnswerUnavailable", "Answers", "MAX_RESULT_BYTES", "unpack", "scalar"]


class Answers:
    """Read-only access to the answers a submission recorded, and to their seeded inputs.

    Parameters
    ----------
    problem_set : str
        Name of the problem set (selects the input generators).
    results_dir : path-like
        The folder the hidden cells wrote into. Its files come from untrusted code: they are
        loaded with ``allow_pickle=False`` and refused above ``MAX_RESULT_BYTES``.
    declared : dict, optional
        ``{case: Case}``, the cases declared in the source notebook
        (:func:`autograder.checks.declared.declared_cases`).
    removed : iterable of str, optional
        The names of the files of ``results_dir`` that were not regular files (a named pipe, a
        link), removed after the run (:attr:`autograder.sandbox.ExecutionResult.removed_files`):
        a case whose file was one of them could not be read back.
    """

    def __init__(
        self,
        problem_set: str,
        results_dir,
        declared: dict | None = None,
        removed: Iterable[str] = (),
    ):
        self.problem_set = problem_set
        self.results_dir = Path(results_dir)
        self.declared = dict(declared or {})
        self.removed = frozenset(removed)
        self._cache: dict[str, tuple] = {}

    def inputs(self, case: str) -> dict:
        """Fresh copies of the seeded inputs of ``case`` (the same the hidden cell used): from
        its declaration in the source notebook (``declared``), else from the kit's ``CASES``."""
        if case in self.declared:
            from autograder.checks.declaration import case_inputs

            return case_inputs(self.declared, case)
        return inputs(self.problem_set, case)

    def get(self, case: str) -> tuple:
        """Return the recorded output of ``case`` as a tuple of arrays (read once, with
        :func:`coursedata.results.read`, the reader the student's check uses too).

        Raises
        ------
        AnswerUnavailable
            With a message for the student: the function raised, was not run, or returned
            something that is not numeric.
        """
        if self.removed & {f"{case}.npz", f"{case}.error.json"}:
            raise AnswerUnavailable(NOT_REGULAR)
        if case not in self._cache:
            self._cache[case] = read(
                self.results_dir,
                case,
                lambda path: self._read(path, case),
                lambda: self.inputs(case),
            )
        return self._cache[case]

    def limits(self, case: str) -> Limits:
        """How many outputs ``case``'s answer may have and how many values each: derived from
        the reference's answer on the case's inputs when the case declares one (computed once
        per process), else :meth:`Limits.default`."""
        found = self.declared.get(case)
        if found is None or found.reference is None:
            return Limits.default()
        sizes = _reference_sizes(found)
        return Limits.of_sizes(sizes) if sizes else Limits.default()

    def _read(self, data: Path, case: str) -> tuple:
        """The arrays of the results file ``data``, examined before they are loaded
        (:mod:`autograder.checks.results_file`): a forged file raises ``UnreadableResult``, a
        ``ValueError`` whose message the student reads."""
        return load(data, examine(data, self.limits(case)))


#: ``{case's reference, outputs and inputs as JSON: sizes}``, computed once per process.
_SIZES: dict[str, tuple[int, ...]] = {}


def _reference_sizes(case) -> tuple[int, ...]:
    """The number of values of each output of the reference's answer on ``case``'s inputs (a
    declared :class:`~autograder.checks.declaration.Case`); ``()`` if it cannot be computed (the
    check itself then says why)."""
    key = json.dumps(
        [case.reference, len(case.outputs), [[list(i.names), i.spec] for i in case.inputs]],
        sort_keys=True,
        default=str,
    )
    if key not in _SIZES:
        _SIZES[key] = _sizes(case)
    return _SIZES[key]


def _sizes(case) -> tuple[int, ...]:
    from autograder.checks.declaration import generate_case, reference_of

    try:
        expected = reference_of(case)(**generate_case(case))
    except Exception:  # noqa: BLE001 - the check reports a broken reference, not this
        return ()
    expected = expected if len(case.outputs) > 1 else (expected,)
    if not isinstance(expected, tuple) or len(expected) != len(case.outputs):
        return ()
    return tuple(int(np.size(e)) for e in expected)


def unpack(answers: Answers, case: str, n: int) -> tuple:
    """The recorded output of ``case``, which must hold ``n`` values (one array if 1); see
    :func:`coursedata.results.unpack` (a list is a tuple too).

    Raises
    ------
    AnswerUnavailable
        If the answer is unavailable (see :meth:`Answers.get`) or has another number of values.
    """
    return unpack_values(answers.get(case), n)


def scalar(answers: Answers, case: str, what: str, *, of: int = 1, index: int = 0) -> np.ndarray:
    """Element ``index`` of the ``of``-tuple recorded for ``case``, which must be one number.

    Parameters
    ----------
    answers : Answers
    case : str
        The recorded case.
    what : str
        The quantity, for the message (e.g. ``"the chosen bandwidth"``).
    of : int
        How many values the student's function returns (see :func:`unpack`).
    index : int
        Which of them is the number.

    Returns
    -------
    numpy.ndarray
        A 0-d array.

    Raises
    ------
    AnswerUnavailable
        As :func:`unpack` does, or if the value is not 0-d (shape ``()``).
    """
    value = unpack(answers, case, of)[index]
    if value.shape != ():
        raise AnswerUnavailable(
            f"{what} should be one number; yours has {your_shape(value.shape, ())}"
        )
    return value
