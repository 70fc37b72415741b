"""Outcomes of checks: :class:`Outcome`, and the ways to turn messages into one.

A comparison (:mod:`coursedata.compare`) gives a message or ``None``; :func:`guarded` turns
an unavailable answer into its message, and :func:`weighted` (partial credit) and
:func:`first_problem` (all or nothing) turn messages into an :class:`Outcome`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from coursedata.results import AnswerUnavailable

__all__ = ["Outcome", "guarded", "weighted", "first_problem"]


@dataclass(frozen=True)
class Outcome:
    """The result of one check: the fraction of the cell's points earned and why."""

    fraction: float
    message: str

    def __post_init__(self):
        if not 0.0 <= self.fraction <= 1.0:
            raise ValueError(f"fraction must lie in [0, 1]; got {self.fraction}")

    @classmethod
    def passed(cls, message: str = "correct") -> Outcome:
        return cls(1.0, message)

    @classmethod
    def failed(cls, message: str) -> Outcome:
        return cls(0.0, message)


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
        Weights sum to one; ``problem`` is a message, or ``None`` when that part is right. A
        message several parts give (an answer that cannot be read, the same for every case) is
        said once, with how many times.
    """
    total = sum(w for w, _ in parts)
    if abs(total - 1.0) > 1e-9:
        raise ValueError(f"weights must sum to one; got {total}")
    earned = sum(w for w, problem in parts if problem is None)
    said = Counter(p for _, p in parts if p is not None)  # one sentence once, with its count
    problems = [p if n == 1 else f"{p} ({n} times)" for p, n in said.items()]
    return Outcome(min(1.0, round(earned, 9)), "correct" if not problems else "; ".join(problems))


def first_problem(*problems: str | None) -> Outcome:
    """All or nothing: fail with the first message among ``problems``, else pass.

    Parameters
    ----------
    *problems : str or None
        Messages in order of priority; ``None`` (or an empty string) means no problem.
    """
    first = next((p for p in problems if p), None)
    return Outcome.failed(first) if first else Outcome.passed()
