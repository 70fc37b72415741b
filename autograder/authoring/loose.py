"""Tolerances too loose to tell a wrong answer from the reference's (part of the release gate).

A declared output's tolerance is loose when an answer no student should be given the points for
(all zeros, the reference's values doubled, or shifted by one) passes the output's own comparison
(:func:`coursedata.compare.compare_output`) against the reference's values. Such a check grades
nothing; the gate names the tolerance once per output, with the one to give it instead
(:data:`TIGHT`, the comparison's defaults), under which the same answers fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from coursedata.compare import compare_output

#: The tolerance suggested instead (rtol, atol): :func:`coursedata.compare.compare`'s defaults.
TIGHT = (1e-6, 1e-9)

#: Answers that are wrong whatever the reference's values, in words.
WRONG: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "all zeros": np.zeros_like,
    "the reference's values doubled": lambda v: 2 * v,
    "the reference's values plus one": lambda v: v + 1,
}


def _accepts(output, got: np.ndarray, value: np.ndarray, rtol: float, atol: float) -> bool:
    """Whether ``output``'s comparison, with ``rtol`` and ``atol``, accepts ``got``."""
    try:
        with np.errstate(all="ignore"):
            return (
                compare_output(output.compare, got, value, output.name, rtol=rtol, atol=atol)
                is None
            )
    except Exception:  # noqa: BLE001 - an answer the comparison cannot read is not accepted
        return False


def accepted_wrong(output, value: np.ndarray) -> Iterator[str]:
    """The answers of :data:`WRONG` that ``output``'s tolerance accepts against the reference's
    ``value`` and :data:`TIGHT` refuses (so they differ from it)."""
    value = np.asarray(value, dtype=float)
    for words, make in WRONG.items():
        got = make(value)
        if _accepts(output, got, value, output.rtol, output.atol) and not _accepts(
            output, got, value, *TIGHT
        ):
            yield words


def _number(x: float) -> str:
    """``x`` as an author writes it: ``1``, ``1e6``, ``1e-9``."""
    return f"{x:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")


def loose_tolerance(output, value: np.ndarray, case: str) -> tuple[str, str] | None:
    """``(what, fix)`` when ``output``'s tolerance accepts a wrong answer on ``case``'s
    reference ``value``, else ``None``."""
    if np.asarray(value).dtype.kind not in "fiu":
        return None
    wrong = next(accepted_wrong(output, value), None)
    if wrong is None:
        return None
    return (
        f"rtol={_number(output.rtol)}, atol={_number(output.atol)} on output {output.name!r} "
        f"accepts a wrong answer ({wrong}, on case {case!r})",
        f"Tighten it to about rtol={_number(TIGHT[0])}, atol={_number(TIGHT[1])} in the cell's "
        "course.check.",
    )
