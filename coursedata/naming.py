"""How a course names its graded cells: the one place that reads a ``grade_id``.

An autograded question has two test cells: ``<question>_visible``, the test the student runs
(all or nothing, as its assertions are), and ``<question>_hidden``, the grader's (partial credit
over independent parts). Every stage that needs a cell's question or kind asks here: the declared
checks, the mutants and the self-check, the scoring, the feedback and the report.

>>> test_kind("pca_fit_hidden"), question_of("pca_fit_hidden"), test_id("pca_fit", VISIBLE)
('hidden', 'pca_fit', 'pca_fit_visible')
>>> test_kind("bias_derivation") is None, question_of("bias_derivation")
(True, 'bias_derivation')
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["VISIBLE", "HIDDEN", "TestKind", "test_kind", "question_of", "test_id"]

#: The two kinds of test cell, as their ``grade_id`` ends.
VISIBLE: Literal["visible"] = "visible"
HIDDEN: Literal["hidden"] = "hidden"
TestKind = Literal["visible", "hidden"]

_TEST_ID = re.compile(r"^(?P<question>.+)_(?P<kind>visible|hidden)$")


def test_kind(grade_id: str) -> TestKind | None:
    """``"visible"`` or ``"hidden"`` for a test cell's ``grade_id``, else None."""
    m = _TEST_ID.match(grade_id)
    return None if m is None else VISIBLE if m["kind"] == VISIBLE else HIDDEN


def question_of(grade_id: str) -> str:
    """The question a cell belongs to: its ``grade_id`` without the test suffix."""
    m = _TEST_ID.match(grade_id)
    return grade_id if m is None else m["question"]


def test_id(question: str, kind: TestKind) -> str:
    """The ``grade_id`` of ``question``'s test cell of ``kind``."""
    return f"{question}_{kind}"
