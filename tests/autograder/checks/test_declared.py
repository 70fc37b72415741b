"""Declared checks: a question's check is stated next to it in the source notebook.

The main test does what an instructor does to add a question: in a copy of the course, it adds
an autograded "Poisson MLE" question (``poisson_mle(x)`` and ``poisson_log_likelihood(lam, x)``,
a visible and a hidden test) to problem set 3 by editing the source notebook only (the reference,
:func:`solutions.mle.poisson_mle`, is in ``solutions/``), then grades a correct and a wrong
submission through the real grader and gets the declared scores; the generic wrong answers and
the equivalent forms derived from the same declaration behave as for every problem set; the
release carries no declaration. The other tests pin the format's rules and its messages.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.authoring.graded import sample_variants
from autograder.checks import load_checks
from autograder.checks.answers import Answers
from autograder.checks.declared import (
    DeclarationError,
    build_checks,
    case_inputs,
    declarations,
    declared_cases,
    equivalent_forms,
    generate_case,
    strip,
    write_inputs,
)
from autograder.checks.inventory import inventory, problems
from autograder.checks.registry import checks_for
from autograder.course import Course
from autograder.grading.executors import local_executor
from autograder.grading.pipeline import grade as grade_submission
from autograder.grading.problemset import ProblemSet
from autograder.settings import COURSE_DIR
from coursedata.grading import RESULTS_ENV, inputs
from tests.psharness import score_equivalent_forms, score_generic_variants

PS = "ps3_mle"

# ---------------------------------------------------------------------------------------------
# What the author writes to add the Poisson question (everything below goes into the notebook)
# ---------------------------------------------------------------------------------------------

Q_TEXT = """## Question 7 — The Poisson rate (3 points)

Counts $x_n \\in \\{0, 1, 2, \\dots\\}$ with $p(x_n \\mid \\lambda) = \\lambda^{x_n} e^{-\\lambda} / x_n!$.
Write the log-likelihood $\\ell(\\lambda) = \\log\\lambda \\sum_n x_n - N\\lambda - \\sum_n \\log x_n!$
for a single $\\lambda$ or a grid (with $0 \\log 0 = 0$ at $\\lambda = 0$), and the
maximum-likelihood rate $\\hat\\lambda$."""

Q_SOLUTION = '''def poisson_mle(x):
    """Maximum-likelihood rate of i.i.d. Poisson counts x, shape (N,): a float."""
    ### BEGIN SOLUTION
    return float(np.mean(x))
    ### END SOLUTION


def poisson_log_likelihood(lam, x):
    """Poisson log-likelihood of the counts x, shape (N,), for a rate or a grid of rates."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    ll = xlogy(np.sum(x), np.asarray(lam, dtype=float)) - x.size * np.asarray(lam) - np.sum(gammaln(x + 1))
    return float(ll) if np.ndim(ll) == 0 else ll
    ### END SOLUTION'''

Q_VISIBLE = '''### BEGIN HIDDEN TESTS
from coursedata.grading import inputs, record
record("poisson_mle", poisson_mle, **inputs("ps3_mle", "poisson_mle"))
record("poisson_ll", poisson_log_likelihood, **inputs("ps3_mle", "poisson_ll"))
### END HIDDEN TESTS
lam_hat = poisson_mle(np.array([0, 0, 1, 5]))
assert np.isclose(lam_hat, 1.5), f"λ̂ for the counts 0, 0, 1, 5 is their mean 1.5; yours is {lam_hat}"
ll = poisson_log_likelihood(np.array([0.0, 1.0]), np.array([0, 1]))
assert np.shape(ll) == (2,) and ll[0] == -np.inf and np.isclose(ll[1], -2.0), (
    f"ℓ(0) = -inf and ℓ(1) = -2 for the counts 0, 1; yours are {ll}")'''

Q_HIDDEN = '''### BEGIN HIDDEN TESTS
from coursedata.grading import inputs, record
record("poisson_mle_zeros", poisson_mle, **inputs("ps3_mle", "poisson_mle_zeros"))
record("poisson_mle_large", poisson_mle, **inputs("ps3_mle", "poisson_mle_large"))
record("poisson_ll_zeros", poisson_log_likelihood, **inputs("ps3_mle", "poisson_ll_zeros"))
### END HIDDEN TESTS
# Hidden tests run here when your notebook is graded. Nothing to do in this cell: the grader
# runs its own copy of it, so edits here change nothing.'''

LL = {"reference": "solutions.mle:poisson_log_likelihood", "outputs": ["ℓ(λ)"],
      "compare": "log", "rtol": 1e-8, "atol": 1e-10}
VISIBLE_CHECK = {
    "reference": "solutions.mle:poisson_mle", "outputs": ["λ̂"], "rtol": 1e-10, "atol": 1e-12,
    "cases": {
        "poisson_mle": {"x": {"poisson": {"seed": 31, "n": 60, "lam": 2.5}}},
        "poisson_ll": {"args": {"lam": {"linspace": {"start": 0, "stop": 6, "num": 25}},
                                "x": {"poisson": {"seed": 32, "n": 40, "lam": 3.0}}}, **LL}}}
HIDDEN_CHECK = {
    "cases": {
        "poisson_mle_zeros": {"x": {"full": {"n": 8, "value": 0}}},
        "poisson_mle_large": {"x": {"poisson": {"seed": 33, "n": 3000, "lam": 40.0}}},
        "poisson_ll_zeros": {"args": {"lam": {"linspace": {"start": 0, "stop": 2, "num": 5}},
                                      "x": {"full": {"n": 5, "value": 0}}}, **LL}},
    "weights": {"poisson_mle": 1, "poisson_mle_zeros": 1, "poisson_mle_large": 1,
                "poisson_ll": 1, "poisson_ll_zeros": 1}}


def _nbgrader(grade_id, *, points=None, solution=False):
    meta = {"grade": points is not None, "grade_id": grade_id, "locked": not solution,
            "schema_version": 3, "solution": solution, "task": False}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def add_poisson_question(course: Path) -> dict:
    """Add the Poisson question to ``course``'s problem set 3 as an author would: four cells
    after question 6 with the two declarations, and the points in the header. Return the files
    changed and the lines added and removed (as ``git diff`` counts them)."""
    path = course / "source" / PS / f"{PS}.ipynb"
    before = path.read_text()
    nb = json.loads(before)
    at = next(i for i, c in enumerate(nb["cells"])
              if c["metadata"].get("nbgrader", {}).get("grade_id") == "q7_text")
    cells = [
        {"cell_type": "markdown", "metadata": _nbgrader("poisson_text"), "source": Q_TEXT},
        {"cell_type": "code", "metadata": _nbgrader("poisson_mle", solution=True),
         "source": Q_SOLUTION, "execution_count": None, "outputs": []},
        {"cell_type": "code", "metadata": {**_nbgrader("poisson_mle_visible", points=1),
                                           "course": {"check": VISIBLE_CHECK}},
         "source": Q_VISIBLE, "execution_count": None, "outputs": []},
        {"cell_type": "code", "metadata": {**_nbgrader("poisson_mle_hidden", points=2),
                                           "course": {"check": HIDDEN_CHECK}},
         "source": Q_HIDDEN, "execution_count": None, "outputs": []},
    ]
    for cell in cells:
        cell["id"] = cell["metadata"]["nbgrader"]["grade_id"].replace("_", "-")
        cell["source"] = cell["source"].splitlines(keepends=True)
    for cell in nb["cells"][at:]:  # the questions after the new one move down by one
        text = "".join(cell["source"])
        for n in (8, 7):
            text = text.replace(f"## Question {n} ", f"## Question {n + 1} ")
        cell["source"] = text.splitlines(keepends=True)
    nb["cells"][at:at] = cells
    header = nb["cells"][0]
    text = "".join(header["source"])
    header_points = re.search(r"\*\*Points:\*\* (\d+) autograded \+ (\d+) graded by hand = "
                              r"(\d+)\.", text)
    auto, hand = int(header_points[1]) + 3, int(header_points[2])  # the question's 3 points
    text = text.replace(header_points[0], f"**Points:** {auto} autograded + {hand} graded by "
                        f"hand = {auto + hand}.")
    text = text.replace("| 8 | Derivation: the bias", "| 9 | Derivation: the bias")
    text = text.replace("| 7 | Derivation: the MLE of a die",
                        "| 7 | `poisson_mle`, `poisson_log_likelihood` — the Poisson rate | 3 |\n"
                        "| 8 | Derivation: the MLE of a die")
    header["source"] = text.splitlines(keepends=True)
    after = json.dumps(nb, indent=1, ensure_ascii=False) + "\n"
    path.write_text(after)
    diff = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    added = sum(1 for d in diff if d.startswith("+") and not d.startswith("+++"))
    removed = sum(1 for d in diff if d.startswith("-") and not d.startswith("---"))
    return {"files": [path], "added": added, "removed": removed}


@pytest.fixture(scope="module")
def poisson_course(tmp_path_factory):
    """A copy of the course with the Poisson question added: ``(problem set, edit counts)``."""
    root = tmp_path_factory.mktemp("course")
    shutil.copy(COURSE_DIR / "nbgrader_config.py", root)
    shutil.copytree(COURSE_DIR / "source", root / "source")
    shutil.copytree(COURSE_DIR / "checks", root / "checks")
    shutil.copytree(COURSE_DIR / "rubrics", root / "rubrics")
    counts = add_poisson_question(root)
    return ProblemSet(PS, Course(root)), counts


def _scores(result):
    return {s.grade_id: s for s in result.scores}


@pytest.mark.slow
def test_a_new_question_is_declared_in_the_notebook_and_graded_as_declared(poisson_course,
                                                                           tmp_path):
    ps, counts = poisson_course
    # One file of the course changes (the reference is solutions.mle's): the notebook.
    assert [p.name for p in counts["files"]] == [f"{PS}.ipynb"]
    print(f"\nPoisson question: 1 course file + solutions/mle.py; notebook +{counts['added']} "
          f"-{counts['removed']} lines")
    assert problems(ps) == []
    listed = {c.grade_id: c for c in inventory(ps)}
    assert listed["poisson_mle_visible"].check == "declared"
    assert listed["poisson_mle_hidden"].reads == ("poisson_mle", "poisson_mle_zeros",
                                                  "poisson_mle_large", "poisson_ll",
                                                  "poisson_ll_zeros")
    assert ps.max_points == ProblemSet(PS).max_points + 3  # the question's points

    # The reference solution (the source itself) earns every point, the new ones included.
    work = tmp_path / "correct" / "submission"
    right = grade_submission(ps, ps.path.read_bytes(), local_executor(), workdir=work)
    wrong_cells = [(s.grade_id, s.points, s.message) for s in right.scores
                   if s.points is not None and s.points != s.max_points]
    assert not wrong_cells
    assert _scores(right)["poisson_mle_hidden"].points == 2.0

    # The median instead of the mean: the visible cell is all or nothing (0 of 1; its visible
    # test fails in the kernel too), the hidden cell keeps the parts that do not read the
    # rate (both log-likelihood cases) and the all-zero counts, whose median is their mean:
    # 3 of 5 equal weights of 2 points.
    nb = nbformat.read(ps.path, as_version=4)
    [solution] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id")
                  == "poisson_mle"]
    solution.source = solution.source.replace("np.mean(x)", "np.median(x)")
    wrong = grade_submission(ps, nbformat.writes(nb).encode(), local_executor())
    scores = _scores(wrong)
    assert scores["poisson_mle_visible"].points == 0.0
    assert scores["poisson_mle_hidden"].points == pytest.approx(2 * 3 / 5)
    assert "λ̂ for x of shape (60,) is wrong" in scores["poisson_mle_hidden"].message
    assert all(s.points == s.max_points for s in wrong.scores
               if s.points is not None and not s.grade_id.startswith("poisson"))

    # The generic wrong answers and equivalent forms, derived from the same declarations.
    results = work / "results"
    assert not score_generic_variants(ps, results, tmp_path / "generic", equivalent_forms(
        ps.source))
    assert not score_equivalent_forms(ps, results, tmp_path / "forms")


@pytest.mark.slow
def test_the_release_carries_no_declaration(poisson_course, tmp_path):
    from autograder.authoring.release import release

    ps, _ = poisson_course
    course = tmp_path / "course"
    shutil.copytree(ps.course.root, course)
    folder = release(PS, course, db_url=f"sqlite:///{tmp_path / 'gradebook.db'}",
                     url="https://example.org/kit/mfpm_kit-0.1.0-py3-none-any.whl")
    text = (folder / f"{PS}.ipynb").read_text()
    released = nbformat.reads(text, as_version=4)
    assert "def poisson_mle(x)" in text  # the new question is released
    # Only the visible cells' own cases are given to the student's check (coursedata.visible).
    assert all(set(c.metadata.get("course", {})) <= {"visible"} for c in released.cells)
    assert all(c.metadata["nbgrader"]["grade_id"].endswith("_visible")
               for c in released.cells if "course" in c.metadata)
    for leak in ("poisson_mle_zeros", "gamma_mle_small_shape", '"seed"', "solutions.mle"):
        assert leak not in text, leak


# ---------------------------------------------------------------------------------------------
# The format's rules
# ---------------------------------------------------------------------------------------------


def _notebook(*checks: tuple[str, dict]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    for gid, check in checks:
        cell = nbformat.v4.new_code_cell("")
        cell.metadata = {**_nbgrader(gid, points=1), "course": {"check": check}}
        nb.cells.append(cell)
    return nb


GAUSS = {"reference": "solutions.mle:gaussian_mle", "outputs": ["μ̂", "σ̂"],
         "cases": {"g": {"x": {"normal": {"seed": 1, "n": 10, "mean": 0, "sd": 1}}}}}


@pytest.mark.parametrize("check, message", [
    ({**GAUSS, "weights": {"g": 1}}, "only a _hidden cell has weights"),
    ({**GAUSS, "tolerance": 1e-3}, "unknown keys ['tolerance']"),
    ({**GAUSS, "compare": "roughly"}, "unknown comparison 'roughly'"),
    ({**GAUSS, "outputs": [{"label": "μ̂"}]}, "an output is a name"),
])
def test_a_declaration_that_cannot_be_read_names_its_cell(check, message):
    with pytest.raises(DeclarationError, match="q_visible") as info:
        declarations(_notebook(("q_visible", check)))
    assert message in str(info.value)


def test_a_case_is_declared_once_and_weights_name_declared_cases():
    with pytest.raises(DeclarationError, match="declared twice"):
        declarations(_notebook(("q_visible", GAUSS), ("q_hidden", {"cases": GAUSS["cases"]})))
    with pytest.raises(DeclarationError, match="undeclared cases \\['gg'\\]"):
        declarations(_notebook(("q_visible", GAUSS), ("q_hidden", {"weights": {"gg": 1}})))


def _answers(tmp_path, case, *values) -> Answers:
    np.savez(tmp_path / f"{case}.npz", **{f"out_{i}": v for i, v in enumerate(values)})
    return Answers(PS, tmp_path)


def test_messages_come_from_the_inputs_so_they_cannot_go_stale(tmp_path):
    """The hand-written message "a = 0.3" went stale when the input changed; a declared
    check says the input's value as generated, whatever it is."""
    def message(shape):
        check = {"reference": "solutions.mle:gamma_log_likelihood", "outputs": ["ℓ(a, b)"],
                 "cases": {"gl": {"x": {"gamma": {"seed": 2, "n": 20, "shape": 2, "rate": 1}},
                                  "shape": shape, "rate": 1.5}}}
        nb = _notebook(("q_visible", check))
        return build_checks(nb)["q_visible"](_answers(tmp_path, "gl", np.float64(0.0))).message
    assert "ℓ(a, b) for x of shape (20,), shape=0.3, rate=1.5 is wrong" in message(0.3)
    assert "shape=0.45, rate=1.5" in message(0.45)


def test_a_boolean_input_is_described_by_how_many_entries_it_selects(tmp_path):
    """A mask's shape alone does not say what was observed; its number of True entries does."""
    mask = [[True, False, True], [False, False, True]]  # errors 0, 0 and 2 where True
    check = {"reference": "course.checks.ps2_matrix_completion:masked_rmse",
             "outputs": ["the RMSE"],
             "cases": {"m": {"R_true": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
                             "R_pred": [[1.0, 0.0, 3.0], [0.0, 0.0, 8.0]], "mask": mask}}}
    message = build_checks(_notebook(("q_visible", check)))["q_visible"](
        _answers(tmp_path, "m", np.float64(0.0))).message
    assert ("R_pred of shape (2, 3), mask of shape (2, 3) (3 True) is wrong: yours is 0, expected "
            f"{np.sqrt(4 / 3):.6g}:") in message


def test_visible_is_all_or_nothing_and_hidden_weighs_cases_and_outputs(tmp_path):
    hidden = {"cases": {"h": {"x": [1.0, 2.0, 4.0]}}, "weights": {"g": 1, "h": 3}}
    checks = build_checks(_notebook(("q_visible", GAUSS), ("q_hidden", hidden)))
    g = case_inputs(declared_cases(_notebook(("q_visible", GAUSS))), "g")["x"]
    _answers(tmp_path, "g", np.mean(g), 0.0)  # the mean right, the deviation wrong
    answers = _answers(tmp_path, "h", 7 / 3, np.std([1.0, 2.0, 4.0]))
    visible = checks["q_visible"](answers)
    assert visible.fraction == 0.0 and visible.message.startswith("σ̂ for x of shape (10,)")
    # g weighs 1/4, shared by its two outputs; h weighs 3/4 and is right.
    assert checks["q_hidden"](Answers(PS, tmp_path)).fraction == pytest.approx(1 / 8 + 3 / 4)


def test_an_output_may_weigh_more_than_the_others_of_its_case(tmp_path):
    """``{"name": ..., "weight": w}``: a case's weight is shared by its outputs in proportion."""
    visible = {**GAUSS, "outputs": [{"name": "μ̂", "weight": 1}, {"name": "σ̂", "weight": 3}]}
    checks = build_checks(_notebook(("q_visible", visible), ("q_hidden", {"weights": {"g": 1}})))
    x = case_inputs(declared_cases(_notebook(("q_visible", GAUSS))), "g")["x"]
    for folder, values, earned in (("mean", (x.mean(), 0.0), 1 / 4),
                                   ("sd", (0.0, x.std()), 3 / 4)):
        (tmp_path / folder).mkdir()
        answers = _answers(tmp_path / folder, "g", *map(np.float64, values))
        assert checks["q_hidden"](answers).fraction == pytest.approx(earned)
        assert checks["q_visible"](answers).fraction == 0.0
    for weight in (0, -1, "3"):
        bad = {**GAUSS, "outputs": ["μ̂", {"name": "σ̂", "weight": weight}]}
        with pytest.raises(DeclarationError, match="weight > 0"):
            declarations(_notebook(("q_visible", bad)))


@pytest.mark.parametrize("compare, right, wrong", [
    ("rows_up_to_sign", [[-1.0, -2.0], [3.0, 4.0]], [[-1.0, 2.0], [3.0, 4.0]]),
    ("permutation", [[3.0, 4.0], [1.0, 2.0]], [[3.0, 4.0], [1.0, 2.5]]),
    ("integer", [[1, 2], [3, 4]], [[1.0, 2.0], [3.0, 4.5]]),
    ("rows_up_to_constant", [[11.0, 12.0], [2.0, 3.0]], [[11.0, 12.0], [2.0, 4.0]]),
])
def test_equivalences_accept_the_equivalent_form_and_refuse_a_wrong_one(tmp_path, compare,
                                                                        right, wrong):
    check = {"reference": "solutions._validation:as_float_array", "compare": compare,
             "cases": {"m": {"x": [[1, 2], [3, 4]]}}}
    nb = _notebook(("q_visible", check))
    run = build_checks(nb)["q_visible"]
    for folder in ("right", "wrong"):
        (tmp_path / folder).mkdir()
    assert run(_answers(tmp_path / "right", "m", np.asarray(right))).fraction == 1.0
    assert run(_answers(tmp_path / "wrong", "m", np.asarray(wrong))).fraction == 0.0
    if compare in ("rows_up_to_sign", "rows_up_to_constant"):
        assert list(equivalent_forms(nb)) == [
            ("as_float_array", None, "negated" if compare == "rows_up_to_sign" else "shifted")]


def test_log_probability_rows_explain_a_wrong_answer_by_its_rows_first(tmp_path):
    log_p = np.log([[0.25, 0.75], [0.5, 0.5], [0.1, 0.9]])
    check = {"reference": "solutions._validation:as_float_array", "outputs": ["log p(c | x)"],
             "compare": "log_probability_rows", "cases": {"m": {"x": log_p.tolist()}}}
    run = build_checks(_notebook(("q_visible", check)))["q_visible"]
    given = {"right": log_p, "swapped": log_p[:, ::-1], "unnormalised": log_p - 1.0,
             "transposed": log_p.T}
    outcomes = {}
    for name, value in given.items():
        (tmp_path / name).mkdir()
        outcomes[name] = run(_answers(tmp_path / name, "m", value))
    assert [o.fraction for o in outcomes.values()] == [1.0, 0.0, 0.0, 0.0]
    assert "is wrong at index" in outcomes["swapped"].message
    assert "are not normalised: the probabilities of row" in outcomes["unnormalised"].message
    assert "should have shape (3, 2)" in outcomes["transposed"].message


def test_only_trusted_modules_are_called():
    check = {"reference": "os:system", "cases": {"m": {"x": 1}}}
    with pytest.raises(DeclarationError, match="not 'module:function' under"):
        build_checks(_notebook(("q_visible", check)))["q_visible"](Answers(PS, "/nonexistent"))


# ---------------------------------------------------------------------------------------------
# Problem set 3, ported: the inventory, the kernel's inputs, the authoring mistakes it catches
# ---------------------------------------------------------------------------------------------


#: The checks each problem set keeps in Python (its module's docstring says why); every other
#: autograded cell declares its check in the source notebook.
PYTHON_CHECKS = {
    "ps1_pca": set(),
    "ps2_matrix_completion": {"als_hidden", "als_with_biases_hidden"},
    "ps3_mle": set(),
    "ps4_map_naive_bayes": set(),
    "ps5_kde": {"kde_pdf_hidden"},
    "ps6_generative_discriminative": {
        f"{q}_hidden" for q in ("shared_variance_weights", "cross_entropy_and_gradient",
                                "fit_logistic_regression")},
}


@pytest.mark.parametrize("name", sorted(PYTHON_CHECKS))
def test_every_problem_set_is_declared_but_for_the_checks_its_module_explains(name):
    ps = sample_variants(ProblemSet(name))[0]  # with variants: as a sample student is graded
    kinds = {c.grade_id: c.check for c in inventory(ps)}
    python = PYTHON_CHECKS[name]
    assert {g for g, k in kinds.items() if k == "python"} == python
    assert {k for g, k in kinds.items() if g not in python} == {"declared", "manual"}
    assert set(checks_for(ps)) == {g for g, k in kinds.items() if k != "manual"}
    explained = load_checks(name).__doc__
    questions = {re.sub(r"_(visible|hidden)$", "", g) for g in python}
    assert all(q in explained for q in questions), f"say why in autograder/checks/{name}.py"
    assert problems(ps) == []


def test_the_kernel_reads_the_inputs_the_grader_wrote(tmp_path, monkeypatch):
    ps = ProblemSet(PS)
    written = write_inputs(ps.source, tmp_path)
    assert "bernoulli_scalar" in written and "gamma_score_faithful" in written
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    got = inputs(PS, "bernoulli_scalar")
    assert isinstance(got["theta"], float) and got["theta"] == 0.3
    assert got["x"].dtype == np.int64 and got["x"].shape == (40,)
    got = inputs(PS, "categorical_one")
    assert isinstance(got["n_categories"], int) and got["n_categories"] == 1
    expected = case_inputs(declared_cases(ps.source), "gamma_mle_faithful")["x"]
    np.testing.assert_array_equal(inputs(PS, "gamma_mle_faithful")["x"], expected)
    monkeypatch.delenv(RESULTS_ENV)
    with pytest.raises(ValueError, match="no inputs were written for case .bernoulli_scalar."):
        inputs(PS, "bernoulli_scalar")


def _edited(edit) -> ProblemSet:
    ps = ProblemSet(PS)
    ps.source = copy.deepcopy(ps.source)
    edit(ps.source)
    return ps


def _cell(nb, gid):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == gid)


def test_authoring_mistakes_are_found_before_anything_runs():
    # A typo in a hidden cell's case name (it cost every correct student points, silently).
    def typo(nb):
        cell = _cell(nb, "gaussian_mle_hidden")
        cell.source = cell.source.replace('record("gaussian_large"', 'record("gausian_large"')
    found = problems(_edited(typo))
    assert any("records case 'gausian_large', whose inputs are declared nowhere" in p
               for p in found), found
    assert any("declares case 'gaussian_large', which no hidden part records" in p
               for p in found), found
    assert any("gaussian_mle_hidden scores case 'gaussian_large', which no cell records" in p
               for p in found), found

    # A graded cell without a check.
    def undeclared(nb):
        del _cell(nb, "gamma_mle_hidden").metadata["course"]
    from autograder.authoring.validate import problems as release_problems

    assert any("cell `gamma_mle_hidden`: this autograded cell has no trusted check" in str(p)
               for p in release_problems(_edited(undeclared)))

    # A reference that does not exist.
    def misnamed(nb):
        _cell(nb, "gamma_mle_visible").metadata["course"]["check"]["reference"] = \
            "solutions.mle:gama_mle"
    assert any("gamma_mle_visible: reference" in p for p in problems(_edited(misnamed)))

    # A generator that does not exist, or a parameter it does not take.
    def misspelt(nb):
        case = _cell(nb, "gaussian_mle_hidden").metadata["course"]["check"]["cases"]
        case["gaussian_small"]["x"] = {"normall": {"seed": 5, "n": 4}}
        case["gaussian_large"]["x"]["normal"]["size"] = 3
    found = problems(_edited(misspelt))
    assert any("gaussian_mle_hidden: the inputs of case 'gaussian_small' cannot be made: "
               "unknown generator 'normall'" in p for p in found), found
    assert any("case 'gaussian_large' cannot be made: generator 'normal'" in p and "'size'" in p
               for p in found), found
    # An input generator, named "module:function", that does not exist.
    def misnamed_generator(nb):
        _cell(nb, "gamma_mle_hidden").metadata["course"]["check"]["cases"][
            "gamma_mle_small_shape"]["x"] = {"solutions.mle:gamma_sampel": {"seed": 16}}
    assert any("gamma_mle_hidden: the inputs of case 'gamma_mle_small_shape' cannot be made: "
               in p and "'solutions.mle:gamma_sampel' cannot be found" in p
               for p in problems(_edited(misnamed_generator)))


def test_strip_removes_every_declaration_and_nothing_else():
    nb = copy.deepcopy(ProblemSet(PS).source)
    before = [dict(c.metadata.get("nbgrader", {})) for c in nb.cells]
    assert strip(nb) == 18  # 12 declared test cells, 6 answers with mutants
    assert not any("course" in c.metadata for c in nb.cells)
    assert [dict(c.metadata.get("nbgrader", {})) for c in nb.cells] == before
    assert "rules" in nb.metadata["course"]  # the notebook's declared rules are the students'


def test_an_authoring_mistake_is_a_fault_of_the_grader_not_the_students_zero(tmp_path):
    """The typo in a hidden cell's case name took points from every correct student, whose
    feedback blamed their function; now that cell's check fails as a grader fault, whose
    message tells the instructor what to change."""
    from autograder.grading.scoring import GRADER_FAULT, score_results

    def typo(nb):
        cell = _cell(nb, "gaussian_mle_hidden")
        cell.source = cell.source.replace('record("gaussian_large"', 'record("gausian_large"')
    ps = _edited(typo)
    scores = {s.grade_id: s for s in score_results(ps, tmp_path, frozenset())}
    cell = scores["gaussian_mle_hidden"]
    assert cell.message == GRADER_FAULT and "AuthoringError" in cell.error
    assert "records case 'gausian_large', whose inputs are declared nowhere" in cell.error
    assert all(s.error is None for g, s in scores.items() if g != "gaussian_mle_hidden")


@pytest.mark.slow
def test_a_student_who_rewrites_the_written_inputs_only_fools_their_own_function():
    """The kernel can write over the inputs the grader wrote for it; the grader scores against
    the inputs it generates itself, so answers that fit forged inputs earn nothing."""
    ps = ProblemSet(PS)
    nb = nbformat.read(ps.path, as_version=4)
    forged = '''import glob as _glob, os as _os
for _path in _glob.glob(_os.path.join(_os.environ.get("GRADER_RESULTS_DIR", "."), "inputs",
                                      "gaussian*.npz")):
    np.savez(_path, x=np.full(3, 5.0))


def gaussian_mle(x):
    return float(np.mean(x)), float(np.std(x))
'''
    _cell(nb, "gaussian_mle").source = forged
    result = grade_submission(ps, nbformat.writes(nb).encode(), local_executor())
    scores = _scores(result)
    assert scores["gaussian_mle_visible"].points == 0
    assert scores["gaussian_mle_hidden"].points == 0
    # The function ran on the forged inputs (its answers are theirs: 5 and 0), and was scored
    # against the grader's own. The grader states the student's value by its order of magnitude
    # only (coursedata.compare.bounded): 5 against the grader's mean is off by about 100 %.
    from autograder.checks.declared import case_inputs, declared_cases

    cases = declared_cases(ps.source)
    (x,) = [x for name in cases if name.startswith("gaussian")
            and np.shape(x := case_inputs(cases, name).get("x")) == (30,)]
    off = abs(5.0 - float(np.mean(x))) / abs(float(np.mean(x)))
    assert 0.3 < off < 3  # rounds to 1e+00
    assert (f"μ̂ for x of shape (30,) is wrong: expected {float(np.mean(x)):.6g}, yours is off by "
            f"relative about 1e+00") in scores["gaussian_mle_hidden"].message
    assert scores["gamma_mle_hidden"].points == scores["gamma_mle_hidden"].max_points  # untouched


# ---------------------------------------------------------------------------------------------
# Problem set 6: every visible cell declared, three hidden cells Python with declared inputs
# ---------------------------------------------------------------------------------------------


def test_ps6_declares_its_closed_forms_and_every_input():
    """The kit carries no generator of problem set 6: every case is declared in the notebook,
    made by the grader's generators; the hidden cells of questions 4 to 6 compare functions of
    several returned values (or tolerances computed from the inputs) and stay Python, while
    their visible cells are declared (so the student's check judges them as the grader does)."""
    ps = ProblemSet("ps6_generative_discriminative")
    kinds = {c.grade_id: c.check for c in inventory(ps)}
    questions = ("shared_variance_weights", "cross_entropy_and_gradient",
                 "fit_logistic_regression")
    assert {g for g, k in kinds.items() if k == "python"} == {f"{q}_hidden" for q in questions}
    assert all(kinds[f"{q}_visible"] == "declared" for q in questions)
    assert problems(ps) == []
    cases = declared_cases(ps.source)
    assert len(cases) == 20
    got = case_inputs(cases, "fit_lr_cancer")
    assert got["X"].shape == (200, 10) and got["y"].dtype == np.int64
    assert isinstance(got["reg"], float) and isinstance(got["n_iter"], int)


# ---------------------------------------------------------------------------------------------
# Several arguments from one generator ("R_true, mask": one rating matrix)
# ---------------------------------------------------------------------------------------------

RATINGS_PARAMS = {"seed": 4, "users": 6, "items": 5, "rank": 2, "density": 0.5}
RATINGS = {"course.checks.ps2_matrix_completion:ratings": RATINGS_PARAMS}
RMSE = {"reference": "course.checks.ps2_matrix_completion:masked_rmse",
        "outputs": ["the RMSE"]}
R_PRED = np.full((6, 5), 3.0)


def _rmse_notebook(args: dict) -> nbformat.NotebookNode:
    return _notebook(("q_visible", {**RMSE, "cases": {"m": args}}))


@pytest.mark.parametrize("args, message", [
    ({"R_true, , mask": RATINGS}, "argument key 'R_true, , mask' must be argument names "
                                  "separated by commas, none empty"),
    ({"R_true, mask,": RATINGS}, "argument key 'R_true, mask,' must be argument names"),
    ({"R_true, R_true": RATINGS}, "argument key 'R_true, R_true' names ['R_true'] twice"),
    ({"R_true, mask": RATINGS, "mask": [[True]]},
     "argument key 'mask' names ['mask'], which another key of the case gives too"),
    ({"mask": [[True]], "R_true, mask": RATINGS},
     "argument key 'R_true, mask' names ['mask'], which another key of the case gives too"),
    ({"R_true, args": RATINGS}, "argument key 'R_true, args' names 'args'"),
    ({"R_true, mask": [[1.0], [True]]}, "argument key 'R_true, mask' names 2 arguments, so its "
                                        "input is one generator returning 2 values"),
])
def test_a_key_naming_several_arguments_is_read_strictly(args, message):
    with pytest.raises(DeclarationError) as info:
        declarations(_rmse_notebook({**args, "R_pred": R_PRED.tolist()}))
    assert str(info.value).startswith("q_visible, case 'm': ")
    assert message in str(info.value)


@pytest.mark.parametrize("key, message", [
    ("R_true, mask, R_pred", "argument key 'R_true, mask, R_pred' names 3 arguments, but its "
                             "generator returns 2 values"),
    ("R_true", "its generator returns 2 values; declare them under one key naming one argument "
               "per value"),
])
def test_a_generator_returning_another_number_of_values_is_named(key, message):
    """Caught by the case's inputs (grader, self-check) and by the validation that runs before
    anything else: a single name for a tuple is not stacked into one array."""
    nb = _rmse_notebook({key: RATINGS} | ({} if "R_pred" in key else {"R_pred": R_PRED.tolist()}))
    with pytest.raises(DeclarationError) as info:
        case_inputs(declared_cases(nb), "m")
    assert str(info.value).startswith("q_visible, case 'm': ") and message in str(info.value)

    def edit(nb):
        case = _cell(nb, "rmse_visible").metadata["course"]["check"]["cases"]["rmse"]
        case[key] = case.pop("R_true, mask")
        case.pop("R_pred") if "R_pred" in key else None
    ps = ProblemSet("ps2_matrix_completion")
    ps.source = copy.deepcopy(ps.source)
    edit(ps.source)
    assert any(p.startswith("ps2_matrix_completion: rmse_visible: the inputs of case 'rmse' "
                            "cannot be made: ") and message in p and repr(key) in p
               for p in problems(ps))
    from autograder.authoring.validate import declared_problems

    [found] = declared_problems(ps)
    assert "one argument per value its generator returns" in found.fix


def test_arguments_drawn_together_are_declared_once_and_read_back_one_by_one(tmp_path,
                                                                           monkeypatch):
    """``R_true`` and ``mask`` of one rating matrix come from one call of the generator (they
    once were two declarations whose parameters could drift apart); the grader, the kernel's
    reader and the messages see the single arguments."""
    from course.checks.ps2_matrix_completion import ratings

    nb = _rmse_notebook({"R_true, mask": RATINGS, "R_pred": R_PRED.tolist()})
    R, mask = ratings(**RATINGS_PARAMS)  # one call: the pair belongs together
    assert R.dtype == float and mask.dtype == bool and 0 < mask.sum() < mask.size
    cases = declared_cases(nb)
    assert cases["m"].arguments == ["R_true", "mask", "R_pred"]
    made = case_inputs(cases, "m")
    assert list(made) == ["R_true", "mask", "R_pred"]

    assert write_inputs(nb, tmp_path) == ["m"]
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    read = inputs("ps2_matrix_completion", "m")
    assert sorted(read) == ["R_pred", "R_true", "mask"]
    for name, expected in [("R_true", R), ("mask", mask), ("R_pred", R_PRED)]:
        assert read[name].dtype == expected.dtype and read[name].shape == (6, 5), name
        np.testing.assert_array_equal(read[name], expected)
        np.testing.assert_array_equal(made[name], expected)

    check = build_checks(nb)["q_visible"]
    right = np.sqrt(np.mean((R - R_PRED)[mask] ** 2))  # the closed form on the observed entries
    answers = tmp_path / "answers"
    answers.mkdir()
    assert check(_answers(answers, "m", right)).fraction == 1.0
    message = check(_answers(answers, "m", right + 0.5)).message
    assert (f"the RMSE for R_true of shape (6, 5), mask of shape (6, 5) ({int(mask.sum())} True),"
            " R_pred of shape (6, 5) is wrong") in message


@pytest.mark.parametrize("yours, expected", [(0.2549263123, 0.2549261701), (1.0, 1.0 + 3e-12),
                                             (-3.5e-5, -3.4999e-5)])
def test_a_wrong_value_is_printed_with_the_digits_that_tell_it_apart(yours, expected):
    """"yours is 0.254926, expected about 0.254926" shows no difference; the message must."""
    from coursedata.compare import compare

    message = compare(np.array([yours]), np.array([expected]), "p", rtol=1e-13, atol=0.0)
    shown = re.search(r"yours is (\S+), expected (\S+?):", message)
    assert shown and shown.group(1) != shown.group(2), message
    assert float(shown.group(1)) != float(shown.group(2))
    assert f"off by {abs(yours - expected):.2g}" in message
    assert "1e-13 x |expected|" in message


@pytest.mark.parametrize("name", sorted(p.name for p in (COURSE_DIR / "source").iterdir()))
def test_inputs_are_written_in_the_order_of_the_functions_parameters(name, tmp_path):
    """``record`` passes the inputs by position, as the visible tests call the functions, so each
    case's file lists them in the order of its function's parameters, whatever the declaration's
    order (a student's renamed parameter then changes nothing)."""
    from autograder.checks.record_calls import answer_parameters, record_calls

    nb = sample_variants(ProblemSet(name))[0].source  # with variants: a sample student's
    write_inputs(nb, tmp_path)
    params = answer_parameters(nb)
    checked = 0
    for call in record_calls(nb):
        if call.inputs_case and call.function in params:
            with np.load(tmp_path / "inputs" / f"{call.inputs_case}.npz") as z:
                assert z.files == params[call.function][:len(z.files)], (call, z.files)
            checked += 1
    assert checked


def test_a_fitted_estimator_is_a_reference(tmp_path):
    """A class names its expected values by its fitted attributes and methods: no wrapper
    function. The oracle is scikit-learn's GaussianNB (var_smoothing=0: the divisor-N_c
    variances), independent of the reference package."""
    from sklearn.naive_bayes import GaussianNB

    check = {"reference": "solutions.naive_bayes:GaussianNB",
             "fitted": {"init": {"var_smoothing": 0.0}, "fit": ["X", "y"],
                        "returns": ["theta_", "var_", {"predict_log_proba": ["X"]}]},
             "outputs": ["the class means", "the class variances", "the log-posteriors"],
             "rtol": 1e-9, "atol": 1e-12,
             "cases": {"gnb": {"X": {"normal": {"seed": 3, "n": 40, "mean": 0, "sd": 2}},
                               "y": {"bernoulli": {"seed": 4, "n": 40, "p": 0.5}}}}}
    nb = _notebook(("q_visible", check))
    [case] = declared_cases(nb).values()
    inputs = generate_case(case)
    X, y = inputs["X"].reshape(-1, 1), inputs["y"]
    check["cases"]["gnb"]["X"] = X.tolist()
    check["cases"]["gnb"]["y"] = y.tolist()
    nb = _notebook(("q_visible", check))
    oracle = GaussianNB(var_smoothing=0.0).fit(X, y)
    right = (oracle.theta_, oracle.var_, oracle.predict_log_proba(X))
    assert build_checks(nb)["q_visible"](_answers(tmp_path, "gnb", *right)).fraction == 1.0
    wrong = (oracle.theta_, oracle.var_ * len(y) / (len(y) - 1), right[2])
    outcome = build_checks(nb)["q_visible"](_answers(tmp_path, "gnb", *wrong))
    assert outcome.fraction == 0.0 and "the class variances" in outcome.message


def test_a_malformed_fitted_declaration_is_named():
    from autograder.checks.declaration import DeclarationError

    bad = {"reference": "solutions.naive_bayes:GaussianNB", "fitted": {"returns": "theta_"},
           "cases": {"g": {"X": [[0.0], [1.0]], "y": [0, 1]}}}
    with pytest.raises(DeclarationError, match="fitted must be"):
        declared_cases(_notebook(("q_visible", bad)))


# ---------------------------------------------------------------------------------------------
# Problem set 2: ALS's factors, defined up to one orthogonal Q, compared together
# ---------------------------------------------------------------------------------------------

PS2 = "ps2_matrix_completion"


def _dense_als(R, mask, k, reg, n_iters, seed):
    """ALS as problem set 2 states it, written here from the text (an oracle independent of the
    course's reference): Z from ``default_rng(seed).normal(0, 1/sqrt(k), (M, k))``, then each sweep
    the exact ridge user step, then the item step; J = ½ Σ_observed (R - U Zᵀ)² + ½ λ (‖U‖² + ‖Z‖²)
    after each."""
    Z = np.random.default_rng(seed).normal(0.0, 1.0 / np.sqrt(k), size=(R.shape[1], k))

    def ridge(ratings, observed, other):
        return np.array([np.linalg.solve(other[o].T @ other[o] + reg * np.eye(k), other[o].T @ r[o])
                         for r, o in zip(ratings, observed)])

    losses = []
    for _ in range(n_iters):
        U = ridge(R, mask, Z)
        Z = ridge(R.T, mask.T, U)
        losses.append(0.5 * np.sum(np.where(mask, R - U @ Z.T, 0.0) ** 2)
                      + 0.5 * reg * (np.sum(U**2) + np.sum(Z**2)))
    return U, Z, np.array(losses)


def _ps2_verdicts(tmp_path, name, U, Z, losses):
    """The grader's outcome of ``als_visible`` and the student's check's verdict (what the release
    gives it), on one results folder holding the answer ``(U, Z, losses)``."""
    from autograder.authoring.visible import embed
    from coursedata.visible import verdict, visible_checks

    ps = ProblemSet(PS2)
    folder = tmp_path / name
    folder.mkdir()
    np.savez(folder / "als.npz", out_0=U, out_1=Z, out_2=losses)
    released = copy.deepcopy(ps.source)
    embed(released, ps.source, set(load_checks(PS2).CHECKS))
    graded = checks_for(ps)["als_visible"](Answers(PS2, folder, declared_cases(ps.source)))
    return graded, verdict(visible_checks(released)["als_visible"], folder)


def test_als_factors_are_compared_together_up_to_one_orthogonal_q(tmp_path):
    """U Q and Z Q fit as well as U and Z for any orthogonal Q, penalty included (the lecture's
    section on the model: chapters/02_matrix_completion.md): a correct run with the signs of both
    flipped, the factors swapped or rotated keeps the point, in the grader and in the student's
    check alike; one factor's sign alone, or U scaled up and Z down (the same U Zᵀ, another
    penalty), loses it with a message that shows the two values, the error and the tolerance."""
    inputs = case_inputs(declared_cases(ProblemSet(PS2).source), "als")
    U, Z, losses = _dense_als(**inputs)
    angle = np.deg2rad(30)
    Q = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    right = {"as run": (U, Z), "signs flipped": (-U, -Z), "swapped": (U[:, ::-1], Z[:, ::-1]),
             "rotated": (U @ Q, Z @ Q), "one sign flipped in both": (U * [1, -1], Z * [1, -1])}
    for name, (u, z) in right.items():
        graded, said = _ps2_verdicts(tmp_path, name, u, z, losses)
        assert graded.fraction == 1.0 and said is None, (name, graded.message, said)
    wrong = {"U's sign alone": (-U, Z), "U doubled, Z halved": (2 * U, Z / 2)}
    for name, (u, z) in wrong.items():
        graded, said = _ps2_verdicts(tmp_path, name, u, z, losses)
        assert graded.fraction == 0.0 and said == graded.message, (name, graded.message, said)
        shown = re.search(r"^[UZ] for R of shape \(20, 15\).* \(compared up to one orthogonal Q "
                          r"applied to U and Z together\) is wrong at index \(\d+, \d+\): yours "
                          r"is (\S+), expected (\S+?): off by \S+ \(relative \S+\), more than "
                          r"the tolerance 1e-07 \+ 1e-06 x \|expected\|", said)
        assert shown and shown.group(1) != shown.group(2), said
    graded, said = _ps2_verdicts(tmp_path, "losses off", U, Z, losses * (1 + 1e-5))
    assert graded.fraction == 0.0 and said == graded.message and said.startswith("losses"), said


def test_als_with_biases_keeps_the_point_with_both_signs_flipped(tmp_path):
    """The bias model's U and Z are compared together too; its biases, mean and losses as they
    are, so a flipped U and Z keep the point and a flipped user bias loses it."""
    ps = ProblemSet(PS2)
    check = checks_for(ps)["als_with_biases_visible"]
    case = declared_cases(ps.source)["biases"]
    U, Z, b, c, mu, losses = load_checks(PS2).als_with_biases_run(**case_inputs(
        declared_cases(ps.source), "biases"))
    assert [o.compare for o in case.outputs[:2]] == ["orthogonal_together"] * 2

    def fraction(name, *values):
        (tmp_path / name).mkdir()
        np.savez(tmp_path / name / "biases.npz", **{f"out_{i}": v for i, v in enumerate(values)})
        return check(Answers(PS2, tmp_path / name, declared_cases(ps.source)))

    assert fraction("flipped", -U, -Z, b, c, mu, losses).fraction == 1.0
    wrong = fraction("b flipped", -U, -Z, -b, c, mu, losses)
    assert wrong.fraction == 0.0 and wrong.message.startswith("b (user biases) for R of shape")


def test_flipping_both_als_factors_is_a_declared_equivalent_form():
    """The self-tests' generic variants negate U and Z together and expect full marks; negating
    one of them alone is still a wrong answer."""
    forms = equivalent_forms(ProblemSet(PS2).source)
    assert ("als", (0, 1), "negated") in forms and ("als_with_biases", (0, 1), "negated") in forms
    assert not any(f in ("als", "als_with_biases") and o in (0, 1) for f, o, _ in forms)
