"""A visible "ok" is the grade's: the student's check and the grader agree on every visible cell.

Problem set 5 as nbgrader releases it, with the reference answers typed in, then changed the way
students change them: the kernel density estimate computed in float32 (it passes every property
the visible test asserts, but not the grader's comparison with the reference at the declared
tolerance), the parameters renamed, the chosen bandwidth and its scores returned as a list, a
function whose first call alone is wrong (the check must call it in the grader's order). Each
notebook is checked as a student checks it (``python -m coursedata.check``, a subprocess) and
graded as the instructor grades it (the real sandbox), and every visible cell's line in the check
must say what the grader gives it: ``ok`` exactly when the cell gets its points.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.grading.problemset import ProblemSet
from autograder.run.task import GradingOptions, grade_task
from autograder.sandbox import sandbox_available, warm
from coursedata.naming import VISIBLE
from tests.environment import require
from tests.psharness import generate_release

pytestmark = [pytest.mark.slow, require(sandbox_available(), "bubblewrap is needed to grade")]

PS = ProblemSet("ps5_kde")
#: A problem set whose visible cells of questions 4 to 6 the course's Python used to check.
PS_HAND = ProblemSet("ps6_generative_discriminative")
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
_LINE = re.compile(r"^(ok|FAIL)  +(\w+) \(")
#: A problem set whose ALS cells compare two returned factors together (up to one orthogonal Q).
PS_ALS = ProblemSet("ps2_matrix_completion")
#: A problem set whose question 5 (the score) follows question 4 (the log-likelihood).
PS_MLE = ProblemSet("ps3_mle")
#: A problem set whose visible tests check properties (orthonormal rows, zero column means).
PS_PCA = ProblemSet("ps1_pca")
#: A problem set whose hidden cell of question 1 tries points far from every component.
PS_MIX = ProblemSet("ps7_mixtures_em")
SLOW_FIXTURES = ("answered", "answered_hand", "answered_als", "answered_mle", "answered_pca",
                 "answered_mix")


@pytest.fixture(scope="module", autouse=True)
def _no_zygote_left():
    """The grading below starts the sandbox's warm zygote; it stops with this module."""
    yield
    warm.stop_zygote()


def _answered(ps: ProblemSet, folder: Path) -> nbformat.NotebookNode:
    """The release of ``ps`` with the reference answers typed into its code answer cells."""
    root = generate_release([ps.name], folder)
    nb = nbformat.read(root / ps.name / ps.notebook_name, as_version=4)
    answers = {c.metadata["nbgrader"]["grade_id"]: _MARKER.sub("", c.source)
               for c in ps.source.cells
               if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid]
    return nb


@pytest.fixture(scope="module")
def answered(tmp_path_factory) -> nbformat.NotebookNode:
    return _answered(PS, tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def answered_hand(tmp_path_factory) -> nbformat.NotebookNode:
    return _answered(PS_HAND, tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def answered_als(tmp_path_factory) -> nbformat.NotebookNode:
    return _answered(PS_ALS, tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def answered_mle(tmp_path_factory) -> nbformat.NotebookNode:
    return _answered(PS_MLE, tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def answered_pca(tmp_path_factory) -> nbformat.NotebookNode:
    return _answered(PS_PCA, tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="module")
def answered_mix(tmp_path_factory) -> nbformat.NotebookNode:
    return _answered(PS_MIX, tmp_path_factory.mktemp("course"))


def _answer(nb, function: str):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")
                and re.search(rf"^def {function}\(", c.source, re.M))


def _float32(nb):
    cell = _answer(nb, "kde_pdf")
    cell.source = cell.source.replace("dtype=float", "dtype=np.float32")
    assert "float32" in cell.source
    return nb


def _renamed(nb):
    cell = _answer(nb, "kde_pdf")
    cell.source = re.sub(r"\bx_query\b", "points", re.sub(r"\bdata\b", "sample", cell.source))
    assert "def kde_pdf(points, sample," in cell.source
    return nb


def _list_pair(nb):
    cell = _answer(nb, "select_bandwidth")
    found = re.findall(r"^    return (.+), (.+)$", cell.source, re.M)
    assert len(found) == 1, cell.source
    cell.source = cell.source.replace(f"    return {found[0][0]}, {found[0][1]}",
                                      f"    return [{found[0][0]}, {found[0][1]}]")
    return nb


def _first_call_off(nb):
    """kde_pdf off by 1 % on its first call only (state kept between calls): the grader calls it
    first from the cell's hidden part, so the cell fails on the comparison, not on its test."""
    cell = _answer(nb, "kde_pdf")
    cell.source += ("\n_right, _calls = kde_pdf, []\n\n\n"
                    "def kde_pdf(*args, **kwargs):\n"
                    "    _calls.append(1)\n"
                    "    return _right(*args, **kwargs) * (1.01 if len(_calls) == 1 else 1)\n")
    return nb


def _check(nb, folder: Path, ps: ProblemSet = PS) -> dict[str, tuple[str, str]]:
    """``{grade_id: (ok or FAIL, the line)}`` as the student's check prints them."""
    path = folder / ps.notebook_name
    nbformat.write(nb, path)
    done = subprocess.run([sys.executable, "-m", "coursedata.check", path.name], cwd=folder,
                          capture_output=True, text=True, timeout=900)
    lines = {m.group(2): (m.group(1), line) for line in done.stdout.splitlines()
             if (m := _LINE.match(line))}
    assert lines, done.stdout + done.stderr
    return lines


def _grade(nb, ps: ProblemSet = PS) -> dict:
    record = grade_task(ps.name, "student", nbformat.writes(nb).encode(), GradingOptions())
    return {s.grade_id: s for s in record.scores}


@pytest.mark.parametrize("change, loses", [(_float32, "kde_pdf"), (_renamed, None),
                                           (_list_pair, None), (_first_call_off, "kde_pdf")])
def test_every_visible_line_of_the_check_is_the_graders_verdict(answered, tmp_path, change,
                                                                 loses):
    nb = change(copy.deepcopy(answered))
    said, scores = _check(nb, tmp_path), _grade(nb)
    visible = [c.grade_id for c in PS.grade_cells if c.autograded and c.kind == VISIBLE]
    assert set(said) == set(visible)
    for gid in visible:
        full = scores[gid].points == scores[gid].max_points
        assert (said[gid][0] == "ok") == full, (said[gid][1], scores[gid])
    wrong = {gid for gid, s in scores.items() if s.points is not None and s.points < s.max_points}
    assert wrong == ({f"{loses}_visible", f"{loses}_hidden"} if loses else set()), wrong
    if loses:  # the message shows the difference and the tolerance
        line = said[f"{loses}_visible"][1]
        shown = re.search(r"yours is (\S+), expected (\S+?): off by \S+ \(relative \S+\), more "
                          r"than the tolerance", line)
        assert shown and shown.group(1) != shown.group(2), line
        # for the same reason as at grading: the comparison, not the visible test's assertion
        assert "yours is" in scores[f"{loses}_visible"].message, scores[f"{loses}_visible"]


def test_the_check_names_an_earlier_mistake_where_a_later_function_pays(answered, tmp_path):
    """Leave-one-out dividing by N (not N - 1): select_bandwidth, which calls it, fails too. The
    check's line for every later cell that fails says what the grader's feedback says: which
    earlier function of the student's may be the cause."""
    nb = copy.deepcopy(answered)
    cell = _answer(nb, "loo_log_likelihood")
    cell.source = cell.source.replace("np.log((N - 1) * h)", "np.log(N * h)")
    assert "np.log(N * h)" in cell.source
    said, scores = _check(nb, tmp_path), _grade(nb)
    blamed = {gid: re.search(r"this uses your ([\w, ]+), which", s.message)
              for gid, s in scores.items() if gid in said}
    assert any(blamed.values()), scores  # the grader names the cause somewhere
    for gid, found in blamed.items():
        line = said[gid][1]
        assert (found is not None) == ("this uses your" in line), (line, scores[gid].message)
        if found:
            assert f"this uses your {found.group(1)}, which" in line, line


def _two_classes_only(nb):
    """The number of classes hard-coded to the visible example's two: the function raises on the
    cell's own three-class inputs, which the grader gives 0 and the check can tell without the
    reference."""
    cell = _answer(nb, "fit_logistic_regression")
    cell.source = cell.source.replace("n_classes = int(y.max()) + 1", "n_classes = 2")
    assert "n_classes = 2" in cell.source
    return nb


def _remembers_its_first_answer(nb):
    """A mutable default that keeps the first answer per number of classes: the grader calls the
    function first from the cell's hidden part, so the visible test then gets a stale answer."""
    cell = _answer(nb, "shared_variance_weights")
    cell.source = cell.source.replace("def shared_variance_weights(X, y):",
                                      "def shared_variance_weights(X, y, _memo={}):")
    cell.source = cell.source.replace("    return W, w0",
                                      "    return _memo.setdefault(n_classes, (W, w0))")
    assert "_memo.setdefault" in cell.source and "_memo={}" in cell.source
    return nb


def _gradient_in_float32(nb):
    """The cross-entropy's logits and gradients computed in float32: off by more than the declared
    ``rtol`` (1e-9 for the loss, 1e-7 for the gradients), and its finite differences too."""
    cell = _answer(nb, "cross_entropy_and_gradient")
    cell.source = cell.source.replace("    Z = X @ W.T + b",
                                      "    X, W, b = (np.float32(v) for v in (X, W, b))\n"
                                      "    Z = X @ W.T + b")
    assert "np.float32(v)" in cell.source
    return nb


@pytest.mark.parametrize("change, cell", [(_two_classes_only, "fit_logistic_regression_visible"),
                                          (_remembers_its_first_answer,
                                           "shared_variance_weights_visible"),
                                          (_gradient_in_float32,
                                           "cross_entropy_and_gradient_visible")])
def test_a_cell_once_checked_in_python_gets_the_graders_verdict(answered_hand, tmp_path, change,
                                                                 cell):
    """Problem set 6's visible cells that the course's Python used to check (questions 4 to 6,
    now declared): a raise on the cell's own inputs, a function that answers differently on a
    second call, and values in float32 fail in the check as they lose the point at grading."""
    nb = change(copy.deepcopy(answered_hand))
    said, scores = _check(nb, tmp_path, PS_HAND), _grade(nb, PS_HAND)
    assert scores[cell].points == 0, scores[cell]
    assert said[cell][0] == "FAIL", said[cell][1]
    for gid, (verdict, line) in said.items():  # and no other visible line says otherwise
        full = scores[gid].points == scores[gid].max_points
        assert (verdict == "ok") == full, (line, scores[gid])


def _als_returns(nb, returned: str):
    """``als`` returning ``returned`` (in terms of its U, Z and losses) instead of them."""
    cell = _answer(nb, "als")
    assert cell.source.count("    return U, Z, losses") == 1, cell.source
    cell.source = cell.source.replace("    return U, Z, losses", f"    return {returned}")
    return nb


def _signs_flipped(nb):
    """Both factors' signs flipped: the same U Zᵀ and objective, a correct answer."""
    return _als_returns(nb, "-U, -Z, losses")


def _first_call_flips_one_sign(nb):
    """U's sign alone flipped on the first call only (state kept between calls): the grader
    records the cell's case first, so the visible test's own calls pass and the point is lost on
    the comparison, which the check makes too."""
    cell = _answer(nb, "als")
    cell.source += ("\n_right_als, _als_calls = als, []\n\n\n"
                    "def als(*args, **kwargs):\n"
                    "    _als_calls.append(1)\n"
                    "    U, Z, losses = _right_als(*args, **kwargs)\n"
                    "    return (-U if len(_als_calls) == 1 else U), Z, losses\n")
    return nb


@pytest.mark.parametrize("change, loses", [(_signs_flipped, False),
                                           (_first_call_flips_one_sign, True)])
def test_als_factors_get_the_same_verdict_in_the_check_and_the_grade(answered_als, tmp_path,
                                                                     change, loses):
    """Problem set 2's ALS cells, once checked by the course's Python (the check could only say
    the function ran): U and Z compared together up to one orthogonal Q, in the check as in the
    grader. Both signs flipped keeps every point and every "ok"; U's sign alone flipped on the
    grader's call fails ``als_visible`` in both, the line showing the two values."""
    nb = change(copy.deepcopy(answered_als))
    said, scores = _check(nb, tmp_path, PS_ALS), _grade(nb, PS_ALS)
    visible = [c.grade_id for c in PS_ALS.grade_cells if c.autograded and c.kind == VISIBLE]
    assert set(said) == set(visible)
    for gid in visible:
        full = scores[gid].points == scores[gid].max_points
        assert (said[gid][0] == "ok") == full, (said[gid][1], scores[gid])
    assert (scores["als_visible"].points == 0) == loses, scores["als_visible"]
    if loses:
        line = said["als_visible"][1]
        shown = re.search(r"\(compared up to one orthogonal Q applied to U and Z together\) is "
                          r"wrong at index \(\d+, \d+\): yours is (\S+), expected (\S+?): off by",
                          line)
        assert shown and shown.group(1) != shown.group(2), line
        assert "yours is" in scores["als_visible"].message, scores["als_visible"]
    else:
        assert all(s.points == s.max_points for s in scores.values() if s.points is not None)


def _score_as_a_tuple(nb):
    """The gradient returned as ``return d_shape, d_rate``: the two entries of the array of shape
    (2,) the question asks for, as a tuple."""
    cell = _answer(nb, "gamma_score")
    assert cell.source.count("    return np.array([d_shape, d_rate])") == 1, cell.source
    cell.source = cell.source.replace("    return np.array([d_shape, d_rate])",
                                      "    return d_shape, d_rate")
    return nb


def _log_likelihood_in_float32(nb):
    """Question 4's log-likelihood computed in float32 (a mistake: it loses question 4's points),
    gamma_score left right: question 5's visible test used to differentiate the student's
    log-likelihood numerically, so the one mistake cost question 5's visible point too."""
    cell = _answer(nb, "gamma_log_likelihood")
    assert cell.source.count("x = np.asarray(x, dtype=float)") == 1, cell.source
    cell.source = cell.source.replace("x = np.asarray(x, dtype=float)",
                                      "x = np.asarray(x, dtype=np.float32)")
    return nb


@pytest.mark.parametrize("change, loses", [(_score_as_a_tuple, set()),
                                           (_log_likelihood_in_float32,
                                            {"gamma_log_likelihood_visible",
                                             "gamma_log_likelihood_hidden"})])
def test_the_score_keeps_its_points_for_a_tuple_and_for_an_earlier_mistake(answered_mle,
                                                                           tmp_path, change,
                                                                           loses):
    """Problem set 3's question 5: a gradient returned as a tuple is the array it asks for, and
    a float32 log-likelihood (question 4's mistake) costs question 4 alone. The check's line for
    every visible cell is the grader's verdict."""
    nb = change(copy.deepcopy(answered_mle))
    said, scores = _check(nb, tmp_path, PS_MLE), _grade(nb, PS_MLE)
    for gid, (verdict, line) in said.items():
        full = scores[gid].points == scores[gid].max_points
        assert (verdict == "ok") == full, (line, scores[gid])
    wrong = {gid for gid, s in scores.items() if s.points is not None and s.points < s.max_points}
    assert wrong == loses, {gid: scores[gid].message for gid in wrong}


def test_a_ridge_step_off_by_a_stabiliser_shows_its_gradient(answered_als, tmp_path):
    """``update_users`` solving with ``(reg + 1e-6) I``: the visible test's gradient, of size
    about 1e-6, used to be shown rounded to four decimals (``[-0. -0.]``, which says nothing is
    wrong); the line shows its size and the tolerance, and the verdict is the grader's."""
    nb = copy.deepcopy(answered_als)
    cell = _answer(nb, "update_users")
    assert cell.source.count("A = Z_i.T @ Z_i + reg * np.eye(k)") == 1, cell.source
    cell.source = cell.source.replace("A = Z_i.T @ Z_i + reg * np.eye(k)",
                                      "A = Z_i.T @ Z_i + (reg + 1e-6) * np.eye(k)")
    said, scores = _check(nb, tmp_path, PS_ALS), _grade(nb, PS_ALS)
    verdict, line = said["update_users_visible"]
    assert verdict == "FAIL" and scores["update_users_visible"].points == 0, line
    shown = re.search(r"is \[([^\]]+)\], not zero \(up to (\S+), more than the tolerance (\S+)\)",
                      line)
    assert shown, line
    gradient = [float(v) for v in shown.group(1).split(",")]
    assert max(map(abs, gradient)) == pytest.approx(float(shown.group(2)), rel=0.05)
    assert float(shown.group(2)) > float(shown.group(3)), line


def _centres_in_place(nb):
    """``X -= mean``: the right values, but the caller's ``X_demo`` is centred by the call."""
    cell = _answer(nb, "center")
    assert cell.source.count("    return X - mean, mean") == 1, cell.source
    cell.source = cell.source.replace("    return X - mean, mean", "    X -= mean\n    return X, mean")
    return nb


def _components_in_float32(nb):
    """pca_eig's covariance in float32: its eigenvectors are orthonormal to about 1e-7 only."""
    cell = _answer(nb, "pca_eig")
    assert cell.source.count("    Xc = X - X.mean(axis=0)") == 1, cell.source
    cell.source = cell.source.replace("    Xc = X - X.mean(axis=0)",
                                      "    Xc = (X - X.mean(axis=0)).astype(np.float32)")
    return nb


@pytest.mark.parametrize("change, cell, said_is", [
    (_centres_in_place, "center_visible", r"your center changed its argument X in place"),
    (_components_in_float32, "pca_eig_visible",
     r"C Cᵀ differs from the identity by up to (?P<off>\S+), more than the tolerance (?P<tol>\S+)"
     r" \(compute in float64\)")])
def test_a_property_test_says_what_differs(answered_pca, tmp_path, change, cell, said_is):
    """Problem set 1's visible tests that check properties, not values: a function that centres
    its argument in place was told "X_centered + mean should give X back" (the values it returned
    were right), and float32 components "C Cᵀ has off-diagonal 4.8e-10 and diagonal [1. 1.]"
    (both look exact). Each line now names the cause, or the difference and the tolerance, and is
    the grader's verdict."""
    nb = change(copy.deepcopy(answered_pca))
    said, scores = _check(nb, tmp_path, PS_PCA), _grade(nb, PS_PCA)
    verdict, line = said[cell]
    assert verdict == "FAIL" and scores[cell].points == 0, (line, scores[cell])
    shown = re.search(said_is, line)
    assert shown, line
    if "off" in shown.groupdict():
        assert float(shown.group("off")) > float(shown.group("tol")), line
    for gid, (verdict, line) in said.items():
        assert (verdict == "ok") == (scores[gid].points == scores[gid].max_points), (line,
                                                                                     scores[gid])


def test_a_failing_cell_names_the_earlier_function_whose_visible_test_passed(answered, tmp_path):
    """``loo_log_likelihood`` with the common ``+ 1e-12`` inside its log: its visible case
    (h = 0.3) hides it and passes, its hidden outlier case does not, and select_bandwidth, right
    itself, fails on the smallest candidate. The grader names loo_log_likelihood as the cause; the
    check's line used to name nothing, sending the student to look for a mistake in a correct
    select_bandwidth."""
    nb = copy.deepcopy(answered)
    cell = _answer(nb, "loo_log_likelihood")
    assert cell.source.count("logsumexp(log_k, axis=1)") == 1, cell.source
    cell.source = cell.source.replace("logsumexp(log_k, axis=1)",
                                      "np.log(np.sum(np.exp(log_k), axis=1) + 1e-12)")
    said, scores = _check(nb, tmp_path), _grade(nb)
    assert said["loo_log_likelihood_visible"][0] == "ok", said["loo_log_likelihood_visible"]
    assert scores["loo_log_likelihood_hidden"].points < scores["loo_log_likelihood_hidden"].max_points
    verdict, line = said["select_bandwidth_visible"]
    assert verdict == "FAIL" and scores["select_bandwidth_visible"].points == 0, line
    assert "loo_log_likelihood" in scores["select_bandwidth_visible"].message
    assert "this calls your loo_log_likelihood, whose visible test passes here" in line, line


def test_an_output_flood_names_the_function_that_printed(answered, tmp_path):
    """loo_log_likelihood printing every term: the flood came from a cell that calls
    select_bandwidth, which calls loo_log_likelihood; the note used to name select_bandwidth
    alone, which prints nothing."""
    nb = copy.deepcopy(answered)
    cell = _answer(nb, "loo_log_likelihood")
    assert cell.source.count("    return float(np.sum(log_p))") == 1, cell.source
    cell.source = cell.source.replace("    return float(np.sum(log_p))",
                                      "    for v in log_p:\n        print('log p', v)\n"
                                      "    return float(np.sum(log_p))")
    path = tmp_path / PS.notebook_name
    nbformat.write(nb, path)
    done = subprocess.run([sys.executable, "-m", "coursedata.check", path.name], cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    notes = [line for line in done.stdout.splitlines() if line.startswith("NOTE")]
    assert len(notes) == 1, done.stdout
    assert "loo_log_likelihood" in notes[0] and "printed past the limit" in notes[0], notes


def test_a_hidden_case_that_overflows_says_why(answered_mix, tmp_path):
    """Responsibilities normalised by ``np.log(np.exp(a).sum(axis=1))``, not log-sum-exp: right on
    the visible inputs (``ok`` and its point), NaN on the hidden case far from every component.
    The hidden cell's feedback used to say only "contains NaN or infinite values", where the
    softmax of problem set 6 says "(shift each row first)": it names the cause now."""
    nb = copy.deepcopy(answered_mix)
    cell = _answer(nb, "responsibilities")
    found = re.findall(r"^    (\w+) = logsumexp\((\w+), axis=1\)$", cell.source, re.M)
    assert len(found) == 1, cell.source
    name, joint = found[0]
    cell.source = cell.source.replace(f"{name} = logsumexp({joint}, axis=1)",
                                      f"{name} = np.log(np.exp({joint}).sum(axis=1))")
    said, scores = _check(nb, tmp_path, PS_MIX), _grade(nb, PS_MIX)
    visible, hidden = scores["responsibilities_visible"], scores["responsibilities_hidden"]
    assert said["responsibilities_visible"][0] == "ok" and visible.points == visible.max_points
    assert 0 < hidden.points < hidden.max_points, hidden
    assert "NaN or infinite" in hidden.message and "logsumexp" in hidden.message, hidden.message
