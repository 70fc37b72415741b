"""A problem set's own rules are kept: no points for calling the library that does the work.

Every problem set declares what its answers may not use (``coursedata.rules``, in the source
notebook's metadata). These tests check the declaration against the notebook's own words, the
static reading of answer cells (``coursedata.reading``) route by route, and then grade, in the real
warm sandbox (whose zygote has scikit-learn and ``scipy.stats`` loaded), submissions that reach a
forbidden library in each way a student would try: a plain import, an alias, an import by a
computed name, ``__import__``, ``sys.modules`` and an attribute of an allowed module. Each such
function scores 0 on exactly its own cells (and those of the graded functions that call it) with a
note naming the library, while the other functions, whose cells mention the forbidden names in
comments and strings, keep full marks. The kit's loaders run in the guarded kernel, and the
student's check command reports the rule.
"""

from __future__ import annotations

import ast
import copy
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.authoring.graded import sample_variants
from autograder.checks.record_calls import cases_by_function
from autograder.grading.executors import sandbox_executor
from autograder.grading.pipeline import grade as grade_submission
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.pages.report import report_html
from autograder.run.preload import grading_preload
from autograder.sandbox import SandboxConfig, sandbox_available
from coursedata.reading import StudentCell, read_cells
from coursedata.rules import Rules, RulesError
from coursedata.variants import IDENTITY_CELL
from tests.environment import require
from tests.psharness import generate_release

PROBLEM_SETS = list_problem_sets()
AVAILABLE, REASON = sandbox_available()


# ------------------------------------------------------------------------------------------------
# The declaration
# ------------------------------------------------------------------------------------------------

def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_each_problem_set_declares_the_rules_its_instructions_state(name):
    ps = ProblemSet(name)
    rules = ps.rules
    assert rules is not None and rules.forbid, f"{name} declares no rules"
    intro = _words(ps.source.cells[0].source)
    # The sentence students read is the declaration's, word for word, and names every library.
    assert _words(rules.statement) in intro, (rules.statement, intro)
    for entry in rules.forbid:
        assert f"`{entry}`" in rules.statement, f"{name}: the statement does not name {entry}"
    assert "scores 0 on all its tests" in intro and "python -m coursedata.check" in intro
    # What a visible test's point needs, truthfully: the values on the cell's own inputs too, and
    # the check's line is the grader's verdict (coursedata.visible).
    assert "your function's values on the cell's own inputs must match the correct ones" in intro
    assert "so its `ok` for a visible test is the grader's" in intro
    for question, override in rules.questions.items():
        assert question in ps.solution_ids, f"{name}: rules for an unknown answer {question}"
        assert _words(override.statement) in _words("\n".join(
            c.source for c in ps.source.cells if c.cell_type == "markdown"))


def test_the_issue_libraries_are_forbidden_where_the_problem_sets_say():
    forbidden = {n: set(ProblemSet(n).rules.forbid) for n in PROBLEM_SETS}
    for name in PROBLEM_SETS:
        assert "sklearn" in forbidden[name]
    assert {"scipy.stats", "scipy.optimize"} <= forbidden["ps3_mle"]
    assert "scipy.stats" in forbidden["ps5_kde"]
    for name in ("ps1_pca", "ps4_map_naive_bayes", "ps6_generative_discriminative"):
        assert "scipy" in forbidden[name], f"{name} says numpy only"
    # What the instructions allow stays allowed.
    assert ProblemSet("ps3_mle").rules.policy().forbidding("scipy.special.digamma") is None
    assert ProblemSet("ps5_kde").rules.policy().forbidding("scipy.special.logsumexp") is None
    assert ProblemSet("ps2_matrix_completion").rules.policy().forbidding("scipy.linalg") is None


def test_the_most_specific_entry_decides_and_a_question_can_override():
    rules = Rules.from_dict({
        "forbid": ["scipy", "sklearn"], "allow": ["scipy.special"],
        "statement": "numpy only",
        "questions": {"q5": {"allow": ["sklearn.linear_model"], "forbid": ["scipy.special"],
                             "statement": "here you may use a linear model"}}})
    everywhere = rules.policy()
    assert everywhere.forbidding("scipy.stats.norm") == "scipy"
    assert everywhere.forbidding("scipy.special.logsumexp") is None
    assert everywhere.forbidding("scipyx") is None  # a name is not a prefix of another
    assert everywhere.forbidding("sklearn.linear_model") == "sklearn"
    q5 = rules.policy("q5")
    assert q5.forbidding("sklearn.linear_model.Ridge") is None
    assert q5.forbidding("sklearn.svm") == "sklearn"
    assert q5.forbidding("scipy.special.logsumexp") == "scipy.special"
    assert "linear model" in q5.statement and "numpy only" in q5.statement
    assert rules.every_forbidden() == ("scipy", "sklearn", "scipy.special")
    assert Rules.from_dict(rules.to_dict()) == rules


@pytest.mark.parametrize("bad", [
    {"forbid": "sklearn", "statement": "x"},
    {"forbid": ["sklearn"]},
    {"forbid": ["skl earn"], "statement": "x"},
    {"forbid": ["sklearn"], "statement": "x", "banned": []},
    {"forbid": ["sklearn"], "statement": "x", "questions": {"q": {"statement": "y",
                                                                   "questions": {"r": {}}}}},
])
def test_a_malformed_declaration_is_refused_with_its_reason(bad):
    with pytest.raises(RulesError):
        Rules.from_dict(bad)


# ------------------------------------------------------------------------------------------------
# The static reading
# ------------------------------------------------------------------------------------------------

RULES = Rules.from_dict({"forbid": ["sklearn", "scipy.stats", "scipy.optimize"],
                         "allow": ["scipy.special"], "statement": "no stats"})


def _uses(source: str, function: str = "f", *more: str) -> list[str]:
    cells = [StudentCell("a", source, "a")] + [StudentCell(f"c{i}", s, None)
                                              for i, s in enumerate(more)]
    return sorted({f.entry for _, f in read_cells(cells, RULES).uses(function)})


@pytest.mark.parametrize("route, source", [
    ("plain", "def f():\n    import sklearn.decomposition\n    return 1\n"),
    ("from", "def f():\n    from scipy.stats import norm\n    return norm.pdf(0)\n"),
    ("alias at the top", "import sklearn.linear_model as lm\n\ndef f():\n    return lm.Ridge\n"),
    ("name from the top", "from scipy.optimize import brentq as solve\n\ndef f():\n"
                          "    return solve(None, 0, 1)\n"),
    ("attribute of an allowed module", "import scipy\n\ndef f(x):\n"
                                       "    return scipy.stats.gamma.fit(x)\n"),
    ("alias of an attribute", "import scipy\nst = scipy.stats\n\ndef f(x):\n    return st.norm\n"),
    ("importlib by a constant", "import importlib\n\ndef f():\n"
                                "    return importlib.import_module('sklearn.svm')\n"),
    ("__import__", "def f():\n    return __import__('scipy.optimize')\n"),
    ("sys.modules", "import sys\n\ndef f():\n    return sys.modules['sklearn']\n"),
    ("sys.modules.get", "import sys\n\ndef f():\n    return sys.modules.get('sklearn')\n"),
    ("getattr by a constant", "import scipy\n\ndef f():\n    return getattr(scipy, 'stats')\n"),
    ("exec of a constant", "def f():\n    exec('import sklearn')\n"),
    ("an import above it in the cell", "import scipy.stats\n\ndef f():\n    return 1\n"),
    ("a helper it calls", "def f():\n    return g()\n\ndef g():\n    import sklearn\n"),
])
def test_the_reading_attributes_each_route_to_its_function(route, source):
    assert _uses(source), route


def test_the_reading_spans_cells_and_follows_calls_into_other_cells():
    assert _uses("def f():\n    return helper()\n", "f",
                 "from sklearn.decomposition import PCA\n\ndef helper():\n    return PCA(2)\n") \
        == ["sklearn"]


@pytest.mark.parametrize("source", [
    "# unlike sklearn.decomposition.PCA, this is numpy only\ndef f(x):\n"
    "    '''Fit by hand (scipy.stats.gamma.fit would do it; not allowed).'''\n"
    "    note = 'import sklearn'\n    return x\n",
    "stats = {'mean': 0.0}  # not scipy.stats\ndef f(x):\n    stats = np.mean(x)\n"
    "    return stats\n",
    "from scipy.special import digamma\n\ndef f(x):\n    return digamma(x)\n",
    "def f(x):\n    return x  # import sklearn\n\nimport scipy.stats\n",  # below f: f is defined
])
def test_mentions_and_allowed_modules_count_for_nothing(source):
    assert _uses(source) == []
    assert not read_cells([StudentCell("a", source, "a")], RULES).attempts


@pytest.mark.parametrize("source, what", [
    ("import importlib\n\ndef f(n):\n    return importlib.import_module('skl' + n)\n",
     "importlib.import_module"),
    ("def f(n):\n    return __import__(n)\n", "builtins.__import__"),
    ("import sys\n\ndef f(n):\n    return sys.modules[n]\n", "sys.modules"),
    ("import scipy\n\ndef f(n):\n    return getattr(scipy, n)\n", "scipy"),
    ("def f(code):\n    exec(code)\n", "exec"),
    ("import gc\n\ndef f():\n    return gc.get_objects()\n", "gc.get_objects"),
    ("import sys\n\ndef f():\n    sys.meta_path.clear()\n", "sys.meta_path"),
    ("!pip install scikit-learn\n%run -m sklearn\n\ndef f():\n    return 1\n", "sklearn"),
    ("def f():\n    out = !python -c 'import sklearn'\n    return out\n", "sklearn"),
    ("%%bash\npython -c 'import scipy.stats'\n", "scipy.stats"),
])
def test_a_computed_route_is_flagged_for_a_person(source, what):
    attempts = read_cells([StudentCell("a", source, "a")], RULES).attempts
    assert any(what in f.name or what in f.how for f in attempts), attempts


# ------------------------------------------------------------------------------------------------
# Grading in the sandbox: every route, every problem set
# ------------------------------------------------------------------------------------------------

#: The graded functions each function's values flow into (the reference's calls, read by hand).
CALLERS = {
    "ps1_pca": {"center": ["reconstruction_error"],
                "pca_svd": ["reconstruction_error", "components_for_variance"]},
    "ps2_matrix_completion": {f: ["als", "als_with_biases"]
                              for f in ("masked_objective", "update_users", "update_items")},
    "ps4_map_naive_bayes": {
        "fit_bernoulli_nb": ["_spam_filter"], "bernoulli_joint_log_likelihood": ["_spam_filter"],
        "predict_log_proba": ["_spam_filter", "_titanic_filter"],
        "fit_categorical_nb": ["_titanic_filter"],
        "categorical_joint_log_likelihood": ["_titanic_filter"]},
    "ps5_kde": {"loo_log_likelihood": ["select_bandwidth"], "uniform_kernel": ["kde_pdf"],
                "epanechnikov_kernel": ["kde_pdf"]},
    "ps6_generative_discriminative": {"cross_entropy_and_gradient": ["fit_logistic_regression"]},
    "ps7_mixtures_em": {"responsibilities": ["em", "fit_mixture"], "m_step": ["em", "fit_mixture"]},
}

#: Per problem set, two submissions: {function: (route, module it reaches)}.
CHEATS = {
    "ps1_pca": [
        {"pca_eig": ("plain", "sklearn.decomposition"), "best_rank_k": ("alias", "scipy.linalg"),
         "reconstruction_error": ("importlib", "sklearn.utils")},
        {"center": ("__import__", "scipy.linalg"), "project": ("sys.modules", "sklearn"),
         "pca_svd": ("plain", "solutions.pca")}],
    "ps2_matrix_completion": [
        {"rmse": ("plain", "sklearn.metrics"), "als": ("alias", "sklearn.decomposition"),
         "als_with_biases": ("importlib", "sklearn")},
        {"masked_objective": ("__import__", "sklearn.linear_model"),
         "update_users": ("sys.modules", "sklearn"),
         "update_items": ("plain", "solutions.matrix_completion")}],
    "ps3_mle": [
        {"bernoulli_log_likelihood": ("plain", "scipy.stats"),
         "gaussian_mle": ("alias", "scipy.optimize"), "categorical_mle": ("importlib", "sklearn")},
        {"gamma_log_likelihood": ("__import__", "scipy.optimize"),
         "gamma_score": ("sys.modules", "scipy.stats"),
         "gamma_mle": ("attribute", "scipy.stats")}],
    "ps4_map_naive_bayes": [
        {"beta_map": ("plain", "sklearn.naive_bayes"),
         "fit_bernoulli_nb": ("alias", "scipy.special"),
         "bernoulli_joint_log_likelihood": ("importlib", "scipy.special")},
        {"predict_log_proba": ("__import__", "scipy.special"),
         "fit_categorical_nb": ("sys.modules", "sklearn"),
         "categorical_joint_log_likelihood": ("plain", "solutions.naive_bayes")}],
    "ps5_kde": [
        {"kde_pdf": ("alias", "sklearn.neighbors"), "scott_bandwidth": ("plain", "scipy.stats"),
         "epanechnikov_kernel": ("importlib", "scipy.stats")},
        {"select_bandwidth": ("__import__", "sklearn"),
         "kde_naive_bayes_log_proba": ("sys.modules", "scipy.stats"),
         "loo_log_likelihood": ("attribute", "scipy.stats")}],
    "ps6_generative_discriminative": [
        {"softmax": ("plain", "scipy.special"), "fit_gaussian_nb": ("alias", "sklearn.naive_bayes"),
         "gaussian_nb_log_posterior": ("importlib", "scipy.special")},
        {"shared_variance_weights": ("__import__", "sklearn.linear_model"),
         "fit_logistic_regression": ("sys.modules", "scipy"),
         "cross_entropy_and_gradient": ("plain", "solutions.linear_classifiers")}],
    "ps7_mixtures_em": [
        {"em": ("plain", "sklearn.mixture"), "fit_mixture": ("importlib", "scipy.stats")},
        {"responsibilities": ("__import__", "sklearn.mixture"),
         "m_step": ("sys.modules", "scipy.stats")}],
}

#: Honest mentions added to every other answer cell: comments, a docstring-like string, a local
#: variable named like a module. None of them may cost anything.
MENTION = ("# Written without sklearn (no sklearn.decomposition.PCA), scipy.stats or "
           "scipy.optimize.\nstats_note = 'import sklearn; from scipy import stats'\n")
LOADERS = ("import coursedata\nfor _load in (coursedata.load_digits, coursedata.load_wine, "
           "coursedata.load_breast_cancer, coursedata.load_faithful, coursedata.load_titanic, "
           "coursedata.load_spam_email, coursedata.load_reviews, coursedata.load_movielens):\n"
           "    _data = _load()\nprint('LOADED', type(_data).__name__)\n")
PROBE = '''import sys as _s, types as _t
_found = []
for _n, _m in list(_s.modules.items()):
    for _a, _v in list(getattr(_m, "__dict__", {}).items()):
        _name = _v.__name__ if isinstance(_v, _t.ModuleType) else None
        if isinstance(_name, str) and any(_name == f or _name.startswith(f + ".") for f in FORBID):
            _found.append((_n, _a, _name))
_found += [n for n in _s.modules if any(n == f or n.startswith(f + ".") for f in FORBID)]
print("REACHABLE", _found)
'''


def _route(route: str, module: str) -> tuple[str, str]:
    """(lines at the top of the cell, the first statement of the function's body)."""
    if route == "plain":
        return "", f"import {module}"
    if route == "alias":
        return f"import {module} as _lib\n", "_lib"
    if route == "importlib":
        return "import importlib\n", f"importlib.import_module(''.join(reversed({module[::-1]!r})))"
    if route == "__import__":
        return "", f"__import__({module!r})"
    if route == "sys.modules":
        return "import sys\n", f"sys.modules[{module!r}]"
    if route == "attribute":
        parent, _, child = module.rpartition(".")
        return f"import {parent}\n", f"{parent}.{child}"
    raise ValueError(route)


def _insert(source: str, function: str, top: str, first: str) -> str:
    """``source`` with ``first`` as the first statement of ``function`` and ``top`` above all."""
    tree = ast.parse(source)
    [node] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function]
    lines = source.splitlines(keepends=True)
    at = node.body[0].lineno - 1
    indent = re.match(r"\s*", lines[at]).group(0)
    lines.insert(at, f"{indent}{first}\n")
    return top + "".join(lines)


def _cells_of(ps: ProblemSet, functions) -> set[str]:
    """The autograded cells that read the values of ``functions``: each cell whose hidden part
    records one, and the hidden cell of the same question."""
    pattern = re.compile(r"""record\(\s*["'][a-z0-9_]+["']\s*,\s*(\w+)""")
    cells = set()
    for cell in ps.source.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and set(pattern.findall(cell.source)) & set(functions):
            cells |= {gid, re.sub(r"_visible$", "_hidden", gid)}
    return cells & {c.grade_id for c in ps.grade_cells if c.autograded}


def _visible_callers(ps: ProblemSet, functions) -> set[str]:
    """The visible cells whose test (outside the hidden region) calls one of ``functions``: the
    call fails in the kernel, so the visible test fails and the cell scores 0."""
    hidden = re.compile(r"### BEGIN HIDDEN TESTS.*?### END HIDDEN TESTS", re.S)
    cells = set()
    for cell in ps.source.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if cell.cell_type == "code" and gid.endswith("_visible"):
            called = set(re.findall(r"\b(\w+)\(", hidden.sub("", cell.source)))
            if called & set(functions):
                cells.add(gid)
    return cells


def _submission(ps: ProblemSet, cheats: dict, extra: list[str]) -> nbformat.NotebookNode:
    nb = copy.deepcopy(ps.source)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid not in ps.solution_ids or cell.cell_type != "code":
            continue
        defined = {n.name for n in ast.parse(cell.source).body if isinstance(n, ast.FunctionDef)}
        for function, (route, module) in cheats.items():
            if function in defined:
                cell.source = _insert(cell.source, function, *_route(route, module))
                break
        else:
            cell.source = MENTION + cell.source
    for i, source in enumerate(extra):
        nb.cells.insert(2 + i, nbformat.v4.new_code_cell(source))
    return nb


#: Their users are slow (tests/conftest.py): every cheating submission graded in the sandbox.
SLOW_FIXTURES = ("graded",)


@pytest.fixture(scope="module")
def graded():
    """Every problem set's two cheating submissions, graded once in the warm sandbox."""
    executor = sandbox_executor(SandboxConfig(preload=grading_preload()))
    out = {}
    for name in PROBLEM_SETS:
        ps = sample_variants(ProblemSet(name))[0]  # with variants: graded as a sample student
        for i, cheats in enumerate(CHEATS[name]):
            extra = [f"FORBID = {list(ps.rules.forbid)!r}\n" + PROBE]
            extra += [LOADERS] if i == 0 else []
            nb = _submission(ps, cheats, extra)
            for cell in nb.cells:  # with variants: the student enters their own identity
                if cell.metadata.get("nbgrader", {}).get("grade_id") == IDENTITY_CELL:
                    cell.source = f"STUDENT_ID = {ps.student!r}\n"
            out[name, i] = grade_submission(ps, nbformat.writes(nb).encode(), executor)
    return out


def _expected_zero(name: str, cheats: dict) -> set[str]:
    callers = CALLERS.get(name, {})
    functions = set(cheats) | {c for f in cheats for c in callers.get(f, [])}
    return functions


@require(AVAILABLE, f"no sandbox here: {REASON}")
@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEM_SETS)
@pytest.mark.parametrize("run", [0, 1])
def test_each_route_costs_exactly_its_functions_cells(graded, name, run):
    ps = ProblemSet(name)
    cheats = CHEATS[name][run]
    result = graded[name, run]
    broke = _expected_zero(name, cheats)
    zero = _cells_of(ps, broke)
    assert zero, "the test must cost something"
    failed = _visible_callers(ps, broke) - zero  # their visible tests call a breaking function
    scores = {s.grade_id: s for s in result.scores if s.points is not None}
    for gid, s in scores.items():
        if gid in failed:
            assert s.points == 0, (gid, s.points, s.message)
        elif gid in zero:
            assert s.points == 0, (gid, s.points, s.message)
            assert "which this problem set does not allow" in s.message, (gid, s.message)
        else:
            assert s.points == s.max_points, (gid, s.points, s.message)
    assert {b.function for b in result.breaches} == broke
    for function, (route, module) in cheats.items():
        entry = ps.rules.policy().forbidding(module)
        notes = [n for n in result.notes if n.startswith(f"{function} used {entry},")]
        assert len(notes) == 1, (function, route, result.notes)  # said once
        assert ps.rules.statement in notes[0]  # and what the problem set allows
    # Only what a reading cannot resolve is flagged: the computed import, the module scan.
    routes = {r for r, _ in cheats.values()}
    expected_flags = {"probe"} | ({"importlib"} if "importlib" in routes else set())
    seen = set()
    for flag in result.flags:
        if "importlib.import_module with a name computed" in flag:
            seen.add("importlib")
        elif "sys.modules" in flag and "_s.modules" in flag:
            seen.add("probe")
        else:
            pytest.fail(f"unexpected flag: {flag}")
    assert seen == expected_flags


@require(AVAILABLE, f"no sandbox here: {REASON}")
@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_no_forbidden_module_is_left_where_student_code_can_reach_it(graded, name):
    """In the warm kernel (scikit-learn and scipy.stats preloaded by the zygote), after the
    course's setup ran, no module the rules forbid is in sys.modules or an attribute of one."""
    for run in (0, 1):
        [cell] = [c for c in graded[name, run].executed.cells if c.source.startswith("FORBID")]
        text = "".join(o.get("text", "") for o in cell.outputs)
        assert "REACHABLE []" in text, text


@require(AVAILABLE, f"no sandbox here: {REASON}")
@pytest.mark.slow
@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_the_kits_loaders_work_in_the_guarded_sandbox(graded, name):
    [cell] = [c for c in graded[name, 0].executed.cells if c.source.startswith("import coursedata")]
    assert not [o for o in cell.outputs if o.output_type == "error"], cell.outputs
    assert "LOADED MovieLens" in "".join(o.get("text", "") for o in cell.outputs)


@require(AVAILABLE, f"no sandbox here: {REASON}")
@pytest.mark.slow
def test_the_report_lists_who_broke_the_rules_and_what_to_read(graded):
    records = []
    for (name, run), result in graded.items():
        if name != "ps3_mle":
            continue
        records.append({"student_id": f"s{run}", "problem_set": name, "status": result.status,
                        "scores": [s.to_dict() for s in result.scores], "notes": result.notes,
                        "total": result.total, "max_auto": result.max_total, "elapsed_s": 1.0,
                        "flags": result.flags,
                        "breaches": [b.to_dict() for b in result.breaches]})
    records.append({**records[0], "student_id": "honest", "flags": [], "breaches": []})
    page = report_html("ps3_mle", records)
    section = page[page.index("id='rules'"):page.index("id='grader-errors'")
                   if "id='grader-errors'" in page else page.index("id='scores'")]
    assert "s0" in section and "s1" in section and "honest" not in section
    assert "categorical_mle used sklearn" in section
    assert "computed at run time" in section


# ------------------------------------------------------------------------------------------------
# The student's check command
# ------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_check_command_keeps_and_reports_the_rules(tmp_path):
    """On the released notebook (nbgrader's, with the metadata it keeps) filled in with the
    reference answers, one of them through scikit-learn: the check refuses the import with the
    rule, names the function and the rule, and fails."""
    release = generate_release(["ps1_pca"], tmp_path)
    path = release / "ps1_pca" / "ps1_pca.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert Rules.from_metadata(nb.metadata) == ProblemSet("ps1_pca").rules
    source = {c.metadata.nbgrader["grade_id"]: c.source for c in ProblemSet("ps1_pca").source.cells
              if c.metadata.get("nbgrader", {}).get("solution")}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if gid in source:
            cell.source = source[gid]
        if gid == "best_rank_k":
            cell.source = MENTION + _insert(source[gid], "best_rank_k",
                                            *_route("plain", "sklearn.utils.extmath"))
    nbformat.write(nb, path)
    done = subprocess.run([sys.executable, "-m", "coursedata.check", str(path)],
                          capture_output=True, text=True, timeout=600)
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout + done.stderr
    [fail] = [ln for ln in lines if ln.startswith("FAIL")]
    assert fail.startswith("FAIL  best_rank_k_visible") and "ForbiddenModule" in fail
    assert "numpy only" in fail  # the visible test's message states the rule
    [rule] = [ln for ln in lines if ln.startswith("RULE")]
    assert rule.startswith("RULE  best_rank_k uses sklearn: it imports sklearn.utils.extmath")
    assert any(ln.startswith("rules:") and "1 break it" in ln for ln in lines)
    assert lines[-1] == f"{sum(ln.startswith('ok') for ln in lines)} passed, 1 failed"
    assert not Path(path.parent, "rules.jsonl").exists()  # nothing left beside the notebook


@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_the_honest_alternatives_keep_the_rules(name):
    """The honest students of ``course/honest`` (used by the similarity and report tests) write
    within the rules: the reading finds no use and nothing to flag."""
    from tests.honest import solutions

    ps = ProblemSet(name)
    for student, answers in solutions(name).items():
        cells = [StudentCell(gid, source, gid) for gid, source in answers.items()]
        reading = read_cells(cells, ps.rules)
        found = [f"{f.how} ({f.where()})" for f in reading.findings]
        assert not found, (student, found)


def test_the_release_refuses_instructions_that_disagree_with_the_declaration():
    from autograder.grading.rulebook import declaration_problems

    for name in PROBLEM_SETS:
        assert declaration_problems(ProblemSet(name)) == []
    ps = ProblemSet("ps3_mle")
    ps.source.cells[0].source = ps.source.cells[0].source.replace("`scipy.optimize`, ", "")
    [problem] = declaration_problems(ps)
    assert "do not say the declared rule" in problem
    ps = ProblemSet("ps1_pca")
    ps.source.metadata["course"]["rules"]["forbid"].append("torch")
    assert declaration_problems(ps) == ["ps1_pca: the rule's statement does not name `torch`"]
    del ps.source.metadata["course"]
    [problem] = declaration_problems(ps)
    assert "declares no rules" in problem
    for key in ('"course"', '"rules"', '"forbid"', '"allow"', '"statement"', "first cell"):
        assert key in problem, (key, problem)


#: The attack's own route to a compiled module: its file, found next to NumPy's, no import.
SITE = '''import importlib.util, os, numpy
def compiled(*package):
    folder = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), *package)
    for here, _, files in sorted(os.walk(folder)):
        for name in sorted(files):
            if name.endswith(".so"):
                return os.path.join(here, name)
def load(path):  # under an allowed package's name, its own last part (its PyInit_ function)
    name = "numpy.linalg." + os.path.basename(path).split(".")[0]
    return importlib.util.module_from_spec(importlib.util.spec_from_file_location(name, path))
'''
GETTING_AROUND = {
    "a loader called by hand": '''
import importlib.machinery, importlib.util
spec = importlib.machinery.PathFinder.find_spec("sklearn")
spec.loader.exec_module(importlib.util.module_from_spec(spec))
''',
    "a spec asked for, then loaded": '''
import importlib.util
spec = importlib.util.find_spec("scipy.stats")  # a question: answered
spec.loader.exec_module(importlib.util.module_from_spec(spec))
''',
    "the finder taken away, then import": '''
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "Guard" not in repr(getattr(f, "guard", ""))
                    and type(f).__name__ != "_Finder"]
import sklearn
''',
    "the finder taken away, then importlib": '''
import importlib, sys
sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "_Finder"]
importlib.import_module("scipy.stats")
''',
    "exec of text": 'exec("import sklearn.svm")',
    "a compiled module loaded under an allowed name": SITE + '''
load(compiled("sklearn"))
''',
    "a compiled module copied, then loaded": SITE + '''
import shutil
shutil.copyfile(compiled("scipy", "stats"), "borrowed.so")  # in the test's own folder
''',
    "a compiled module linked to, then loaded": SITE + '''
os.symlink(compiled("sklearn"), "linked.so")
load(os.path.abspath("linked.so"))
''',
    "a compiled module's library opened with ctypes": SITE + '''
import ctypes
ctypes.CDLL(compiled("scipy", "stats"))
''',
}
#: The same route to an allowed module's compiled code, which the rules leave alone.
ALLOWED_BY_HAND = SITE + '''
print("LOADED", type(load(compiled("numpy", "random"))).__name__)
'''


@pytest.mark.slow
def test_the_guard_holds_against_ways_around_it(tmp_path):
    """In a kernel (here a local one; the sandbox starts the same), each way around the finder is
    refused all the same: the audit hook, which nothing removes, sees the import or the module's
    code about to run, and puts the finder back, noting it was taken. A forbidden module's
    compiled code, which runs no Python code to see, is refused by its file, whatever name it
    is loaded under, however it is reached (a copy, a link, ``ctypes``); an allowed module's
    loaded the same way is not."""
    import os

    from nbclient import NotebookClient

    from coursedata.guard import KERNEL_ARGUMENT, kernel_config, read_log

    rules = Rules.from_dict({"forbid": ["sklearn", "scipy.stats"], "statement": "no"})
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)
                for code in [*GETTING_AROUND.values(), ALLOWED_BY_HAND]]
    log = tmp_path / "log.jsonl"
    env = {**os.environ, **kernel_config(rules, [], {}, str(log))}
    NotebookClient(nb, kernel_name="python3", extra_arguments=[KERNEL_ARGUMENT],
                   allow_errors=True, timeout=120).execute(cwd=str(tmp_path), env=env)
    for (how, _), cell in zip(GETTING_AROUND.items(), nb.cells):
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert errors and errors[0].ename == "ForbiddenModule", (how, cell.outputs)
    assert [o.get("text") for o in nb.cells[-1].outputs] == ["LOADED module\n"]
    entries = read_log(log)
    assert sum(e["event"] == "refused" for e in entries) >= len(GETTING_AROUND)
    assert any(e["event"] == "tampered" for e in entries)


@require(AVAILABLE, f"no sandbox here: {REASON}")
@pytest.mark.slow
def test_a_cold_sandbox_keeps_the_rules_as_the_warm_one(graded):
    """Where warm sandboxes cannot be built (a grader that is not root), each kernel starts in a
    sandbox of its own: the same submission scores the same, with the same notes."""
    ps = ProblemSet("ps3_mle")
    nb = _submission(ps, CHEATS["ps3_mle"][1], [])
    cold = grade_submission(ps, nbformat.writes(nb).encode(),
                            sandbox_executor(SandboxConfig(warm=False)))
    warm = graded["ps3_mle", 1]
    assert [(s.grade_id, s.points) for s in cold.scores] == \
        [(s.grade_id, s.points) for s in warm.scores]
    assert [b.function for b in cold.breaches] == [b.function for b in warm.breaches]
    assert [n for n in cold.notes if " used " in n] == [n for n in warm.notes if " used " in n]


def test_a_forged_or_flooded_log_is_read_safely(tmp_path):
    """The guard's log lies in the student's results folder: entries of any type, garbage and a
    flood are read without a fault of the grader, and cost only the functions they name."""
    import json

    from autograder.grading.rulebook import MAX_FLAGS, judge

    ps = ProblemSet("ps1_pca")
    log = tmp_path / "log.jsonl"
    lines = ["not json", "[1, 2]", json.dumps({"event": "installed"}),
             json.dumps({"event": "refused", "functions": 7, "case": ["x"], "line": {}}),
             json.dumps({"event": "refused", "functions": ["pca_eig", 3], "module": "sklearn",
                         "entry": "sklearn", "line": 2})]
    lines += [json.dumps({"event": "refused", "module": f"m{i}", "line": i}) for i in range(500)]
    log.write_text("\n".join(lines) + "\n")
    verdict = judge(ps, ps.assemble(ps.source).notebook, log)
    assert [b.function for b in verdict.breaches] == ["pca_eig"]
    assert len(verdict.flags) == MAX_FLAGS + 1 and verdict.flags[-1].startswith("and ")


def test_a_breach_through_a_tests_own_function_names_the_students():
    """A graded function of the course's own (a hidden cell chaining the student's functions, as
    problem set 4's filters do) that reaches a forbidden module through a student's function: the
    note and the cells' messages name the student's function, never the test's alone."""
    from autograder.grading.rulebook import judge

    for name in list_problem_sets():
        ps = ProblemSet(name)
        source = copy.deepcopy(ps.source)
        verdict = judge(ps, ps.assemble(source).notebook, None)
        course = [f for f in CALLERS.get(name, {}).values() for f in f if f.startswith("_")]
        if not course or ps.rules is None:
            continue
        answer = next(f for f, callers in CALLERS[name].items() if course[0] in callers)
        cell = next(c for c in source.cells if re.search(rf"^def {answer}\(", c.source, re.M)
                    and c.metadata.get("nbgrader", {}).get("solution"))
        entry = ps.rules.forbid[0]
        cell.source = re.sub(rf"^(def {answer}\([\s\S]*?\):\n)", rf"\1    import {entry}\n",
                             cell.source, count=1, flags=re.M)
        assert f"    import {entry}\n" in cell.source
        verdict = judge(ps, ps.assemble(source).notebook, None)
        through = [b for b in verdict.breaches if b.function == course[0]]
        assert through, verdict
        assert through[0].who.startswith("your ") and course[0] in through[0].who, through[0]
        assert not any(n.startswith(f"{course[0]} used") for n in verdict.notes), verdict.notes
        assert not through[0].message.startswith(f"0 points: {course[0]} used"), through[0]
        return
    pytest.skip("no problem set grades a function of its own that calls a student's")


def test_a_forged_refusal_puts_no_text_of_the_students_in_the_feedback(tmp_path):
    """Issue 37: the student's code appended to the guard's log a refusal whose module, entry and
    line carried hidden inputs' bytes (hex), and the note and the cells' messages quoted them.
    What reaches the student is the grader's: a forbid entry of the rules, a line number."""
    import json

    from autograder.grading.rulebook import judge

    ps = ProblemSet("ps1_pca")
    payload = np.random.default_rng(37).normal(size=8).tobytes().hex()
    function = next(iter(cases_by_function(ps.source)))
    forged = [
        {"event": "refused", "module": f"{entry}.{payload}", "entry": f"X{payload}",
         "functions": [function], "line": payload * 20}
        for entry in ps.rules.every_forbidden()
    ] + [{"event": "refused", "module": payload, "entry": payload, "functions": [function],
          "line": 3}]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(map(json.dumps, [{"event": "installed"}, *forged])) + "\n")
    verdict = judge(ps, ps.assemble(ps.source).notebook, log)
    shown = verdict.notes + [b.message for b in verdict.breaches]
    assert shown and not [t for t in shown if payload[:16] in t], shown
    assert {b.entry for b in verdict.breaches} <= set(ps.rules.every_forbidden())
