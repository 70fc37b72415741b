"""Feedback says why an answer is missing, once: the failed cell, then the checks it stopped."""

from __future__ import annotations

import copy

import nbformat
import pytest

from autograder.grading.diagnose import NOT_RUN, explain
from autograder.grading.executors import local_executor
from autograder.grading.pipeline import grade as grade_submission
from autograder.grading.problemset import ProblemSet
from autograder.grading.scoring import CellScore

PS = ProblemSet("ps1_pca")


def _code(source: str, gid: str | None = None, *, error: tuple[str, str] | None = None,
          ran: bool = True, solution: bool = False) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if gid:
        cell.metadata["nbgrader"] = {"grade_id": gid, "solution": solution, "grade": not solution}
    cell.execution_count = 1 if ran else None
    if error:
        cell.outputs = [nbformat.v4.new_output("error", ename=error[0], evalue=error[1],
                                               traceback=[])]
    return cell


def _not_run(gid: str) -> CellScore:
    return CellScore(gid, 0.0, 1.0, f"{NOT_RUN} (was it defined, and did the notebook run to "
                                    f"this point?)")


def test_a_refused_import_is_named_once_and_the_checks_point_to_it():
    nb = nbformat.v4.new_notebook(cells=[
        _code("import solutions", "f", solution=True, error=(
            "ImportError", "this package is not available in the sandbox")),
        _code("record(...)", "f_visible"), _code("record(...)", "f_hidden")])
    notes, scores = explain(nb, "ok", [_not_run("f_visible"), _not_run("f_hidden")], ["f"])
    assert notes == ["Your cell 'f' imported a module that graded notebooks may not use "
                     "(this package is not available in the sandbox)"]
    assert all(s.message.startswith("not run: your cell 'f' imported") for s in scores)


def test_an_import_the_rules_refuse_is_named_without_repeating_the_rule():
    """The rule itself is stated once, in the rules' note (autograder.grading.rulebook)."""
    nb = nbformat.v4.new_notebook(cells=[
        _code("import sklearn", "f", solution=True, error=(
            "ForbiddenModule", "sklearn may not be used in the answers of this problem set: "
                               "sklearn is not allowed. The rule: “numpy only”")),
        _code("record(...)", "f_visible")])
    notes, _ = explain(nb, "ok", [_not_run("f_visible")], ["f"])
    assert notes == ["Your cell 'f' stopped: it imports sklearn, which the problem set's rules "
                     "forbid"]


def test_a_crash_points_the_later_checks_at_the_executor_note():
    nb = nbformat.v4.new_notebook(cells=[
        _code("def f(): ...", "f", solution=True), _code("x", "f_visible"),
        _code("import os; os._exit(1)"), _code("y", "g_visible", ran=False)])
    ok = CellScore("f_visible", 1.0, 1.0, "correct")
    notes, scores = explain(nb, "crashed", [ok, _not_run("g_visible")], ["f"])
    assert notes == []  # the executor's message already says where the kernel died
    assert scores[0] == ok
    assert scores[1].message.startswith("not run: your notebook stopped (its kernel died)")


def test_a_timed_out_test_cell_is_named_with_its_limit():
    nb = nbformat.v4.new_notebook(cells=[
        _code("def f(): ...", "f", solution=True),
        _code("f()", "f_visible", error=("KeyboardInterrupt", ""))])
    nb.cells[-1].outputs.append(nbformat.v4.new_output(
        "error", ename="CellTimeoutError", evalue="the cell did not finish within 20 s",
        traceback=[]))
    notes, _ = explain(nb, "ok", [_not_run("f_visible")], ["f"])
    assert notes == ["Test 'f_visible' was stopped: the cell did not finish within 20 s (the "
                     "time limit per cell)"]


@pytest.mark.slow
def test_a_syntax_error_is_said_once_with_its_line_and_costs_only_its_question():
    nb = copy.deepcopy(PS.source)
    [center] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "center"]
    center.source = center.source.replace("return X - mean, mean", "return X - mean, mean)")
    result = grade_submission(PS, nbformat.writes(nb).encode(), local_executor())
    causes = [n for n in result.notes if "SyntaxError" in n]
    assert len(causes) == 1 and causes[0].startswith("Your cell 'center' raised SyntaxError at "
                                                     "line "), result.notes
    by_id = {s.grade_id: s for s in result.scores}
    for gid in ("center_visible", "center_hidden"):
        assert by_id[gid].points == 0
        assert "your cell 'center' raised SyntaxError" in by_id[gid].message, by_id[gid].message
    assert by_id["pca_eig_hidden"].points == by_id["pca_eig_hidden"].max_points
    assert not any(NOT_RUN in s.message for s in result.scores)


def test_a_forbidden_import_is_named_only_by_the_rules_entry():
    """Issue 37: the error is the kernel's report, which the student's code writes (a class of
    its own named ``ForbiddenModule``): any installed package's name (hundreds) came out. Given
    the rules, a forbidden import is named by the entry that covers it, anything else as "a
    module"."""
    for text, named in [("zipfile is not allowed", "a module"),
                        ("sklearn.svm may not be used", "sklearn")]:
        nb = nbformat.v4.new_notebook(cells=[
            _code("import x", "f", solution=True, error=("ForbiddenModule", text)),
            _code("record(...)", "f_visible")])
        notes, _ = explain(nb, "ok", [_not_run("f_visible")], ["f"], ("scipy", "sklearn"))
        assert notes == [f"Your cell 'f' stopped: it imports {named}, which the problem set's "
                         "rules forbid"]


def test_the_sandboxs_note_names_cells_as_the_student_knows_them():
    """Issue 37: "the kernel died while running cell 2036" told which of the cells a student
    added crashed (the index, a number of the student's choosing); the note names the cell as
    the rest of the feedback does, and each cell the limit interrupted once."""
    from autograder.grading.diagnose import name_cells

    nb = nbformat.v4.new_notebook(cells=[
        _code("def f(): ...", "f", solution=True), _code("record(...)", "f_visible"),
        *[_code("pass") for _ in range(40)]])
    message = name_cells(
        "the kernel died while running cell 37 (a signal); cells interrupted by the 30 s cell "
        "limit: 0, 1, 5, 9, 99", nb, ["f"])
    assert message == (
        "the kernel died while running the cell after 'f_visible' (a signal); cells interrupted "
        "by the 30 s cell limit: your cell 'f'; test 'f_visible'; the cell after 'f_visible'; "
        "a cell")
