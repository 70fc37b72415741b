"""Scoring without a kernel: grader faults are told apart from students' zeros, and a visible
cell whose test failed in the kernel earns nothing."""

from __future__ import annotations

import nbformat
import numpy as np
import pytest

from autograder.checks import load_checks
from autograder.grading.problemset import ProblemSet
from autograder.grading.scoring import (
    GRADER_FAULT,
    VISIBLE_FAILED,
    failed_visible_cells,
    score_results,
)

PS = "ps3_mle"


@pytest.fixture
def ps():
    return ProblemSet(PS)


@pytest.fixture
def right_answer(tmp_path):
    """A results folder holding the right answer of the ``gaussian`` case only."""
    from autograder.checks.declared import case_inputs, declared_cases
    from solutions.mle import gaussian_mle

    x = case_inputs(declared_cases(ProblemSet(PS).source), "gaussian")["x"]
    mu, sigma = gaussian_mle(x)
    np.savez(tmp_path / "gaussian.npz", out_0=np.float64(mu), out_1=np.float64(sigma))
    return tmp_path


def _by_id(scores):
    return {s.grade_id: s for s in scores}


def test_a_broken_check_is_a_grader_error_not_a_students_zero(ps, right_answer, monkeypatch):
    checks = load_checks(PS).CHECKS

    def broken(answers):
        return {}["a mistyped case name"]

    monkeypatch.setitem(checks, "gaussian_mle_visible", broken)
    scores = _by_id(score_results(ps, right_answer, frozenset()))
    cell = scores["gaussian_mle_visible"]
    assert cell.points == 0.0
    assert cell.error and "KeyError" in cell.error and "a mistyped case name" in cell.error
    assert "Traceback" in cell.error and "broken" in cell.error  # where it failed, for us
    assert cell.message == GRADER_FAULT
    assert "KeyError" not in cell.message and "Traceback" not in cell.message
    assert "mistyped" not in cell.message
    # The other cells are scored as usual, and no student problem is a grader error.
    assert all(s.error is None for g, s in scores.items() if g != "gaussian_mle_visible")
    assert "to_dict" in dir(cell) and cell.to_dict()["error"] == cell.error


def test_a_missing_answer_is_the_students_zero_not_a_grader_error(ps, tmp_path):
    scores = score_results(ps, tmp_path, frozenset())
    auto = [s for s in scores if s.points is not None]
    assert auto and all(s.points == 0 and s.error is None for s in auto)
    assert all("not run" in s.message for s in auto)


def test_a_visible_cell_that_failed_in_the_kernel_scores_zero(ps, right_answer):
    passed = _by_id(score_results(ps, right_answer, frozenset()))["gaussian_mle_visible"]
    assert passed.points == 1.0
    failed = _by_id(score_results(ps, right_answer, {"gaussian_mle_visible"}))
    assert failed["gaussian_mle_visible"].points == 0.0
    assert failed["gaussian_mle_visible"].message == VISIBLE_FAILED


def test_failed_visible_cells_are_read_from_the_executed_notebook(ps, right_answer):
    nb = nbformat.v4.new_notebook()

    def cell(grade_id, outputs):
        c = nbformat.v4.new_code_cell("pass")
        c.metadata["nbgrader"] = {"grade": True, "grade_id": grade_id, "points": 1}
        c.outputs = outputs
        return c

    error = nbformat.v4.new_output("error", ename="AssertionError", evalue="no",
                                   traceback=["AssertionError: no"])
    text = nbformat.v4.new_output("stream", name="stdout", text="hello")
    nb.cells = [cell("gaussian_mle_visible", [text, error]), cell("gamma_mle_visible", [text]),
                cell("gaussian_mle_hidden", [error])]
    assert failed_visible_cells(nb) == {"gaussian_mle_visible"}
    scores = _by_id(score_results(ps, right_answer, nb))
    assert scores["gaussian_mle_visible"].points == 0.0
    assert scores["gaussian_mle_visible"].message == VISIBLE_FAILED


def test_executed_must_be_given(ps, right_answer):
    with pytest.raises(TypeError, match="executed"):
        score_results(ps, right_answer, None)
