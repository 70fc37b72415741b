"""The student-side half of the grading protocol: seeded inputs and the recording of answers.

A problem set's hidden check cells run inside the sandboxed kernel, next to the student's code.
They do not judge anything there: they only call the student's function on inputs generated
from a fixed seed, and save what it returns as plain numpy arrays. After the notebook has run,
the grader's own trusted process regenerates the same inputs with :func:`inputs`, computes the
reference answer with :mod:`solutions`, and scores the saved arrays. Nothing the student's code
redefines (``np.isclose``, ``AssertionError``, this module) can change that comparison: at worst
it changes the student's own saved answers.

This module holds no reference implementation, so the sandbox may expose it.

Protocol
--------
``record(case, func, *args, **kwargs)`` calls ``func`` and, when the environment variable
``GRADER_RESULTS_DIR`` names a folder, writes either ``<case>.npz`` (the result: one array
``out``, or ``out_0``, ``out_1``, ... for a tuple) or ``<case>.error.json`` (the exception's type
and message). Without that variable (a student's own run) it only calls the function.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import traceback
from pathlib import Path

import numpy as np

__all__ = ["inputs", "record", "RESULTS_ENV", "CASE_NAME"]

RESULTS_ENV = "GRADER_RESULTS_DIR"
CASE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_MAX_MESSAGE = 2000


def inputs(problem_set: str, case: str) -> dict:
    """Return fresh, seeded inputs for one check of a problem set.

    Parameters
    ----------
    problem_set : str
        Name of the problem set, e.g. ``"ps1_pca"``; its generators live in
        ``coursedata/inputs/<problem_set>.py``.
    case : str
        Name of the check, a key of that module's ``CASES``.

    Returns
    -------
    dict
        Keyword arguments for the student's function (numpy arrays and plain numbers). Each call
        builds new arrays, so a function that modifies its input in place cannot affect the grader.
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", problem_set):
        raise ValueError(f"invalid problem set name {problem_set!r}")
    module = importlib.import_module(f"coursedata.inputs.{problem_set}")
    try:
        make = module.CASES[case]
    except KeyError:
        raise ValueError(f"problem set {problem_set!r} has no input case {case!r}; "
                         f"known: {sorted(module.CASES)}") from None
    return make()


def _as_plain_array(value, where: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise TypeError(f"{where} is not numeric (got {type(value).__name__} "
                        f"with dtype {arr.dtype}); return numbers or numpy arrays")
    return arr


def record(case: str, func, /, *args, **kwargs):
    """Call ``func(*args, **kwargs)`` and save its result for the grader.

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
        result = func(*args, **kwargs)
        parts = result if isinstance(result, tuple) else None
        if parts is None:
            arrays = {"out": _as_plain_array(result, "the return value")}
        else:
            arrays = {f"out_{i}": _as_plain_array(p, f"element {i} of the returned tuple")
                      for i, p in enumerate(parts)}
    except Exception as exc:  # noqa: BLE001 - any failure of student code is an answer
        if out_dir is not None:
            message = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            (out_dir / f"{case}.error.json").write_text(json.dumps(
                {"type": type(exc).__name__, "message": message[:_MAX_MESSAGE]}))
        return None
    if out_dir is not None:
        np.savez(out_dir / f"{case}.npz", **arrays)
    return result
