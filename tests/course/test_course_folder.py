"""A problem set is the course's, not the grader's: an instructor adds, changes or removes one in
the course folder alone.

Everything happens in a copy of the course (``--course``): a problem set made with ``new``, given
an input generator and a hand-written check of its own in ``<course>/checks/NAME.py`` (named
``course.checks.NAME`` as the repository's own problem sets name theirs), is validated, graded by
its checks and self-checked with no file outside that copy; removing it is removing its files.
The checkout's ``course/`` and the grader's code are never touched.
"""

from __future__ import annotations

import inspect
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.__main__ import main
from autograder.authoring.validate import problems
from autograder.checks import load_checks
from autograder.checks.inventory import inventory
from autograder.checks.registry import checks_for
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.settings import COURSE_DIR, ROOT

NAME = "demo"

#: The new problem set's own Python: a generator its declaration names, and the visible cell's
#: check written by hand (what the declaration said, in Python).
CHECKS_MODULE = '''"""Problem set demo's own Python: an input generator and one hand-written check."""

import numpy as np

from autograder.checks.answers import Answers, unpack
from coursedata.compare import compare
from autograder.checks.outcome import Outcome, first_problem, guarded
from solutions.mle import gaussian_mle

PROBLEM_SET = "demo"


def sample(seed: int, n: int) -> np.ndarray:
    """A seeded normal sample, the visible case's ``x``."""
    return np.random.default_rng(seed).normal(10.0, 3.0, n)


def _value(a: Answers, case: str) -> str | None:
    got = unpack(a, case, 2)
    expected = gaussian_mle(**a.inputs(case))
    return (compare(got[0], expected[0], "μ̂", rtol=1e-8, atol=1e-10)
            or compare(got[1], expected[1], "σ̂ (divisor N)", rtol=1e-8, atol=1e-10))


def gaussian_mle_visible(a: Answers) -> Outcome:
    return first_problem(guarded(lambda: _value(a, "sample")))


CHECKS = {"gaussian_mle_visible": gaussian_mle_visible}
'''


def _course_with_new_problem_set(root: Path) -> Path:
    """A copy of the course, with ``demo`` made by ``new`` and given its own Python."""
    course = root / "course"
    shutil.copytree(COURSE_DIR, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".scratch*",
        "__pycache__"))
    assert main(["new", NAME, "--course", str(course)]) == 0
    path = course / "source" / NAME / f"{NAME}.ipynb"
    nb = nbformat.read(path, as_version=4)
    cells = {c.metadata.nbgrader.grade_id: c for c in nb.cells
             if "grade_id" in c.metadata.get("nbgrader", {})}
    visible, hidden = cells["gaussian_mle_visible"].metadata, cells["gaussian_mle_hidden"].metadata
    # The visible cell keeps only its inputs, drawn by the course's generator; its check is the
    # Python one. The hidden cell states the comparison itself, over its own cases.
    compared = {k: v for k, v in visible.course.check.items() if k != "cases"}
    visible.course.check = {"cases": {"sample": {"x": {
        "course.checks.demo:sample": {"seed": 1, "n": 30}}}}}
    hidden.course.check.update(compared)
    hidden.course.check.weights = {k: w for k, w in hidden.course.check.weights.items()
                                   if k != "sample"}
    nbformat.write(nb, path)
    (course / "checks" / f"{NAME}.py").write_text(CHECKS_MODULE, encoding="utf-8")
    return course


@pytest.fixture
def course(tmp_path) -> Path:
    yield _course_with_new_problem_set(tmp_path)
    Course.default().use_code()  # the checkout's course's code again, for the next test


def test_a_new_problem_set_with_its_own_python_needs_no_file_outside_the_course(course):
    ps = ProblemSet(NAME, Course(course))
    assert NAME in list_problem_sets(Course(course))
    assert NAME not in list_problem_sets()  # the checkout's course is untouched
    assert not (ROOT / "autograder" / "checks" / f"{NAME}.py").exists()
    check = checks_for(ps)["gaussian_mle_visible"]
    assert Path(inspect.getfile(check)) == course / "checks" / f"{NAME}.py"
    kinds = {c.grade_id: c.check for c in inventory(ps)}
    assert kinds["gaussian_mle_visible"] == "python"
    assert kinds["gaussian_mle_hidden"] == "declared"
    assert problems(ps) == []  # the declared input is drawn by the course's generator


def test_the_course_in_use_decides_whose_code_is_imported(course):
    """A problem set of another course in the same process gets that course's code, and the
    checkout's course gets its own again."""
    ours = {n: Path(load_checks(n, Course(course)).__file__ or "") for n in [NAME]}
    assert ours[NAME].is_relative_to(course)
    for name in list_problem_sets():
        module = load_checks(name, Course.default())
        if getattr(module, "__file__", None):
            assert Path(module.__file__).is_relative_to(COURSE_DIR), name


def test_removing_a_problem_set_is_removing_its_files(course):
    for path in (course / "source" / NAME, course / "rubrics" / f"{NAME}.md",
                 course / "checks" / f"{NAME}.py"):
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    assert NAME not in list_problem_sets(Course(course))
    assert sorted(list_problem_sets(Course(course))) == sorted(list_problem_sets())


@pytest.mark.slow
def test_the_new_problem_set_passes_the_self_check(tmp_path):
    """The author's self-check (reference, blank release, inputs, wrong answers) on the copy,
    as the instructor runs it."""
    course = _course_with_new_problem_set(tmp_path)
    done = subprocess.run([sys.executable, "-m", "autograder", "check-problem-set", NAME,
                           "--course", str(course)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
