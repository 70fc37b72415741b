"""One mistake costs once, and its feedback says where it is.

:func:`name_causes` adds to each cell that lost points a note naming the earlier graded functions
its function calls that lost points in their own questions (:func:`coursedata.causes.causes`, which
the student's check uses too), so the student looks there first. It never changes a score.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from coursedata.causes import causes, note
from coursedata.naming import question_of, test_kind

__all__ = ["name_causes"]


def _lost(score) -> bool:
    return score.points is not None and score.points < score.max_points


def name_causes(scores: Iterable, notebook) -> list:
    """``scores`` (:class:`autograder.grading.scoring.CellScore`), each cell that lost points with
    a note naming the earlier answer functions its function calls that lost points too."""
    scores = list(scores)
    lost = {question_of(s.grade_id) for s in scores if test_kind(s.grade_id) and _lost(s)}
    found = causes(notebook, lost)
    out = []
    for s in scores:
        named = found.get(question_of(s.grade_id), []) if test_kind(s.grade_id) else []
        if _lost(s) and named and s.error is None:
            s = replace(s, message=s.message + note(named))
        out.append(s)
    return out
