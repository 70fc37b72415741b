"""A short signature of what each graded cell's hidden part recorded, for the class report.

The hidden cells record what the student's function returned on seeded inputs
(:mod:`coursedata.grading`), so two students who made the same mistake recorded the same values.
:func:`signatures` sums them up per graded cell as a short hash of the values rounded to four
significant digits (or of the error raised), which the report (:mod:`autograder.pages.report`) uses to
group wrong answers by mistake. In a problem set with per-student variants, the cases whose
inputs are each student's own (:func:`autograder.checks.personal.varied_cases`) are left out, so
one mistake made on other numbers is one group (a cell whose cases all vary is grouped by the
check's verdict alone). It decides no grade: a failure here gives no signature.
"""

from __future__ import annotations

import hashlib

import nbformat
import numpy as np

from autograder.checks.personal import varied_cases
from autograder.checks.record_calls import cases_by_cell
from autograder.grading.problemset import GradedSet, ProblemSet
from coursedata.naming import VISIBLE, question_of

__all__ = ["cell_cases", "signatures"]


def cell_cases(ps: GradedSet) -> dict[str, list[str]]:
    """For each autograded cell, the cases its check may read: a visible cell's own cases (its
    check holds what its hidden part recorded), and for any other cell every case of its question
    (a hidden check also reads the visible cell's cases)."""
    own = {gid: list(cases) for gid, cases in cases_by_cell(ps.source).items()}
    out = {}
    for grade_cell in ps.grade_cells:
        if not grade_cell.autograded:
            continue
        gid = grade_cell.grade_id
        everything = sorted(
            {c for g, cases in own.items() if question_of(g) == grade_cell.question for c in cases}
        )
        out[gid] = (own.get(gid) if grade_cell.kind == VISIBLE else None) or everything
    return out


def _rounded(value: np.ndarray) -> bytes:
    a = np.asarray(value, dtype=float).ravel()
    with np.errstate(all="ignore"):
        mag = np.floor(np.log10(np.abs(a)))
        mag = np.where(np.isfinite(mag), mag, 0.0)
        r = np.round(a / 10.0**mag, 3) * 10.0**mag
    r = np.where(r == 0, 0.0, r)  # -0.0 is 0.0
    return f"{np.shape(value)}".encode() + np.ascontiguousarray(r).tobytes()


def signatures(ps: ProblemSet, results) -> dict[str, str]:
    """``{grade_id: signature}`` for every autograded cell, from a results folder.

    A signature is 10 hex digits over, per case, the rounded recorded arrays, the exception's
    type if the function raised, or ``missing``. Untrusted files are read with the checks' own
    reader (:class:`autograder.checks.Answers`: no pickles, bounded sizes).

    Parameters
    ----------
    ps : ProblemSet
    results : path-like or Answers
        The results folder, or its answers as the checks read them (each file is then read once
        for both).
    """
    from autograder.checks.answers import Answers, AnswerUnavailable
    from autograder.checks.declared import declared_cases

    answers = (
        results
        if isinstance(results, Answers)
        else Answers(ps.name, results, declared_cases(ps.source))
    )
    if not answers.results_dir.is_dir():
        return {}
    by_case: dict[str, bytes] = {}

    def case_bytes(case: str) -> bytes:
        if case not in by_case:
            try:
                by_case[case] = b"|".join(_rounded(v) for v in answers.get(case))
            except AnswerUnavailable as exc:
                by_case[case] = f"unavailable: {exc}".encode()[:300]
        return by_case[case]

    varied = varied_cases(nbformat.read(ps.path, as_version=4)) if ps.parameters else set()
    out = {}
    for gid, cases in cell_cases(ps).items():
        digest = hashlib.blake2b(digest_size=5)
        for case in (c for c in cases if c not in varied):
            digest.update(case.encode() + b"=" + case_bytes(case) + b";")
        out[gid] = digest.hexdigest()
    return out
