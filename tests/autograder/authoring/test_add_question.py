"""``python -m autograder add-question``: a question added in one command, on a copy of the course.

The new question's cells, declarations, points and marking-scheme section are written, and the
later questions are renumbered in the notebook (headings, the header's table, the text cells'
``qN_text`` grade_ids, "question N" in the text) and in the marking scheme (``(QN)``). What the
test expects is read from the copy before the command runs, never this course's questions; the
result must pass the validation, the release gate and (slow) the self-check.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.__main__ import main
from autograder.authoring.gate import gate_problems
from autograder.authoring.validate import problems
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.grading.rulebook import declaration_problems
from autograder.settings import COURSE_DIR, ROOT

#: The new question's reference, written into the copy's course/checks/PS.py (self-contained, so
#: its body is a working answer in the notebook as it stands).
REFERENCE = '''

import numpy as np


def weighted_mean(x, w):
    """The weighted mean of ``x`` with the positive weights ``w``."""
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.sum(w * x) / np.sum(w))
'''

CASES = [
    'wmean={"x": {"normal": {"seed": 61, "n": 20}}, "w": {"full": {"n": 20, "value": 0.5}}}',
    'wmean_far={"x": {"normal": {"seed": 62, "n": 50, "mean": 1000, "sd": 0.1}}, '
    '"w": {"linspace": {"start": 1, "stop": 2, "num": 50}}}',
]


@pytest.fixture
def course(tmp_path) -> Path:
    root = tmp_path / "course"
    shutil.copytree(COURSE_DIR, root, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".*", "__pycache__"))
    yield root
    Course.default().use_code()


def _smallest(course: Path) -> str:
    """The problem set with the fewest graded cells (the quickest self-check)."""
    return min(list_problem_sets(Course(course)),
               key=lambda n: len(ProblemSet(n, Course(course)).grade_cells))


def _questions(course: Path, name: str) -> dict[int, tuple[str, str]]:
    """``{number: (title after the number, its text cell's grade_id)}``."""
    nb = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4)
    out = {}
    for cell in nb.cells:
        m = re.match(r"## Question (\d+)(.*)", cell.source) if cell.cell_type == "markdown" \
            else None
        if m:
            out[int(m[1])] = (m[2].split("\n")[0], cell.metadata.nbgrader.grade_id)
    return out


def _add(course: Path, name: str, at: int, reference: str = REFERENCE) -> int:
    with (course / "checks" / f"{name}.py").open("a", encoding="utf-8") as module:
        module.write(reference)
    return main(["add-question", name, "--course", str(course), "--at", str(at),
                 "--title", "The weighted mean", "--function", "weighted_mean",
                 "--reference", f"course.checks.{name}:weighted_mean",
                 *[a for case in CASES for a in ("--case", case)]])


def test_an_autograded_question_is_added_and_the_later_ones_renumbered(course):
    name = _smallest(course)
    before = _questions(course, name)
    at = len(before) // 2 + 1
    rubric = course / "rubrics" / f"{name}.md"
    q_before = [int(n) for n in re.findall(r"\(Q(\d+)\)", rubric.read_text())]
    assert _add(course, name, at) == 0
    after = _questions(course, name)
    assert len(after) == len(before) + 1
    for n, (title, _) in before.items():
        moved = n + 1 if n >= at else n
        assert after[moved][0] == title, n
    assert after[at][0] == " — The weighted mean (3 points)"
    assert all(gid == f"q{n}_text" for n, (_, gid) in after.items())  # feedback names its own
    assert [int(n) for n in re.findall(r"\(Q(\d+)\)", rubric.read_text())] == \
        [n + 1 if n >= at else n for n in q_before]
    ps = ProblemSet(name, Course(course))
    [answer] = [c for c in ps.source.cells if c.metadata.get("nbgrader", {}).get(
        "grade_id") == "weighted_mean"]
    assert answer.source.startswith('def weighted_mean(x, w):\n    """The weighted mean')
    assert problems(ps) == [] and gate_problems(ps) == [] and declaration_problems(ps) == []


def test_a_written_question_is_added_with_its_marking_scheme_section(course):
    name = _smallest(course)
    before = _questions(course, name)
    assert main(["add-question", name, "--course", str(course), "--title", "Why it works",
                 "--written", "why_it_works", "--points", "3"]) == 0
    after = _questions(course, name)
    assert after[len(before) + 1] == (" — Why it works (3 points, graded by hand)",
                                      f"q{len(before) + 1}_text")
    text = (course / "rubrics" / f"{name}.md").read_text()
    assert f"## `why_it_works` — 3 points\n\n**Question (Q{len(before) + 1}).**" in text
    ps = ProblemSet(name, Course(course))
    assert problems(ps) == [] and gate_problems(ps) == []


def test_a_question_that_cannot_be_added_changes_nothing(course, capsys):
    name = _smallest(course)
    path = course / "source" / name / f"{name}.ipynb"
    original = path.read_bytes()
    count = len(_questions(course, name))
    assert main(["add-question", name, "--course", str(course), "--at", str(count + 2),
                 "--title", "t", "--written", "w"]) == 2
    assert f"there is no question {count + 2}" in capsys.readouterr().err
    taken = ProblemSet(name, Course(course)).solution_ids[0]
    assert main(["add-question", name, "--course", str(course), "--title", "t",
                 "--written", taken]) == 2
    assert f"already has the cell `{taken}`" in capsys.readouterr().err
    assert path.read_bytes() == original


@pytest.mark.slow
def test_the_added_question_passes_the_self_check(course):
    name = _smallest(course)
    assert _add(course, name, 1) == 0
    done = subprocess.run([sys.executable, "-m", "autograder", "check-problem-set", name,
                           "--course", str(course)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_range_of_later_questions_is_renumbered_whole():
    """"questions 3–5" became "questions 4–5" after a question added at 2: only the first
    number of a range or list moved."""
    from autograder.authoring.addquestion import renumber

    text = ("*Old Faithful* (questions 3–5); questions 1 and 4; Questions 2, 3 and 6; "
            "question 4's value (Q5); in question 2, 272 eruptions")
    assert renumber(text, 3) == ("*Old Faithful* (questions 4–6); questions 1 and 5; "
                                 "Questions 2, 4 and 7; question 5's value (Q6); in question 2, "
                                 "272 eruptions")


def test_a_title_with_a_bar_stays_one_cell_of_the_header_table(course):
    """A title such as "p(z | x)" split the header's table row into four cells."""
    name = _smallest(course)
    title = "p(z | x) for one point"
    assert main(["add-question", name, "--course", str(course), "--title", title,
                 "--written", "posterior_one"]) == 0
    header = nbformat.read(course / "source" / name / f"{name}.ipynb", as_version=4).cells[0]
    [row] = [ln for ln in header.source.splitlines() if "p(z" in ln]
    cells = re.split(r"(?<!\\)\|", row)[1:-1]  # a Markdown table's cells: unescaped bars
    assert [c.strip() for c in cells] == [
        str(len(_questions(course, name))), r"p(z \| x) for one point (by hand)", "2"]


def test_the_answer_keeps_the_reference_s_default_values(course):
    """The answer cell's signature was the parameters' names alone: a reference with a default
    (``solutions.softmax:log_softmax(Z, axis=-1)``), called by its cases without that argument,
    made the notebook's own answer, and every student's, raise TypeError."""
    name = _smallest(course)
    assert _add(course, name, 1, REFERENCE.replace(
        "def weighted_mean(x, w):", "def weighted_mean(x, w, scale: float = 1.0) -> float:")) == 0
    ps = ProblemSet(name, Course(course))
    [answer] = [c for c in ps.source.cells if c.metadata.get("nbgrader", {}).get(
        "grade_id") == "weighted_mean"]
    assert answer.source.startswith("def weighted_mean(x, w, scale=1.0):\n")


def test_a_class_as_the_reference_is_named_as_one(course, capsys):
    """The natural first try for an estimator; it printed Python's "TypeError: ... takes no
    arguments"."""
    import inspect

    import solutions.discriminant_analysis as module

    [cls, *_] = [n for n, v in vars(module).items()
                 if inspect.isclass(v) and v.__module__ == module.__name__
                 and not n.startswith("_")]
    name = _smallest(course)
    path = course / "source" / name / f"{name}.ipynb"
    original = path.read_bytes()
    assert main(["add-question", name, "--course", str(course), "--title", "t", "--function",
                 "fit_it", "--reference", f"solutions.discriminant_analysis:{cls}",
                 *[a for case in CASES for a in ("--case", case)]]) == 2
    err = capsys.readouterr().err
    assert f"the reference solutions.discriminant_analysis:{cls} is a class (an estimator)" in err
    assert '"fitted"' in err and "takes no arguments" not in err
    assert path.read_bytes() == original



def test_two_cases_of_one_name_are_named_as_such(course, capsys):
    """Two ``--case`` of one name (the second pasted from the first, its inputs changed): the
    second replaced the first, and the command said "give at least two cases"."""
    name = _smallest(course)
    path = course / "source" / name / f"{name}.ipynb"
    original = path.read_bytes()
    first = CASES[0].partition("=")[0]
    twice = [CASES[0], first + "=" + CASES[1].partition("=")[2]]
    assert main(["add-question", name, "--course", str(course), "--title", "t", "--function",
                 "weighted_mean", "--reference", "solutions.mle:gaussian_mle",
                 *[a for case in twice for a in ("--case", case)]]) == 2
    err = capsys.readouterr().err
    assert f"the name {first!r} is given to an earlier --case too" in err, err
    assert "at least two cases" not in err, err
    assert path.read_bytes() == original


def _path(course: Path, name: str) -> Path:
    return course / "source" / name / f"{name}.ipynb"


def test_a_question_whose_heading_follows_a_part_s_heading_in_its_cell_is_found(course, capsys):
    """A problem set that opens a part and its first question in one cell ("## Part B ...",
    then "## Question 3 ..."): ``--at 3`` answered "there is no question 3: give --at between 1
    and 12 (the questions are numbered 1 to 11)"."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        inner = [int(m[1]) for c in nb.cells if c.cell_type == "markdown"
                 for m in [re.search(r"(?m)^## Question (\d+)", c.source)]
                 if m and not c.source.lstrip().startswith("## Question")]
        if inner:
            break
    else:
        raise AssertionError("no question heading follows another heading in its cell")
    at = inner[-1]
    before = re.findall(r"(?m)^## Question \d+ — (.*)$", "\n".join(
        c.source for c in nb.cells if c.cell_type == "markdown"))
    assert main(["add-question", name, "--course", str(course), "--at", str(at), "--title",
                 "Why it works", "--written", "why_it_works"]) == 0, capsys.readouterr().err
    after = re.findall(r"(?m)^## Question (\d+) — (.*)$", "\n".join(
        c.source for c in nbformat.read(_path(course, name), as_version=4).cells
        if c.cell_type == "markdown"))
    assert [int(n) for n, _ in after] == list(range(1, len(before) + 2))
    assert [t for _, t in after] == [*before[:at - 1], "Why it works (2 points, graded by hand)",
                                     *before[at - 1:]]


def test_the_questions_the_rules_name_are_renumbered_with_the_header(course):
    """A rules statement that names a question ("Question 5 asks you to write the log-sum-exp
    trick"), repeated word for word in the header: the header was renumbered and the declared
    statement not, so ``release`` refused the problem set ("the instructions do not say the
    declared rule ... word for word")."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        statement = nb.metadata.get("course", {}).get("rules", {}).get("statement", "")
        named = [int(n) for n in re.findall(r"Question (\d+)", statement)]
        first = [int(m[1]) for c in nb.cells if c.cell_type == "markdown"
                 if (m := re.match(r"## Question (\d+)", c.source.lstrip()))]
        at = min((n for n in first if named and n <= min(named)), default=None)
        if at:
            break
    else:
        raise AssertionError("no rules statement names a question")
    assert main(["add-question", name, "--course", str(course), "--at", str(at), "--title",
                 "Why it works", "--written", "why_it_works"]) == 0
    ps = ProblemSet(name, Course(course))
    moved = ps.source.metadata.course.rules.statement
    assert [int(n) for n in re.findall(r"Question (\d+)", moved)] == [n + 1 for n in named]
    assert declaration_problems(ps) == []


def test_a_question_worth_no_points_is_refused(course, capsys):
    """``--points 0``: the question was written, and only ``release`` refused its cell."""
    name = _smallest(course)
    original = _path(course, name).read_bytes()
    assert main(["add-question", name, "--course", str(course), "--title", "t", "--written",
                 "why_it_works", "--points", "0"]) == 2
    assert "--points 0: give each graded cell points above 0" in capsys.readouterr().err
    assert _path(course, name).read_bytes() == original


def test_an_answer_copied_from_a_reference_that_uses_its_module_s_helper_is_refused(course):
    """The guide's example (``--reference solutions.mle:poisson_mle``) added to a problem set:
    the answer's body, copied from the reference, calls a helper of ``solutions.mle`` that the
    notebook does not define. ``release`` answered with the reference losing every point to a
    NameError, once per cell and per sample student, and "Fix ... the check in ...". The gate
    names the helper at the answer cell."""
    import solutions.mle as module

    name = _smallest(course)
    assert main(["add-question", name, "--course", str(course), "--title", "The Poisson rate",
                 "--function", "poisson_fit", "--reference", "solutions.mle:poisson_mle",
                 "--case", 'rate={"x": {"poisson": {"seed": 71, "n": 40, "lam": 3.5}}}',
                 "--case", 'rate_big={"x": {"poisson": {"seed": 72, "n": 400, "lam": 250}}}'
                 ]) == 0
    ps = ProblemSet(name, Course(course))
    [answer] = [c for c in ps.source.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "poisson_fit"]
    body = answer.source.split("### BEGIN SOLUTION")[1]
    helpers = sorted(n for n in re.findall(r"\b(_\w+)\(", body) if callable(vars(module).get(n)))
    assert helpers, "the guide's example reference calls no helper of its module"
    found = [str(p) for p in gate_problems(ps)]
    names = ", ".join(f"`{n}`" for n in helpers)
    assert [p for p in found if p.startswith(
        f"{name}.ipynb, cell `poisson_fit`: its reference answer uses {names}, which no cell of "
        "the notebook defines")], found


def test_a_case_naming_an_argument_the_reference_lacks_names_its_parameters(course, capsys):
    """A case's argument named in the author's own words (``"values"`` for ``x``): it stopped
    with Python's "TypeError: weighted_mean() got an unexpected keyword argument"."""
    name = _smallest(course)
    with (course / "checks" / f"{name}.py").open("a", encoding="utf-8") as module:
        module.write(REFERENCE)
    original = _path(course, name).read_bytes()
    renamed = [c.replace('{"x":', '{"values":', 1) for c in CASES]
    assert main(["add-question", name, "--course", str(course), "--title", "t", "--function",
                 "weighted_mean", "--reference", f"course.checks.{name}:weighted_mean",
                 *[a for case in renamed for a in ("--case", case)]]) == 2
    err = capsys.readouterr().err
    assert (f"the case 'wmean' gives 'values', which course.checks.{name}:weighted_mean has no "
            "parameter for: name the case's arguments after its parameters (x, w)") in err, err
    assert "unexpected keyword" not in err
    assert _path(course, name).read_bytes() == original


@pytest.mark.parametrize(("option", "said"), [
    (["--written", "why it works"], "--written 'why it works' is not a Python name"),
    (["--function", "fit-lda"], "--function 'fit-lda' is not a Python name"),
    (["--written", "w", "--at", "0"], "--at 0: questions are numbered from 1"),
    (["--written", "w", "--title", " "], "--title is empty"),
], ids=["a grade_id with spaces", "a function with a hyphen", "question 0", "no title"])
def test_names_and_numbers_a_notebook_cannot_hold_are_refused(course, capsys, option, said):
    """Before: a grade_id with spaces stopped with nbformat's validation traceback; a function
    `fit-lda` was written as ``def fit-lda(x):`` (release then asked to define `fit`); ``--at 0``
    added the question last; an empty title was written as the heading."""
    name = _smallest(course)
    original = _path(course, name).read_bytes()
    cases = [a for case in CASES for a in ("--case", case)]
    extra = ["--reference", "solutions.mle:gaussian_mle", *cases] if "--function" in option else []
    title = [] if "--title" in option else ["--title", "t"]
    assert main(["add-question", name, "--course", str(course), *title, *option, *extra]) == 2
    assert said in capsys.readouterr().err
    assert _path(course, name).read_bytes() == original


#: A reference with LaTeX in a raw docstring and a doctest calling it by its own name.
LATEX_REFERENCE = '''

import numpy as np


def wmean_latex(x, w):
    r"""The weighted mean $\\frac{\\sum_i w_i x_i}{\\sum_i w_i}$.

    >>> wmean_latex([1.0, 2.0], [1.0, 1.0])
    1.5
    """
    x = np.asarray(x, dtype=float)
    w = np.asarray(w, dtype=float)
    return float(np.sum(w * x) / np.sum(w))
'''


def test_the_answer_s_docstring_reads_as_the_reference_s_with_the_question_s_name(course):
    """A raw docstring (LaTeX's backslashes) copied as a plain one would read ``\\f`` as a form
    feed; its doctest must call the student's function, not the reference. The oracle is Python:
    the answer cell's docstring, compiled, equals the reference's with the name changed."""
    import ast
    import importlib
    import inspect

    name = _smallest(course)
    with (course / "checks" / f"{name}.py").open("a", encoding="utf-8") as module:
        module.write(LATEX_REFERENCE)
    assert main(["add-question", name, "--course", str(course), "--title", "The weighted mean",
                 "--function", "weighted_mean", "--reference",
                 f"course.checks.{name}:wmean_latex",
                 *[a for case in CASES for a in ("--case", case)]]) == 0
    ps = ProblemSet(name, Course(course))
    [answer] = [c for c in ps.source.cells if c.metadata.get("nbgrader", {}).get(
        "grade_id") == "weighted_mean"]
    [node] = ast.parse(answer.source.split("### BEGIN SOLUTION")[0].rstrip() + "\n    pass\n").body
    Course(course).use_code()
    reference = importlib.import_module(f"course.checks.{name}").wmean_latex
    expected = inspect.getdoc(reference).replace(">>> wmean_latex(", ">>> weighted_mean(")
    assert ast.get_docstring(node) == expected


def test_question_numbers_in_an_ungraded_code_cell_s_strings_and_comments_are_renumbered(course):
    """"question 4" in an f-string of an ungraded code cell stayed 4 when a question was added
    before it; the numbers are renumbered in the cell's strings and comments as in its text
    (the same words decide), and no other number moves."""
    name = _smallest(course)
    last = max(_questions(course, name))
    at = min(_questions(course, name))
    path = course / "source" / name / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    code = (f'# Question {last}: a plot of the fit\n'
            f'title = f"question {last}, {{4}} of the (Q{last}) steps"\n'
            f"note = 'questions {at} and {last}'  # see question {last}\n"
            f"steps = {last} + 4  # {last} steps, not a question\n")
    nb.cells.append(nbformat.v4.new_code_cell(code))
    nbformat.write(nb, path)
    assert _add(course, name, at) == 0
    cell = nbformat.read(path, as_version=4).cells[-1]
    moved = last + 1
    assert cell.source == (f'# Question {moved}: a plot of the fit\n'
                           f'title = f"question {moved}, {{4}} of the (Q{moved}) steps"\n'
                           f"note = 'questions {at + 1} and {moved}'  # see question {moved}\n"
                           f"steps = {last} + 4  # {last} steps, not a question\n"), cell.source
