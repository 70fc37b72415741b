"""``release`` refuses a problem set that would mis-grade, naming the cell or case and the fix,
and leaves the published release as it was.

Each test makes the mistake an author makes in a copy of the course (a typo in a hidden cell's
case name, a question without a check, points changed in the metadata but not in the text, a
written answer without its marking scheme) and releases it as the author's guide (authoring.md) says.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.release import release
from autograder.authoring.validate import problems
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.settings import COURSE_DIR
from tests import ROOT

PS = "ps3_mle"
PUBLISHED = b'{"the release": "students already have"}'


@pytest.fixture
def course(tmp_path) -> Path:
    """A copy of the course with a published release of problem set 3."""
    root = tmp_path / "course"
    root.mkdir()
    shutil.copy(COURSE_DIR / "nbgrader_config.py", root)
    shutil.copytree(COURSE_DIR / "source" / PS, root / "source" / PS)
    shutil.copytree(COURSE_DIR / "rubrics", root / "rubrics")
    shutil.copytree(COURSE_DIR / "checks", root / "checks")
    (root / "release" / PS).mkdir(parents=True)
    (root / "release" / PS / f"{PS}.ipynb").write_bytes(PUBLISHED)
    return root


def _edit(course: Path, edit) -> None:
    path = course / "source" / PS / f"{PS}.ipynb"
    nb = nbformat.read(path, as_version=4)
    edit(nb)
    nbformat.write(nb, path)


def _cell(nb, grade_id):
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    return cell


def _refused(course: Path) -> str:
    with pytest.raises(ValueError) as refused:
        release(PS, course, db_url=f"sqlite:///{course / 'gradebook.db'}",
                url="https://example.org/kit/k.whl")
    assert (course / "release" / PS / f"{PS}.ipynb").read_bytes() == PUBLISHED
    assert not (course / "gradebook.db").exists(), "refused before nbgrader ran"
    message = str(refused.value)
    assert message.startswith(f"{PS} would mis-grade, so it was not released")
    return message


def _num(x: float) -> str:
    return f"{x:g}"


def _points(ps: ProblemSet) -> tuple[float, float]:
    """The autograded and the hand-graded points of ``ps``, read from its cells' metadata
    (nothing of the course pinned here)."""
    auto = hand = 0.0
    for cell in ps.source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            manual = cell.cell_type != "code" or bool(meta.get("solution"))
            hand, auto = (hand + meta["points"], auto) if manual else (hand, auto + meta["points"])
    return auto, hand


def _question_of(ps: ProblemSet, grade_id: str) -> tuple[int, str, float]:
    """``(number, heading line, points of its graded cells)`` of the question holding the cell
    ``grade_id``: the cells from its ``## Question N`` heading to the next ``## `` heading."""
    questions: dict[int, list] = {}
    current = found = None
    for cell in ps.source.cells:
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        if cell.cell_type == "markdown" and first.startswith("## "):
            words = first.split()
            current = int(words[2]) if words[1:2] == ["Question"] else None
            if current is not None:
                questions[current] = [first, 0.0]
        meta = cell.metadata.get("nbgrader", {})
        if current is not None and meta.get("grade"):
            questions[current][1] += meta["points"]
            found = current if meta.get("grade_id") == grade_id else found
    return found, *questions[found]


def test_every_problem_set_of_the_course_is_sound():
    for name in list_problem_sets():
        assert problems(ProblemSet(name)) == [], name


def test_a_typo_in_a_hidden_cases_name_is_refused(course):
    """The issue's case: the declared check scores ``bernoulli_all_tails``, the hidden cell
    records a misspelt name, and every correct student would lose the points."""
    _edit(course, lambda nb: setattr(_cell(nb, "bernoulli_log_likelihood_hidden"), "source",
                                     _cell(nb, "bernoulli_log_likelihood_hidden").source.replace(
                                         '"bernoulli_all_tails"', '"bernoulli_all_tail"')))
    message = _refused(course)
    assert ("bernoulli_log_likelihood_hidden records case 'bernoulli_all_tail', whose inputs are "
            "declared nowhere" in message)
    assert ("bernoulli_log_likelihood_hidden declares case 'bernoulli_all_tails', which no "
            "hidden part records" in message)
    assert ("bernoulli_log_likelihood_hidden scores case 'bernoulli_all_tails', which no cell "
            "records: every student would lose its points" in message)


def test_a_record_under_another_cases_inputs_is_refused(course):
    cell = "bernoulli_log_likelihood_hidden"
    _edit(course, lambda nb: setattr(_cell(nb, cell), "source", _cell(nb, cell).source.replace(
        'inputs("ps3_mle", "bernoulli_all_heads")', 'inputs("ps3_mle", "bernoulli_all_tails")')))
    message = _refused(course)
    assert ("record('bernoulli_all_heads', ...): it records case 'bernoulli_all_heads' with the "
            "inputs of case 'bernoulli_all_tails'" in message)


def test_a_misspelt_input_generator_is_refused(course):
    """A typo in a generator's name would make the grader fail on every submission; release
    names the cell, the case and the generator instead."""
    def misspell(nb):
        case = _cell(nb, "gaussian_mle_hidden").metadata.course.check.cases.gaussian_small
        case.x = {"nromal": case.x.normal}

    _edit(course, misspell)
    message = _refused(course)
    assert ("gaussian_mle_hidden: the inputs of case 'gaussian_small' cannot be made: unknown "
            "generator 'nromal'" in message)


def test_a_graded_cell_without_a_check_is_refused(course):
    """A new question's visible cell, its check not written yet."""
    def add(nb):
        new = nbformat.v4.new_code_cell("assert poisson_mle([1, 2, 3]) == 2")
        new.metadata["nbgrader"] = {"grade": True, "grade_id": "poisson_mle_visible",
                                    "locked": True, "points": 1, "schema_version": 3,
                                    "solution": False, "task": False}
        nb.cells.insert(-4, new)
    auto, _ = _points(ProblemSet(PS, Course(course)))
    _edit(course, add)
    message = _refused(course)
    assert ("ps3_mle.ipynb, cell `poisson_mle_visible`: this autograded cell has no trusted "
            "check, so every student would get a grader error on it. Declare its check in the "
            "cell's metadata (course.check), or add `'poisson_mle_visible': <check function>` to "
            "CHECKS in checks/ps3_mle.py" in message)
    # ... and its point is in neither the header nor a question's heading.
    assert (f"the header's **Points:** line: it says {_num(auto)} autograded, the cells' "
            f"metadata {_num(auto + 1)}") in message


def test_points_changed_in_the_metadata_only_are_refused(course):
    """One more point on a hidden cell, in its metadata only: the header, the table's row and
    the question's heading each still state the old points (all read from the course here)."""
    before = ProblemSet(PS, Course(course))
    auto, hand = _points(before)
    number, heading, points = _question_of(before, "gamma_mle_hidden")
    cell_points = _cell(before.source, "gamma_mle_hidden").metadata.nbgrader.points
    _edit(course, lambda nb: _cell(nb, "gamma_mle_hidden").metadata.nbgrader.update(
        points=cell_points + 1))
    message = _refused(course)
    assert (f"the header's **Points:** line: it says {_num(auto)} autograded, the cells' "
            f"metadata {_num(auto + 1)}. Write {_num(auto + 1)} autograded + {_num(hand)} graded "
            f"by hand = {_num(auto + 1 + hand)}" in message)
    assert (f"the table's row {number}: it says {_num(points)} points, the cells of question "
            f"{number} carry {_num(points + 1)}. Write {_num(points + 1)}" in message)
    assert (f"heading {heading!r}: it says {_num(points)} points, its cells carry "
            f"{_num(points + 1)}" in message)


def test_a_written_answer_without_its_marking_scheme_is_named(course):
    """The self-check's part of the validation (the marking scheme is never released)."""
    ps = ProblemSet(PS, Course(course))
    lagrange = _cell(ps.source, "lagrange_derivation").metadata.nbgrader.points
    bias = _cell(ps.source, "bias_derivation").metadata.nbgrader.points
    rubric = course / "rubrics" / f"{PS}.md"
    text = rubric.read_text()
    for old, new in ((f"## `bias_derivation` — {_num(bias)} points", f"## `bias` — {_num(bias)} "
                      "points"), (f"## `lagrange_derivation` — {_num(lagrange)} points",
                                  f"## `lagrange_derivation` — {_num(lagrange + 1)} points")):
        assert old in text
        text = text.replace(old, new)
    rubric.write_text(text)
    found = [str(p) for p in problems(ProblemSet(PS, Course(course)))]
    assert found == [
        f"rubrics/ps3_mle.md, ## `lagrange_derivation`: it says {_num(lagrange + 1)} points, the "
        f"cell carries {_num(lagrange)}. Make them agree.",
        "rubrics/ps3_mle.md: the written answer `bias_derivation` has no section. Add ## "
        f"`bias_derivation` — {_num(bias)} points with its model answer and marking scheme (or "
        "rename ## `bias`, which is no written answer's)."]
    assert problems(ProblemSet(PS, Course(course)), rubric=False) == []
    rubric.unlink()
    [missing] = problems(ProblemSet(PS, Course(course)))
    assert "the marking scheme is missing, and the problem set has written answers " \
        "(lagrange_derivation, bias_derivation)" in str(missing)


@pytest.mark.slow
def test_the_command_prints_each_refusal_and_exits_2(course):
    cell = "gaussian_mle_hidden"
    _edit(course, lambda nb: setattr(_cell(nb, cell), "source", _cell(nb, cell).source.replace(
        '"gaussian_small", gaussian_mle', '"gausian_small", gaussian_mle')))
    done = subprocess.run([sys.executable, "-m", "autograder", "release", PS, "--course",
                           str(course)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.splitlines()
    start = lines.index(next(ln for ln in lines if ln.startswith("error: ")))
    # The record under another case's inputs, and the declaration's three faults it makes.
    assert lines[start] == (f"error: {PS} would mis-grade, so it was not released (4 problems; "
                            "nothing published was changed):")
    assert all(ln.startswith("  - ") for ln in lines[start + 1:start + 5])
    assert "record('gausian_small', ...): it records case 'gausian_small' with the inputs of " \
        "case 'gaussian_small'" in done.stderr
    assert (course / "release" / PS / f"{PS}.ipynb").read_bytes() == PUBLISHED


def test_a_check_that_reads_an_unrecorded_case_is_named():
    """A hand-written check with a typo in the case it reads (the cell records it right): one of
    problem set 6's hidden checks, which stay Python."""
    name = "ps6_generative_discriminative"
    ps = ProblemSet(name, Course(COURSE_DIR))
    from autograder.checks import load_checks
    from autograder.checks.record_calls import record_calls
    from autograder.checks.registry import checks_for

    gid = sorted(load_checks(name).CHECKS)[0]
    case = next(r.case for r in record_calls(ps.source) if r.grade_id == gid)
    checks = dict(checks_for(ps))
    checks[gid] = lambda a: a.get(case[:-1])
    found = [str(p) for p in problems(ps, checks)]
    assert found == [f"checks/{name}.py, check `{gid}`: it reads case {case[:-1]!r}, "
                     "which no cell records, so it would take the points of every correct "
                     f"student. Record {case[:-1]!r} in the cell `{gid}` (did you mean "
                     f"`{case}`?), or read the case the cell records."]


def test_a_python_check_may_read_a_case_a_declared_cell_records():
    """Problem set 5's hidden kde_pdf check is Python and also scores the case its declared
    visible cell records: nothing to report (the other way round, see above, is a typo)."""
    ps = ProblemSet("ps5_kde", Course(COURSE_DIR))
    from autograder.checks.inventory import inventory

    kinds = {c.grade_id: c.check for c in inventory(ps)}
    assert (kinds["kde_pdf_visible"], kinds["kde_pdf_hidden"]) == ("declared", "python")
    assert problems(ps) == []


@pytest.mark.slow
def test_check_problem_set_names_what_only_running_it_finds(course):
    """The self-check on a problem set whose static validation passes, with a hidden line left
    below its ``END HIDDEN TESTS`` marker (it would reach students) and a marking-scheme section
    misnamed: each is named with the fix, the steps that hold say ok, and the exit status is 1."""
    cell = "gamma_mle_hidden"

    def leak(nb):
        source = _cell(nb, cell).source
        line = next(ln for ln in source.splitlines() if "gamma_mle_small_shape" in ln)
        source = source.replace(line + "\n", "").replace("### END HIDDEN TESTS\n",
                                                         f"### END HIDDEN TESTS\n{line}\n")
        _cell(nb, cell).source = source
    _edit(course, leak)
    rubric = course / "rubrics" / f"{PS}.md"
    rubric.write_text(rubric.read_text().replace("## `bias_derivation`", "## `bias`"))
    done = subprocess.run([sys.executable, "-m", "autograder", "check-problem-set", PS,
                           "--course", str(course)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert "FAIL the source is consistent" in out
    assert "the written answer `bias_derivation` has no section" in out
    auto, _ = _points(ProblemSet(PS, Course(course)))
    assert (f"ok   the reference answers earn full marks ({_num(auto)} of {_num(auto)} autograded "
            "points)") in out
    assert "FAIL the release holds no solution or hidden-test line" in out
    assert ("ps3_mle.ipynb, cell `gamma_mle_hidden`: the student version keeps 'record('. Put "
            "it between ### BEGIN/END SOLUTION or ### BEGIN/END HIDDEN TESTS" in out)
    assert "ok   the kit and the grader see the same inputs" in out
    assert "ok   generic wrong answers lose their points" in out
    assert out.rstrip().splitlines()[-1].startswith(f"{PS}: 2 of 7 checks failed")
    assert (course / "release" / PS / f"{PS}.ipynb").read_bytes() == PUBLISHED


def test_a_heading_that_hides_or_invents_hand_grading_is_named():
    from autograder.authoring.validate import points_problems

    ps = ProblemSet(PS)
    written, heading_w, points_w = _question_of(ps, "lagrange_derivation")
    coded, heading_c, points_c = _question_of(ps, "gaussian_mle_hidden")
    hidden = heading_w.replace(f"({_num(points_w)} points, graded by hand)",
                               f"({_num(points_w)} points)")
    invented = heading_c.replace(f"({_num(points_c)} points)",
                                 f"({_num(points_c)} points, graded by hand)")
    assert hidden != heading_w and invented != heading_c
    for number, heading in ((written, hidden), (coded, invented)):
        [q] = [c for c in ps.source.cells if c.source.startswith(f"## Question {number} ")]
        q.source = heading + q.source[len(q.source.splitlines()[0]):]
    found = [str(p) for p in points_problems(ps)]
    assert sorted(found) == sorted([
        f"ps3_mle.ipynb, heading {invented!r}: it says graded by hand. Say ', graded by hand' "
        "exactly when the question's answer is written.",
        f"ps3_mle.ipynb, heading {hidden!r}: its answer is graded by hand but the heading does "
        "not say so. Say ', graded by hand' exactly when the question's answer is written."])


def test_the_self_check_stops_at_a_case_typo_instead_of_repeating_it_cell_by_cell(course):
    """A misspelt case in a hidden cell's weights: the self-check names it, and does not go on to
    report the reference's zero on every cell the typo breaks."""
    def misspell(nb):
        weights = _cell(nb, "gaussian_mle_hidden").metadata["course"]["check"]["weights"]
        weights["gausian_small"] = weights.pop("gaussian_small")
    _edit(course, misspell)
    done = subprocess.run([sys.executable, "-m", "autograder", "check-problem-set", PS,
                           "--course", str(course)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    out = done.stdout
    assert done.returncode == 1, out + done.stderr
    assert ("FAIL the source is consistent (checks, cases, points, marking scheme) (the checks "
            "that grade run once the checks and cases agree)") in out
    assert "weights name undeclared cases ['gausian_small']" in out
    assert "the reference" not in out
    assert out.rstrip().splitlines()[-1].startswith(f"{PS}: 1 of 1 checks failed")


@pytest.mark.parametrize("name", list_problem_sets())
def test_the_kernel_reads_exactly_the_inputs_the_grader_makes(name, tmp_path):
    """Every declared case, written as the grader writes it and read back by the kit's reader,
    is the grader's own, value, dtype and type: a student's function sees what the reference
    saw."""
    from autograder.authoring.graded import sample_variants
    from autograder.authoring.selfcheck import _kit_inputs

    # With variants, as the self-check does it: on a sample student's inputs.
    found, what = _kit_inputs(sample_variants(ProblemSet(name))[0], tmp_path)
    assert found == []
    assert what.endswith("declared cases, written and read back; the kit holds no generator")


def test_an_input_the_kernel_cannot_read_is_named(tmp_path):
    """An integer too large for int64 is saved as an object array, which the kernel's reader
    refuses (it loads no pickles): every student's run would fail on that case."""
    from autograder.authoring.selfcheck import _kit_inputs

    ps = ProblemSet("ps3_mle")
    _cell(ps.source, "gaussian_mle_hidden").metadata["course"]["check"]["cases"][
        "gaussian_small"]["x"] = 2 ** 70
    found, _ = _kit_inputs(ps, tmp_path)
    assert found == ["case 'gaussian_small': the kernel cannot read its inputs (ValueError: "
                     "Object arrays cannot be loaded when allow_pickle=False); declare numbers "
                     "or numeric arrays"]


def test_the_kit_holds_no_input_generator():
    """The hidden cases' inputs stay with the grader: no ``coursedata.inputs`` in the sources."""
    assert not (ROOT / "coursedata" / "inputs").exists()


def test_an_input_that_is_not_a_parameter_is_refused(course):
    """``record`` passes a case's inputs by position: a declared input that is not one of the
    function's parameters would be passed in another's place."""
    from autograder.checks.record_calls import record_calls

    ps = ProblemSet(PS, Course(course))
    call = next(r for r in record_calls(ps.source) if r.inputs_case)

    def add_input(nb):
        for cell in nb.cells:
            cases = cell.metadata.get("course", {}).get("check", {}).get("cases", {})
            if call.inputs_case in cases:
                cases[call.inputs_case]["not_a_parameter"] = 1.0

    _edit(course, add_input)
    message = _refused(course)
    assert f"case {call.case!r}" in message and "not_a_parameter is not one of its" in message
