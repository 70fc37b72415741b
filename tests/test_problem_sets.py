"""Every problem set grades itself: the reference gets full marks, the blank release zero, and
every realistic mistake loses points on its question.

These run the real notebooks in real kernels and the real ``nbgrader generate_assignment``.
"""

from __future__ import annotations

import copy
import importlib
import re

import nbformat
import pytest

from autograder.grade import grade_submission, local_executor
from autograder.problemset import ProblemSet, list_problem_sets
from autograder.scoring import check_coverage
from tests.psharness import generate_release, run_variants

PROBLEM_SETS = list_problem_sets()
LEAKS = re.compile(r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|coursedata\.grading|"
                   r"\brecord\(|import solutions|from solutions")


def _mutants(name: str):
    return importlib.import_module(f"tests.mutants.{name}").MUTANTS


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    return generate_release(PROBLEM_SETS, tmp_path_factory.mktemp("course"))


def _points(scores, ids=None):
    return sum(s.points for s in scores if s.points is not None and (ids is None or s.grade_id in ids))


def _max_auto(scores, ids=None):
    return sum(s.max_points for s in scores
               if s.points is not None and (ids is None or s.grade_id in ids))


@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_every_autograded_cell_has_a_trusted_check(name):
    check_coverage(ProblemSet(name))


@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_problem_set_shape(name):
    ps = ProblemSet(name)
    solutions = [c for c in ps.source.cells
                 if c.metadata.get("nbgrader", {}).get("solution") and c.cell_type == "code"]
    manual = [c for c in ps.grade_cells if not c.autograded]
    assert 4 <= len(solutions) <= 8, f"{name} has {len(solutions)} code answers; 4 to 8 expected"
    assert manual, f"{name} has no answer graded by hand"
    auto = [c for c in ps.grade_cells if c.autograded]
    hidden_points = sum(c.points for c in auto if c.grade_id.endswith("_hidden"))
    assert hidden_points > sum(c.points for c in auto) / 2, "hidden checks must carry most points"


@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_reference_solution_gets_full_marks(name):
    ps = ProblemSet(name)
    result = grade_submission(ps, ps.path.read_bytes(), local_executor())
    assert result.status == "graded", result.notes
    wrong = [(s.grade_id, s.message) for s in result.scores
             if s.points is not None and s.points != s.max_points]
    assert not wrong, wrong


@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_release_is_clean_and_scores_zero(name, release):
    path = release / name / f"{name}.ipynb"
    text = path.read_text()
    assert not LEAKS.search(text), f"the student version leaks: {LEAKS.search(text).group(0)}"
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "only the notebook ships"
    ps = ProblemSet(name)
    result = grade_submission(ps, path.read_bytes(), local_executor())
    assert result.status == "graded"
    scored = [s for s in result.scores if s.points is not None]
    assert scored and all(s.points == 0 for s in scored), [(s.grade_id, s.points) for s in scored]
    # The visible tests fail on the blank release: each one raises in the kernel.
    released = nbformat.read(path, as_version=4)
    visible = {c.metadata["nbgrader"]["grade_id"] for c in released.cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
               and c.source.strip()}
    assert visible, "the release has no visible tests"
    for cell in result.executed.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") in visible:
            assert any(o.output_type == "error" for o in cell.outputs), cell.metadata.nbgrader


@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_every_mutant_loses_points_on_its_question(name):
    ps = ProblemSet(name)
    mutants = _mutants(name)
    assert len({m.cell for m in mutants}) == len(ps.solution_ids) - sum(
        1 for c in ps.grade_cells if not c.autograded), "every graded function needs mutants"
    for cell in set(m.cell for m in mutants):
        assert sum(m.cell == cell for m in mutants) >= 3, f"{cell} needs at least 3 mutants"
    variants = []
    for mutant in mutants:
        nb = copy.deepcopy(ps.source)
        [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == mutant.cell]
        assert cell.source.count(mutant.find) == 1, f"{mutant.name}: text not found once"
        cell.source = cell.source.replace(mutant.find, mutant.replace)
        variants.append(ps.assemble(nb).notebook)
    survivors = []
    for mutant, (scores, _) in zip(mutants, run_variants(ps, variants)):
        if not _points(scores, mutant.loses) < _max_auto(scores, mutant.loses):
            survivors.append(mutant.name)
    assert not survivors, f"mutants that lost no points: {survivors}"
