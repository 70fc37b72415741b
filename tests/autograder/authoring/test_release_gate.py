"""``release`` is the gate: each mistake an instructor makes (issue 39's list) is refused, with a
message naming the cell or case and the fix, and the published release is left as it was.

Every mistake is made on a copy of the course; what the test expects is read from that copy (the
solution lines that would leak, the functions a stub would lose, the table's rows), never this
course's points or question names. nbgrader's own preprocessors decide what a student's cell holds
(``ClearSolutions`` replaces a ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region by the code
stub, and a solution cell without one entirely; a BEGIN without its END is an error:
jupyter/nbgrader, ``nbgrader/preprocessors/clearsolutions.py``); the rules' semantics are
:mod:`coursedata.rules`'.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from autograder.authoring.gate import gate_problems
from autograder.authoring.release import release
from autograder.authoring.validate import problems
from autograder.checks.declaration import Case, case_inputs, declarations, resolve
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.settings import COURSE_DIR, ROOT
from coursedata import naming

PUBLISHED = b'{"the release": "students already have"}'


@pytest.fixture
def course(tmp_path) -> Path:
    """A copy of the course, each problem set with a published release, without the course's
    variants secret (which a checkout has only once a release with a roster made it)."""
    root = tmp_path / "course"
    shutil.copytree(COURSE_DIR, root, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".*", "__pycache__",
        "variants.secret"))
    for name in list_problem_sets(Course(root)):
        (root / "release" / name).mkdir(parents=True)
        (root / "release" / name / f"{name}.ipynb").write_bytes(PUBLISHED)
    yield root
    Course.default().use_code()  # the checkout's course's code again, for the next test


def _path(course: Path, name: str) -> Path:
    return course / "source" / name / f"{name}.ipynb"


def _edit(course: Path, name: str, edit) -> None:
    nb = nbformat.read(_path(course, name), as_version=4)
    edit(nb)
    nbformat.write(nb, _path(course, name))



def _drop_metadata(course: Path, name: str, gid: str) -> int:
    """Drop the metadata of the cell ``gid`` of ``name``'s source, as an editor may; return its
    position (from 1), as a message names it."""
    position = []

    def drop(nb):
        index, target = next((i, c) for i, c in enumerate(nb.cells) if _gid(c) == gid)
        target.metadata = {}
        position.append(index + 1)
    _edit(course, name, drop)
    return position[0]

def _gid(cell) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id", "")


def _answer_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"
            and c.metadata.get("nbgrader", {}).get("solution")]


#: The student (and the secret their numbers are drawn with) whose variant stands for a problem
#: set with variants where a test compares runs of its references.
SAMPLE = ("sample-student", b"a fixed secret of the tests, not a course's")


def _declared_references(course: Path) -> Iterator[tuple[ProblemSet, str, str, Case, dict]]:
    """``(problem set, cell, case, its declaration, the notebook's cases)`` for every declared
    case with a reference, of every problem set of the course copy ``course``, its code in use
    (so its generators and references resolve) while the problem set's cases are walked. A
    problem set with variants is one fixed sample student's (:data:`SAMPLE`), the same in every
    process."""
    code = Course(course)
    for name in list_problem_sets(code):
        ps = ProblemSet(name, code)
        code.use_code()
        ps = ps.for_student(*SAMPLE)
        found = declarations(ps.source)
        cases = {c: case for d in found.values() for c, case in d.cases.items()}
        for gid, declaration in found.items():
            for case, spec in declaration.cases.items():
                if spec.reference is not None:
                    yield ps, gid, case, spec, cases


def _misspelt_end_solution(course: Path) -> tuple[str, str]:
    """``(problem set, answer cell)`` of the course copy ``course`` after its first simple
    answer's ``### END SOLUTION`` is misspelt ``### END SOLUTON``."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)

    def misspell(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.source = target.source.replace("### END SOLUTION", "### END SOLUTON")
    _edit(course, name, misspell)
    return name, gid


def _refused(course: Path, name: str) -> str:
    """Release ``name`` of ``course``: it must be refused before nbgrader runs, the published
    release untouched; return the message."""
    with pytest.raises(ValueError) as refused:
        release(name, course, db_url=f"sqlite:///{course / 'gradebook.db'}",
                url="https://example.org/kit/k.whl")
    assert (course / "release" / name / f"{name}.ipynb").read_bytes() == PUBLISHED
    assert not (course / "gradebook.db").exists(), "refused before nbgrader ran"
    message = str(refused.value)
    assert message.startswith(f"{name} would mis-grade, so it was not released")
    return message


def _body(cell) -> list[str]:
    """The lines of ``cell``'s single solution region (without its markers)."""
    lines = cell.source.splitlines()
    begin = next(i for i, ln in enumerate(lines) if "### BEGIN SOLUTION" in ln)
    end = next(i for i, ln in enumerate(lines) if "### END SOLUTION" in ln)
    return lines[begin + 1:end]


def _simple_answer(course: Path):
    """``(problem set, answer cell)``: the first answer cell with one solution region whose
    last two lines are statements at the function body's indentation."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        for cell in _answer_cells(nb):
            if cell.source.count("### BEGIN SOLUTION") != 1:
                continue
            body = _body(cell)
            marker = next(ln for ln in cell.source.splitlines() if "### END SOLUTION" in ln)
            indent = marker[:len(marker) - len(marker.lstrip())]
            last = body[-2:]
            if len(body) > 3 and all(ln.startswith(indent) and not ln[len(indent)].isspace()
                                     and not ln.strip().startswith(("#", ")", "]"))
                                     for ln in last):
                return name, cell
    raise AssertionError("no answer cell of the course has a simple solution region")


def test_every_problem_set_of_the_course_passes_the_gate():
    for name in list_problem_sets():
        ps = ProblemSet(name)
        assert problems(ps) == [] and gate_problems(ps) == [], name


def test_end_solution_moved_up_two_lines_is_refused(course):
    """The issue's first case: two lines of the solution (the key formula) left below
    ``### END SOLUTION`` would reach every student; the self-check's text search passed it."""
    name, cell = _simple_answer(course)
    gid, leaked = _gid(cell), [ln.strip() for ln in _body(cell)[-2:]]

    def move(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        lines = target.source.splitlines()
        end = next(i for i, ln in enumerate(lines) if "### END SOLUTION" in ln)
        lines.insert(end - 2, lines.pop(end))
        target.source = "\n".join(lines)
    _edit(course, name, move)
    message = _refused(course, name)
    for line in leaked:
        assert (f"{name}.ipynb, cell `{gid}`: the student's cell keeps the solution line "
                f"`{line}`. Move ### END SOLUTION below it, so that") in message, message
    assert "BEGIN SOLUTION above it" not in message, message  # BEGIN is where it was


def _formula_first(course: Path):
    """``(problem set, answer cell, lines from the solution's first to its first formula)``:
    an answer whose solution region starts with whole one-line statements, one of the first
    four doing arithmetic (``@``, ``/``, ``*``, ``+``, ``-`` between operands) in words of its
    own, not a line of its declared reference's source (which the gate also searches)."""
    import ast
    import inspect
    import textwrap

    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        Course(course).use_code()
        found = declarations(nb)
        for cell in _answer_cells(nb):
            if cell.source.count("### BEGIN SOLUTION") != 1:
                continue
            visible = found.get(naming.test_id(_gid(cell), naming.VISIBLE))
            reference = {ln.strip() for r in (visible.references if visible else [])
                         for ln in inspect.getsource(resolve(r)).splitlines()}
            body = _body(cell)
            for i, line in enumerate(body[:4]):
                try:
                    ast.parse(textwrap.dedent(line))
                except SyntaxError:
                    break
                if (re.search(r"\w[\])]? (@|/|\*|\+|-) [\w(]", line.split("#")[0])
                        and line.strip() not in reference):
                    return name, cell, [ln.strip() for ln in body[: i + 1]]
    raise AssertionError("no answer starts with a formula")


def test_begin_solution_moved_down_below_a_formula_is_refused(course):
    """``### BEGIN SOLUTION`` moved down below the solution's first lines: they stand between
    the docstring and the stub in every student's cell (the M-step's mean formula was
    released). No line of the course is given there; a line given on purpose ends with
    ``# given``."""
    name, cell, given = _formula_first(course)
    gid, formula = _gid(cell), given[-1]

    def move(nb, mark=False):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        lines = target.source.splitlines()
        begin = next(i for i, ln in enumerate(lines) if "### BEGIN SOLUTION" in ln)
        lines.insert(begin + len(given), lines.pop(begin))
        if mark:
            lines[begin + len(given) - 1] += "  # given"
        target.source = "\n".join(lines)
    _edit(course, name, move)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`: the student's cell keeps the solution line "
            f"`{formula}`. Move ### BEGIN SOLUTION above it, so that") in message, message
    assert "Move ### END SOLUTION" not in message, message  # END is where it was
    shutil.copy(COURSE_DIR / "source" / name / f"{name}.ipynb", _path(course, name))
    _edit(course, name, lambda nb: move(nb, mark=True))
    ps = ProblemSet(name, Course(course))
    assert not [p for p in gate_problems(ps) if f"`{formula}`" in p.what]


def test_forgotten_markers_are_refused(course):
    """The student's cell would read only ``# YOUR CODE HERE``: the function's signature and
    docstring are lost."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)
    signature = next(ln for ln in cell.source.splitlines() if ln.startswith("def "))
    function = re.match(r"def (\w+)", signature)[1]

    def forget(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.source = "\n".join(ln for ln in target.source.splitlines()
                                  if "SOLUTION" not in ln)
    _edit(course, name, forget)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`: the student's cell loses `{signature.strip()}` and its "
            "docstring") in message
    assert f"Put ### BEGIN SOLUTION below the docstring of `{function}`" in message


def test_a_misspelt_end_solution_names_the_cell_instead_of_a_traceback(course):
    name, gid = _misspelt_end_solution(course)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`: the line '### END SOLUTON' is no marker nbgrader "
            "sees. Write it as ### END SOLUTION, exactly.") in message
    assert (f"{name}.ipynb, cell `{gid}`: nbgrader cannot make the student's cell: no end "
            "solution statement found") in message
    assert "Traceback" not in message


def _locked_import_the_rules_allow(course: Path):
    """``(problem set, allowed entry, imported name)``: a name a locked cell imports for the
    reference answers, which the rules allow inside a package they otherwise leave open."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        rules = nb.metadata.get("course", {}).get("rules", {})
        for entry in rules.get("allow", []):
            module, _, imported = entry.rpartition(".")
            locked = [c.source for c in nb.cells if c.cell_type == "code"
                      and c.metadata.get("nbgrader", {}).get("locked")]
            if module and any(f"from {module} import {imported}" in s for s in locked):
                return name, entry, imported
    raise AssertionError("no locked cell imports a name the rules allow")


@pytest.mark.parametrize("locked", [True, False])
def test_a_rule_that_forbids_what_the_reference_uses_is_refused(course, locked):
    """The issue's case: the rules forbid the whole package while the locked setup cell imports
    one of its functions for the reference; the reference would score full marks and a student
    who imports the same function would lose the points. The same with the setup cell left
    unlocked (it was released: the reference 13 of 13, a student's own import 3)."""
    name, entry, imported = _locked_import_the_rules_allow(course)
    package = entry.split(".")[0]
    nb = nbformat.read(_path(course, name), as_version=4)
    users = [_gid(c) for c in _answer_cells(nb) if re.search(rf"\b{imported}\(", c.source)]
    assert users

    def forbid(nb):
        rules = nb.metadata.course.rules
        rules.allow = [a for a in rules.allow if a != entry]
        rules.forbid = [*rules.forbid, package]
        rules.statement += f" No `{package}`."
        nb.cells[0].source += f"\n\n{rules.statement}"
        for cell in nb.cells:
            if f"import {imported}" in cell.source and not locked:
                cell.metadata.nbgrader.locked = False
    _edit(course, name, forbid)
    message = _refused(course, name)
    for gid in users:
        assert (f"{name}.ipynb, cell `{gid}`: its reference answer uses `{entry}` (imported by "
                f"a given cell), which the rules forbid (`{package}`)") in message
    assert f'Allow it where the rules are declared (metadata course.rules: "{entry}" in ' \
        "allow" in message


def _table_section(text: str) -> tuple[str, float, str]:
    """``(grade_id, section points, first table row)`` of the first section with a points
    table."""
    for section in re.split(r"(?m)^(?=## )", text):
        head = re.match(r"## `([^`]+)` — (\d+(?:\.\d+)?) points?", section)
        row = re.search(r"(?m)^\| *\d+(?:\.\d+)? *\|.*$", section)
        if head and row and "| Points |" in section:
            return head[1], float(head[2]), row[0]
    raise AssertionError("no marking-scheme section with a points table")


def test_a_points_table_that_adds_up_to_more_than_its_section_is_refused(course):
    for name in list_problem_sets(Course(course)):
        rubric = course / "rubrics" / f"{name}.md"
        if rubric.is_file() and "| Points |" in rubric.read_text():
            break
    text = rubric.read_text()
    gid, points, row = _table_section(text)
    rows = [float(r) for r in re.findall(r"(?m)^\| *(\d+(?:\.\d+)?) *\|", text.split(
        f"## `{gid}`")[1].split("\n## ")[0])]
    assert sum(rows) == points  # the course's own table adds up
    first = re.match(r"\| *(\d+(?:\.\d+)?) *\|", row)[1]
    more = row.replace(f"| {first} |", f"| {float(first) + 1:g} |", 1)
    rubric.write_text(text.replace(row, more, 1))
    message = _refused(course, name)
    assert (f"rubrics/{name}.md, ## `{gid}`: its marking scheme's table awards "
            f"{' + '.join(f'{r + (1 if i == 0 else 0):g}' for i, r in enumerate(rows))} = "
            f"{sum(rows) + 1:g} points, the section {points:g}. Make the table's rows add up to "
            f"{points:g}") in message


def test_a_points_table_headed_otherwise_is_added_up_too(course):
    """A table headed ``| Pts |``, one row written ``| 2 pts |``: it was not read as a points
    table, and a section whose rows add up to more than its points was released."""
    for name in list_problem_sets(Course(course)):
        rubric = course / "rubrics" / f"{name}.md"
        if rubric.is_file() and "| Points |" in rubric.read_text():
            break
    text = rubric.read_text()
    gid, points, row = _table_section(text)
    first = re.match(r"\| *(\d+(?:\.\d+)?) *\|", row)[1]
    more = row.replace(f"| {first} |", f"| {float(first) + 1:g} pts |", 1)
    rubric.write_text(text.replace(row, more, 1).replace("| Points |", "| Pts |"))
    message = _refused(course, name)
    assert re.search(rf"rubrics/{name}\.md, ## `{gid}`: its marking scheme's table awards "
                     rf"[\d.+ ]+ = {points + 1:g} points, the section {points:g}", message), message


def test_a_missing_marking_scheme_section_is_refused(course):
    for name in list_problem_sets(Course(course)):
        text = (course / "rubrics" / f"{name}.md").read_text()
        sections = re.findall(r"(?m)^## `([^`]+)` — ", text)
        if sections:
            break
    gid = sections[0]
    (course / "rubrics" / f"{name}.md").write_text(text.replace(f"## `{gid}`", "## `renamed`"))
    message = _refused(course, name)
    assert f"rubrics/{name}.md: the written answer `{gid}` has no section" in message


def test_a_marking_scheme_heading_with_a_hyphen_names_the_heading(course):
    """``## `gid` - 3 points`` (a hyphen for the em dash): the heading is named, not "no section"."""
    for name in list_problem_sets(Course(course)):
        text = (course / "rubrics" / f"{name}.md").read_text()
        sections = re.findall(r"(?m)^## `([^`]+)` — ", text)
        if sections:
            break
    gid = sections[0]
    (course / "rubrics" / f"{name}.md").write_text(text.replace(f"## `{gid}` —", f"## `{gid}` -"))
    message = _refused(course, name)
    assert f"## `{gid}` -" in message and "em dash" in message, message
    assert "has no section" not in message, message


def test_a_lost_variants_placeholder_is_named_at_its_cell_before_nbgrader(course):
    """The variant cell's ``"@VARIANTS@"`` replaced by ``""``: refused before nbgrader runs,
    naming the source notebook's cell (not a scratch copy) and what to write there."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        if "variants" in nb.metadata.get("course", {}):
            break
    else:
        raise AssertionError("no problem set of the course has variants")
    [cell] = [c for c in nb.cells if '"@VARIANTS@"' in c.source]
    label = f"cell `{_gid(cell)}`" if _gid(cell) else f"cell {nb.cells.index(cell) + 1}"

    def lose(nb):
        [cell] = [c for c in nb.cells if '"@VARIANTS@"' in c.source]
        cell.source = cell.source.replace('"@VARIANTS@"', '""')
    _edit(course, name, lose)
    message = _refused(course, name)
    assert f"{name}.ipynb, {label}" in message, message
    assert '"@VARIANTS@"' in message and ".release-" not in message, message


def test_a_record_of_another_question_s_function_names_the_function_to_record(course):
    """A hidden cell's ``record(case, m_step, ...)`` changed to another question's function (a
    copy-paste from an earlier cell): the message says which function to record, not to change
    the declaration."""
    from autograder.checks.record_calls import answer_parameters, record_calls
    from coursedata.naming import question_of
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        answers = {_gid(c) for c in _answer_cells(nb)} & set(answer_parameters(nb))
        calls = [r for r in record_calls(nb) if r.function == question_of(r.grade_id)]
        others = sorted(answers - {c.function for c in calls[-1:]}) if calls else []
        if calls and others:
            break
    else:
        raise AssertionError("no problem set records two questions' functions")
    call, other = calls[-1], others[0]

    def swap(nb):
        [cell] = [c for c in nb.cells if _gid(c) == call.grade_id]
        cell.source = re.sub(rf"record\(\s*(['\"]){call.case}\1\s*,\s*{call.function}\b",
                             f"record({call.case!r}, {other}", cell.source)
    _edit(course, name, swap)
    message = _refused(course, name)
    assert f"it records {other}, another question's function" in message, message
    assert f"Record {call.function} there" in message, message
    assert "Declare every parameter" not in message, message


def _first_declared(course: Path, key: str | None = None):
    """``(problem set, grade_id)`` of the first cell declaring ``reference`` (and ``key``)."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        for cell in nb.cells:
            check = cell.metadata.get("course", {}).get("check", {})
            if "reference" in check and (key is None or key in check):
                return name, _gid(cell)
    raise AssertionError("no declared reference")


def _set_check(course: Path, name: str, gid: str, **values) -> None:
    def edit(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.metadata.course.check.update(values)
    _edit(course, name, edit)


def test_a_class_given_as_the_reference_is_refused(course):
    """The natural first try for a fitted model: the class itself as the reference."""
    import inspect

    import solutions.naive_bayes as module

    [cls, *_] = [f"solutions.naive_bayes:{n}" for n, v in vars(module).items()
                 if inspect.isclass(v) and v.__module__ == module.__name__]
    name, gid = _first_declared(course)
    _set_check(course, name, gid, reference=cls)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell `{gid}`, case '\w+': the reference `{cls}` is a "
                     r"class, so calling it on the case's inputs does not give the expected "
                     r"values\. Declare how to use it, next to the reference: \"fitted\"", message)


def test_zero_tolerance_is_refused(course):
    name, gid = _first_declared(course, "rtol")
    _set_check(course, name, gid, rtol=0.0, atol=0.0)
    message = _refused(course, name)
    assert re.search(rf"cell `{gid}`, output '[^']+': its tolerance is zero: a correct answer "
                     r"computed in another order fails \(on cases? '\w+'[^)]*\)\. Give it rtol "
                     r"of at least", message), message


def _case_the_reference_cannot_take(course: Path):
    """``(problem set, cell, case, spec)``: a declared case with a reference that raises on
    empty inputs (every argument an empty array), found by calling the reference here."""
    import numpy as np

    for ps, gid, case, spec, cases in _declared_references(course):
        empty = dict.fromkeys(case_inputs(cases, case), [])
        try:
            resolve(spec.reference)(**{k: np.asarray(v, dtype=float) for k, v in empty.items()})
        except Exception as exc:  # noqa: BLE001 - what the gate must name
            return ps.name, gid, case, empty, type(exc).__name__
    raise AssertionError("every reference takes empty inputs")


def test_a_case_whose_inputs_make_the_reference_raise_is_refused(course):
    """A hidden case with no data (the issue's "empty class"): every student's answer would be
    compared with an error."""
    name, gid, case, empty, error = _case_the_reference_cannot_take(course)

    def edit(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        spec = cell.metadata.course.check.cases[case]
        if "args" in spec:
            spec["args"] = empty
        else:
            cell.metadata.course.check.cases[case] = empty
    _edit(course, name, edit)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell `{gid}`, case '{case}': the reference `[^`]+` "
                     rf"raises {error}: .* on this case's inputs, so the case can never be "
                     r"passed\. Change the case's inputs", message)


def test_a_reference_whose_outputs_the_declaration_miscounts_is_refused(course):
    """The reference run as a student: a declaration naming one output more than the reference
    returns would fail every student, and the reference too."""
    name, gid = _first_declared(course, "outputs")
    nb = nbformat.read(_path(course, name), as_version=4)
    [cell] = [c for c in nb.cells if _gid(c) == gid]
    outputs = list(cell.metadata.course.check.outputs)
    _set_check(course, name, gid, outputs=[*outputs, "one more"])
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`: the reference's own answers, recorded as a student's, "
            "score 0%") in message


@pytest.mark.slow
def test_the_command_prints_the_refusal_and_exits_2(course):
    name, cell = _simple_answer(course)
    gid = _gid(cell)

    def forget(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.source = "\n".join(ln for ln in target.source.splitlines()
                                  if "SOLUTION" not in ln)
    _edit(course, name, forget)
    done = subprocess.run([sys.executable, "-m", "autograder", "release", name, "--course",
                           str(course)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"error: {name} would mis-grade, so it was not released" in done.stderr
    assert f"cell `{gid}`: the student's cell loses" in done.stderr
    assert (course / "release" / name / f"{name}.ipynb").read_bytes() == PUBLISHED
    assert json.loads(PUBLISHED)  # the published release is the one students have


def test_a_misspelt_reference_is_named_with_the_function_meant(course):
    """Not the advice about ``record(...)`` case names it used to get."""
    name, gid = _first_declared(course)
    nb = nbformat.read(_path(course, name), as_version=4)
    [cell] = [c for c in nb.cells if _gid(c) == gid]
    reference = cell.metadata.course.check.reference
    _set_check(course, name, gid, reference=reference[:-1])
    message = _refused(course, name)
    assert (f"Name the reference as 'package.module:function', a function of solutions/ or of "
            f"the course's checks/ (did you mean `{reference}`?)") in message
    assert "record(...)" not in message


def test_a_failing_equivalent_form_is_told_to_loosen_the_check(monkeypatch, tmp_path):
    """The self-check's advice follows the failure: a generic wrong answer that keeps points
    asks for a tighter check, a correct equivalent form that loses them for a looser one."""
    from autograder.authoring import graded, variants

    monkeypatch.setattr(variants, "score_generic_variants", lambda *a: ["wrong kept"])
    monkeypatch.setattr(variants, "score_equivalent_forms", lambda *a: ["form lost"])
    monkeypatch.setattr("autograder.checks.registry.equivalent_forms", lambda ps: {})
    wrong, form = graded.variant_problems(ProblemSet(list_problem_sets()[0]), tmp_path, tmp_path)
    assert wrong.startswith("wrong kept (tighten the check") and "loosen" not in wrong
    assert form.startswith("form lost (a correct answer in an equivalent form must keep its "
                           "points: loosen the check") and "tighten" not in form


def test_a_checks_module_of_generators_alone_needs_no_checks(course):
    """The guide calls ``course/checks/NAME.py`` optional, holding "the input generators and
    reference wrappers a declaration names": such a module, without ``PROBLEM_SET`` or
    ``CHECKS``, is accepted (it used to fail the self-check)."""
    name = next(n for n in list_problem_sets(Course(course))
                if not (course / "checks" / f"{n}.py").exists())
    (course / "checks" / f"{name}.py").write_text(
        '"""Input generators of the problem set."""\n\nimport numpy as np\n\n\n'
        "def sample(seed, n, mean=0.0, sd=1.0):\n"
        "    return np.random.default_rng(seed).normal(mean, sd, n)\n", encoding="utf-8")
    moved = []

    def use_it(nb):
        for cell in nb.cells:
            for case in cell.metadata.get("course", {}).get("check", {}).get("cases", {}).values():
                args = case.get("args", case)
                for key, spec in args.items():
                    if isinstance(spec, dict) and list(spec) == ["normal"] and not moved:
                        args[key] = {f"course.checks.{name}:sample": spec["normal"]}
                        moved.append(key)
    _edit(course, name, use_it)
    assert moved, "no declared input drawn from a normal"
    ps = ProblemSet(name, Course(course))
    assert problems(ps) == [] and gate_problems(ps) == []


def test_a_reference_answer_that_imports_what_the_rules_forbid_is_refused(course):
    """The issue's "a reference that uses a module the rules forbid": the reference answer's own
    import, which a student's identical answer would lose its points for."""
    import importlib.util

    name, cell = _simple_answer(course)
    gid = _gid(cell)
    nb = nbformat.read(_path(course, name), as_version=4)
    entry = next(e for e in nb.metadata.course.rules.forbid if importlib.util.find_spec(e))

    def use(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.source = re.sub(r"(?m)^(\s*)### BEGIN SOLUTION\n",
                               rf"\g<0>\g<1>import {entry}\n", target.source, count=1)
    _edit(course, name, use)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`: its reference answer uses `{entry}`, which the rules "
            f"forbid (`{entry}`)") in message


def test_nbgrader_stumbling_on_a_marker_names_the_cell(course):
    """What the self-check's release step (which skips the validation) shows for a misspelt
    ``### END SOLUTION``: the cell and the fix, not nbgrader's traceback."""
    name, gid = _misspelt_end_solution(course)
    with pytest.raises(RuntimeError) as failed:
        release(name, course, db_url=f"sqlite:///{course / 'gradebook.db'}",
                url="https://example.org/kit/k.whl", validate=False)
    message = str(failed.value)
    assert message.startswith(f"nbgrader cannot make the student's version of {name}:\n")
    assert f"cell `{gid}`: the line '### END SOLUTON' is no marker nbgrader sees" in message
    assert "Traceback" not in message
    assert (course / "release" / name / f"{name}.ipynb").read_bytes() == PUBLISHED


# --- what only grading shows: release grades the reference and generic wrong answers -------------


def _visible_with(course: Path, text: str):
    """``(problem set, grade_id)`` of the first visible test cell whose code holds ``text``."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        for cell in nb.cells:
            if _gid(cell).endswith("_visible") and text in cell.source:
                return name, _gid(cell)
    raise AssertionError(f"no visible test holds {text!r}")


@pytest.mark.slow
def test_a_visible_assertion_the_reference_fails_is_refused(course):
    """A visible test that asserts something false: every student would fail it; the reference
    answers, graded, lose that cell."""
    name, gid = _visible_with(course, "assert np.allclose(")

    def wrong(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.source = cell.source.replace("assert np.allclose(", "assert not np.allclose(", 1)
    _edit(course, name, wrong)
    message = _refused(course, name)
    assert f"{name}.ipynb, cell `{gid}`: the reference scored 0 of" in message, message


@pytest.mark.slow
def test_a_solution_that_disagrees_with_the_reference_is_refused(course):
    """The notebook's own solution and the declared reference disagree (here the solution's
    result is off by 1 %): the source's answers, graded, lose the cells that read it."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)

    def off(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        lines = target.source.splitlines()
        end = next(i for i, ln in enumerate(lines) if "### END SOLUTION" in ln)
        at = max(i for i in range(end) if lines[i].strip().startswith("return "))
        lines[at] = lines[at].replace("return ", "return 1.01 * ", 1)
        target.source = "\n".join(lines)
    _edit(course, name, off)
    message = _refused(course, name)
    assert re.search(rf"cell `{gid}_(visible|hidden)`: the reference scored", message), message


def test_an_answer_renamed_after_its_checks_is_refused(course):
    """The answer function renamed in its solution cell (after ``add-question`` wrote the checks
    that call it): named once, at its answer cell, with the name the tests record and the one it
    has now, before grading fails every test of it (and of the answers that call it) with "your
    function was not run" seven times over."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)
    function = re.search(r"^def (\w+)\(", cell.source, re.M).group(1)
    _edit(course, name, lambda nb: setattr(
        next(c for c in nb.cells if _gid(c) == gid), "source",
        cell.source.replace(f"def {function}(", f"def {function}_v2(", 1)))
    message = _refused(course, name)
    assert "(1 problem;" in message, message
    assert (f"{name}.ipynb, cell `{gid}`: the tests record `{function}`, which no cell defines "
            f"(its answer cell defines `{function}_v2`). Rename `{function}_v2` back to "
            f"`{function}` there.") in message, message
    assert "the reference scored" not in message and "checks/" not in message, message


def test_absurdly_loose_tolerances_are_refused(course):
    """rtol 1 and atol 1e6: a constant or rescaled answer would pass. Named once per output, with
    the tolerance and the one to give instead (it was twenty "tighten the check" lines naming no
    tolerance, one per generic wrong answer and sample student)."""
    name, gid = _first_declared(course, "rtol")
    _set_check(course, name, gid, rtol=1.0, atol=1e6)
    message = _refused(course, name)
    nb = nbformat.read(_path(course, name), as_version=4)
    outputs = {o.name for case in declarations(nb)[gid].cases.values() for o in case.outputs
               if o.compare != "integer"}
    assert outputs, gid
    for output in outputs:
        said = re.findall(rf"cell `{gid}`: rtol=1, atol=1e6 on output {re.escape(repr(output))} "
                          r"accepts a wrong answer \([^)]+\)(, and `\w+` inherits it)?\. "
                          r"Tighten it to about rtol=1e-6",
                          message)
        assert len(said) == 1, message
    assert "tighten the check" not in message, message


# --- weights, the cells' metadata, NaN inputs, tolerances across machines ----------------------


def _weighted_hidden(course: Path):
    """``(problem set, hidden grade_id, one of its own checked cases)``: the first ``_hidden``
    cell whose declared weights name a case the cell itself declares."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        for cell in nb.cells:
            check = cell.metadata.get("course", {}).get("check", {})
            own = [c for c in check.get("cases", {}) if c in check.get("weights", {})]
            if _gid(cell).endswith("_hidden") and own:
                return name, _gid(cell), own[0]
    raise AssertionError("no hidden cell weights its own cases")


def _edit_check(course: Path, name: str, gid: str, edit) -> None:
    def change(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        edit(cell.metadata.course.check)
    _edit(course, name, change)


def test_a_hidden_case_without_a_weight_is_refused(course):
    """A case declared and recorded in the hidden cell but left out of its weights would be run
    for every student and never scored (the check reads the cases its weights name:
    autograder/checks/declared.py)."""
    name, gid, case = _weighted_hidden(course)
    _edit_check(course, name, gid, lambda check: check.weights.pop(case))
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`, case {case!r}: it is declared and recorded, but no "
            f"cell's weights name it, so it is never scored") in message
    assert f'Add "{case}": 1 to the weights in the course.check of `{gid}`' in message


def test_a_weight_on_another_question_s_case_is_refused(course):
    """A hidden cell's weights naming a case of another question (weights copied from its
    cell): that question's answer would count in this cell's points. It was released."""
    name, gid, _ = _weighted_hidden(course)
    nb = nbformat.read(_path(course, name), as_version=4)
    found = declarations(nb)
    question = naming.question_of(gid)
    other, cell = next((c, spec.cell) for d in found.values() for c, spec in d.cases.items()
                       if spec.reference and naming.question_of(spec.cell) != question)
    _edit_check(course, name, gid, lambda check: check.weights.update({other: 1}))
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`, case {other!r}: its weights name the case {other!r} "
            f"of `{cell}`, another question's") in message, message
    assert f'Remove "{other}" from the weights in the course.check of `{gid}`' in message


def test_a_weight_of_zero_is_refused(course):
    name, gid, case = _weighted_hidden(course)
    _edit_check(course, name, gid, lambda check: check.weights.update({case: 0}))
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`, case {case!r}: its weight is 0, so the case counts "
            "for nothing") in message
    assert "Give it a positive weight" in message


def test_a_hidden_cell_without_weights_is_refused(course):
    """All or nothing over its own cases, the visible case counting nothing: named with the
    weights to add."""
    name, gid, case = _weighted_hidden(course)
    _edit_check(course, name, gid, lambda check: check.pop("weights"))
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell `{gid}`: it declares the cases .*'{case}'.* but no "
                     r"weights, so it would be all or nothing", message), message
    assert f'"{case}": 1' in message.split(f"cell `{gid}`: it declares")[1]


def _hidden_copy_of_visible(course: Path, arguments: int = 1):
    """``(problem set, hidden cell, its case, visible cell, its case, the notebook)``: a weighted
    case of a ``_hidden`` cell whose declaration, replaced by its question's visible case's, asks
    the same of a student (the same reference and outputs, read back from the declarations); the
    visible case gives at least ``arguments`` arguments."""
    import copy

    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        cells = {_gid(c): c for c in nb.cells}
        for gid, cell in cells.items():
            check = cell.metadata.get("course", {}).get("check", {})
            visible = cells.get(naming.test_id(naming.question_of(gid), naming.VISIBLE))
            if naming.test_kind(gid) != naming.HIDDEN or visible is None:
                continue
            shown = visible.metadata.get("course", {}).get("check", {}).get("cases", {})
            for case in [c for c in check.get("cases", {}) if c in check.get("weights", {})]:
                own = check.cases[case]
                for seen, spec in shown.items():
                    if len(spec.get("args", spec)) < arguments:
                        continue
                    check.cases[case] = copy.deepcopy(spec)
                    found = declarations(nb)
                    mine, theirs = found[gid].cases[case], found[_gid(visible)].cases[seen]
                    if (mine.reference, mine.outputs) == (theirs.reference, theirs.outputs):
                        return name, gid, case, _gid(visible), seen, nb
                check.cases[case] = own
    raise AssertionError("no hidden case can be given its visible case's declaration")


def test_a_hidden_case_identical_to_the_visible_one_is_refused(course):
    """A hidden case that repeats the visible case (its inputs pasted from it): the student saw
    it pass or fail already, so it tests nothing new and doubles the visible case's weight."""
    name, gid, case, visible, seen, nb = _hidden_copy_of_visible(course)
    nbformat.write(nb, _path(course, name))
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`, case {case!r}: it is identical to the visible case "
            f"{seen!r} of `{visible}`") in message, message
    assert "Give it inputs the visible case does not cover" in message


def test_a_hidden_case_checked_in_python_identical_to_the_visible_one_is_refused(course):
    """A hidden case without a reference (its cell checked in Python) given its question's
    visible case's inputs: it was never compared, since only cases with a reference were."""
    import copy

    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        cells = {_gid(c): c for c in nb.cells}
        found = declarations(nb)
        pairs = [(gid, case, visible, seen)
                 for gid, d in found.items() if naming.test_kind(gid) == naming.HIDDEN
                 for case, spec in d.cases.items() if spec.reference is None
                 if (visible := naming.test_id(naming.question_of(gid), naming.VISIBLE)) in found
                 for seen in found[visible].cases]
        if pairs:
            break
    gid, case, visible, seen = pairs[0]
    shown = cells[visible].metadata.course.check.cases[seen]
    cells[gid].metadata.course.check.cases[case] = copy.deepcopy(
        {k: v for k, v in shown.items() if k != "args"} if "args" not in shown else shown["args"])
    nbformat.write(nb, _path(course, name))
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`, case {case!r}: it is identical to the visible case "
            f"{seen!r} of `{visible}`") in message, message


def test_a_variant_parameter_the_notebook_never_shows_is_refused(course):
    """A drawn parameter that is not the grader's alone (``hidden``) and that no cell shows
    (``V["flips"]`` taken out of the text and the variant cell's print): the student cannot
    know the number their written answer and hidden case use. It was released."""
    from autograder.checks.personal import draw

    name = next(n for n in list_problem_sets(Course(course))
                if ProblemSet(n, Course(course)).variants is not None)
    ps = ProblemSet(name, Course(course))
    Course(course).use_code()
    shown = [p for p in draw(ps.variants, name, *SAMPLE) if p not in ps.variants.hidden]
    parameter = shown[-1]
    mention = re.compile(rf"""V\[\s*['"]{parameter}['"]\s*\]""")

    def hide(nb):
        for cell in nb.cells:
            cell.source = mention.sub("'?'", cell.source)
    _edit(course, name, hide)
    with pytest.raises(ValueError) as refused:  # the copy has a release, not its secret
        release(name, course, db_url=f"sqlite:///{course / 'gradebook.db'}",
                url="https://example.org/kit/k.whl", new_secret=True)
    assert (course / "release" / name / f"{name}.ipynb").read_bytes() == PUBLISHED
    message = str(refused.value)
    assert (f"{name}.ipynb, metadata course.variants: its draw gives {parameter!r}, which the "
            f"notebook never shows") in message, message
    assert 'list it in "hidden" if it is the grader\'s alone' in message


def _reversed(spec):
    """``spec`` with every mapping's keys in the reverse order (lists as they are)."""
    if isinstance(spec, dict):
        return {k: _reversed(v) for k, v in reversed(spec.items())}
    return spec


def test_a_hidden_case_identical_to_the_visible_one_written_in_another_order_is_refused(course):
    """The visible case pasted with its arguments (and its generators' parameters) listed in
    another order asks the same of a student: the student's function gets its inputs by
    parameter, whatever the declaration's order (the author's guide, "The keys of a
    declaration"). It was released. The notebook is written as a text editor leaves it, the keys
    in the order typed (nbformat would sort them)."""
    name, gid, case, visible, seen, nb = _hidden_copy_of_visible(course, arguments=2)
    [cell] = [c for c in nb.cells if _gid(c) == gid]
    given = cell.metadata.course.check.cases[case]
    reordered = _reversed(json.loads(json.dumps(given)))
    assert list(reordered.get("args", reordered)) != list(given.get("args", given))
    cell.metadata.course.check.cases[case] = reordered
    _path(course, name).write_text(json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`, case {case!r}: it is identical to the visible case "
            f"{seen!r} of `{visible}`") in message, message


def _hidden_value(course: Path):
    """``(problem set, hidden cell, case, output, its values as written)``: the values the
    declared reference gives a hidden case's first output (of a problem set without variants,
    whose values are the same for every student), written with 9 significant digits: the one
    number, or two of an array's (one entry alone may be a value anyone can work out, such as
    5000 log 0.5)."""
    import numpy as np

    from autograder.checks.declaration import reference_of

    for ps, gid, case, spec, cases in _declared_references(course):
        if ps.variants is not None or naming.test_kind(gid) != naming.HIDDEN or spec.fitted:
            continue
        result = reference_of(spec)(**case_inputs(cases, case))
        first = result[0] if len(spec.outputs) > 1 else result
        values = np.asarray(first, dtype=float).ravel()
        written = [w for v in values if np.isfinite(v)
                   and len((w := f"{v:.9g}").lstrip("-0.").replace(".", "")) >= 6]
        if written[:2] and (values.size == 1 or len(set(written[:2])) == 2):
            return ps.name, gid, case, spec.outputs[0].name, ", ".join(written[:2])
    raise AssertionError("no hidden case has a value of six significant digits")


def test_a_hidden_case_s_value_written_in_the_student_s_notebook_is_refused(course):
    """The instructor's note of a hidden case's expected value left below its cell's hidden
    tests: nbgrader keeps it (only the region between the markers goes), and every student
    would read the answer. It was released."""
    name, gid, case, output, written = _hidden_value(course)

    def note(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.source += f"\n# (for the instructor) {case}: {written}"
    _edit(course, name, note)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{gid}`: the student's notebook states {written}: the expected "
            f"{output!r} of the hidden case {case!r} of `{gid}`") in message, message
    assert "move the line between ### BEGIN HIDDEN TESTS and ### END HIDDEN TESTS" in message


def _copy_after(nb, gid: str, grade_id: str | None = None) -> int:
    """Paste a copy of the cell ``gid`` right after it (as Jupyter's copy and paste does, the
    metadata with it), optionally renamed; return the copy's position (1-based)."""
    import copy

    index = next(i for i, c in enumerate(nb.cells) if _gid(c) == gid)
    pasted = copy.deepcopy(nb.cells[index])
    pasted.pop("id", None)
    if grade_id:
        pasted.metadata.nbgrader.grade_id = grade_id
    nb.cells.insert(index + 1, pasted)
    return index + 2


def test_a_pasted_test_cell_is_named_as_a_duplicated_grade_id(course):
    """A hidden cell pasted as the start of a new question keeps its grade_id: nbgrader refuses a
    grade_id twice (jupyter/nbgrader, nbgrader/nbgraderformat/v3.py, "Duplicate grade id"); the
    message says so, not that the header's points are wrong."""
    name, gid, _ = _weighted_hidden(course)
    where = []
    _edit(course, name, lambda nb: where.append(_copy_after(nb, gid)))
    message = _refused(course, name)
    assert (f"{name}.ipynb, cells {where[0] - 1} and {where[0]}: both have the grade_id `{gid}`"
            in message), message
    assert f"Give cell {where[0]} a grade_id of its own" in message
    assert "**Points:**" not in message and "heading" not in message


def test_a_hidden_cell_renamed_to_its_visible_cells_id_is_a_duplicate_not_a_weights_error(course):
    """It read "only a _hidden cell has weights" and advised naming the same cases."""
    name, gid, _ = _weighted_hidden(course)
    visible = gid.removesuffix("_hidden") + "_visible"

    def rename(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.metadata.nbgrader.grade_id = visible
    _edit(course, name, rename)
    message = _refused(course, name)
    assert f"both have the grade_id `{visible}`" in message
    assert "only a _hidden cell has weights" not in message
    assert "record(...)" not in message


def test_a_test_cell_marked_not_graded_is_named_with_its_check(course):
    """``grade: false`` on a cell that declares a check: the check would never score. It read
    as a CHECKS entry to rename."""
    name, gid = _first_declared(course)

    def ungrade(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.metadata.nbgrader.grade = False
    _edit(course, name, ungrade)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell \d+ \(`{gid}`\): it declares a check \(course\.check\) "
                     r"but is not graded \(nbgrader grade: false\), so its check never scores",
                     message), message
    assert "grade: true and its points" in message
    assert "CHECKS[" not in message and "Rename it" not in message


def test_an_answer_cell_marked_not_an_answer_is_refused_before_nbgrader(course):
    """``solution: false`` on an autograded answer that keeps its markers: nbgrader's
    ClearSolutions stops with "Solution region detected in a non-solution cell" and a traceback
    (jupyter/nbgrader, nbgrader/preprocessors/clearsolutions.py); it passed the gate."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)

    def unmark(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.metadata.nbgrader.solution = False
    _edit(course, name, unmark)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell \d+ \(`{gid}`\): it holds ### BEGIN SOLUTION but is "
                     r"not an answer cell \(nbgrader solution: false\)", message), message
    assert "nbgrader solution: true" in message and "Traceback" not in message


def test_an_answer_cell_whose_metadata_an_editor_dropped_is_named_before_nbgrader(course):
    """The cell's metadata gone (an editor that drops it) and its markers kept: nbgrader's
    ClearSolutions stops with "Solution region detected in a non-solution cell" and a traceback
    naming no cell (jupyter/nbgrader, nbgrader/preprocessors/clearsolutions.py); the gate let it
    through, since it read only cells that have nbgrader metadata."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)
    position = _drop_metadata(course, name, gid)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell {position}: it holds ### BEGIN SOLUTION but is not an answer "
            "cell (it has no nbgrader metadata)") in message, message
    assert "nbgrader solution: true" in message and "Traceback" not in message


def test_a_hidden_test_cell_whose_metadata_an_editor_dropped_is_named_not_its_points(course):
    """The hidden test's metadata gone: the release advised lowering the header's, the table's
    and the heading's points to what the other cells carry, which would publish the problem set
    without its hidden test. The cell is named alone, with the fix."""
    name, gid, _ = _weighted_hidden(course)
    position = _drop_metadata(course, name, gid)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell {position}: it holds ### BEGIN HIDDEN TESTS (the answers it "
            "records for the grader) but is not graded (it has no nbgrader metadata)") in message
    assert "Make it a graded test cell again" in message and "course.check" in message
    assert "**Points:**" not in message and "heading" not in message, message


def test_points_written_as_text_are_named_before_nbgrader(course):
    """``"points": "2"`` (a hand edit of the JSON): nbgrader's schema refuses it with a
    traceback ("'2' is not of type 'number'": nbgrader/nbgraderformat/v3.py); the gate read it as
    the number."""
    name, gid, _ = _weighted_hidden(course)
    nb = nbformat.read(_path(course, name), as_version=4)
    [cell] = [c for c in nb.cells if _gid(c) == gid]
    points = cell.metadata.nbgrader.points

    def text(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.metadata.nbgrader.points = str(points)
    _edit(course, name, text)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell \d+ \(`{gid}`\): its points are \"{points:g}\", not a "
                     rf"number: nbgrader refuses it\. Write the points as a number, without quotes "
                     rf"\(points: {points:g}\)", message), message
    assert "Traceback" not in message


def test_a_written_answer_marked_not_an_answer_is_refused_before_nbgrader(course):
    """``solution: false`` on a graded markdown cell: nbgrader's metadata validator refuses it
    ("Markdown grade cell ... is not marked as a solution cell": nbgrader/nbgraderformat/v3.py)
    and generate_assignment printed a traceback naming no cell."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        written = [_gid(c) for c in nb.cells if c.cell_type == "markdown"
                   and c.metadata.get("nbgrader", {}).get("grade")]
        if written:
            break
    gid = written[0]

    def unmark(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.metadata.nbgrader.solution = False
    _edit(course, name, unmark)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell \d+ \(`{gid}`\): it is a graded written cell not "
                     r"marked as the student's answer \(nbgrader solution: false\)", message)
    assert "nbgrader solution: true" in message and "Traceback" not in message


def test_a_test_cell_worth_no_points_is_refused(course):
    """A hidden test given 0 points (``add-question --points 1 0``): nbgrader accepts it and a
    wrong answer there loses nothing."""
    name, gid, _ = _weighted_hidden(course)

    def nothing(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.metadata.nbgrader.points = 0
    _edit(course, name, nothing)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell \d+ \(`{gid}`\): it is graded but worth 0 points",
                     message), message


def _case_a_nan_spoils(course: Path):
    """``(problem set, cell, case, argument)``: a declared case, one of whose float array
    arguments given with a NaN in place of its first value makes the reference return NaN (found
    by calling the reference here)."""
    import numpy as np

    for ps, gid, case, spec, cases in _declared_references(course):
        if "fitted" in (spec.fitted or {}):
            continue
        inputs = case_inputs(cases, case)
        for argument, value in inputs.items():
            if not (isinstance(value, np.ndarray) and value.dtype.kind == "f"
                    and value.size and argument in spec.sources):
                continue
            spoilt = value.copy()
            spoilt.flat[0] = np.nan
            try:
                result = resolve(spec.reference)(**{**inputs, argument: spoilt})
            except Exception:  # noqa: BLE001 - a reference that refuses NaN: not this one
                continue
            flat = result if isinstance(result, tuple) else (result,)
            if any(np.isnan(np.asarray(v, dtype=float)).any() for v in flat):
                return ps.name, gid, case, argument, spoilt
    raise AssertionError("no reference returns NaN on a NaN input")


def test_a_declared_nan_input_that_makes_the_reference_nan_is_named(course):
    """A NaN among a case's declared inputs (JSON's NaN) whose reference returns NaN: no answer
    can match a NaN. It read as a declaration with the wrong number of outputs."""
    name, gid, case, argument, spoilt = _case_a_nan_spoils(course)

    def edit(check):
        spec = check.cases[case]
        args = spec["args"] if "args" in spec else spec
        args[argument] = spoilt.tolist()
    _edit_check(course, name, gid, edit)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell `{gid}`, case '{case}': its input `{argument}` holds "
                     r"NaN, and the reference `[^`]+` returns NaN for '[^']+', which no student's "
                     r"answer can match", message), message
    assert "Change the case's inputs" in message
    assert "as many outputs as it returns" not in message


#: Run in a process under another OpenBLAS kernel: every declared reference of the course copy
#: ``argv[1]`` on its case's inputs, each output's values pickled to ``argv[2]``.
_REFERENCES = """
import pickle, sys
from pathlib import Path
import numpy as np
from autograder.checks.declaration import case_inputs, reference_of
from tests.autograder.authoring.test_release_gate import _declared_references
out = {}
for ps, gid, c, k, cases in _declared_references(Path(sys.argv[1])):
    got = reference_of(k)(**case_inputs(cases, c))
    for o, v in zip(k.outputs, got if len(k.outputs) > 1 else [got]):
        out[ps.name, gid, c, o.name] = np.asarray(v, dtype=float)
pickle.dump(out, open(sys.argv[2], "wb"))
"""


def _largest_kernel_move(course: Path, tmp_path: Path):
    """``(move, (problem set, cell, case, output))``: the declared ``close`` output whose
    reference values differ most (relative, element by element) between this process's OpenBLAS
    kernel and another's (tests/blas.py: the same processor computing as another machine
    would). The oracle is another machine's arithmetic itself, not the gate's jitter."""
    import pickle

    import numpy as np

    from tests import blas

    runs = []
    for i, env in enumerate([None, *(c.environment() for c in blas.other_kernels())]):
        out = tmp_path / f"references-{i}.pkl"
        subprocess.run([sys.executable, "-c", _REFERENCES, str(course), str(out)], cwd=ROOT,
                       env=dict(env or __import__("os").environ, PYTHONPATH=str(ROOT)),
                       check=True, timeout=600)
        runs.append(pickle.loads(out.read_bytes()))
    here, *others = runs
    compared = {ps.name for ps, *_ in _declared_references(course)}
    assert {key[0] for key in here} == compared, "every problem set is compared, variants too"
    moves = []
    for key, a in here.items():
        name, gid, case, output = key
        nb = nbformat.read(_path(course, name), as_version=4)
        spec = declarations(nb)[gid].cases[case]
        kind = next(o.compare for o in spec.outputs if o.name == output)
        for other in others:
            b = other[key]
            ok = np.isfinite(a) & np.isfinite(b) & (a != 0)
            if kind == "close" and a.shape == b.shape and ok.any():
                moves.append((float(np.max(np.abs(a[ok] - b[ok]) / np.abs(a[ok]))), key))
    move, key = max(moves)
    assert move > 0, "the other kernels computed every reference bit for bit alike"
    return move, key


def _output_tolerance(course: Path, name: str, gid: str, case: str, output: str):
    """``(rtol, atol)`` the declarations of the course copy give ``output`` of ``case``."""
    spec = declarations(nbformat.read(_path(course, name), as_version=4))[gid].cases[case]
    [found] = [o for o in spec.outputs if o.name == output]
    return found.rtol, found.atol


@pytest.mark.slow
def test_a_tolerance_another_kernel_breaks_is_refused(course, tmp_path, monkeypatch):
    """Tolerance across BLAS kernels: a relative tolerance just under what the reference itself
    moves between two OpenBLAS kernels (atol 0) passes on one machine and fails on another.
    ``release`` must refuse it on this one machine (the gate keeps a floor above the moves
    measured here, and reruns each reference on its inputs changed by rounding, the tolerance to
    hold that move several times over); the probe alone refuses it too, the floor lowered under
    it.

    The tolerance is set on the output wherever the declaration states it (the cell, the case, or
    the output's own entry, which wins: autograder/checks/declaration.py), and read back from the
    declarations, so an edit the output never sees fails here instead of passing the gate."""
    from autograder.authoring import gate

    move, (name, gid, case, output) = _largest_kernel_move(course, tmp_path)
    rtol = float(f"{move * 0.9:.2g}")

    def tighten(check):
        spec = check.get("cases", {}).get(case, {})
        for where in (check, spec if "args" in spec else {}):
            where.update(rtol=rtol, atol=0.0)
            for entry in where.get("outputs", []):
                if isinstance(entry, dict) and entry.get("name") == output:
                    entry.update(rtol=rtol, atol=0.0)
    _edit_check(course, name, gid, tighten)
    assert _output_tolerance(course, name, gid, case, output) == (rtol, 0.0)
    where = rf"cell `{gid}`, case '{case}', output '{re.escape(output)}': its tolerance "
    message = _refused(course, name)
    assert re.search(rf"cell `{gid}`, output '{re.escape(output)}': its tolerance "
                     rf"(is zero|\(rtol {rtol:g}, atol 0\) is tighter than)[^\n]* \(on case "
                     rf"'{case}'", message), message  # said once, for the cell, with its cases
    assert "Give it rtol of at least" in message

    monkeypatch.setattr(gate, "ROUNDING", rtol / 10)
    message = _refused(course, name)
    assert re.search(rf"{where}\(rtol {rtol:g}, atol 0\) is tighter than the reference itself "
                     r"holds: with its inputs changed by rounding", message), (move, rtol, message)


def _case_with_shares(course: Path):
    """``(problem set, hidden cell, its weighted case, the argument drawn as shares)``: a case
    of a ``_hidden`` cell one of whose arguments is drawn from a Dirichlet (rows of shares, one
    column per component or class, as responsibilities are)."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        for cell in nb.cells:
            check = cell.metadata.get("course", {}).get("check", {})
            if not _gid(cell).endswith("_hidden"):
                continue
            for case in [c for c in check.get("cases", {}) if c in check.get("weights", {})]:
                spec = check.cases[case]
                for argument, given in spec.get("args", spec).items():
                    if isinstance(given, dict) and "dirichlet" in given:
                        return name, _gid(cell), case, argument
    raise AssertionError("no hidden case draws an argument from a Dirichlet")


@pytest.mark.slow
def test_a_hidden_case_the_notebook_s_answer_returns_nan_on_names_the_case(course):
    """A hidden case whose shares leave a component with no data (every row all in the first
    column: an empty component), so the notebook's answer divides by zero and returns NaN where
    the reference, which guards the division, does not. It was refused naming the cell alone
    and a checks module the problem set does not have; the case and its inputs are the fix."""
    name, gid, case, argument = _case_with_shares(course)
    nb = nbformat.read(_path(course, name), as_version=4)
    [cell] = [c for c in nb.cells if _gid(c) == gid]
    spec = json.loads(json.dumps(cell.metadata.course.check.cases[case]))
    args = spec.get("args", spec)
    draw = args[argument]["dirichlet"]
    components = len(draw["alpha"])
    args[argument] = [[1.0] + [0.0] * (components - 1)] * draw["n"]
    [line] = [ln for ln in cell.source.splitlines() if re.search(rf"record\(\s*['\"]{case}['\"]",
                                                                   ln)]

    def add(nb):
        [target] = [c for c in nb.cells if _gid(c) == gid]
        target.metadata.course.check.cases["empty_component"] = spec
        target.metadata.course.check.weights["empty_component"] = 1
        target.source = target.source.replace(
            line, line + "\n" + line.replace(case, "empty_component"), 1)
    _edit(course, name, add)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, cell `{gid}`, case 'empty_component': the notebook's "
                     r"answer `\w+` returns NaN for '[^']+'.* on this case's inputs", message), message
    assert f"Change the case's inputs in the course.check of `{gid}`" in message, message
    if not (course / "checks" / f"{name}.py").is_file():
        assert f"checks/{name}.py" not in message, message


@pytest.mark.parametrize("table", [True, False], ids=["with a table", "without a table"])
def test_headings_renumbered_with_a_number_skipped_are_named_with_the_renumbering(course, table):
    """The last two ``## Question N`` headings renumbered by hand one too high (the table left
    as it was): the headings skip a number. With a points table in the header it was named as
    the table's row with no heading, to remove; without one it was released. The headings are
    what to renumber (as the table has them, when there is one)."""
    name = next(n for n in list_problem_sets(Course(course))
                if _has_table(nbformat.read(_path(course, n), as_version=4)) == table
                and len(_headings(nbformat.read(_path(course, n), as_version=4))) >= 3)
    nb = nbformat.read(_path(course, name), as_version=4)
    cells = _headings(nb)
    for cell in cells[-2:]:
        cell.source = re.sub(r"^(\s*##\s+Question\s+)(\d+)",
                             lambda m: f"{m[1]}{int(m[2]) + 1}", cell.source, count=1)
    nbformat.write(nb, _path(course, name))
    count = len(cells)
    numbers = [*range(1, count - 1), count, count + 1]
    message = _refused(course, name)
    assert (f"{name}.ipynb, the ## Question headings: they are numbered "
            f"{', '.join(map(str, numbers))}, not 1 to {count} in order. Number them 1 to "
            f"{count}{' (as the table does)' if table else ''}: ## Question {count} → "
            f"{count - 1}, ## Question {count + 1} → {count}.") in message, message
    assert "Remove the row" not in message, message


def _headings(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "markdown"
            and re.match(r"\s*##\s+Question\s+\d+", c.source)]


def _has_table(nb) -> bool:
    """Whether the header has a points table (rows ``| N | ... | P |``)."""
    return bool(re.search(r"(?m)^\|\s*\d+\s*\|", nb.cells[0].source))


def test_a_tolerance_written_as_text_is_named_with_its_cell(course):
    """``"rtol": "1e-9"`` (the number quoted in a hand edit of the metadata): the gate stopped
    with a raw TypeError from comparing text with a number, and exit status 1."""
    name, gid = _first_declared(course, "rtol")
    _set_check(course, name, gid, rtol="1e-9")
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, course\.check: .*{gid}, case '\w+': its rtol is '1e-9', "
                     r"not a number of 0 or more\. Write it as a JSON number, without quotes "
                     r"\(\"rtol\": 1e-09\)", message), message


def test_a_test_cell_dragged_above_its_answer_is_named_with_the_move(course):
    """A visible test cell dragged above its answer cell in Jupyter: its tests run before the
    function exists. It was refused as "the reference scored 0 of 1 (your function was not
    run ...). Fix the reference answer ..., its course.check, or the reference in solutions/",
    none of which is the fix."""
    name, cell = _simple_answer(course)
    gid = _gid(cell)
    function = re.search(r"^def (\w+)\(", cell.source, re.M).group(1)
    visible = naming.test_id(gid, naming.VISIBLE)

    def drag(nb):
        ids = [_gid(c) for c in nb.cells]
        answer, test = ids.index(gid), ids.index(visible)
        nb.cells.insert(answer, nb.cells.pop(test))
    _edit(course, name, drag)
    message = _refused(course, name)
    assert (f"{name}.ipynb, cell `{visible}`: it records `{function}`, which is defined only "
            f"below it (cell `{gid}`), so the test runs before the answer exists. Move "
            f"`{visible}` below the cell that defines `{function}`.") in message, message
    assert "the reference scored" not in message, message


def _seeded(spec) -> dict | None:
    """The parameters of the first generator of a case's inputs that takes a seed, or None."""
    for value in spec.get("args", spec).values():
        params = next(iter(value.values()), None) if isinstance(value, dict) else None
        if isinstance(params, dict) and "seed" in params:
            return params
    return None


def test_a_student_s_parameter_in_a_problem_set_without_variants_is_named_once(course):
    """A hidden case's seed written ``{"variant": "seed"}`` (copied from a problem set with
    variants) in one without: named once, with the two fixes. It was named a second time as "the
    reference's own answers ... score 0% (DeclarationError ...)", with the fix to make the
    declaration agree with its reference's outputs."""
    for name in list_problem_sets(Course(course)):
        if ProblemSet(name, Course(course)).variants is not None:
            continue
        nb = nbformat.read(_path(course, name), as_version=4)
        found = [(_gid(c), case, params) for c in nb.cells if _gid(c).endswith("_hidden")
                 for case, spec in c.metadata.get("course", {}).get("check", {}).get(
                     "cases", {}).items() if (params := _seeded(spec)) is not None]
        if found:
            break
    else:
        raise AssertionError("no problem set without variants draws a hidden case with a seed")
    gid, case, params = found[0]
    params["seed"] = {"variant": "seed"}
    nbformat.write(nb, _path(course, name))
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, course\.check: {gid}: the inputs of case '{case}' cannot "
                     r"be made: .* reads a student's parameter", message), message
    assert "Write the value itself there (a seed of its own)" in message, message
    assert "(1 problem;" in message and "DeclarationError" not in message, message


def test_a_setup_cell_with_an_ipython_magic_still_binds_its_imports(course):
    """``%matplotlib inline`` above the setup cell's imports: the cell is not Python as written,
    but its imports are what the answers use; the check of the names the answers use must
    not call them undefined."""
    name = list_problem_sets(Course(course))[0]

    def magic(nb):
        setup = next(c for c in nb.cells if c.cell_type == "code" and "import" in c.source)
        setup.source = "%matplotlib inline\n" + setup.source
    _edit(course, name, magic)
    ps = ProblemSet(name, Course(course))
    assert [p for p in gate_problems(ps) if "which no cell of the notebook defines" in str(p)] == []


def test_a_hidden_case_pasted_from_another_hidden_case_is_refused(course):
    """A hidden case copied from the one above it to make a second test, its seed left as it
    was: the same test counted twice. It was released."""
    import copy

    name, gid, case = _weighted_hidden(course)
    nb = nbformat.read(_path(course, name), as_version=4)
    [cell] = [c for c in nb.cells if _gid(c) == gid]
    [line] = [ln for ln in cell.source.splitlines()
              if re.search(rf"record\(\s*['\"]{case}['\"]", ln)]
    cell.metadata.course.check.cases["pasted"] = copy.deepcopy(
        cell.metadata.course.check.cases[case])
    cell.metadata.course.check.weights["pasted"] = 1
    cell.source = cell.source.replace(line, line + "\n" + line.replace(case, "pasted"), 1)
    nbformat.write(nb, _path(course, name))
    message = _refused(course, name)
    first, second = sorted(["pasted", case])  # the metadata is written with its keys sorted
    assert (f"{name}.ipynb, cell `{gid}`, case {second!r}: it is identical to the hidden case "
            f"{first!r} of `{gid}`") in message, message
    assert "Give it inputs the hidden case does not cover" in message, message


@pytest.mark.slow
def test_a_problem_the_sample_students_share_is_said_once(course):
    """A problem set with per-student variants is graded on several sample students: a visible
    assertion the reference fails (the same words for every student) was said once per sample,
    the lines differing only in "(the variant ...)"."""
    name, gid = next(
        (n, _gid(c)) for n in list_problem_sets(Course(course))
        if ProblemSet(n, Course(course)).variants is not None
        for c in nbformat.read(_path(course, n), as_version=4).cells
        if _gid(c).endswith("_visible") and "assert np.allclose(" in c.source
        and "V[" not in c.source)

    def wrong(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.source = cell.source.replace("assert np.allclose(", "assert not np.allclose(", 1)
    _edit(course, name, wrong)
    message = _refused(course, name)
    lines = [ln for ln in message.splitlines() if f"cell `{gid}`: the reference scored" in ln]
    assert len(lines) == 1 and "(the variant {" in lines[0], message


def test_an_answer_cell_whose_grade_id_is_changed_away_from_its_tests_is_refused(course):
    """The answer cell's grade_id changed in the cell toolbar (its function unchanged): its tests
    (``QUESTION_visible``/``_hidden``, :func:`coursedata.naming.question_of`) name a cell no
    longer there. It was released; the gate names the cell, the tests it lost and both fixes."""
    from coursedata.naming import question_of

    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        tests = [_gid(c) for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")
                 and not c.metadata.nbgrader.get("solution") and question_of(_gid(c)) != _gid(c)]
        paired = [c for c in _answer_cells(nb) if any(question_of(t) == _gid(c) for t in tests)]
        if paired:
            break
    else:
        raise AssertionError("no answer cell of the course has tests")
    gid = _gid(paired[0])
    lost = [t for t in tests if question_of(t) == gid]
    _edit(course, name, lambda nb: next(c for c in nb.cells if _gid(c) == gid)
          .metadata.nbgrader.update(grade_id=f"{gid}_renamed"))
    message = _refused(course, name)
    names = ", ".join(f"`{t}`" for t in lost)
    assert (f"{name}.ipynb, cell `{gid}_renamed`: no test cell belongs to it, and its tests "
            f"{names} name the answer cell `{gid}`, which no cell is now") in message, message
    assert f"Change its grade_id back to `{gid}`" in message, message


def _python_cases_the_check_cannot_take(course: Path, make) -> Iterator[tuple]:
    """``(problem set, its cell, case, inputs, exception)`` for each case declared with inputs
    only (a Python check of the problem set's ``CHECKS`` scores it) on which that check raises
    computing its reference, once ``make`` changed every array of the inputs (as JSON, as the
    notebook's metadata holds them). Found by calling the check here, on no answers."""
    import tempfile

    import numpy as np

    from autograder.checks import load_checks
    from autograder.checks.answers import Answers
    from autograder.checks.declaration import declared_cases
    from coursedata.results import AnswerUnavailable

    code = Course(course)
    for name in list_problem_sets(code):
        code.use_code()
        try:
            checks = load_checks(name, code).CHECKS
        except ModuleNotFoundError:
            continue
        nb = nbformat.read(_path(course, name), as_version=4)
        cases = declared_cases(nb)
        for case, spec in cases.items():
            if spec.cell not in checks or spec.reference is not None:
                continue
            made = {k: make(np.asarray(v)).tolist() if np.ndim(v) else v
                    for k, v in case_inputs(cases, case).items()}
            given = {k: np.asarray(v) if isinstance(v, list) else v for k, v in made.items()}

            class Made(Answers):
                def inputs(self, c, case=case, given=given):
                    return dict(given) if c == case else super().inputs(c)
            with tempfile.TemporaryDirectory() as folder:
                try:
                    checks[spec.cell](Made(name, folder, cases))
                except AnswerUnavailable:
                    continue
                except Exception as exc:  # noqa: BLE001 - what the gate must name
                    yield name, spec.cell, case, made, exc


def _python_case_the_check_cannot_take(course: Path) -> tuple[str, str, str, dict, str]:
    """``(problem set, its cell, case, inputs, error)``: the first case on which a Python check
    raises once every array of its inputs is cut to no rows."""
    for name, gid, case, made, exc in _python_cases_the_check_cannot_take(
            course, lambda a: a[:0]):
        return name, gid, case, made, type(exc).__name__
    raise AssertionError("every Python check takes its cases with no rows")


def test_a_case_whose_inputs_make_a_python_check_raise_names_the_case(course, caplog, capsys):
    """A hidden case scored by a Python check, its inputs degenerate: the check raises computing
    the reference. The refusal named no case ("Fix the reference answer ...") under a grader
    fault's traceback; now it names the case and its inputs as the fix, and no traceback."""
    name, gid, case, empty, error = _python_case_the_check_cannot_take(course)

    def edit(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.metadata.course.check.cases[case] = empty
    _edit(course, name, edit)
    message = _refused(course, name)
    assert re.search(rf"{name}\.ipynb, case {case} of `{gid}`: the reference \(its check in "
                     rf"[^)]+\) raises {error}: .* on its inputs, so the case can never be "
                     rf"passed\. Change the case's inputs in the course\.check of `{gid}`",
                     message), message
    shown = caplog.text + capsys.readouterr().err
    assert "Traceback" not in shown and "grader fault" not in shown, shown


def test_a_rule_reworded_in_the_text_alone_names_the_cell_the_declaration_and_the_fix(course):
    """The rules' statement edited in the instructions but not in ``metadata.course.rules``: the
    refusal named no cell and gave no fix. It names the instructions' cell, quotes what it says
    now and where the declared rule lives, and says to make them the same."""
    name = list_problem_sets(Course(course))[0]
    nb = nbformat.read(_path(course, name), as_version=4)
    statement = nb.metadata.course.rules.statement
    *kept, last = statement.split()
    reworded = " ".join([*kept, "REWORDED"])
    first = nb.cells[0]
    label = f"cell `{_gid(first)}`" if _gid(first) else "cell 1"
    pattern = r"\s+".join(re.escape(w) for w in statement.split())
    assert re.search(pattern, first.source), "the instructions state the rule"

    def edit(nb):
        nb.cells[0].source = re.sub(pattern, lambda m: reworded, nb.cells[0].source, count=1)
    _edit(course, name, edit)
    with pytest.raises(ValueError) as refused:
        release(name, course, db_url=f"sqlite:///{course / 'gradebook.db'}",
                url="https://example.org/kit/k.whl")
    message = str(refused.value)
    assert f"{name}.ipynb, {label}: the instructions do not say the declared rule" in message
    assert f"the cell says “{reworded}”" in message, message
    assert f"metadata course.rules.statement says “{statement}”" in message, message
    assert (f"Make them say the same (edit the text of {label} or course.rules.statement in "
            "the notebook's metadata)") in message, message
    assert (course / "release" / name / f"{name}.ipynb").read_bytes() == PUBLISHED


def _first_with(course: Path, key: str):
    """``(problem set, grade_id, the dict of its course.check holding key)``: the first
    declaration (or one of its outputs or cases) stating ``key``."""
    def walk(value):
        if isinstance(value, dict):
            if key in value:
                yield value
            for v in value.values():
                yield from walk(v)
        elif isinstance(value, list):
            for v in value:
                yield from walk(v)
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        for cell in nb.cells:
            for found in walk(cell.metadata.get("course", {}).get("check", {})):
                return name, _gid(cell), found
    raise AssertionError(f"no declaration states {key!r}")


def test_an_unknown_comparison_is_named_with_the_known_ones_and_the_near_one(course):
    """A misspelt comparison ("logg" for "log") ended with advice about record(...) case
    names; it names the comparisons there are and the one meant."""
    from coursedata.compare import KINDS

    name, gid, _ = _first_with(course, "compare")

    def misspell(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        spec = next(d for d in [cell.metadata.course.check, *cell.metadata.course.check.get(
            "outputs", [])] if isinstance(d, dict) and "compare" in d)
        spec["compare"] += spec["compare"][-1]
    meant = _first_with(course, "compare")[2]["compare"]
    _edit(course, name, misspell)
    message = _refused(course, name)
    assert (f"unknown comparison {meant + meant[-1]!r} (known: {', '.join(KINDS)}; did you "
            f"mean {meant!r}?)") in message, message
    assert "record(" not in message, message


def test_a_misspelt_case_argument_is_named_with_the_parameter_meant(course):
    """A case's input ``respp`` where the function takes ``resp``: the near name is given."""
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        found = [(_gid(c), case, arg) for c in nb.cells
                 for case, spec in c.metadata.get("course", {}).get("check", {}).get(
                     "cases", {}).items()
                 for arg in spec.get("args", spec) if arg.isidentifier() and len(arg) > 1]
        if found:
            gid, case, arg = found[0]
            break

    def misspell(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        spec = cell.metadata.course.check.cases[case]
        args = spec.get("args", spec)
        args[arg + arg[-1]] = args.pop(arg)
    _edit(course, name, misspell)
    message = _refused(course, name)
    assert re.search(rf"case {case!r}: .*{arg + arg[-1]} is not one of its parameters\. "
                     rf"Rename `{arg + arg[-1]}` to `{arg}`", message), message
    said = [ln for ln in message.splitlines() if f"case {case!r}" in ln]
    assert all(f"Rename `{arg + arg[-1]}` to `{arg}`" in ln for ln in said), said


def _python_case_with_advice(course: Path) -> tuple:
    """``(problem set, cell, case, inputs, exception, its first clause, the rest)``: the first
    case whose inputs, cut to no rows or made all ones, make a Python check raise with a
    message of more than one clause (``;`` or ``.`` outside brackets)."""
    import numpy as np

    for make in (lambda a: a[:0], np.ones_like):
        for found in _python_cases_the_check_cannot_take(course, make):
            first, *rest = re.split(r"[;.]\s+(?![^(\[]*[)\]])", str(found[-1]), maxsplit=1)
            if rest:
                return (*found, first, rest[0])
    raise AssertionError("no Python check raises with more than one clause")


def test_a_python_check_s_exception_keeps_its_first_sentence_not_its_advice(course):
    """The exception's own advice ("give sigma explicitly") is advice to its caller, not to the
    author: the refusal keeps the exception's type and its first sentence. The case: the first
    whose inputs, cut to no rows or made all ones, make a Python check raise with a message of
    more than one clause (``;`` or ``.`` outside brackets)."""
    name, gid, case, made, exc, first, rest = _python_case_with_advice(course)

    def edit(nb):
        [cell] = [c for c in nb.cells if _gid(c) == gid]
        cell.metadata.course.check.cases[case] = made
    _edit(course, name, edit)
    message = _refused(course, name)
    assert f"raises {type(exc).__name__}: {first} on its inputs" in message, message
    assert rest not in message, message
    assert f"(its check in checks/{name}.py)" in message, message  # as rubrics/NAME.md is named


def _inheriting_pair(course: Path):
    """``(problem set, visible grade_id, hidden grade_id, outputs compared with a tolerance)``:
    the first question whose hidden cell states no tolerance of its own (no rtol, atol or
    outputs in its declaration or its cases), so it takes the visible cell's
    (autograder/checks/declaration.py)."""
    keys = {"rtol", "atol", "outputs"}
    for name in list_problem_sets(Course(course)):
        nb = nbformat.read(_path(course, name), as_version=4)
        checks = {_gid(c): c.metadata.get("course", {}).get("check") for c in nb.cells}
        found = declarations(nb)
        for gid, check in checks.items():
            hidden = naming.test_id(naming.question_of(gid), naming.HIDDEN)
            if (naming.test_kind(gid) != naming.VISIBLE or not check or "reference" not in check
                    or not checks.get(hidden) or keys & set(checks[hidden])
                    or any(isinstance(s, dict) and "args" in s and keys & set(s)
                           for s in checks[hidden].get("cases", {}).values())):
                continue
            outputs = {o.name for case in found[hidden].cases.values() for o in case.outputs
                       if o.compare not in ("integer", "permutation")}
            if outputs and found[hidden].cases:
                return name, gid, hidden, outputs
    raise AssertionError("no hidden cell inherits its visible cell's tolerance")


@pytest.mark.parametrize("tolerance, said", [
    ({"rtol": 1.0, "atol": 1e6}, r"rtol=1, atol=1e6 on output {output} accepts a wrong answer"),
    ({"rtol": 0.0, "atol": 0.0}, r"output {output}: its tolerance is zero"),
])
def test_a_tolerance_the_hidden_cell_inherits_is_named_once_at_the_cell_that_states_it(
        course, tolerance, said):
    """A loose or zero tolerance written in the visible cell's declaration: one edit, which
    gave lines for the hidden cell too ("... in the cell's course.check", where that cell states
    none), one per case for a zero tolerance. Now one line per output, for the visible cell,
    saying that the hidden cell inherits it."""
    name, visible, hidden, outputs = _inheriting_pair(course)
    _set_check(course, name, visible, **tolerance)
    message = _refused(course, name)
    named = [output for output in outputs for ln in message.splitlines()
             if re.search(said.format(output=re.escape(repr(output))), ln)
             and f"cell `{visible}`" in ln and f"`{hidden}` inherits it" in ln]
    assert named and len(named) == len(set(named)), message  # each output once at most
    assert not re.search(rf"cell `{hidden}`[^\n]*(is zero|accepts a wrong)", message), message
