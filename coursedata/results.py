"""Reading back what ``record`` saved, and judging it: one reader for the grader and the check.

:func:`coursedata.grading.record` saves what a student's function returned as ``<case>.npz``
(``out``, or ``out_0``, ``out_1``, ... for several values) or, when it raised or returned
something that is not numbers, ``<case>.error.json``. The grader's trusted process reads those
files after the notebook has run (:class:`autograder.checks.answers.Answers`), and so does the
student's own check (:mod:`coursedata.check`) for the visible cells: both with :func:`read`,
:func:`unpack` and :func:`problems`, so that a visible cell's verdict is the same in both.

The files come from untrusted code: they are loaded with ``allow_pickle=False`` and refused above
:data:`MAX_RESULT_BYTES`. This module holds no reference implementation, so the kit may ship it.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from coursedata.compare import TOGETHER, Output, compare_output, together
from coursedata.grading import CASE_NAME, INPUTS_FOLDER, MEMORY_MB

__all__ = ["AnswerUnavailable", "MAX_RESULT_BYTES", "NOT_REGULAR", "called_with", "read", "unpack",
           "problems"]

#: Recorded result files larger than this (bytes) are refused unread.
MAX_RESULT_BYTES = 64 * 2**20


class AnswerUnavailable(Exception):
    """The student's answer for a case was not recorded, raised an error, or is malformed."""


def _arrays(path: Path) -> tuple[np.ndarray, ...]:
    """The arrays of a results file (the student's check's reader; the grader passes its own,
    which examines the file before loading it)."""
    with np.load(path, allow_pickle=False) as z:
        keys = sorted(z.files, key=lambda k: (len(k), k))
        if not (keys == ["out"] or all(k == f"out_{i}" for i, k in enumerate(keys))):
            raise ValueError(f"unexpected members {keys}")
        return tuple(np.array(z[k]) for k in keys)


def _real(value: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    if any(v.dtype.kind == "c" and np.any(v.imag != 0) for v in value):
        raise AnswerUnavailable("your function returned complex numbers; the answer is real")
    return tuple(v.real.copy() if v.dtype.kind == "c" else v for v in value)


def called_with(inputs: Mapping[str, object]) -> str:
    """``x_query (float64, shape (80,)), h=0.61, kernel='uniform'``: a case's inputs in words, as
    the comparisons' messages name them: arrays by dtype and shape, scalars by value (a hidden
    value of four significant digits or more is concealed in the feedback, as in every message)."""
    words = []
    for name, value in inputs.items():
        array = np.asarray(value)
        if array.ndim:
            words.append(f"{name} ({array.dtype}, shape {array.shape})")
        elif array.dtype.kind in "fc":
            words.append(f"{name}={float(array.real):g}")
        else:
            words.append(f"{name}={array.item()!r}")
    return ", ".join(words)


def _saved_inputs(results_dir: Path, case: str) -> dict[str, np.ndarray]:
    """The inputs the grader (or the check) wrote for ``case`` before the notebook ran."""
    with np.load(results_dir / INPUTS_FOLDER / f"{case}.npz", allow_pickle=False) as z:
        return {k: np.array(z[k]) for k in z.files}


def _on_inputs(inputs: Callable[[], Mapping[str, object]]) -> str:
    """`` when called with ...`` for a raise, or nothing when the inputs cannot be read."""
    try:
        words = called_with(inputs())
    except Exception:  # noqa: BLE001 - no inputs to name (a case of the kit's, or none written)
        return ""
    return f" when called with {words}" if words else ""


def _error(path: Path, inputs: Callable[[], Mapping[str, object]]) -> str:
    try:
        info = json.loads(path.read_text())
        message = str(info.get("message", ""))[:500]
        returned = info.get("returned") is True
        memory = "MemoryError" in str(info.get("type", ""))
    except (ValueError, UnicodeDecodeError, AttributeError, RecursionError):
        message, returned, memory = "an error", False, False
    if returned:
        return f"what your function returned is not numbers: {message}"
    limit = f" (each process of a graded notebook may use {MEMORY_MB} MB)" if memory else ""
    return f"your function raised {message}{_on_inputs(inputs)}{limit}"


#: What an answer whose file is not a regular file (a named pipe, a link, a device) is said to be:
#: such a file is never opened, nor a link followed.
NOT_REGULAR = ("your function's result could not be read back (it is not a regular file); leave "
               "the files the grader's tests write as they are")


def _regular(path: Path) -> bool | None:
    """Whether ``path`` is a regular file, not following a link; None where nothing is there."""
    try:
        return stat.S_ISREG(path.lstat().st_mode)
    except FileNotFoundError:
        return None
    except OSError:
        return False


def read(results_dir, case: str,
         load: Callable[[Path], tuple[np.ndarray, ...]] | None = None,
         inputs: Callable[[], Mapping[str, object]] | None = None) -> tuple[np.ndarray, ...]:
    """The recorded output of ``case`` in ``results_dir``, as a tuple of arrays.

    ``load`` reads the arrays of a results file (default: ``numpy.load`` without pickles); the
    grader's examines the file first (:mod:`autograder.checks.results_file`). A ``ValueError`` it
    raises is the student's unreadable answer, its message shown. ``inputs`` returns the case's
    inputs, which the message of a raise names (:func:`called_with`); default: those written in
    ``results_dir/inputs/`` (the grader passes its own, since the student's code could change
    that file).

    Raises
    ------
    AnswerUnavailable
        With a message for the student: the function raised, was not run, or returned
        something that is not numeric.
    """
    if not CASE_NAME.match(case):
        raise ValueError(f"invalid case name {case!r}")
    data = Path(results_dir) / f"{case}.npz"
    error = Path(results_dir) / f"{case}.error.json"
    if False in (_regular(data), _regular(error)):
        raise AnswerUnavailable(NOT_REGULAR)
    if data.is_file() and data.stat().st_size <= MAX_RESULT_BYTES:
        try:
            return _real((load or _arrays)(data))
        except AnswerUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - a corrupt file is the student's problem
            detail = f" ({exc})" if load is not None and isinstance(exc, ValueError) else ""
            hint = getattr(exc, "hint", "return numbers or numpy arrays")
            raise AnswerUnavailable(f"your function's result could not be read back{detail}; "
                                    f"{hint}") from None
    if data.is_file():
        raise AnswerUnavailable("your function returned an object too large to grade")
    if error.is_file() and error.stat().st_size <= 16_384:
        raise AnswerUnavailable(_error(error, inputs or partial(_saved_inputs, Path(results_dir),
                                                                case)))
    raise AnswerUnavailable("your function was not run by this check (was it defined, and did "
                            "the notebook run to this point?)")


def unpack(out: tuple[np.ndarray, ...], n: int) -> tuple[np.ndarray, ...]:
    """``out``, which must hold ``n`` values (one array if 1).

    A pair is a pair whether the function returned a tuple or a list: a list of values of one
    shape is recorded as one array, which here gives back its ``n`` values. And one array is one
    array whether the function returned it or a tuple of its entries (``return d_a, d_b`` for a
    gradient of shape ``(2,)``): values of one shape, where ``n`` is 1, are stacked.

    Raises
    ------
    AnswerUnavailable
        If ``out`` has another number of values.
    """
    if n > 1 and len(out) == 1 and out[0].ndim and len(out[0]) == n:
        out = tuple(out[0])
    if n == 1 and len(out) > 1 and len({v.shape for v in out}) == 1:
        out = (np.stack(out),)
    if len(out) != n:
        noun = "one value (one array)" if n == 1 else f"{n} values"
        raise AnswerUnavailable(f"your function should return {noun}; it returned {len(out)}")
    return out


def problems(got: Callable[[], tuple], outputs: Sequence[Output], expected: Sequence,
             whats: Sequence[str]) -> list[str | None]:
    """One message (``None`` when right) per declared output of a case.

    Parameters
    ----------
    got : callable
        Returns the recorded output (:func:`read`); an unavailable answer is each output's
        message.
    outputs : sequence of Output
        How each value is compared; the outputs declaring one kind of
        :data:`coursedata.compare.TOGETHER` are aligned together first (one orthogonal ``Q``
        for ``U`` and ``Z``), then each compared.
    expected : sequence
        The reference's values, one per output.
    whats : sequence of str
        Each value and its inputs in words, for the messages.
    """
    try:
        mine = list(unpack(got(), len(outputs)))
    except AnswerUnavailable as exc:
        return [str(exc)] * len(outputs)
    whats = list(whats)
    for kind in TOGETHER:  # outputs compared together: aligned as one group first
        group = [i for i, o in enumerate(outputs) if o.compare == kind]
        if group:
            aligned, words = together(kind, [mine[i] for i in group],
                                      [expected[i] for i in group],
                                      [outputs[i].name for i in group])
            for i, value in zip(group, aligned):
                mine[i], whats[i] = value, f"{whats[i]}{words}"
    return [compare_output(output.compare, value, wanted, what, rtol=output.rtol,
                           atol=output.atol, scalar=output.scalar)
            for output, value, wanted, what in zip(outputs, mine, expected, whats)]
