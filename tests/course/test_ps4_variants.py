"""Problem set 4 with per-student variants, end to end (issue 42's worked example).

In a copy of the course, problem set 4 is released for a roster of three students (a real
nbgrader release, ``release --roster``); each student fills in the released notebook with the
correct answers and their own identity, and writes the Question 2 number for their own coin; the
class comes back as a Canvas download (canvas-lms ``lib/content_zipper.rb`` names each file
``<sortable name>_<user id>_<attachment id>_<file>``; the grader names the student
``<name>-<user id>``) and is graded by ``python -m autograder grade`` in the real sandbox. The
oracle for each student's numbers is the released notebook's own table, looked up by the kit as
the student's notebook does; the oracle for their written number is the closed form
``(R + 1)/(K + 2)`` of the marking scheme. A problem set without variants (problem set 1) is
graded exactly as before: with or without a student, the same scores and no variant.
"""

from __future__ import annotations

import ast
import json
import math
import shutil
import subprocess
import sys
from fractions import Fraction

import nbformat
import pytest

from autograder.authoring.release import release
from autograder.checks.declaration import input_files
from autograder.checks.personal import draw, read_secret
from autograder.course import Course
from autograder.grading.executors import local_executor
from autograder.grading.pipeline import grade
from autograder.grading.problemset import ProblemSet
from autograder.grading.quoted import quoted_numbers
from autograder.grading.record import load_records
from autograder.sandbox import sandbox_available
from autograder.settings import COURSE_DIR, ROOT
from coursedata.variants import IDENTITY_CELL, variant
from tests.downloads import canvas_file
from tests.environment import require

PS = "ps4_map_naive_bayes"
#: Three students as the grader names those of a Canvas download: ``<name>-<user id>``.
STUDENTS = ("adaada-101", "bobbob-102", "cydcyd-103")


def _gid(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _written(source, who: str, text: str) -> bytes:
    """The source notebook signed by ``who``, with ``text`` as Question 2's written answer."""
    nb = nbformat.from_dict(json.loads(json.dumps(source)))
    for cell in nb.cells:
        if _gid(cell) == "map_derivation":
            cell.source = text
        if _gid(cell) == IDENTITY_CELL:
            cell.source = f"STUDENT_ID = {who!r}\n"
    return nbformat.writes(nb).encode()


@pytest.fixture
def course(tmp_path):
    root = tmp_path / "course"
    shutil.copytree(COURSE_DIR, root, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".*", "__pycache__",
        "variants.secret"))
    yield root
    Course.default().use_code()  # the checkout's course's code again, for the next test


def _answered(released: nbformat.NotebookNode, source: nbformat.NotebookNode, who: str,
              written: str) -> bytes:
    """The released notebook with every answer cell filled in from the source (the correct
    answers), ``who`` entered as STUDENT_ID and ``written`` in Question 2's written answer."""
    nb = nbformat.from_dict(json.loads(json.dumps(released)))
    answers = {_gid(c): c.source for c in source.cells if c.metadata.get("nbgrader", {})
               .get("solution")}
    for cell in nb.cells:
        if _gid(cell) in answers:
            cell.source = answers[_gid(cell)]
    [identity] = [c for c in nb.cells if _gid(c) == IDENTITY_CELL]
    identity.source = f"STUDENT_ID = {who!r}\n"
    [derivation] = [c for c in nb.cells if _gid(c) == "map_derivation"]
    derivation.source = written
    return nbformat.writes(nb).encode()


@pytest.mark.slow
@require(sandbox_available(), "bubblewrap is needed to grade")
def test_three_students_of_ps4_each_on_their_own_numbers_in_the_sandbox(course, tmp_path):
    """Released for a roster of three, each student's correct notebook earns every autograded
    point on their own numbers; their hidden inputs differ and are recomputed identically; Cyd,
    who hands in Ada's notebook (Ada's identity and Ada's number), is flagged for both."""
    ada, bob, cyd = STUDENTS
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    folder = release(PS, course, db_url=db, roster=STUDENTS, validate=False)
    released = nbformat.read(folder / f"{PS}.ipynb", as_version=4)
    [cell] = [c for c in released.cells if _gid(c) == "variant"]
    table = ast.literal_eval(ast.parse(cell.source).body[0].value.args[2])
    ps = ProblemSet(PS, Course(course))
    assert read_secret(ps.course)  # the release made the course's secret
    numbers = {s: variant(PS, s, table) for s in STUDENTS}  # as each student's notebook sees them
    assert len({(n["runs"], n["flips"]) for n in numbers.values()}) == 3, numbers
    # The grader's draw is the released table's, and the hidden inputs differ between students
    # and are recomputed identically from the identity alone.
    mine = {s: ps.for_student(s) for s in STUDENTS}
    hidden = {s: input_files(p.source) for s, p in mine.items()}
    for s in STUDENTS:
        assert mine[s].shown_parameters == numbers[s]
        assert input_files(ProblemSet(PS, Course(course)).for_student(s).source) == hidden[s]
    for case in ("beta_map_scalar", "beta_map_large"):
        assert len({hidden[s][case] for s in STUDENTS}) == 3, case
    own = {s: (n["runs"] + 1) / (n["flips"] + 2) for s, n in numbers.items()}  # the scheme's
    download = tmp_path / "download"
    download.mkdir()
    notebooks = {
        ada: _answered(released, ps.source, ada, f"For my coin the MAP is {own[ada]:.4f}."),
        bob: _answered(released, ps.source, " BOBBOB-102", f"My MAP is {own[bob]:.4f}."),
        cyd: _answered(released, ps.source, ada, f"For my coin the MAP is {own[ada]:.4f}."),
    }
    for i, (student, data) in enumerate(notebooks.items()):
        name, user = student.split("-")
        (download / canvas_file(name, int(user), 7001 + i, f"{PS}.ipynb")).write_bytes(data)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", PS, str(download),
                           "--out", str(out), "--workers", "1", "--quiet", "--course",
                           str(course)], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r.student_id: r for r in load_records(out / "records", PS)}
    assert sorted(records) == sorted(STUDENTS)
    for student, r in records.items():
        auto = [s for s in r.scores if s.points is not None]
        assert auto and all(s.points == s.max_points for s in auto), r.scores
        assert r.variant == numbers[student] and "seed" not in r.variant
        assert list(r.expected.values()) == [pytest.approx(own[student])]
        feedback = (out / "feedback" / student / f"{PS}.html").read_text()
        assert f"runs = {numbers[student]['runs']}" in feedback
        assert f"{own[student]:.6g}" in feedback
    assert records[ada].flags == () and records[bob].flags == ()
    [flag] = records[cyd].flags
    assert f"STUDENT_ID = {ada!r}" in flag and f"handed in as {cyd!r}" in flag
    report = (out / "report.html").read_text()
    section = report.split("Written answers with another student's numbers")[1]
    assert f"<td>{cyd}</td><td>map_derivation</td><td>{own[ada]:.4f}</td><td>{ada}</td>" in section
    scheme = (out / "marking-scheme.html").read_text()
    for student in STUDENTS:
        assert f"<td>{student}</td>" in scheme and f"{own[student]:.6g}" in scheme


@pytest.mark.slow
def test_a_problem_set_without_variants_is_graded_as_before():
    """Problem set 1 declares no variants: for a student it is itself, and its reference is
    graded the same with or without the student's identity, with no numbers of anyone's."""
    ps = ProblemSet("ps1_pca")
    assert ps.variants is None and ps.for_student(STUDENTS[0]) is ps
    data = ps.path.read_bytes()
    plain = grade(ps, data, local_executor())
    named = grade(ps, data, local_executor(), student=STUDENTS[0])
    assert named.status == plain.status and named.flags == plain.flags == []
    assert [(s.grade_id, s.points) for s in named.scores] == [
        (s.grade_id, s.points) for s in plain.scores]
    assert named.ps is ps and named.expected == plain.expected == {}


def _map(numbers: dict) -> float:
    """Question 2's MAP estimate, the marking scheme's closed form (R + 1)/(K + 2)."""
    return (numbers["runs"] + 1) / (numbers["flips"] + 2)


def test_few_classmates_share_a_four_decimal_answer():
    """Issue 42, S4: over a class of 200 sample identities (drawn with a key of the test's own),
    few students share their four-decimal MAP estimate with a classmate, and hardly any pair
    has the same R and K: what the notebook's "Your own numbers" promises."""
    ps = ProblemSet(PS)
    key = bytes(range(32))
    numbers = [draw(ps.variants, PS, f"student-{i:03d}", key) for i in range(200)]
    assert all(n["flips"] >= n["runs"] >= 1 for n in numbers)  # every run ends in heads
    answers = [f"{_map(n):.4f}" for n in numbers]
    shared = [a for a in answers if answers.count(a) > 1]
    assert len(shared) <= 10, sorted(shared)  # at most 5 % of the class
    pairs = [(n["runs"], n["flips"]) for n in numbers]
    assert len(set(pairs)) >= len(pairs) - 1


def test_a_number_of_many_variants_or_ones_own_is_never_flagged(course):
    """Issue 42, S3: "0.50" (the prior's mean, and the MAP of many variants: every K = 2R) in an
    honest answer is not listed as a classmate's, nor is one's own value; a classmate's
    four-decimal value still is."""
    ps = ProblemSet(PS, Course(course))
    secret = read_secret(ps.course, create=True)
    mine = {f"s{i}": _map(draw(ps.variants, PS, f"s{i}", secret)) for i in range(20000)}
    half = next(s for s, v in mine.items() if f"{v:.2f}" == "0.50")  # a classmate at 0.50
    ada, bob = [s for s, v in mine.items() if f"{v:.2f}" != "0.50"][:2]
    source = nbformat.read(ps.path, as_version=4)

    def written(who: str, text: str) -> bytes:
        return _written(source, who, text)

    def honest(who: str) -> bytes:
        return written(who, f"The prior's mean is 0.50; my MAP is {mine[who]:.4f} ({mine[who]:.2f}).")

    copied = written(bob, f"The MAP is {mine[half]:.4f}.")
    found = quoted_numbers(ps, [(ada, honest(ada)), (half, honest(half)), (bob, copied)])
    assert [(q.student, q.other, q.quoted) for q in found] == [
        (bob, half, f"{mine[half]:.4f}")], found


def test_a_classmates_number_is_flagged_however_it_is_written(course):
    """Issue 42, S2: a classmate's MAP estimate copied as a fraction (plain or LaTeX), a
    percentage, without its leading zero, with a decimal comma, or cut rather than rounded is
    listed with both students named; the writer's own value written so is not. The forms are
    made here from the classmate's R and K (the fraction (R + 1)/(K + 2) of the marking
    scheme), the cut one from the exact fraction."""
    ps = ProblemSet(PS, Course(course))
    secret = read_secret(ps.course, create=True)
    numbers = {f"s{i}": draw(ps.variants, PS, f"s{i}", secret) for i in range(200)}
    exact = {s: Fraction(n["runs"] + 1, n["flips"] + 2) for s, n in numbers.items()}

    def cut(value: Fraction, decimals: int) -> str:
        return f"{math.floor(value * 10**decimals) / 10**decimals:.{decimals}f}"

    # A classmate whose value cut to four decimals is not its rounding, and a writer apart.
    ada = next(s for s, v in exact.items() if cut(v, 4) != f"{float(v):.4f}")
    bob = next(s for s, v in exact.items() if abs(v - exact[ada]) > Fraction(1, 10))
    value, n = exact[ada], numbers[ada]
    forms = {
        "fraction": f"{n['runs'] + 1}/{n['flips'] + 2}",
        "latex fraction": rf"$\hat\theta = \frac{{{n['runs'] + 1}}}{{{n['flips'] + 2}}}$",
        "reduced fraction": f"{value.numerator}/{value.denominator}",
        "percentage": f"{100 * float(value):.2f} %",
        "latex percentage": f"${100 * float(value):.2f}\\%$",
        "no leading zero": f"{float(value):.4f}".lstrip("0"),
        "decimal comma": f"{float(value):.4f}".replace(".", ","),
        "cut": cut(value, 4),
    }
    source = nbformat.read(ps.path, as_version=4)

    def written(who: str, text: str) -> bytes:
        return _written(source, who, text)

    for form, text in forms.items():
        found = quoted_numbers(ps, [(ada, written(ada, f"My MAP is {text}.")),
                                    (bob, written(bob, f"My MAP is {text}."))])
        assert [(q.student, q.other) for q in found] == [(bob, ada)], (form, text, found)
        assert found[0].quoted in text and found[0].value == pytest.approx(float(value))
