"""Comparisons of a student's answer with the reference.

Each is a function ``(got, ..., what, *, tolerances) -> str | None`` that returns a message
describing what is wrong, or ``None`` when the answer is accepted. Every comparison accepts all
correct answers and explains a wrong one in words a student can act on: the two values with
enough digits to tell them apart, the absolute and relative difference, and the tolerance that
was applied. Tolerances are set by the problem's conditioning (for example ``rtol=1e-6`` for a
closed form computed in double precision), never tuned to our own implementation's rounding.

The grader's trusted process and the student's own check (:mod:`coursedata.check`, for the
visible cells) compare with these same functions and the same declared tolerances
(:func:`compare_output`), so a visible cell's verdict is the same in both. This module holds no
reference implementation, so the kit may ship it.

What a message says of the student's values is bounded in the grader (:func:`bounded`): there
the student's code runs beside the hidden tests and may read their inputs, so every value it
returns is a channel out of the sandbox. "yours is 271828.18" prints six or more freely chosen
digits (about 20 bits), an index or a count of differing entries another ten, a shape any
integers the student likes (an array of shape ``(0, 31337)`` holds nothing). Within
:func:`bounded`, a message states the student's values only as a few classes:

- a value or a difference as its order of magnitude (the nearest power of ten, clamped to
  :data:`DECADES`: about 5 bits), never its digits; the expected value, the tolerance and the
  inputs' description, which are the grader's, are shown in full, but not the expected value of
  the entry furthest off (the student's answer picks it, so it would name the entry);
- how many entries differ as one, some, most or all (2 bits), never which one;
- a wrong shape as the expected shape permuted (a transpose: the shape is shown) or else its
  number of dimensions, up to 3 (at most 3 bits).

So a check's message in the grader carries at most a few bits per compared output, and says what an
honest student needs: which quantity is wrong, by about how much, and what was expected. The
student's own check (:mod:`coursedata.check`) shows the full values of the visible cells.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

__all__ = [
    "DECADES",
    "KINDS",
    "Output",
    "bounded",
    "check_shape",
    "compare",
    "compare_output",
    "difference",
    "compare_extended",
    "compare_relative",
    "columns_up_to_sign",
    "rows_up_to_sign",
    "orthogonal_together",
    "TOGETHER",
    "together",
    "rows_up_to_constant",
    "probability_rows",
    "log_probability_rows",
    "integrates_to_one",
    "your_rises",
    "your_shape",
    "your_value",
]


#: The powers of ten a bounded message names (:func:`bounded`): a magnitude outside is said to
#: be below the first or above the last.
DECADES = (-12, 3)
_BOUNDED: ContextVar[bool] = ContextVar("bounded", default=False)


@contextmanager
def bounded() -> Iterator[None]:
    """Within, messages state the student's values by a few classes only (the module's
    docstring): the grader's checks run in it."""
    token = _BOUNDED.set(True)
    try:
        yield
    finally:
        _BOUNDED.reset(token)


def _order(x: float) -> str:
    """``x`` as its nearest power of ten (``about 1e-05``, ``about -1e+02``), within
    :data:`DECADES`."""
    x = float(x)
    if not math.isfinite(x) or x == 0:
        return f"{x:g}"
    low, high = DECADES
    exponent = round(math.log10(abs(x)))
    sign = "-" if x < 0 else ""
    if exponent < low:
        return f"between -1e{low:+03d} and 0" if sign else f"below 1e{low:+03d}"
    if exponent > high:
        return f"below -1e{high:+03d}" if sign else f"above 1e{high:+03d}"
    return f"about {sign}1e{exponent:+03d}"


def your_value(x: float, spec: str) -> str:
    """A value of the student's: formatted with ``spec``, or its order (:func:`bounded`)."""
    return _order(x) if _BOUNDED.get() else format(float(x), spec)


def _at(idx: tuple, ndim: int) -> str:
    """`` at index (i, j)`` for an array, nothing for a 0-d value (nor within :func:`bounded`:
    the index is the student's to choose)."""
    return f" at index {tuple(int(i) for i in idx)}" if ndim and not _BOUNDED.get() else ""


def your_rises(first: int, count: int) -> str:
    """`` at step 5 (2 rises in all)``: where a sequence of the student's first rises, and how
    often; within :func:`bounded` only `` once`` or `` more than once`` (the step and the
    count are the student's to choose)."""
    if _BOUNDED.get():
        return " once" if count == 1 else " more than once"
    return f" at step {first} ({count} rise{'s' if count != 1 else ''} in all)"


def _count(bad: int, size: int, what: str = "values") -> str:
    """``(3 of 240 values differ)``; within :func:`bounded`, one, some, most or all."""
    if not _BOUNDED.get():
        return f"({bad} of {size} {what} differ)"
    if bad == size:
        return f"(all {size} {what} differ)"
    if bad == 1:
        return f"(one of {size} {what} differs)"
    return f"({'most' if 2 * bad > size else 'some'} of {size} {what} differ)"


def your_shape(got: tuple, shape: tuple) -> str:
    """The student's shape in words: in full, or within :func:`bounded` only when it is
    ``shape`` permuted, else its number of dimensions."""
    if not _BOUNDED.get() or sorted(got) == sorted(shape):
        return f"shape {got}"
    return f"another shape ({len(got)}-D)" if len(got) <= 3 else "another shape (more than 3-D)"


@dataclass(frozen=True)
class Output:
    """How one returned value is compared: its name, comparison kind (a key of :data:`KINDS`)
    and tolerances, and its share of its case's weight (relative to the case's other outputs)."""

    name: str
    compare: str = "close"
    rtol: float = 1e-6
    atol: float = 1e-9
    scalar: bool = False
    weight: float = 1.0


def _digits(a: float, b: float) -> int:
    """The fewest significant digits (at least 6, at most 17) that print ``a`` and ``b`` apart."""
    for d in range(6, 18):
        if f"{a:.{d}g}" != f"{b:.{d}g}":
            return d
    return 17


def difference(
    yours: float, expected: float, *, rtol: float, atol: float, entry: bool = False
) -> str:
    """``yours is 0.25492631, expected 0.25492617: off by 1.4e-07 (relative 5.5e-07), more than
    the tolerance 1e-12 + 1e-08 x |expected| = 2.5e-09``: two numbers that differ, in words.

    Both are printed with as many digits as it takes to tell them apart. ``entry``: the two are
    an entry of an array the student's answer picked (the one furthest off), so within
    :func:`bounded` the expected value is not shown (it would name the entry).
    """
    yours, expected = float(yours), float(expected)
    if not (np.isfinite(yours) and np.isfinite(expected)):
        return f"yours is {your_value(yours, 'g')}, expected {expected:.10g}"
    if _BOUNDED.get():
        return _bounded_difference(yours, expected, rtol=rtol, atol=atol, entry=entry)
    d = _digits(yours, expected)
    off = abs(yours - expected)
    relative = f" (relative {off / abs(expected):.2g})" if expected else ""
    allowed = atol + rtol * abs(expected)
    return (f"yours is {yours:.{d}g}, expected {expected:.{d}g}: off by {off:.2g}{relative}, "
            f"more than the tolerance {atol:g} + {rtol:g} x |expected| = {allowed:.2g}")


def _bounded_difference(
    yours: float, expected: float, *, rtol: float, atol: float, entry: bool
) -> str:
    """:func:`difference` within :func:`bounded`: the difference's order of magnitude (relative
    when ``expected`` is not zero) and the tolerance; the expected value unless ``entry``."""
    off = abs(yours - expected)
    size = f"relative {_order(off / abs(expected))}" if expected else _order(off)
    tolerance = f"{atol:g} + {rtol:g} x |expected|"
    if entry:
        return f"yours is off by {size}, more than the tolerance {tolerance}"
    return (f"expected {expected:.6g}, yours is off by {size}, more than the tolerance "
            f"{tolerance} = {atol + rtol * abs(expected):.2g}")


def check_shape(got: np.ndarray, shape: tuple, what: str) -> str | None:
    """Return a message if ``got`` does not have ``shape``, else ``None``."""
    if got.shape != tuple(shape):
        return f"{what} should have shape {tuple(shape)}; yours has {your_shape(got.shape, shape)}"
    return None


def compare(got, expected, what: str, *, rtol: float = 1e-6, atol: float = 1e-9) -> str | None:
    """Return a message describing how ``got`` differs from ``expected``, or ``None`` if close.

    Accepts ``got`` when it has ``expected``'s shape, is finite, and
    ``|got - expected| <= atol + rtol * |expected|`` elementwise. NaN in ``got`` is always a
    mismatch. The message names the entry that is furthest off.
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
        return (
            f"{what} is wrong{_at(idx, got.ndim)}: "
            f"{difference(got[idx], expected[idx], rtol=rtol, atol=atol, entry=got.ndim > 0)} "
            f"{_count(int(bad.sum()), bad.size)}"
        )
    return None


def compare_extended(
    got, expected, what: str, *, rtol: float = 1e-6, atol: float = 1e-9
) -> str | None:
    """Like :func:`compare`, but ``-inf`` (the log of probability 0) is a value that must match.

    For log-probabilities and log-likelihoods, which are legitimately ``-inf``.

    Parameters
    ----------
    got, expected : array_like
        The student's answer and the reference; ``expected`` holds finite values and ``-inf``.
    what : str
        The quantity, for the message.
    rtol, atol : float
        Tolerances for the finite entries, as in :func:`compare`.

    Returns
    -------
    str or None
        ``None`` when ``got`` has ``expected``'s shape and, entry by entry, is ``-inf`` exactly
        where ``expected`` is ``-inf`` and within ``atol + rtol * |expected|`` of it where
        ``expected`` is finite. So NaN and ``+inf`` in ``got`` are always wrong, and so is
        ``-inf`` where a finite value is expected (and anything where ``expected`` is NaN or
        ``+inf``, which a log-probability never is). Otherwise a message about one wrong entry
        (its index in the full array: the first NaN or infinity that should not be there, else
        the finite value furthest off) and how many entries are wrong.
    """
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem:
        return problem
    finite = np.isfinite(expected)
    with np.errstate(invalid="ignore"):
        error = np.where(finite, np.abs(got - expected), np.nan)
        close = error <= atol + rtol * np.abs(expected)
    bad = ~np.where(finite, close, np.isneginf(expected) & np.isneginf(got))
    if not np.any(bad):
        return None
    nonfinite = bad & ~(finite & np.isfinite(got))  # a NaN or infinity that should not be there
    if np.any(nonfinite):
        flat = int(np.flatnonzero(nonfinite)[0])
    else:
        flat = int(np.argmax(np.where(bad, error, -1.0)))
    idx = np.unravel_index(flat, got.shape)
    where, yours, exp = _at(idx, got.ndim), got[idx], expected[idx]
    count = _count(int(bad.sum()), bad.size)
    if finite[idx] and np.isneginf(yours):
        about = "" if _BOUNDED.get() and got.ndim else f", where it should be about {exp:.6g}"
        return f"{what} is -inf (probability 0){where}{about} {count}"
    if np.isneginf(exp) and not np.isnan(yours):
        return f"{what} should be -inf (probability 0){where}; yours is {your_value(yours, '.6g')} {count}"
    off = difference(yours, exp, rtol=rtol, atol=atol, entry=got.ndim > 0)
    return f"{what} is wrong{where}: {off} {count}"


def compare_relative(got, expected, what: str, *, rtol: float, atol: float = 0.0) -> str | None:
    """Compare one number to a non-zero ``expected``, reporting the relative error.

    For iterative roots, whose accuracy is relative. Accepts ``got`` when it is one finite
    number (shape ``()``) with ``|got - expected| / |expected| <= rtol``; ``atol`` is not used
    (it is accepted so that every kind of :data:`KINDS` is called alike).
    """
    expected = float(expected)
    got = np.asarray(got, dtype=float)
    problem = check_shape(got, (), what)
    if problem:
        return problem
    if not np.isfinite(got):
        return f"{what} is {float(got)}, not a finite number"
    rel = abs(float(got) - expected) / abs(expected)
    if rel <= rtol:
        return None
    if _BOUNDED.get():
        return (f"{what} is wrong: expected {expected:.6g}, yours is off by relative "
                f"{_order(rel)}, more than the tolerance {rtol:g}")
    d = _digits(float(got), expected)
    return (
        f"{what} is wrong: yours is {float(got):.{d}g}, expected {expected:.{d}g} "
        f"(relative error {rel:.2g}, more than the tolerance {rtol:g})"
    )


def _align_signs(got: np.ndarray, expected: np.ndarray, axis: int) -> np.ndarray:
    """Flip the sign of each row (axis=1) or column (axis=0) of ``got`` to best match ``expected``."""
    dots = np.sum(got * expected, axis=axis, keepdims=True)
    return got * np.where(dots < 0, -1.0, 1.0)


def _up_to_sign(got, expected, what: str, axis: int, **tol) -> str | None:
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem:
        return problem
    part = "column" if axis == 0 else "row"
    return compare(
        _align_signs(got, expected, axis=axis),
        expected,
        f"{what} (compared up to the sign of each {part})",
        **tol,
    )


def columns_up_to_sign(got, expected, what: str, **tol) -> str | None:
    """Like :func:`compare`, but each column may be multiplied by -1 (eigen/singular vectors)."""
    return _up_to_sign(got, expected, what, 0, **tol)


def rows_up_to_sign(got, expected, what: str, **tol) -> str | None:
    """Like :func:`compare`, but each row may be multiplied by -1."""
    return _up_to_sign(got, expected, what, 1, **tol)


def orthogonal_together(got: Sequence, expected: Sequence) -> list[np.ndarray]:
    """``got``'s matrices times the one orthogonal matrix ``Q`` that brings them, stacked, closest
    to ``expected``'s (the orthogonal Procrustes problem): ``[G Q for G in got]``.

    For factors defined only up to one orthogonal ``Q`` applied to all of them together: ``U Q``
    and ``Z Q`` give the same ``U Zᵀ`` and the same ridge penalty (a sign flipped in both, the
    factors swapped in both, a rotation of the factor space). ``Q = W Vᵀ`` where ``W S Vᵀ`` is the
    singular value decomposition of ``Σ Gᵀ E``. Matrices that cannot be aligned (another shape
    than expected, not 2-D, NaN or infinite values, products too large) are returned as they are,
    for the comparison that follows to explain.
    """
    try:
        got = [np.asarray(g, dtype=float) for g in got]
        expected = [np.asarray(e, dtype=float) for e in expected]
    except (TypeError, ValueError):
        return list(got)
    if not all(g.shape == e.shape and g.ndim == 2 and g.shape[1] == got[0].shape[1]
               for g, e in zip(got, expected)) or not all(np.all(np.isfinite(g)) for g in got):
        return got
    with np.errstate(over="ignore", invalid="ignore"):
        product = sum(g.T @ e for g, e in zip(got, expected))
    if not np.all(np.isfinite(product)):
        return got
    try:
        w, _, vt = np.linalg.svd(product)
    except np.linalg.LinAlgError:  # pragma: no cover - the SVD of a finite matrix converges
        return got
    return [g @ (w @ vt) for g in got]


#: Comparisons of several outputs of one case together (the outputs that declare the kind): each
#: aligns the group's arrays to the expected ones, then each is compared as ``"close"``.
TOGETHER: dict[str, Callable[[Sequence, Sequence], list[np.ndarray]]] = {
    "orthogonal_together": orthogonal_together,
}


def together(kind: str, got: Sequence, expected: Sequence, names: Sequence[str]
             ) -> tuple[list[np.ndarray], str]:
    """One group's arrays aligned by the comparison ``kind`` of :data:`TOGETHER`, and the words
    each message adds (`` (compared up to one orthogonal Q applied to U and Z together)``)."""
    joined = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
    return TOGETHER[kind](got, expected), (
        f" (compared up to one orthogonal Q applied to {joined} together)")


def rows_up_to_constant(
    got, expected, what: str, *, rtol: float, atol: float, reference: str = "the correct answer"
) -> str | None:
    """Compare row by row up to one additive constant per row (along the last axis).

    For log-scores that are only defined up to a constant: intercepts of a softmax (``ln N_c``
    and ``ln(N_c / N)`` are both right), or log-posteriors, which are the joint
    log-likelihoods minus one log-evidence per row. A 1-D array is a single row.

    Parameters
    ----------
    got, expected : array_like
        The student's answer and the reference (at least 1-D; finite values and ``-inf``).
    what : str
        The quantity, for the message.
    rtol, atol : float
        Each entry of ``got - expected`` may differ from the row's median by
        ``atol + rtol * s``, where ``s`` is the largest finite ``|expected|`` in the row:
        tolerances are relative to the *unshifted* values, since adding a constant loses that
        much precision, and centring can cancel most of them.
    reference : str
        What ``expected`` is, for the message (e.g. ``"the joint log-likelihood"``).

    Returns
    -------
    str or None
        ``None`` when ``got`` has ``expected``'s shape, contains no NaN or ``+inf``, is ``-inf``
        exactly where ``expected`` is ``-inf`` (probability 0 stays 0), and each row's finite
        entries agree with ``expected`` plus one constant within the tolerance. Otherwise a
        message saying which of these fails (and, for the last, in which row and by how much).
    """
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem:
        return problem
    if expected.ndim == 0:
        raise ValueError("rows_up_to_constant compares arrays of at least one dimension")
    if np.any(np.isnan(got) | (got == np.inf)):
        return f"{what} contains NaN or +inf values"
    mismatch = np.isneginf(got) != np.isneginf(expected)
    if np.any(mismatch):
        idx = tuple(int(i) for i in np.argwhere(mismatch)[0])
        return (
            f"{what} should be -inf exactly where {reference} is -inf (probability 0); "
            f"index {idx} differs"
        )
    finite = np.isfinite(expected)
    diff = np.where(finite, got - np.where(finite, expected, 0.0), np.nan)
    with warnings.catch_warnings():  # a row of -inf only has no finite entry: nothing to compare
        warnings.simplefilter("ignore", RuntimeWarning)
        shift = np.nanmedian(diff, axis=-1, keepdims=True)
        scale = np.nanmax(np.where(finite, np.abs(expected), np.nan), axis=-1, keepdims=True)
    # NaN or +inf in ``expected`` (never a log-score) leaves NaN here, so is never matched.
    off = np.abs(diff - shift)
    bad = ~np.isneginf(expected) & ~(off <= atol + rtol * scale)
    if not np.any(bad):
        return None
    n = tuple(int(i) for i in np.argwhere(bad)[0][:-1])  # the first row that is off; () if 1-D
    if _BOUNDED.get():
        rows = _count(int(np.any(bad, axis=-1).sum()), int(np.prod(bad.shape[:-1])), "rows")
        return (f"{what} is not {reference} plus one constant per row {rows}: yours minus "
                f"{reference} strays from its median by {_order(float(np.nanmax(off[n])))}")
    where = f" per row: in row {n[0] if len(n) == 1 else n}," if n else ":"
    return (
        f"{what} is not {reference} plus one constant{where} yours minus {reference} is "
        f"{np.round(diff[n], 6).tolist()}, which strays from its median by up to "
        f"{float(np.nanmax(off[n])):.2g}"
    )


def probability_rows(P, what: str, *, atol: float = 1e-9) -> str | None:
    """A message unless every row of ``P`` is a probability vector.

    Accepts ``P`` when it is finite, no entry is below ``-atol``, and each row (along the last
    axis) sums to one within ``atol`` times the row's length.
    """
    P = np.asarray(P, dtype=float)
    if not np.all(np.isfinite(P)):
        return f"{what} contains NaN or infinite values"
    if np.any(P < -atol):
        return f"{what} has negative entries (down to {your_value(P.min(), '.3g')})"
    sums = P.sum(axis=-1)
    worst = int(np.argmax(np.abs(sums - 1.0)))
    if abs(sums.flat[worst] - 1.0) > atol * max(1, P.shape[-1]):
        if _BOUNDED.get():
            return (f"the rows of {what} must sum to one; a row's sum is off by "
                    f"{_order(sums.flat[worst] - 1.0)}")
        return f"the rows of {what} must sum to one; row {worst} sums to {sums.flat[worst]:.6g}"
    return None


def _row_log_totals(log_p: np.ndarray) -> np.ndarray:
    """The log of each row's total probability, ``log(sum(exp(row)))``, computed stably; a row
    of ``-inf`` only gives ``-inf``. Written here with numpy, not imported: what the kit's
    modules import is an attribute of theirs, which a student's code may reach in a kernel whose
    rules forbid that library (SciPy's ``logsumexp`` was ``coursedata.compare.logsumexp``)."""
    top = np.max(log_p, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):  # a row of -inf only: its probabilities sum to 0
        return np.log(np.sum(np.exp(log_p - top), axis=1)) + top[:, 0]


def log_probability_rows(log_p, what: str, *, atol: float = 1e-8) -> str | None:
    """A message unless every row of ``log_p`` is a vector of log-probabilities.

    Accepts a 2-D ``log_p`` (rows x classes) with no NaN or ``+inf`` (``-inf``, probability 0,
    is allowed) whose rows are normalised: the log-sum-exp of each row is within ``atol`` of 0,
    so ``exp(log_p)`` sums to one along each row (this also bounds every entry by ``atol``).
    """
    log_p = np.asarray(log_p, dtype=float)
    if log_p.ndim != 2:
        return f"{what} should be a 2-D array (rows x classes); yours has {your_shape(log_p.shape, ())}"
    if np.any(np.isnan(log_p) | (log_p == np.inf)):
        return f"{what} contains NaN or +inf values"
    if np.any(log_p > atol):
        return f"{what} has positive log-probabilities (up to {your_value(log_p.max(), '.3g')})"
    totals = _row_log_totals(log_p)
    bad = ~(np.abs(totals) <= atol)
    if np.any(bad):
        n = int(np.argmax(np.abs(totals)))  # the row furthest from summing to one
        if _BOUNDED.get():
            return (f"the rows of {what} are not normalised: the log of a row's total "
                    f"probability is {_order(totals[n])}, not 0 {_count(int(bad.sum()), bad.size, 'rows')}")
        return (
            f"the rows of {what} are not normalised: the probabilities of row {n} sum to "
            f"{np.exp(totals[n]):.6g}, not 1 ({int(bad.sum())} of {bad.size} rows)"
        )
    return None


def integrates_to_one(values, grid, what: str, *, atol: float = 1e-4) -> str | None:
    """Return a message unless the trapezoidal integral of ``values`` over ``grid`` is one.

    Accepts ``values`` of ``grid``'s shape that are finite, non-negative, and whose trapezoidal
    integral is within ``atol`` of one. ``grid`` must cover the density's support (up to a
    negligible tail), finely enough for the trapezoidal rule to be accurate to well below
    ``atol``.
    """
    values = np.asarray(values, dtype=float)
    problem = check_shape(values, np.shape(grid), what)
    if problem:
        return problem
    if not np.all(np.isfinite(values)):
        return f"{what} contains NaN or infinite values"
    if np.any(values < 0):
        return (f"{what} is negative somewhere (down to {your_value(values.min(), '.3g')}); "
                f"a density is not")
    area = float(np.trapezoid(values, grid))
    if abs(area - 1.0) > atol and _BOUNDED.get():
        return (f"{what} does not integrate to 1 over [{grid[0]:.3g}, {grid[-1]:.3g}]: off by "
                f"{_order(area - 1.0)}; a density estimate must integrate to one")
    if abs(area - 1.0) > atol:
        return (
            f"{what} integrates to {area:.6f} over [{grid[0]:.3g}, {grid[-1]:.3g}], not 1: "
            f"a density estimate must integrate to one"
        )
    return None


def _permutation(got, expected, what: str, **tol) -> str | None:
    """Like :func:`compare`, but the rows (entries of a 1-D array) may come in any order."""
    got = np.asarray(got, dtype=float)
    expected = np.asarray(expected, dtype=float)
    problem = check_shape(got, expected.shape, what)
    if problem or got.ndim == 0:
        return problem or compare(got, expected, what, **tol)

    def rows(a):
        flat = a.reshape(a.shape[0], -1)
        return a[np.lexsort(flat.T[::-1])]

    return compare(rows(got), rows(expected), f"{what} (compared in any order)", **tol)


def _integer(got, expected, what: str, **_) -> str | None:
    got = np.asarray(got, dtype=float)
    problem = check_shape(got, np.shape(expected), what)
    if problem:
        return problem
    if not np.all(np.isfinite(got)) or np.any(got != np.round(got)):
        return f"{what} should be whole numbers; yours are not"
    return compare(got, expected, what, rtol=0.0, atol=0.0)


def _normalised(got, expected, what: str, **tol) -> str | None:
    """Normalised rows of log-probabilities first (the clearer message), then the values."""
    return (check_shape(np.asarray(got), np.shape(expected), what)
            or log_probability_rows(got, what) or compare(got, expected, what, **tol))


#: The comparison kinds a declaration may name, each called as
#: ``(got, expected, what, *, rtol, atol)`` (a kind ignores a tolerance it has no use for).
KINDS: dict[str, Callable[..., str | None]] = {
    "close": compare,
    "log": compare_extended,
    "relative": compare_relative,
    "integer": _integer,
    "permutation": _permutation,
    "log_probability_rows": _normalised,
    "rows_up_to_constant": rows_up_to_constant,
    "rows_up_to_sign": rows_up_to_sign,
    "columns_up_to_sign": columns_up_to_sign,
    # each output of the group after :func:`together` has aligned them (see :data:`TOGETHER`)
    "orthogonal_together": compare,
}


def compare_output(kind: str, got, expected, what: str, *, rtol: float, atol: float,
                   scalar: bool = False) -> str | None:
    """Compare one declared output: the comparison ``kind`` of :data:`KINDS` with its tolerances.

    Parameters
    ----------
    kind : str
        A key of :data:`KINDS`.
    got, expected : array_like
        The student's answer and the reference's.
    what : str
        The quantity and its inputs, for the message.
    rtol, atol : float
        The declared tolerances.
    scalar : bool
        Whether the answer must be one number (shape ``()``).

    Returns
    -------
    str or None
        A message describing what is wrong, or ``None`` when the answer is accepted.
    """
    if scalar:
        problem = check_shape(np.asarray(got), (), what)
        if problem:
            return problem
    return KINDS[kind](got, expected, what, rtol=rtol, atol=atol)
