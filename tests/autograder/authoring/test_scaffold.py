"""``python -m autograder new NAME``: a new problem set that is releasable as it is written.

Everything happens in a copy of the course (``--course``), never in the checkout's ``course/``
(whose problem sets the structural tests iterate over). The fast tests pin what the command
writes and what it refuses; the slow ones run the author's self-check, the release, and the
real (sandboxed) grader on the reference and on the blank released notebook.
"""

from __future__ import annotations

import ast
import copy
import csv
import importlib
import shutil
import subprocess
import sys

import nbformat
import numpy as np
import pytest

from autograder.__main__ import main
from autograder.authoring.validate import problems
from autograder.checks.inventory import inventory
from autograder.checks.mutants import mutants
from autograder.checks.personal import SECRET_BYTES, VariantSpec, draw, read_secret
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.settings import COURSE_DIR, ROOT
from coursedata.variants import IDENTITY_CELL
from coursedata.variants import variant as coursedata_variant
from coursesite import problem_sets as site_problem_sets

NAME = "demo"


def _copy_course(root):
    course = root / "course"
    shutil.copytree(COURSE_DIR, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".scratch*"))
    return course


def _autograder(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run ``python -m autograder ARGS`` as the instructor does (in its own process, so the
    grader's worker processes end with it)."""
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A copy of the course after ``new demo``: ``(course folder, what the command printed)``."""
    course = _copy_course(tmp_path_factory.mktemp("scaffold"))
    done = _autograder("new", NAME, "--course", str(course), "--title",
                       "Problem set 0 — A worked example")
    assert done.returncode == 0, done.stderr
    return course, done.stdout


def test_the_new_problem_set_is_valid_and_listed(made):
    course, printed = made
    assert not (COURSE_DIR / "source" / NAME).exists()  # the checkout's course is untouched
    path = course / "source" / NAME / f"{NAME}.ipynb"
    assert str(path) in printed and f"check-problem-set {NAME} --course {course}" in printed
    nbformat.validate(nbformat.read(path, as_version=4))
    ps = ProblemSet(NAME, Course(course))
    assert problems(ps) == []
    assert NAME in list_problem_sets(Course(course)) and NAME in site_problem_sets(course)
    assert ps.max_points == 5
    assert ps.source.cells[0].source.startswith("# Problem set 0 — A worked example\n")
    assert "@KIT_URL@" in ps.source.cells[1].source
    # Both test cells are declared checks (no Python check, no input module).
    checks = {c.grade_id: c.check for c in inventory(ps)}
    assert checks == {"gaussian_mle_visible": "declared", "gaussian_mle_hidden": "declared",
                      "divisor_explanation": "manual"}
    assert not (ROOT / "coursedata" / "inputs" / f"{NAME}.py").exists()
    # Its answer declares realistic mistakes, each on its own question's test cells.
    declared = mutants(ps.source)
    assert len(declared) == 2 and all(m.cell == "gaussian_mle" and m.loses == (
        "gaussian_mle_visible", "gaussian_mle_hidden") for m in declared)
    rubric = (course / "rubrics" / f"{NAME}.md").read_text()
    assert "## `divisor_explanation` — 2 points" in rubric


def test_an_existing_name_is_refused_and_nothing_changes(made):
    course, _ = made
    path = course / "source" / NAME / f"{NAME}.ipynb"
    rubric = course / "rubrics" / f"{NAME}.md"
    before = path.read_bytes(), rubric.read_bytes()
    for name in (NAME, "ps3_mle"):
        done = _autograder("new", name, "--course", str(course))
        assert done.returncode == 2
        assert f"the problem set {name!r} exists already" in done.stderr
        assert "nothing was changed" in done.stderr
    assert (path.read_bytes(), rubric.read_bytes()) == before


@pytest.mark.parametrize("name", ["Demo", "7ps", "ps-7", "ps 7", "../ps7", "class", "", "é"])
def test_a_bad_name_is_refused(tmp_path, capsys, name):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    assert main(["new", name, "--course", str(course)]) == 2
    assert "cannot name a problem set" in capsys.readouterr().err
    assert not any((course / "source").iterdir()) and not (course / "rubrics").exists()
    assert not (tmp_path / "ps7").exists()


def test_a_folder_that_is_no_course_is_refused(tmp_path, capsys):
    assert main(["new", NAME, "--course", str(tmp_path)]) == 2
    assert "no course folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_marking_scheme_gets_the_section_appended(tmp_path, capsys):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "rubrics").mkdir()
    rubric = course / "rubrics" / f"{NAME}.md"
    rubric.write_text("# Notes written before\n")
    assert main(["new", NAME, "--course", str(course)]) == 0
    assert "section appended" in capsys.readouterr().out
    text = rubric.read_text()
    assert text.startswith("# Notes written before\n") and "## `divisor_explanation`" in text
    # The same section twice is refused (another name's folder, the same marking-scheme file).
    shutil.rmtree(course / "source" / NAME)
    assert main(["new", NAME, "--course", str(course)]) == 2
    assert rubric.read_text() == text


@pytest.mark.slow
def test_the_self_check_passes(made):
    course, _ = made
    done = _autograder("check-problem-set", NAME, "--course", str(course), "--mutants")
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{NAME} is sound" in done.stdout
    for step in ("reference answers earn full marks", "blank", "release", "generic",
                 "ok   every declared mutant loses points where it says (2 graded)"):
        assert step in done.stdout


@pytest.mark.slow
def test_the_release_is_clean_and_the_grader_gives_zero_and_full_marks(made, tmp_path):
    course, _ = made
    assert _autograder("release", NAME, "--course", str(course), "--quiet").returncode == 0
    released = course / "release" / NAME / f"{NAME}.ipynb"
    text = released.read_text()
    for secret in ("BEGIN SOLUTION", "HIDDEN TESTS", "np.sqrt(np.mean((x - mu)", "sample_far",
                   "solutions.mle", '"check"'):
        assert secret not in text, secret
    nb = nbformat.reads(text, as_version=4)
    # Only the visible cells' own cases, for the student's check (coursedata.visible).
    assert all(set(c.metadata.get("course", {})) <= {"visible"} for c in nb.cells)
    assert "@KIT_URL@" not in text and "%pip install" in text

    # A student who writes the reference answer into the released notebook, and one who
    # submits it blank.
    source = nbformat.read(course / "source" / NAME / f"{NAME}.ipynb", as_version=4)
    [answer] = [c for c in source.cells if c.metadata["nbgrader"]["grade_id"] == "gaussian_mle"]
    solved = copy.deepcopy(nb)
    [blank_answer] = [c for c in solved.cells
                      if c.metadata.get("nbgrader", {}).get("grade_id") == "gaussian_mle"]
    assert "NotImplementedError" in blank_answer.source
    blank_answer.source = "\n".join(line for line in answer.source.splitlines()
                                     if "SOLUTION" not in line)
    # The one-pass formula the question warns against: right on the lecture's data and on the
    # visible case, wrong for σ̂ far from zero (one of the hidden cell's six equal parts).
    naive = copy.deepcopy(solved)
    [naive_answer] = [c for c in naive.cells
                      if c.metadata.get("nbgrader", {}).get("grade_id") == "gaussian_mle"]
    naive_answer.source = naive_answer.source.replace(
        "np.sqrt(np.mean((x - mu) ** 2))", "np.sqrt(np.mean(x ** 2) - mu ** 2)")
    far = np.random.default_rng(3).normal(1e4, 0.01, size=2000)
    assert abs(np.sqrt(np.mean(far ** 2) - far.mean() ** 2) / far.std() - 1) > 1e-6
    submissions = tmp_path / "submissions"
    for student, notebook in (("ref", solved), ("blank", nb), ("naive", naive)):
        (submissions / student).mkdir(parents=True)
        nbformat.write(notebook, submissions / student / f"{NAME}.ipynb")
    out = tmp_path / "out"
    graded = _autograder("grade", NAME, str(submissions), "--out", str(out), "--course",
                         str(course), "--quiet")
    assert graded.returncode == 0, graded.stdout + graded.stderr
    with (out / "grades.csv").open(newline="", encoding="utf-8") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    # Graded, with the written answer waiting for its grader.
    assert {row["status"] for row in rows.values()} == {"awaiting-manual-grading"}, rows
    assert float(rows["ref"]["autograded_max"]) == 3
    assert float(rows["ref"]["autograded_total"]) == 3
    assert float(rows["ref"]["gaussian_mle_hidden"]) == 2
    assert float(rows["blank"]["autograded_total"]) == 0
    assert float(rows["ref"]["manual_max"]) == 2 and rows["ref"]["divisor_explanation"] == ""
    assert float(rows["naive"]["gaussian_mle_visible"]) == 1
    assert float(rows["naive"]["gaussian_mle_hidden"]) == pytest.approx(2 * 5 / 6, abs=0.01)


@pytest.fixture(scope="module")
def made_with_variants(tmp_path_factory):
    """A copy of the course after ``new demo --variants`` (its own copy: a release of ``demo``
    without variants in the other one would make the variant table refuse a lost secret)."""
    course = _copy_course(tmp_path_factory.mktemp("scaffold-variants"))
    done = _autograder("new", NAME, "--variants", "--course", str(course))
    assert done.returncode == 0, done.stderr
    yield course, done.stdout
    Course.default().use_code()  # the checkout's course's code again, for the next test


def test_new_with_variants_writes_the_three_edits_of_the_guide(made_with_variants):
    """authoring.md, 'Giving every student their own numbers': the draw in checks/NAME.py,
    its declaration in the metadata, a hidden case reading a parameter, and the identity and
    variant cells after the setup."""
    course, printed = made_with_variants
    module = course / "checks" / f"{NAME}.py"
    assert str(module) in printed
    ps = ProblemSet(NAME, Course(course))
    assert problems(ps) == []
    spec = VariantSpec.from_metadata(ps.source.metadata)
    assert spec is not None and spec.draw == f"course.checks.{NAME}:draw_variant"
    ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in ps.source.cells]
    assert ids[ids.index("setup") + 1:ids.index("setup") + 4] == [
        "identity_text", IDENTITY_CELL, "variant"]
    hidden = ps.source.cells[ids.index("gaussian_mle_hidden")].metadata.course.check
    assert {"variant": "seed"} in hidden.cases["sample_small"]["x"]["normal"].values()
    # Two students draw other numbers, from the course's secret alone.
    secret = bytes(range(SECRET_BYTES))
    ada, bob = (draw(spec, NAME, s, secret) for s in ("ada-101", "bob-102"))
    assert ada != bob and set(ada) == set(spec.hidden) | {"n", "sigma"}
    # What question 2's second part should state, from its own formula.
    Course(course).use_code()
    expected = importlib.import_module(f"course.checks.{NAME}").expected(ada)
    assert list(expected.values()) == [pytest.approx(ada["sigma"] * np.sqrt(
        ada["n"] / (ada["n"] - 1)))]


def test_new_with_variants_refuses_an_existing_checks_module(tmp_path, capsys):
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "checks").mkdir()
    (course / "checks" / f"{NAME}.py").write_text("# the author's own\n")
    assert main(["new", NAME, "--variants", "--course", str(course)]) == 2
    assert "exists already" in capsys.readouterr().err
    assert not any((course / "source").iterdir()) and not (course / "rubrics").exists()
    assert (course / "checks" / f"{NAME}.py").read_text() == "# the author's own\n"


@pytest.mark.slow
def test_new_with_variants_passes_the_self_check_and_releases_each_students_numbers(
        made_with_variants, tmp_path):
    course, _ = made_with_variants
    done = _autograder("check-problem-set", NAME, "--course", str(course))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{NAME} is sound" in done.stdout
    roster = tmp_path / "roster.txt"
    roster.write_text("hoppergrace-103\nada-lovelace-201\n", encoding="utf-8")
    released = _autograder("release", NAME, "--course", str(course), "--roster", str(roster))
    assert released.returncode == 0, released.stdout + released.stderr
    nb = nbformat.read(course / "release" / NAME / f"{NAME}.ipynb", as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "variant"]
    call = next(n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)
                and getattr(n.func, "attr", "") == "variant")
    table = ast.literal_eval(call.args[2])
    spec = VariantSpec.from_metadata(ProblemSet(NAME, Course(course)).source.metadata)
    secret = read_secret(Course(course))
    for student in ("hoppergrace-103", "ada-lovelace-201"):
        drawn = draw(spec, NAME, student, secret)
        shown = {k: v for k, v in drawn.items() if k not in spec.hidden}
        assert coursedata_variant(NAME, f" {student.upper()} ", table) == shown
