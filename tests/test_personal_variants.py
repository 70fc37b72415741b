"""Per-student variants: every student graded on their own numbers (issue 42).

In a copy of the course, the problem set ``demo`` that ``python -m autograder new`` writes is given
variants as an author would: a draw function in ``<course>/checks/demo.py`` and, in the source
notebook, ``course.variants`` beside the rules and ``{"variant": name}`` in a hidden case. The
seed is compared with HMAC-SHA256 built by hand from its definition (RFC 2104: ``H((K ^ opad) ||
H((K ^ ipad) || m))``, https://www.rfc-editor.org/rfc/rfc2104), the inputs with numpy's generator
called directly on the student's parameters, and three students' correct notebooks are graded
through the real sandbox. A problem set without variants is graded as before.
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import shutil
import stat
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.__main__ import main
from autograder.checks.declaration import DeclarationError, input_files
from autograder.checks.personal import (
    SECRET_BYTES,
    SecretMissing,
    VariantSpec,
    draw,
    personalise,
    read_secret,
    seed,
)
from autograder.course import Course
from autograder.grading.executors import local_executor
from autograder.grading.pipeline import grade
from autograder.grading.problemset import ProblemSet
from autograder.run.task import GradingOptions, grade_task
from autograder.sandbox import sandbox_available, warm
from autograder.settings import COURSE_DIR
from autograder.status import Status
from coursedata.variants import identity
from tests.environment import require

NAME = "demo"
DRAW = f"course.checks.{NAME}:draw_variant"
STUDENTS = ("ada01", "bob02", "cyd03")
#: What the author adds to the problem set's own Python: the draw of a student's numbers.
CHECKS_MODULE = '''"""Problem set demo's own Python: each student's numbers."""

import numpy as np


def draw_variant(rng: np.random.Generator) -> dict:
    """A student's sample: its seed and its mean."""
    return {"seed": int(rng.integers(2**31)), "mean": round(float(rng.uniform(-50, 50)), 1)}
'''
#: The hidden case that reads them.
SMALL = {"x": {"normal": {"seed": {"variant": "seed"}, "n": 3, "mean": {"variant": "mean"},
                          "sd": 1.5}}}


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _course(root: Path) -> Path:
    """A copy of the course with ``demo`` (made by ``new``) given variants."""
    course = root / "course"
    shutil.copytree(COURSE_DIR, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".scratch*",
        "__pycache__", "variants.secret"))
    assert main(["new", NAME, "--course", str(course)]) == 0
    path = course / "source" / NAME / f"{NAME}.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.metadata.course["variants"] = {"draw": DRAW}
    _cell(nb, "gaussian_mle_hidden").metadata.course.check.cases["sample_small"] = SMALL
    nbformat.write(nb, path)
    (course / "checks" / f"{NAME}.py").write_text(CHECKS_MODULE, encoding="utf-8")
    return course


@pytest.fixture
def course(tmp_path):
    root = _course(tmp_path)
    read_secret(Course(root), create=True)
    yield root
    Course.default().use_code()  # the checkout's course's code again, for the next test


def _hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 from RFC 2104's definition, without the hmac module."""
    key = key.ljust(64, b"\0")  # SHA-256's block is 64 bytes; a 32-byte key is padded
    inner = hashlib.sha256(bytes(k ^ 0x36 for k in key) + message).digest()
    return hashlib.sha256(bytes(k ^ 0x5C for k in key) + inner).digest()


def test_the_seed_is_the_hmac_of_the_problem_set_and_the_student():
    key = bytes(range(SECRET_BYTES))
    for student in STUDENTS:
        expected = int.from_bytes(_hmac_sha256(key, f"ps4:{student}".encode())[:16], "big")
        assert seed(key, "ps4", student) == expected
        assert seed(key, "ps4", f"  {student.upper()} ") == expected  # one student, as typed
    seeds = {seed(key, ps, s) for ps in ("ps4", "ps5") for s in STUDENTS}
    assert len(seeds) == 6 and all(0 <= s < 2**128 for s in seeds)
    assert seed(bytes(SECRET_BYTES), "ps4", "ada01") != seed(key, "ps4", "ada01")


def test_the_secret_is_made_once_for_its_owner_alone_and_never_by_the_grader(tmp_path):
    course = Course(tmp_path)
    with pytest.raises(SecretMissing, match="variants.secret is missing"):
        read_secret(course)
    assert not (tmp_path / "variants.secret").exists()
    made = read_secret(course, create=True)
    assert len(made) == SECRET_BYTES
    assert stat.S_IMODE((tmp_path / "variants.secret").stat().st_mode) == 0o600
    assert read_secret(course) == made == read_secret(course, create=True)
    (tmp_path / "variants.secret").write_text("not hex\n")
    with pytest.raises(ValueError, match="not a secret of 32 hexadecimal bytes"):
        read_secret(course)


def test_a_variant_declaration_is_read_strictly():
    assert VariantSpec.from_metadata({"course": {"rules": {}}}) is None
    assert VariantSpec.from_metadata({"course": {"variants": {"draw": DRAW}}}) == VariantSpec(DRAW)
    for bad in ({"draw": "no_colon"}, {"draw": DRAW, "seed": 3}, [DRAW]):
        with pytest.raises(DeclarationError, match=r'course.variants must be \{"draw"'):
            VariantSpec.from_metadata({"course": {"variants": bad}})


def test_each_student_gets_their_own_inputs_recomputed_identically(course):
    ps = ProblemSet(NAME, Course(course))
    secret = read_secret(Course(course))
    mine = {s: ps.for_student(s) for s in STUDENTS}
    assert ps.source.metadata.course["variants"] == {"draw": DRAW}  # the source is untouched
    files = {s: input_files(p.source) for s, p in mine.items()}
    for student, p in mine.items():
        # The oracle: the draw function called on a generator seeded with the HMAC by hand,
        # and numpy's normal on those numbers.
        from course.checks.demo import draw_variant

        key = _hmac_sha256(secret, f"{NAME}:{student}".encode())
        expected = draw_variant(np.random.default_rng(int.from_bytes(key[:16], "big")))
        assert p.parameters == expected and p.student == student
        with np.load(io.BytesIO(files[student]["sample_small"])) as saved:
            np.testing.assert_array_equal(saved["x"], np.random.default_rng(
                expected["seed"]).normal(expected["mean"], 1.5, size=3))
        # Recomputed from scratch (a new load of the problem set, the identity as typed): the
        # same bytes.
        again = ProblemSet(NAME, Course(course)).for_student(f" {student.upper()}")
        assert input_files(again.source) == files[student]
    small = [files[s]["sample_small"] for s in STUDENTS]
    assert len(set(small)) == 3  # the varied case differs between students
    assert len({files[s]["sample_far"] for s in STUDENTS}) == 1  # the others do not


def test_a_declaration_reading_an_unknown_parameter_names_its_cell(course):
    nb = ProblemSet(NAME, Course(course)).source
    with pytest.raises(DeclarationError, match=r"gaussian_mle_hidden: no variant parameter "
                                               r"'seed'; the draw gives \['mean'\]"):
        personalise(nb, {"mean": 1.0})
    with pytest.raises(DeclarationError, match="was not made for one student"):
        input_files(nb)  # graded without a student: said, not an unknown generator


def test_a_draw_must_return_plain_numbers(course, monkeypatch):
    ProblemSet(NAME, Course(course))  # the copy's code is the package ``course`` now
    module = importlib.import_module(f"course.checks.{NAME}")
    monkeypatch.setattr(module, "draw_variant", lambda rng: {"x": "text"})
    with pytest.raises(DeclarationError, match="a variant's parameter is numbers or lists"):
        draw(VariantSpec(DRAW), NAME, "ada01", bytes(SECRET_BYTES))
    monkeypatch.setattr(module, "draw_variant", lambda rng: {"x": np.arange(3)})
    assert draw(VariantSpec(DRAW), NAME, "ada01", bytes(SECRET_BYTES)) == {"x": [0, 1, 2]}


def test_without_the_secret_the_grade_is_the_graders_fault_not_a_zero(course):
    (course / "variants.secret").unlink()
    ps = ProblemSet(NAME, Course(course))
    result = grade(ps, ps.path.read_bytes(), local_executor(), student="ada01")
    assert result.status is Status.GRADER_ERROR
    assert "variants.secret is missing" in result.fault
    assert result.ps is ps and result.total == 0


def test_a_problem_set_without_variants_is_itself_for_every_student():
    ps = ProblemSet("ps1_pca")
    assert ps.variants is None
    assert ps.for_student("ada01") is ps and ps.parameters is None


@pytest.fixture
def no_zygote_left():
    """The sandbox's warm zygote, started by the grading, stops with the test."""
    yield
    warm.stop_zygote()


@pytest.mark.slow
@require(sandbox_available(), "bubblewrap is needed to grade")
def test_three_students_each_earn_full_marks_on_their_own_numbers_in_the_sandbox(course, no_zygote_left):
    """Each student's correct notebook through the grader's task (the sandbox, the student's
    identity from the LMS): full marks, and the hidden case scored on that student's inputs."""
    ps = ProblemSet(NAME, Course(course))
    data = ps.path.read_bytes()  # the reference solution: correct on every variant
    for student in STUDENTS:
        record = grade_task(NAME, student, data, GradingOptions(course=str(course)))
        assert record.status == Status.AWAITING_MANUAL.value, record.grader_error
        auto = {s.grade_id: s for s in record.scores if s.grade_id.startswith("gaussian")}
        assert all(s.points == s.max_points for s in auto.values()), auto
    # A notebook that ignores the student's numbers (it answers another student's sample for
    # that case) loses exactly that case: the grader scores against the student's own inputs.
    other = ps.for_student(STUDENTS[1]).parameters
    x_other = np.random.default_rng(other["seed"]).normal(other["mean"], 1.5, size=3)
    nb = nbformat.read(ps.path, as_version=4)
    _cell(nb, "gaussian_mle").source += (
        "\n\n_right = gaussian_mle\n\n\ndef gaussian_mle(x):\n"
        "    x = np.asarray(x, dtype=float)\n"
        f"    if x.shape == (3,):\n        x = np.array({json.dumps(x_other.tolist())})\n"
        "    return _right(x)\n")
    record = grade_task(NAME, STUDENTS[0], nbformat.writes(nb).encode(),
                        GradingOptions(course=str(course)))
    hidden = next(s for s in record.scores if s.grade_id == "gaussian_mle_hidden")
    assert hidden.points == pytest.approx(hidden.max_points * 2 / 3), hidden.message
    assert "x of shape (3,)" in hidden.message


def test_identity_drops_spaces_and_case():
    assert identity(" Ada01\n") == identity("ADA01") == "ada01"
