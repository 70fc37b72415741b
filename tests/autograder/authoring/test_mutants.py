"""Mutants declared next to the answer they mutate (:mod:`autograder.checks.mutants`).

The reader is tested on the real source notebooks and on small notebooks holding one authoring
mistake each; the mutants never reach a student (the release, the kernel's notebook); the
self-check's ``--mutants`` reports a mistake the tests let pass, naming the cell and what to
change. Grading every mutant of every problem set is ``tests/course/test_problem_sets.py``'s job.
"""

from __future__ import annotations

import copy
import json
import shutil

import nbformat
import pytest

from autograder.checks.declaration import DeclarationError, strip
from autograder.checks.mutants import Mutant, mutants, mutated
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.settings import COURSE_DIR
from tests.mutantruns import mutant_secrets

PS = "ps3_mle"


def _gid(cell) -> str | None:
    return cell.metadata.get("nbgrader", {}).get("grade_id")


# ---------------------------------------------------------------------------------------------
# The real notebooks
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list_problem_sets())
def test_every_problem_set_declares_mutants_that_can_be_made(name):
    ps = ProblemSet(name)
    declared = mutants(ps.source, ps.notebook_name)
    sources = {_gid(c): c.source for c in ps.source.cells}
    for m in declared:
        assert sources[m.cell].count(m.find) == 1, m
        assert all(cell in sources for cell in m.loses), m
    assert {m.cell for m in declared} <= set(ps.solution_ids)


def test_a_mutant_reads_as_declared_with_the_defaults_filled_in():
    declared = mutants(ProblemSet(PS).source)
    by_name = {(m.cell, m.name): m for m in declared}
    median = by_name[("gaussian_mle", "median instead of mean")]
    assert median == Mutant("median instead of mean", "gaussian_mle", "mu = x.mean()",
                            "mu = np.median(x)", ("gaussian_mle_visible", "gaussian_mle_hidden"))
    assert median.seen_by is None  # may pass the visible test (the hidden one catches it)
    # A rule the question states: caught by the visible test alone ("visible": true).
    plain = by_name[("bernoulli_log_likelihood", "plain log: 0 * log 0 gives nan")]
    assert plain.visible and plain.seen_by == "bernoulli_log_likelihood_visible"
    assert plain.loses == ("bernoulli_log_likelihood_visible", "bernoulli_log_likelihood_hidden")
    # An explicit 'loses' naming the visible cell alone means the same.
    steps = by_name[("gamma_mle", "ignores max_iter (runs until converged)")]
    assert steps.loses == ("gamma_mle_visible",) and steps.seen_by == "gamma_mle_visible"
    assert not steps.visible
    # The notebook's order: question by question, each cell's list in order.
    cells = [m.cell for m in declared]
    assert cells == sorted(cells, key=cells.index) and cells[0] == "bernoulli_log_likelihood"


def test_a_mutated_notebook_changes_one_answer_once_and_nothing_else():
    source = ProblemSet(PS).source
    m = next(m for m in mutants(source) if m.name == "median instead of mean")
    out = mutated(source, m)
    changed = [(_gid(a), a.source, b.source) for a, b in zip(source.cells, out.cells)
               if a != b]
    [(gid, before, after)] = changed
    assert gid == "gaussian_mle" and before.replace("mu = x.mean()", "mu = np.median(x)") == after
    assert "mu = x.mean()" in source.cells[[_gid(c) for c in source.cells].index(gid)].source


# ---------------------------------------------------------------------------------------------
# Authoring mistakes, each named with its cell
# ---------------------------------------------------------------------------------------------


def _nbgrader(gid, *, points=None, solution=False):
    return {"nbgrader": {"grade": points is not None, "grade_id": gid, "locked": not solution,
                         "schema_version": 3, "solution": solution, "task": False,
                         **({"points": points} if points is not None else {})}}


def _notebook(*specs, answer="def f(x):\n    return x + 1\n", solution=True, tests=("f_visible",
                                                                                      "f_hidden")):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(answer)
    cell.metadata = {**_nbgrader("f", solution=solution), "course": {"mutants": list(specs)}}
    nb.cells.append(cell)
    for gid in tests:
        test = nbformat.v4.new_code_cell("assert f(1) == 2")
        test.metadata = _nbgrader(gid, points=1)
        nb.cells.append(test)
    return nb


OK = {"name": "off by one", "find": "x + 1", "replace": "x + 2"}


def test_a_short_declaration_gets_the_questions_test_cells():
    [m] = mutants(_notebook(OK))
    assert m.loses == ("f_visible", "f_hidden") and not m.visible and m.seen_by is None
    [m] = mutants(_notebook(OK, tests=("f_hidden",)))
    assert m.loses == ("f_hidden",)


@pytest.mark.parametrize("spec, kwargs, message", [
    ({**OK, "find": "x"}, {}, "occurs 2 times in the cell's source; it must occur exactly once"),
    ({**OK, "find": "x - 1"}, {}, "occurs 0 times"),
    ({**OK, "loses": ["f_visibel"]}, {}, "'loses' names ['f_visibel'], which are not autograded"),
    ({**OK, "loses": ["f"]}, {}, "which are not autograded test cells"),
    ({**OK, "loses": "f_visible"}, {}, "'loses' is a non-empty list"),
    ({**OK, "loses": []}, {}, "'loses' is a non-empty list"),
    (OK, {"tests": ("g_visible",)}, "no test cell f_visible or f_hidden"),
    ({**OK, "visible": True, "loses": ["f_hidden"]}, {}, "'visible': true needs exactly one"),
    ({**OK, "visible": "yes"}, {}, "'visible' is true or false"),
    ({**OK, "replace": "x + 1"}, {}, "'replace' equals 'find'"),
    ({**OK, "replcae": "x"}, {}, "a mutant is {'name', 'find', 'replace'}"),
    ({"find": "x + 1", "replace": "x"}, {}, "a mutant is {'name', 'find', 'replace'}"),
    (OK, {"solution": False}, "mutants belong in the metadata of an answer cell"),
])
def test_a_mutant_that_cannot_be_made_names_its_cell_and_what_to_change(spec, kwargs, message):
    with pytest.raises(DeclarationError) as err:
        mutants(_notebook(spec, **kwargs), "demo.ipynb")
    assert message in str(err.value)
    assert str(err.value).startswith("demo.ipynb, cell `f`")


def test_a_name_is_used_once_per_cell_and_a_declaration_is_a_list():
    with pytest.raises(DeclarationError, match="'off by one' is used twice"):
        mutants(_notebook(OK, {**OK, "replace": "x + 3"}))
    nb = _notebook()
    nb.cells[0].metadata.course.mutants = OK
    with pytest.raises(DeclarationError, match="is a list of mutants"):
        mutants(nb)


# ---------------------------------------------------------------------------------------------
# Never in a student's hands
# ---------------------------------------------------------------------------------------------


def test_strip_removes_the_mutants_and_keeps_the_rest():
    nb = copy.deepcopy(ProblemSet(PS).source)
    nbgrader = [dict(c.metadata.get("nbgrader", {})) for c in nb.cells]
    sources = [c.source for c in nb.cells]
    assert strip(nb) == 18  # 12 declared test cells, 6 answers with mutants
    assert not any("course" in c.metadata for c in nb.cells)
    assert [dict(c.metadata.get("nbgrader", {})) for c in nb.cells] == nbgrader
    assert [c.source for c in nb.cells] == sources
    assert mutants(nb) == []


@pytest.mark.parametrize("name", list_problem_sets())
def test_the_grading_kernel_never_sees_a_mutant(name):
    """The notebook the grader runs (the submission assembled into the source's cells) carries
    no mutant: a student's code could read its own cell's metadata otherwise."""
    ps = ProblemSet(name)
    kernel = ps.assemble(ps.source).notebook
    assert not any("mutants" in c.metadata.get("course", {}) for c in kernel.cells)
    # (Its answers are the reference's here, which hold each mutant's find, and often its
    # replace as a part; the names are the mutants' alone.)
    text = json.dumps(kernel, ensure_ascii=False)
    names = {json.dumps(m.name, ensure_ascii=False)[1:-1] for m in mutants(ps.source)}
    assert [p for p in mutant_secrets(ps) if p in names and p in text] == []


@pytest.mark.slow
def test_the_released_notebook_carries_no_mutant(tmp_path):
    from autograder.authoring.release import release

    course = tmp_path / "course"
    shutil.copytree(COURSE_DIR, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".scratch*"))
    folder = release(PS, course, db_url=f"sqlite:///{tmp_path / 'gradebook.db'}",
                     url="https://example.org/kit/mfpm_kit-0.1.0-py3-none-any.whl")
    text = (folder / f"{PS}.ipynb").read_text()
    released = nbformat.reads(text, as_version=4)
    assert not any("mutants" in c.metadata.get("course", {}) for c in released.cells)
    # the wrong answers, their names, and the solution lines they replace
    secrets = mutant_secrets(ProblemSet(PS))
    assert len(secrets) > 60 and "mu = np.median(x)" in secrets
    assert [p for p in secrets if p in text] == []
    assert "def gaussian_mle(x)" in text  # the answer's cell itself is released


# ---------------------------------------------------------------------------------------------
# The self-check grades them
# ---------------------------------------------------------------------------------------------


def test_the_self_check_reads_the_mutants_without_grading_them():
    from autograder.authoring.selfcheck import _mutants

    assert _mutants(ProblemSet(PS)) == ([], "31 declared; --mutants grades them")
    stale = ProblemSet(PS)
    [answer] = [c for c in stale.source.cells if _gid(c) == "gaussian_mle"]
    answer.source = answer.source.replace("mu = x.mean()", "mu = np.mean(x)")  # edited later
    [problem], detail = _mutants(stale)
    assert detail == "cannot be made"
    assert problem.startswith("ps3_mle.ipynb, cell `gaussian_mle`, mutant 'median instead of "
                              "mean': its 'find' text 'mu = x.mean()' occurs 0 times")


@pytest.mark.slow
def test_the_self_check_names_a_mutant_that_keeps_its_points(tmp_path):
    """A "mistake" the tests let pass (a division by ``float(N)``: the same numbers), and one
    declared ``visible`` that only the hidden test catches (its 3000 values; the visible test's
    are fewer): each reported with its cell and what to change; a caught one is not."""
    from autograder.authoring.selfcheck import _mutants

    course = tmp_path / "course"
    shutil.copytree(COURSE_DIR, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".scratch*"))
    path = course / "source" / PS / f"{PS}.ipynb"
    nb = json.loads(path.read_text())
    [cell] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade_id")
              == "gaussian_mle"]
    cell["metadata"]["course"]["mutants"] = [
        {"name": "harmless", "find": "/ x.size)", "replace": "/ float(x.size))"},
        {"name": "median for large samples", "find": "mu = x.mean()",
         "replace": "mu = x.mean() if x.size < 1000 else np.median(x)", "visible": True},
        {"name": "unbiased 1/(N-1) variance", "find": "/ x.size)", "replace": "/ (x.size - 1))"},
    ]
    for other in nb["cells"]:
        if other is not cell:
            other["metadata"].get("course", {}).pop("mutants", None)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    problems, detail = _mutants(ProblemSet(PS, Course(course)), tmp_path / "work")
    assert detail == "3 graded"
    assert len(problems) == 2, problems
    harmless, median = problems
    assert harmless.startswith("ps3_mle.ipynb, cell `gaussian_mle`, mutant 'harmless'")
    assert "kept every point of gaussian_mle_visible, gaussian_mle_hidden" in harmless
    assert "Add a case this mistake gets wrong to the declaration of gaussian_mle_hidden" \
        in harmless
    assert "mutant 'median for large samples'" in median
    assert "the visible test `gaussian_mle_visible` lets it pass" in median
