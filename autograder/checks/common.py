"""Building blocks of the trusted checks: reading recorded answers and comparing them.

Every comparison accepts all correct answers and explains a wrong one in words a student can act
on. Tolerances are set by the problem's conditioning (for example ``rtol=1e-6`` for a closed form
computed in double precision), never tuned to our own implementation's rounding.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from coursedata.grading import CASE_NAME, inputs

__all__ = ["Outcome", "Answers", "AnswerUnavailable", "compare", "check_shape", "unpack",
           "guarded", "weighted",
           "columns_up_to_sign", "rows_up_to_sign"]

MAX_RESULT_BYTES = 64 * 2**20


@dataclass(frozen=True)
class Outcome:
    """The result of one check: the fraction of the cell's points earned and why."""

    fraction: float
    message: str

    def __post_init__(self):
        if not 0.0 <= self.fraction <= 1.0:
            raise ValueError(f"fraction must lie in [0, 1]; got {self.fraction}")

    @classmethod
    def passed(cls, message: str = "correct") -> "Outcome":
        return cls(1.0, message)

    @classmethod
    def failed(cls, message: str) -> "Outcome":
        return cls(0.0, message)


class AnswerUnavailable(Exception):
    """The student's answer for a case was not recorded, raised an error, or is malformed."""


class Answers:
    """Read-only access to the answers a submission recorded, and to their seeded inputs.

    Parameters
    ----------
    problem_set : str
        Name of the problem set (selects the input generators).
    results_dir : path-like
        The folder the hidden cells wrote into. Its files come from untrusted code: they are
        loaded with ``allow_pickle=False`` and refused above ``MAX_RESULT_BYTES``.
    """

    def __init__(self, problem_set: str, results_dir):
        self.problem_set = problem_set
        self.results_dir = Path(results_dir)
        self._cache: dict[str, tuple] = {}

    def inputs(self, case: str) -> dict:
        """Fresh copies of the seeded inputs of ``case`` (the same the hidden cell used)."""
        return inputs(self.problem_set, case)

    def get(self, case: str) -> tuple:
        """Return the recorded output of ``case`` as a tuple of arrays.

        Raises
        ------
        AnswerUnavailable
            With a message for the student: the function raised, was not run, or returned
            something that is not numeric.
        """
        if not CASE_NAME.match(case):
            raise ValueError(f"invalid case name {case!r}")
        if case in self._cache:
            return self._cache[case]
        error = self.results_dir / f"{case}.error.json"
        data = self.results_dir / f"{case}.npz"
        if data.is_file() and data.stat().st_size <= MAX_RESULT_BYTES:
            try:
                with np.load(data, allow_pickle=False) as z:
                    keys = sorted(z.files, key=lambda k: (len(k), k))
                    if keys == ["out"] or all(k == f"out_{i}" for i, k in enumerate(keys)):
                        value = tuple(np.array(z[k]) for k in keys)
                        self._cache[case] = value
                        return value
            except Exception:  # noqa: BLE001 - a corrupt file is the student's problem
                pass
            raise AnswerUnavailable("your function's result could not be read back; "
                                    "return numbers or numpy arrays")
        if data.is_file():
            raise AnswerUnavailable("your function returned an object too large to grade")
        if error.is_file() and error.stat().st_size <= 16_384:
            try:
                info = json.loads(error.read_text())
                message = str(info.get("message", ""))[:500]
            except (ValueError, UnicodeDecodeError, AttributeError):
                message = "an error"
            raise AnswerUnavailable(f"your function raised {message}")
        raise AnswerUnavailable("your function was not run by this check (was it defined, "
                                "and did the notebook run to this point?)")


def check_shape(got: np.ndarray, shape: tuple, what: str) -> str | None:
    """Return a message if ``got`` does not have ``shape``, else ``None``."""
    if got.shape != tuple(shape):
        return f"{what} should have shape {tuple(shape)}; yours has shape {got.shape}"
    return None


def compare(got, expected, what: str, *, rtol: float = 1e-6, atol: float = 1e-9) -> str | None:
    """Return a message describing how ``got`` differs from ``expected``, or ``None`` if close.

    The comparison is ``|got - expected| <= atol + rtol * |expected|`` elementwise, after
    checking the shape. NaN in ``got`` is always a mismatch.
    """
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem:
        return problem
    if not np.all(np.isfinite(got)):
        return f"{what} contains NaN or infinite values"
    bad = np.abs(got - expected) > atol + rtol * np.abs(expected)
    if np.any(bad):
        idx = np.unravel_index(np.argmax(np.abs(got - expected) * bad), got.shape)
        where = f" at index {tuple(int(i) for i in idx)}" if got.ndim else ""
        return (f"{what} is wrong{where}: yours is {got[idx]:.6g}, expected about "
                f"{expected[idx]:.6g} ({int(bad.sum())} of {bad.size} values differ)")
    return None


def _align_signs(got: np.ndarray, expected: np.ndarray, axis: int) -> np.ndarray:
    """Flip the sign of each row (axis=1) or column (axis=0) of ``got`` to best match ``expected``."""
    dots = np.sum(got * expected, axis=axis, keepdims=True)
    return got * np.where(dots < 0, -1.0, 1.0)


def columns_up_to_sign(got, expected, what: str, **tol) -> str | None:
    """Like :func:`compare`, but each column may be multiplied by -1 (eigen/singular vectors)."""
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem:
        return problem
    return compare(_align_signs(got, expected, axis=0), expected,
                   f"{what} (compared up to the sign of each column)", **tol)


def rows_up_to_sign(got, expected, what: str, **tol) -> str | None:
    """Like :func:`compare`, but each row may be multiplied by -1."""
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem:
        return problem
    return compare(_align_signs(got, expected, axis=1), expected,
                   f"{what} (compared up to the sign of each row)", **tol)


def unpack(answers: Answers, case: str, n: int) -> tuple:
    """The recorded output of ``case``, which must be a tuple of ``n`` arrays (one array if 1)."""
    out = answers.get(case)
    if len(out) != n:
        noun = "value" if n == 1 else "values"
        raise AnswerUnavailable(f"your function should return {n} {noun}; it returned {len(out)}")
    return out


def guarded(problem) -> str | None:
    """Evaluate ``problem()`` (a message or None); an unavailable answer becomes its message."""
    try:
        return problem()
    except AnswerUnavailable as exc:
        return str(exc)


def weighted(*parts: tuple[float, str | None]) -> Outcome:
    """An outcome earning the weights of the parts whose problem is ``None``.

    Parameters
    ----------
    *parts : (weight, problem) pairs
        Weights sum to one; ``problem`` is a message, or ``None`` when that part is right.
    """
    total = sum(w for w, _ in parts)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"weights must sum to one; got {total}")
    earned = sum(w for w, problem in parts if problem is None)
    problems = [p for _, p in parts if p is not None]
    return Outcome(min(1.0, round(earned, 9)), "correct" if not problems else "; ".join(problems))
