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

import ast
import hashlib
import importlib
import io
import json
import re
import shutil
import stat
import subprocess
import sys
import zipfile
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
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.grading.record import load_records
from autograder.run.task import GradingOptions, grade_task
from autograder.sandbox import sandbox_available, warm
from autograder.settings import COURSE_DIR, ROOT
from autograder.status import Status
from coursedata.variants import IDENTITY_CELL, identity
from tests.downloads import canvas_file
from tests.environment import require

NAME = "demo"
DRAW = f"course.checks.{NAME}:draw_variant"
STUDENTS = ("ada01", "bob02", "cyd03")
#: What the author adds to the problem set's own Python: the draw of a student's numbers.
CHECKS_MODULE = '''"""Problem set demo's own Python: each student's numbers."""

import numpy as np


def draw_variant(rng: np.random.Generator) -> dict:
    """A student's sample: its seed (the grader's alone), its mean and its size."""
    return {"seed": int(rng.integers(2**31)), "mean": round(float(rng.uniform(-50, 50)), 1),
            "n": int(rng.integers(5, 60))}


def expected(parameters: dict) -> dict:
    """What the written answer states for the student's numbers: their mean scaled by the
    ratio of the two estimates (one of thousands of values, so a classmate's is evidence)."""
    n = parameters["n"]
    return {"mean times sqrt(N / (N - 1))": parameters["mean"] * float(np.sqrt(n / (n - 1)))}
'''
#: The hidden case that reads them.
SMALL = {"x": {"normal": {"seed": {"variant": "seed"}, "n": 3, "mean": {"variant": "mean"},
                          "sd": 1.5}}}


#: The cells the author adds after the setup: the student's identity, their numbers.
IDENTITY_SOURCE = 'STUDENT_ID = ""  # your course identity, as the LMS knows you\n'
VARIANT_SOURCE = ('V = coursedata.variant("demo", STUDENT_ID, "@VARIANTS@")\n'
                  'print(f"Your sample is centred near {V[\'mean\']}; your N is {V[\'n\']}.")\n')


def _new_cell(grade_id: str, source: str, solution: bool = False):
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": not solution,
                                 "schema_version": 3, "solution": solution, "task": False}
    return cell


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
    nb.metadata.course["variants"] = {"draw": DRAW, "hidden": ["seed"],
                                      "expected": f"course.checks.{NAME}:expected"}
    at = nb.cells.index(_cell(nb, "setup")) + 1
    nb.cells[at:at] = [_new_cell(IDENTITY_CELL, IDENTITY_SOURCE, solution=True),
                       _new_cell("variant", VARIANT_SOURCE)]
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
    both = {"draw": DRAW, "hidden": ["seed"], "expected": "course.checks.x:f"}
    assert VariantSpec.from_metadata({"course": {"variants": both}}) == VariantSpec(
        DRAW, ("seed",), "course.checks.x:f")
    for bad in ({"draw": "no_colon"}, {"draw": DRAW, "seed": 3}, [DRAW],
                {"draw": DRAW, "hidden": "seed"}, {"draw": DRAW, "expected": 3}):
        with pytest.raises(DeclarationError, match=r'course.variants must be \{"draw"'):
            VariantSpec.from_metadata({"course": {"variants": bad}})


def test_each_student_gets_their_own_inputs_recomputed_identically(course):
    ps = ProblemSet(NAME, Course(course))
    secret = read_secret(Course(course))
    mine = {s: ps.for_student(s) for s in STUDENTS}
    # The source is untouched.
    assert _cell(ps.source, "gaussian_mle_hidden").metadata.course.check.cases.sample_small == SMALL
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


def test_grading_without_the_secret_stops_before_grading_anyone(course, tmp_path, capsys):
    """The secret lost (issue 42, I2): ``grade`` and ``similarity`` on a Canvas download (its
    file naming as in the Canvas test below) stop at once with exit status 2 and one message
    naming the file, where it comes from (the release) and what to do; nothing is graded or
    written, and no traceback."""
    (course / "variants.secret").unlink()
    ps = ProblemSet(NAME, Course(course))
    download = tmp_path / "download"
    download.mkdir()
    (download / f"adaada_101_5001_{NAME}.ipynb").write_bytes(_signed(ps, "adaada-101"))
    out = tmp_path / "out"
    for command in (["grade", NAME, str(download), "--out", str(out), "--workers", "1",
                     "--quiet", "--unsafe", "--course", str(course)],
                    ["similarity", NAME, str(download), "--out", str(out), "--course",
                     str(course)]):
        assert main(command) == 2
        err = capsys.readouterr().err
        [line] = [x for x in err.splitlines() if x.startswith("error:")]
        assert f"{course / 'variants.secret'} is missing" in line, err
        assert "python -m autograder release" in line and "Restore it" in line
        assert "Traceback" not in err and "grader-error" not in err
        assert not (out / "records").exists() and not (out / "grades.csv").exists()


def test_a_release_without_the_identity_cell_is_refused_naming_it(course):
    """The guide's third edit forgotten (no answer cell ``student_identity``) or half made (a
    locked cell, or a Markdown one): no notebook would say whose it is and the grader would flag
    every student, so the release refuses before nbgrader runs, naming the cell to add."""
    from autograder.authoring.release import release

    path = course / "source" / NAME / f"{NAME}.ipynb"
    original = nbformat.read(path, as_version=4)
    for change in ("renamed", "locked", "markdown"):
        nb = nbformat.from_dict(json.loads(json.dumps(original)))
        cell = _cell(nb, IDENTITY_CELL)
        if change == "renamed":
            cell.metadata.nbgrader["grade_id"] = "my_identity"
            said = f"an answer cell with the grade_id {IDENTITY_CELL}"
        elif change == "locked":
            cell.metadata.nbgrader.update(solution=False, locked=True)
            said = f"the cell {IDENTITY_CELL} must be an answer cell"
        else:
            cell.cell_type = "markdown"
            del cell["outputs"], cell["execution_count"]
            said = f"the cell {IDENTITY_CELL} must be an answer cell"
        nbformat.write(nb, path)
        with pytest.raises(ValueError, match=said):
            release(NAME, course, roster=STUDENTS, validate=False)
        assert not (course / "release" / NAME).exists()


def test_one_mistake_on_other_numbers_is_one_group_of_the_class_report(course):
    """Issue 42: Ada and Bob both take the median for the mean (one of the scaffold's generic
    wrong answers), each on their own sample: the report's signature of the hidden cell is the
    same for both, and another mistake's (the one-pass variance) is another; the report then
    groups the two students as one mistake."""
    from autograder.grading.pipeline import to_record
    from autograder.pages.report import wrong_answer_clusters

    ps = ProblemSet(NAME, Course(course))
    right = "mu = float(np.mean(x))"
    assert right in ps.path.read_text()

    def wrong(student: str, mistake: str) -> dict:
        nb = nbformat.reads(_signed(ps, student).decode(), 4)
        cell = _cell(nb, "gaussian_mle")
        cell.source = cell.source.replace(*mistake)
        result = grade(ps, nbformat.writes(nb).encode(), local_executor(), student=student)
        return to_record(result, student, 0.0, 0.0)

    median = (right, "mu = float(np.median(x))")
    one_pass = ("np.sqrt(np.mean((x - mu) ** 2))", "np.sqrt(np.mean(x ** 2) - mu ** 2)")
    ada, bob, cyd = wrong("ada01", median), wrong("bob02", median), wrong("cyd03", one_pass)
    hidden = "gaussian_mle_hidden"
    assert ada.recorded[hidden] == bob.recorded[hidden] != cyd.recorded[hidden]
    groups = {tuple(sorted(c.students)) for c in wrong_answer_clusters([ada, bob, cyd])[hidden]}
    assert ("ada01", "bob02") in groups and ("cyd03",) in groups, groups


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
    for student in STUDENTS:  # the reference solution, each with the student's identity
        record = grade_task(NAME, student, _signed(ps, f" {student.upper()}"),
                            GradingOptions(course=str(course)))
        assert record.status == Status.AWAITING_MANUAL.value, record.grader_error
        auto = {s.grade_id: s for s in record.scores if s.grade_id.startswith("gaussian")}
        assert all(s.points == s.max_points for s in auto.values()), auto
        assert record.flags == ()
        # The notebook's setup met the student's own numbers (printed by the variant cell).
        printed = [o.get("text", "") for c in nbformat.reads(record.copies["autograded"].decode(), 4).cells
                   if c.metadata.get("nbgrader", {}).get("grade_id") == "variant"
                   for o in c.get("outputs", [])]
        mine = ps.for_student(student).parameters
        assert printed == [f"Your sample is centred near {mine['mean']}; your N is {mine['n']}.\n"], printed
    # A notebook that ignores the student's numbers (it answers another student's sample for
    # that case) loses exactly that case: the grader scores against the student's own inputs.
    other = ps.for_student(STUDENTS[1]).parameters
    x_other = np.random.default_rng(other["seed"]).normal(other["mean"], 1.5, size=3)
    nb = nbformat.reads(_signed(ps, STUDENTS[0]).decode(), as_version=4)
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


def _signed(ps: ProblemSet, student: str) -> bytes:
    """The reference solution with ``student`` entered as the notebook's identity."""
    nb = nbformat.read(ps.path, as_version=4)
    _cell(nb, IDENTITY_CELL).source = f"STUDENT_ID = {student!r}\n"
    return nbformat.writes(nb).encode()


def test_a_student_who_enters_another_identity_is_reported(course):
    """Bob hands in a notebook saying it is Ada's (or nobody's, or the course site's practice
    identity): graded on Bob's own numbers, with a note and a flag for a person naming both."""
    ps = ProblemSet(NAME, Course(course))
    for entered, said in (("ada01", "STUDENT_ID = 'ada01'"), ("", "no STUDENT_ID"),
                          ("practice", "STUDENT_ID = 'practice'")):
        result = grade(ps, _signed(ps, entered), local_executor(), student="bob02")
        assert result.ps.parameters == ps.for_student("bob02").parameters
        [flag] = result.flags
        assert said in flag and "handed in as 'bob02'" in flag, flag
        assert "graded on the numbers drawn for 'bob02', so" in flag and "''" not in flag
        assert flag in result.notes
        assert all(s.points == s.max_points for s in result.scores if s.points is not None)
    fine = grade(ps, _signed(ps, "Bob02 "), local_executor(), student="bob02")
    assert fine.flags == []


def test_the_kit_looks_a_student_up_in_the_table_or_says_what_is_wrong(tmp_path, monkeypatch):
    from coursedata.variants import UnknownIdentity, table_key, variant

    table = json.dumps({table_key(NAME, "ada01"): {"mean": 1.5}})
    assert variant(NAME, " ADA01", table) == {"mean": 1.5}
    assert table_key(NAME, "ada01") != table_key("ps4", "ada01")  # one key per problem set
    with pytest.raises(UnknownIdentity, match="'bob02' is not on the roster"):
        variant(NAME, "bob02", table)
    with pytest.raises(UnknownIdentity, match="enter your course identity"):
        variant(NAME, "  ", table)
    with pytest.raises(UnknownIdentity, match="it is the course's source"):
        variant(NAME, "ada01", "@VARIANTS@")
    # The course site's copy knows the practice identity alone, and says so to anyone else.
    site = {table_key(NAME, "practice"): {"mean": 7.5}}
    assert variant(NAME, "Practice", site) == {"mean": 7.5}
    with pytest.raises(UnknownIdentity, match="course site's copy .* knows only STUDENT_ID = "
                                              '"practice"'):
        variant(NAME, "ada01", site)
    # Graded: the grader's numbers for the LMS's student, whatever the notebook says.
    (tmp_path / "inputs").mkdir()
    (tmp_path / "inputs" / "variant.json").write_text('{"mean": -3.0}')
    monkeypatch.setenv("GRADER_RESULTS_DIR", str(tmp_path))
    assert variant(NAME, "ada01", table) == {"mean": -3.0}


def test_the_tables_keys_are_salted_anew_at_each_release(course):
    """Issue 42, S1: the table's keys are HMAC-SHA256 (RFC 2104, by hand) of "<problem set>:
    <identity>" keyed with a salt written beside it and made anew at each release: a key
    precomputed from a guessed identity (its plain SHA-256, or another release's key) finds
    nobody, while each student finds their own numbers in either release."""
    from autograder.authoring.release import variant_table
    from coursedata.variants import variant

    ps = ProblemSet(NAME, Course(course))
    first, second = variant_table(ps, STUDENTS), variant_table(ps, STUDENTS)
    assert set(first) == set(second) == {"salt", "rows"} and first["salt"] != second["salt"]
    for student in STUDENTS:
        message = f"{NAME}:{student}".encode()
        keys = [_hmac_sha256(bytes.fromhex(t["salt"]), message).hex() for t in (first, second)]
        assert keys[0] in first["rows"] and keys[1] in second["rows"]
        assert keys[0] not in second["rows"] and keys[1] not in first["rows"]
        assert hashlib.sha256(message).hexdigest() not in first["rows"]
        assert variant(NAME, student.upper(), json.dumps(first)) == variant(
            NAME, student, second) == ps.for_student(student).shown_parameters


@pytest.mark.slow
def test_the_release_carries_the_rosters_numbers_and_no_identity(course, tmp_path):
    """A real nbgrader release with a roster: one notebook for the class, whose table gives each
    student the numbers the grader draws, lists no identity, and knows no one else."""
    from autograder.authoring.release import release
    from coursedata.variants import UnknownIdentity, variant

    roster = tmp_path / "roster.txt"
    roster.write_text("# the class\n" + "\n".join(STUDENTS) + "\n")
    assert main(["release", NAME, "--course", str(course), "--roster", str(roster),
                 "--db-url", f"sqlite:///{tmp_path / 'gradebook.db'}", "--quiet"]) == 0
    path = course / "release" / NAME / f"{NAME}.ipynb"
    text = path.read_text()
    released = nbformat.reads(text, as_version=4)
    assert "@VARIANTS@" not in text and not any(s in text for s in STUDENTS)
    assert '{"variant": ' not in json.dumps([c.metadata for c in released.cells])
    source = _cell(released, "variant").source
    call = ast.parse(source).body[0].value  # V = coursedata.variant(NAME, STUDENT_ID, table)
    table = ast.literal_eval(call.args[2])
    ps = ProblemSet(NAME, Course(course))
    for student in STUDENTS:
        mine = ps.for_student(student)
        assert variant(NAME, student, table) == mine.shown_parameters
        assert mine.shown_parameters == {k: v for k, v in mine.parameters.items() if k != "seed"}
    with pytest.raises(UnknownIdentity, match="not on the roster"):
        variant(NAME, "eve99", table)
    # nbgrader's checksum of the changed locked cell is its own again.
    from nbgrader.utils import compute_checksum

    cell = _cell(released, "variant")
    assert cell.metadata.nbgrader["checksum"] == compute_checksum(cell)
    # A visible case is the whole class's: one that reads a parameter is refused.
    original = ps.path.read_bytes()
    nb = nbformat.read(ps.path, as_version=4)
    _cell(nb, "gaussian_mle_visible").metadata.course.check.cases["sample"]["x"]["normal"][
        "seed"] = {"variant": "seed"}
    nbformat.write(nb, ps.path)
    with pytest.raises(ValueError, match="gaussian_mle_visible read a student's parameter"):
        release(NAME, course, roster=STUDENTS)
    ps.path.write_bytes(original)
    # A roster naming the site's practice identity is refused: its notebook would not be flagged.
    with pytest.raises(ValueError, match="the roster names 'practice'"):
        release(NAME, course, roster=[*STUDENTS, " Practice"])


def test_a_roster_is_read_as_utf8_with_or_without_a_bom_or_said_clearly(tmp_path, capsys):
    """Issue 42, I4: a spreadsheet's "CSV UTF-8" starts with the byte-order mark U+FEFF
    (https://www.unicode.org/faq/utf_bom.html#bom4): it is no part of the first identity. A
    roster in another encoding, a missing one or a folder is an error naming the file."""
    from autograder.authoring.release import read_roster

    roster = tmp_path / "roster.txt"
    roster.write_bytes("\ufeffada01\r\nzoë05\r\n".encode())
    assert read_roster(roster) == ["ada01", "zoë05"]
    for data, said in (("zoë05\n".encode("latin-1"), "is not UTF-8 text"),
                       ("ada01\n".encode("utf-16"), "is not UTF-8 text")):
        roster.write_bytes(data)
        with pytest.raises(ValueError, match=f"{re.escape(str(roster))} {said}"):
            read_roster(roster)
    for missing in (tmp_path / "nowhere.txt", tmp_path):
        with pytest.raises(ValueError, match=f"cannot read the roster {re.escape(str(missing))}"):
            read_roster(missing)
        assert main(["release", NAME, "--course", str(tmp_path), "--roster", str(missing)]) == 2
        [line] = [x for x in capsys.readouterr().err.splitlines() if x.startswith("error:")]
        assert f"cannot read the roster {missing}" in line


@pytest.mark.slow
def test_a_release_never_silently_replaces_a_lost_secret(course, tmp_path, capsys):
    """The secret lost after a release (issue 42, I3): releasing again (a late student added) is
    refused, saying why and how to go on, and changes nothing; ``--new-secret`` starts afresh
    on purpose, and is refused where the secret is not lost."""
    from autograder.authoring.release import release

    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    path = course / "release" / NAME / f"{NAME}.ipynb"
    release(NAME, course, db_url=db, roster=STUDENTS, validate=False)
    published = path.read_bytes()
    (course / "variants.secret").unlink()
    roster = tmp_path / "roster.txt"
    roster.write_text("\n".join([*STUDENTS, "dan04"]) + "\n")
    command = ["release", NAME, "--course", str(course), "--roster", str(roster),
               "--db-url", db, "--quiet"]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert f"{course / 'variants.secret'} is missing, but {NAME} was released" in err, err
    assert "Restore the secret" in err and "--new-secret" in err
    assert not (course / "variants.secret").exists() and path.read_bytes() == published
    # Afresh, on purpose: a new secret, and every student's numbers drawn from it.
    release(NAME, course, db_url=db, roster=[*STUDENTS, "dan04"], validate=False,
            new_secret=True)
    assert read_secret(Course(course))
    assert path.read_bytes() != published
    assert main([*command, "--new-secret"]) == 2
    assert "--new-secret makes a secret where the course's is lost, but" in capsys.readouterr().err


@pytest.mark.slow
def test_a_release_without_a_roster_knows_the_practice_identity_alone(course, tmp_path):
    """The course site's copy (``make book`` releases every problem set without a roster, and
    the gradebook has no student): the command succeeds with a note on stderr, and the
    notebook's table holds only the practice identity's numbers, drawn from the course's secret
    as a student's are; no student of the class is in it."""
    from coursedata.variants import PRACTICE, UnknownIdentity, variant

    done = subprocess.run([sys.executable, "-m", "autograder", "release", NAME, "--course",
                           str(course), "--db-url", f"sqlite:///{tmp_path / 'empty.db'}",
                           "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert f'released without a roster: its notebook knows only the practice identity ' \
        f'STUDENT_ID = "{PRACTICE}"' in done.stderr and "--roster FILE" in done.stderr
    released = nbformat.read(course / "release" / NAME / f"{NAME}.ipynb", as_version=4)
    call = ast.parse(_cell(released, "variant").source).body[0].value
    table = json.loads(ast.literal_eval(call.args[2]))
    assert len(table["rows"]) == 1
    spec = VariantSpec.from_metadata(ProblemSet(NAME, Course(course)).source.metadata)
    drawn = draw(spec, NAME, PRACTICE, read_secret(Course(course)))
    assert variant(NAME, PRACTICE, table) == spec.shown(drawn)
    for student in STUDENTS:
        with pytest.raises(UnknownIdentity, match="course site's copy"):
            variant(NAME, student, table)


@pytest.mark.slow
def test_the_sites_copy_never_makes_the_courses_secret(tmp_path, capsys):
    """A fresh clone holds neither ``course/release/`` nor ``variants.secret`` (both
    git-ignored): ``make book`` there releases without a roster (the site's copy), which must
    not make a secret that ``grade`` would then take for the class's; the class's release that
    then makes it says so, with its path, and is not refused for a lost secret because of the
    site's copy."""
    from autograder.authoring.release import release

    course = _course(tmp_path)
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    release(NAME, course, db_url=db, roster=[], validate=False)
    assert not (course / "variants.secret").exists()
    assert "made the course's secret" not in capsys.readouterr().err
    release(NAME, course, db_url=db, roster=STUDENTS, validate=False)
    assert read_secret(Course(course))
    err = capsys.readouterr().err
    assert f"note: made the course's secret {course / 'variants.secret'}" in err, err
    assert "Keep a backup" in err
    release(NAME, course, db_url=db, roster=[*STUDENTS, "dan04"], validate=False)
    assert "made the course's secret" not in capsys.readouterr().err
    Course.default().use_code()


@pytest.mark.slow
def test_the_self_check_grades_several_students_variants(course):
    """``check-problem-set`` on the problem set with variants: the reference, the kit's inputs
    and the generic wrong answers on three variants, each named with its numbers; the course's
    own secret is neither read nor made."""
    (course / "variants.secret").unlink()
    done = subprocess.run([sys.executable, "-m", "autograder", "check-problem-set", NAME,
                           "--course", str(course)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{NAME} is sound" in done.stdout
    shown = re.findall(r"ok   the reference answers earn full marks \(the variant (\{.*?\})\)",
                       done.stdout)
    variants = [json.loads(v) for v in shown]
    assert len(variants) == 3 and len({v["seed"] for v in variants}) == 3, done.stdout
    assert done.stdout.count("ok   generic wrong answers lose their points") == 3
    assert not (course / "variants.secret").exists()


def _answered(ps: ProblemSet, student: str, written: str) -> bytes:
    """The reference solution signed by ``student``, with ``written`` as its written answer."""
    nb = nbformat.reads(_signed(ps, student).decode(), as_version=4)
    _cell(nb, "divisor_explanation").source = written
    return nbformat.writes(nb).encode()


@pytest.mark.slow
@require(sandbox_available(), "bubblewrap is needed to grade")
def test_a_class_from_a_canvas_download_each_on_their_own_numbers(course, tmp_path):
    """Three students in a Canvas download (canvas-lms ``lib/content_zipper.rb`` names each
    file ``<sortable name>_<user id>_<attachment id>_<file>``; the grader names the student
    ``<name>-<user id>``), graded in the sandbox by
    ``python -m autograder grade``: each earns every autograded point on their own
    numbers; the feedback and the marking scheme show each student's numbers and expected value;
    Bob's written answer, which states Ada's value, is listed on the report and the similarity
    page with both named; Cyd, who entered Ada's identity, is flagged."""
    ps = ProblemSet(NAME, Course(course))
    ada, bob, cyd = "adaada-101", "bobbob-102", "cydcyd-103"
    mine = {s: ps.for_student(s) for s in (ada, bob, cyd)}
    [(label, ada_value)] = mine[ada].expected_values.items()
    own = {s: p.expected_values[label] for s, p in mine.items()}
    assert len({f"{v:.4f}" for v in own.values()}) == 3, own  # three numbers to tell apart
    download = tmp_path / "download"
    download.mkdir()
    notebooks = {
        ada: _answered(ps, ada, f"For my N the ratio is {own[ada]:.4f}."),
        bob: _answered(ps, bob, f"For my N the ratio is {ada_value:.4f}."),  # Ada's answer
        cyd: _answered(ps, ada, f"The two differ by a factor {own[cyd]:.4f}."),  # Ada's id
    }
    for i, (student, data) in enumerate(notebooks.items()):
        name, user = student.split("-")
        (download / f"{name}_{user}_{5001 + i}_{NAME}.ipynb").write_bytes(data)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", NAME, str(download),
                           "--out", str(out), "--workers", "1", "--quiet", "--course",
                           str(course)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r.student_id: r for r in load_records(out / "records", NAME)}
    assert sorted(records) == [ada, bob, cyd]
    for student, r in records.items():
        assert all(s.points == s.max_points for s in r.scores if s.points is not None), r.scores
        assert r.variant == mine[student].shown_parameters and "seed" not in r.variant
        assert r.expected == {label: pytest.approx(own[student])}
        feedback = (out / "feedback" / student / f"{NAME}.html").read_text()
        assert f"mean = {r.variant['mean']}" in feedback and f"{own[student]:.6g}" in feedback
        saved = json.loads((out / "records" / f"{student}.json").read_text())
        assert saved["variant"] == r.variant
    assert records[ada].flags == () and records[bob].flags == ()
    [flag] = records[cyd].flags
    assert f"STUDENT_ID = {ada!r}" in flag and f"handed in as {cyd!r}" in flag
    report = (out / "report.html").read_text()
    similarity = (out / "similarity.html").read_text()
    for page in (report, similarity):
        section = page.split("Written answers with another student's numbers")[1].split("</table>")[0]
        assert f"<td>{bob}</td><td>divisor_explanation</td><td>{ada_value:.4f}</td><td>{ada}</td>" \
            in section
        assert f"<td>{ada}</td><td>divisor" not in section and f"<td>{cyd}</td><td>" not in section
    scheme = (out / "marking-scheme.html").read_text()
    for student in (ada, bob, cyd):
        assert f"<td>{student}</td>" in scheme and f"{own[student]:.6g}" in scheme


def test_gradescopes_autograder_carries_the_secret_its_grading_needs(course, tmp_path):
    """Gradescope grades in its own container: the zip (for the instructor's upload only) holds
    the course's secret for a problem set with variants, and is refused without one."""
    command = [sys.executable, "-m", "autograder", "gradescope", NAME, "--out",
               str(tmp_path / "z"), "--course", str(course)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "z" / "autograder.zip") as z:
        assert z.read("course/variants.secret") == (course / "variants.secret").read_bytes()
    (course / "variants.secret").unlink()
    refused = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert refused.returncode == 2 and "variants.secret is missing" in refused.stderr


@pytest.mark.slow
@require(sandbox_available(), "bubblewrap is needed to grade")
@pytest.mark.usefixtures("multiprocessing_servers")
@pytest.mark.parametrize("group", [(), ("bob.babbage@uni.example",)], ids=["alone", "group"])
def test_gradescope_grades_each_submission_on_its_submitters_numbers(course, tmp_path, group):
    """Inside Gradescope (``run_autograder``: the zip unpacked in ``/autograder/source``, the
    submission in ``/autograder/submission``, ``submission_metadata.json`` naming the submitter
    by ``users[].email``: gradescope/autograder_samples ``docs/submission_metadata.md``), a
    problem set with variants is graded on the submitter's numbers, drawn from their e-mail as
    the roster names them: full marks for Ada's correct notebook and no flag, where every
    submission was graded as the student ``submission`` (another's numbers, flagged). Handed in
    by a group whose ``users`` list Bob first (the docs promise no order), Ada's notebook, which
    names her, is still graded on her numbers, not on Bob's."""
    from autograder.run.gradescope import run_submission

    email = "ada.lovelace@uni.example"
    members = [{"email": e, "id": 4000 + i, "name": e.split("@")[0]} for i, e in enumerate(group)]
    root = tmp_path / "autograder"
    shutil.copytree(course, root / "source" / "course")
    (root / "submission").mkdir(parents=True)
    ps = ProblemSet(NAME, Course(course))
    (root / "submission" / f"{NAME}.ipynb").write_bytes(_signed(ps, email))
    (root / "submission_metadata.json").write_text(json.dumps({
        "id": 1, "created_at": "2026-11-20T10:00:00+00:00", "submission_method": "upload",
        "assignment": {"due_date": "2026-11-21T10:00:00+00:00", "title": NAME},
        "users": [*members, {"email": email, "id": 4242, "name": "Ada Lovelace"}],
        "previous_submissions": []}))
    said: list[str] = []
    assert run_submission(NAME, root, sandbox="bwrap", log=said.append) == 0, said
    results = json.loads((root / "results" / "results.json").read_text())
    assert "handed in as" not in results["output"], results["output"]
    tests = [t for t in results["tests"] if "(written answer)" not in t["name"]]
    assert len(tests) == sum(c.autograded for c in ps.grade_cells), results["tests"]
    assert all(t["score"] == t["max_score"] for t in tests), results["tests"]
    assert said[-1].startswith(f"{email}: "), said


def test_another_secret_grades_every_student_again(course):
    """The grader's fingerprint (a resumed run regrades what it changed) counts the course's
    secret for a problem set with variants, and nothing of it for any other."""
    from autograder.run.task import grader_fingerprint

    ps = ProblemSet(NAME, Course(course))
    before = grader_fingerprint(ps)
    assert grader_fingerprint(ProblemSet(NAME, Course(course))) == before
    (course / "variants.secret").write_text("00" * 32 + "\n")
    assert grader_fingerprint(ps) != before
    plain = ProblemSet("ps1_pca", Course(course))
    fingerprint = grader_fingerprint(plain)
    (course / "variants.secret").unlink()
    assert grader_fingerprint(plain) == fingerprint


def _moodle_folder(full_name: str, participant_id: int) -> str:
    """A student's folder in Moodle's download (moodle ``mod/assign/classes/downloader.php``,
    ``get_student_prefix``: ``clean_filename(str_replace('_', ' ', fullname) . '_' .
    get_uniqueid_for_user(id))``, then ``_assignsubmission_file``; ``clean_filename`` keeps
    spaces and letters)."""
    return f"{full_name.replace('_', ' ')}_{participant_id}_assignsubmission_file"


def test_a_roster_names_a_student_as_the_lms_download_does(course, tmp_path):
    """Issue 42, I1: one function (:func:`coursedata.variants.identity`) compares an identity on
    every side. Grace Hopper (Canvas sortable name "Hopper, Grace", user 103), Zoë O'Neil
    ("O'Neil, Zoë", 104) and Ada Lovelace (Moodle, participant 201) are on the roster as the
    guide says (the id the grader gives, spelled as the download or the LMS shows it): each
    one's notebook, signed with the roster's line, is looked up in the released table, drawn and
    graded on the same numbers as the LMS's student, and not flagged. A roster line that is a
    display name, or has no LMS number, is warned of at release."""
    from autograder.authoring.release import roster_warnings, variant_table
    from autograder.checks.personal import identity_problem
    from autograder.intake.collect import collect_submissions
    from coursedata.variants import variant

    ps = ProblemSet(NAME, Course(course))
    canvas, moodle = tmp_path / "canvas", tmp_path / "moodle"
    canvas.mkdir()
    signed = {"HopperGrace-103": canvas_file("Hopper, Grace", 103, 9001, f"{NAME}.ipynb"),
              "oneilzoë-104": canvas_file("O'Neil, Zoë", 104, 9002, f"{NAME}.ipynb")}
    assert signed["oneilzoë-104"].startswith("oneilzoë_104_")  # Canvas keeps the letter
    for line, name in signed.items():
        (canvas / name).write_bytes(_signed(ps, line))
    folder = moodle / _moodle_folder("Ada Lovelace", 201)
    folder.mkdir(parents=True)
    (folder / f"{NAME}.ipynb").write_bytes(_signed(ps, "Ada Lovelace-201"))
    roster = [*signed, "Ada Lovelace-201"]
    table = variant_table(ps, roster)
    assert roster_warnings(ps, roster) == []
    graded = {}
    for download in (canvas, moodle):
        for sub in collect_submissions(download, f"{NAME}.ipynb").submissions:
            line = ast.literal_eval(_entered(sub.data).split("=", 1)[1].strip())
            graded[line] = sub.student_id
            mine = ps.for_student(sub.student_id)
            assert variant(NAME, line, table) == mine.shown_parameters, (line, sub.student_id)
            assert ps.for_student(line).parameters == mine.parameters
            assert identity_problem(nbformat.reads(sub.data.decode(), 4), sub.student_id) is None
    assert graded == {"HopperGrace-103": "hoppergrace-103", "oneilzoë-104": "oneilzoe-104",
                      "Ada Lovelace-201": "ada-lovelace-201"}
    result = grade(ps, _signed(ps, "oneilzoë-104"), local_executor(), student="oneilzoe-104")
    assert result.flags == [] and result.ps.parameters == ps.for_student("oneilzoë-104").parameters
    assert all(s.points == s.max_points for s in result.scores if s.points is not None)
    # What cannot be an id the grader gives is said at release; an id in every form is not.
    fine = ["hoppergrace-103", "Ada Lovelace-201", "ada.lovelace@uni.example", "s1234567"]
    warnings = roster_warnings(ps, ["Hopper, Grace", "oneilzoë", *fine, "HOPPERGRACE-103"])
    assert [w.split(": ", 2)[2][:18] for w in warnings] == [
        "'Hopper, Grace' is", "'oneilzoë' is no s", "'HOPPERGRACE-103' "], warnings
    assert "is 'hoppergrace-103' again" in warnings[2]
    assert "graded on other numbers than their notebook's" in warnings[0]


def test_a_canvas_gradebook_name_on_the_roster_is_warned_of(course, tmp_path):
    """An instructor who makes the roster from Canvas's gradebook, whose Student column is the
    sortable name ("Hopper, Grace"), writes ``Hopper, Grace-103``: another identity than the
    one the grader gives for that student's file in Canvas's download (the oracle, read by
    the grader's intake), so the release warns of it, naming the id to write; a Moodle full
    name with its participant id is not warned of."""
    from autograder.authoring.release import roster_warnings
    from autograder.intake.collect import collect_submissions

    ps = ProblemSet(NAME, Course(course))
    download = tmp_path / "canvas"
    download.mkdir()
    (download / canvas_file("Hopper, Grace", 103, 9001, f"{NAME}.ipynb")).write_bytes(
        _signed(ps, "hoppergrace-103"))
    [sub] = collect_submissions(download, f"{NAME}.ipynb").submissions
    line = "Hopper, Grace-103"
    assert identity(line) != identity(sub.student_id)  # the mistake: another student's numbers
    [warning] = roster_warnings(ps, [line, "Ada Lovelace-201"])
    assert f"'{line}' reads as Canvas's sortable name" in warning, warning
    assert f"({sub.student_id!r}" in warning and "graded on other numbers" in warning


def test_a_name_without_a_latin_letter_on_the_roster_is_warned_of(course, tmp_path):
    """Canvas keeps a name's Unicode letters in the download's file names (canvas-lms
    ``lib/content_zipper.rb``, ``sanitize_file_name``: ``[[:word:]]`` stays), and so does Moodle
    (``clean_filename`` keeps letters); the grader's id of a student whose name has no letter it
    spells in ASCII is the LMS's id alone (the oracle, read by the grader's intake). The
    guide's line for that student (``<name>-<id>``) is another identity, so the release warns
    of it, naming the id the grader gives."""
    from autograder.authoring.release import roster_warnings
    from autograder.intake.collect import collect_submissions

    ps = ProblemSet(NAME, Course(course))
    canvas, moodle = tmp_path / "canvas", tmp_path / "moodle"
    (moodle / _moodle_folder("Иван Иванов", 202)).mkdir(parents=True)
    canvas.mkdir()
    (canvas / canvas_file("Иванов, Иван", 201, 9001, f"{NAME}.ipynb")).write_bytes(
        _signed(ps, "ивановиван-201"))
    (moodle / _moodle_folder("Иван Иванов", 202) / f"{NAME}.ipynb").write_bytes(
        _signed(ps, "Иван Иванов-202"))
    for download, line in ((canvas, "ивановиван-201"), (moodle, "Иван Иванов-202")):
        [sub] = collect_submissions(download, f"{NAME}.ipynb").submissions
        assert identity(line) != identity(sub.student_id)  # the mistake: another's numbers
        [warning] = roster_warnings(ps, [line, "hoppergrace-103"])
        assert f"'{line}' names the student by letters" in warning, warning
        assert sub.student_id in warning and "graded on other numbers" in warning


@pytest.mark.slow
def test_a_roster_given_for_a_problem_set_without_variants_is_said_unused(course, capsys):
    """An instructor who releases a problem set without variants with ``--roster`` (thinking
    every problem set gives each student their numbers) is told its roster was not used; the
    problem set with variants says nothing of the kind."""
    from autograder.authoring.release import release

    plain = next(n for n in list_problem_sets(course)
                 if ProblemSet(n, Course(course)).variants is None)
    release(plain, course, roster=STUDENTS, validate=False)
    assert f"note: {plain} has no per-student variants" in capsys.readouterr().err
    release(NAME, course, roster=STUDENTS, validate=False)
    assert "has no per-student variants" not in capsys.readouterr().err


def _entered(data: bytes) -> str:
    """The identity cell's source of a notebook."""
    return _cell(nbformat.reads(data.decode(), 4), IDENTITY_CELL).source


def test_identity_drops_spaces_and_case():
    assert identity(" Ada01\n") == identity("ADA01") == "ada01"


def test_identity_is_the_graders_form_of_an_lms_name():
    """The grader's student id of an LMS name (:func:`autograder.intake.lms.slug`) is the
    identity's form, so the two cannot drift apart."""
    from autograder.intake.lms import slug

    for text in ("Zoë O'Neil", "oneilzoë", " Hopper, Grace ", "ada.lovelace@uni.example"):
        assert slug(text) == identity(text) == identity(slug(text))
    assert identity("Zoë O'Neil") == "zoe-o-neil"


@pytest.mark.slow
@require(sandbox_available(), "bubblewrap is needed to grade")
@pytest.mark.usefixtures("multiprocessing_servers")
def test_gradescope_does_not_grade_variants_for_a_submitter_without_an_email(course, tmp_path):
    """A problem set with variants draws each student's numbers from their e-mail inside
    Gradescope; metadata naming no e-mail for the submitter (``users[].email`` null, as
    ``docs/submission_metadata.md`` gives the field) gets a ``results.json`` that says the
    submission was not graded and why, not a grade on the numbers of nobody (the student
    ``submission``), flagged as another's work."""
    from autograder.run.gradescope import run_submission

    root = tmp_path / "autograder"
    shutil.copytree(course, root / "source" / "course")
    (root / "submission").mkdir(parents=True)
    ps = ProblemSet(NAME, Course(course))
    (root / "submission" / f"{NAME}.ipynb").write_bytes(_signed(ps, "ada@uni.example"))
    (root / "submission_metadata.json").write_text(json.dumps({
        "id": 1, "created_at": "2026-11-20T10:00:00+00:00", "submission_method": "upload",
        "assignment": {"due_date": "2026-11-21T10:00:00+00:00", "title": NAME},
        "users": [{"email": None, "id": 4242, "name": "Ada Lovelace"}],
        "previous_submissions": []}))
    said: list[str] = []
    assert run_submission(NAME, root, sandbox="bwrap", log=said.append) == 1, said
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["tests"] == []
    assert "not graded" in results["output"] and "names no e-mail" in results["output"]
    assert "handed in as" not in results["output"]
