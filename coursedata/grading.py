"""The student-side half of the grading protocol: seeded inputs and the recording of answers.

A problem set's hidden check cells run inside the sandboxed kernel, next to the student's code.
They do not judge anything there: they only call the student's function on the seeded inputs the
grader wrote for the run (from the declarations in the source notebook, before the notebook
starts) and save what it returns as plain numpy arrays. After the notebook has run, the grader's
own trusted process generates the same inputs again, computes the reference answer with
:mod:`solutions`, and scores the saved arrays. Nothing the student's code redefines
(``np.isclose``, ``AssertionError``, this module, the input files) can change that comparison: at
worst it changes the student's own saved answers.

This module holds no reference implementation, so the sandbox may expose it.

Protocol
--------
``record(case, func, *args, **kwargs)`` calls ``func`` and, when the environment variable
``GRADER_RESULTS_DIR`` names a folder, writes either ``<case>.npz`` (the result: one array
``out``, or ``out_0``, ``out_1``, ... for a tuple) or ``<case>.error.json`` (the exception's type
and message). Without that variable (a student's own run) it only calls the function.
"""

from __future__ import annotations

import json
import os
import re
import traceback
from pathlib import Path

import numpy as np

__all__ = ["inputs", "record", "RESULTS_ENV", "CASE_NAME", "CELL_TIMEOUT_S", "MEMORY_MB",
           "ONE_THREAD"]

RESULTS_ENV = "GRADER_RESULTS_DIR"
#: Seconds a cell may run when a notebook is graded (the grader's default, ``grade --timeout``),
#: and the student's check's default too, so that both stop the same cells.
CELL_TIMEOUT_S = 30.0
#: Address space of each process of a graded kernel, in MB (``grade --memory``); the student's
#: check gives its kernel the same limit where the system can set one (Linux).
MEMORY_MB = 2048
#: The numerical libraries' threads in a graded kernel, and in the check's: one each.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: The folder of the results folder holding the inputs the grader wrote (declared cases).
INPUTS_FOLDER = "inputs"
CASE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_MAX_MESSAGE = 2000


def inputs(problem_set: str, case: str) -> dict:
    """Return the seeded inputs of one recorded case, as the grader wrote them for this run.

    Parameters
    ----------
    problem_set : str
        Name of the problem set, e.g. ``"ps1_pca"`` (checked, so that a hidden line copied from
        another problem set is caught).
    case : str
        Name of the case, as declared in the source notebook's test cell (``course.check``).

    Returns
    -------
    dict
        Keyword arguments for the student's function (numpy arrays and plain numbers), read from
        ``$GRADER_RESULTS_DIR/inputs/<case>.npz``, which the grader writes from the declaration
        before the notebook runs (:mod:`autograder.checks.declaration`). Each call builds new
        arrays, so a function that modifies its input in place cannot affect the grader. The kit
        holds no generator: the hidden cases' inputs never reach students, and a changed seed
        needs no new kit.

    Raises
    ------
    ValueError
        For a malformed name, or when the grader wrote no inputs for ``case`` (outside a graded
        run, or a case the source notebook does not declare).
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", problem_set):
        raise ValueError(f"invalid problem set name {problem_set!r}")
    if not CASE_NAME.match(case):
        raise ValueError(f"invalid case name {case!r}")
    written = _written_inputs(case)
    if written is None:
        raise ValueError(f"no inputs were written for case {case!r} of {problem_set!r}: the "
                         f"grader writes every declared case's inputs into ${RESULTS_ENV}/"
                         f"{INPUTS_FOLDER}/ before the notebook runs, so this runs only when a "
                         "notebook is graded (declare the case in the test cell's course.check)")
    return written


def _written_inputs(case: str) -> dict | None:
    """The inputs of ``case`` that the grader wrote for this run, if it wrote them: each array
    as saved, each 0-d array as a plain number."""
    folder = os.environ.get(RESULTS_ENV)
    path = Path(folder, INPUTS_FOLDER, f"{case}.npz") if folder else None
    if path is None or not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as saved:
        return {k: (v.item() if v.ndim == 0 else v) for k, v in
                ((k, np.array(saved[k])) for k in saved.files)}


def _as_plain_array(value, where: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise TypeError(f"{where} is not numeric (got {type(value).__name__} "
                        f"with dtype {arr.dtype}); return numbers or numpy arrays")
    return arr


def _arrays(result) -> dict[str, np.ndarray]:
    """The arrays to save for what a function returned: ``out``, or ``out_0``, ``out_1``, ...
    for a tuple, and for a list that is not one array (``[best, scores]`` is a pair too)."""
    if isinstance(result, list):
        try:
            return {"out": _as_plain_array(result, "the return value")}
        except (TypeError, ValueError):  # not one array: its items are the values
            result = tuple(result)
    if isinstance(result, tuple):
        return {f"out_{i}": _as_plain_array(p, f"element {i} of the returned values")
                for i, p in enumerate(result)}
    return {"out": _as_plain_array(result, "the return value")}


def _write_error(out_dir: Path | None, case: str, exc: BaseException, returned: bool) -> None:
    if out_dir is None:
        return
    message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    (out_dir / f"{case}.error.json").write_text(json.dumps(
        {"type": type(exc).__name__, "message": message[:_MAX_MESSAGE], "returned": returned}))


def record(case: str, func, /, *args, **kwargs):
    """Call ``func`` on the inputs and save its result for the grader.

    The inputs are passed by position, keyword inputs too, in the order they are given (the
    order of the function's parameters in the problem set), as the visible tests call the
    functions: a parameter the student renamed never changes the answer.

    Parameters
    ----------
    case : str
        Name of the check (lower-case letters, digits and underscores).
    func : callable
        The student's function.
    *args, **kwargs
        Its inputs, usually ``**inputs(problem_set, case)``.

    Returns
    -------
    object or None
        What ``func`` returned, or ``None`` if it raised (the error is recorded, not re-raised, so
        later checks still run).
    """
    if not CASE_NAME.match(case):
        raise ValueError(f"invalid case name {case!r}")
    folder = os.environ.get(RESULTS_ENV)
    out_dir = Path(folder) if folder else None
    try:
        result = func(*args, *kwargs.values())
    except Exception as exc:  # noqa: BLE001 - any failure of student code is an answer
        _write_error(out_dir, case, exc, returned=False)
        return None
    try:
        arrays = _arrays(result)
    except Exception as exc:  # noqa: BLE001 - what it returned cannot be saved as numbers
        _write_error(out_dir, case, exc, returned=True)
        return result
    if out_dir is not None:
        np.savez(out_dir / f"{case}.npz", **arrays)  # type: ignore[arg-type]  # numpy's stub
    return result
