"""What editors and students do to an answer cell's grading metadata, graded as the student meant.

Three habits lost points with nothing said: an answer cell copied with its metadata and the
answer written in the copy (grader-service #51, nbgrader #1083), an answer cell split in two with
both halves keeping the metadata (googlecolab/colabtools #581), and a helper cell pasted from
another problem set keeping that set's ``grade_id``. Every cell the student wrote now runs, in
their order, and the note says which cells were used; the two round trips that kept full marks
before (jupytext's py:percent, metadata stripped by an editor) still do. The fast tests read the
assembled notebook; the slow one grades every habit end to end in the sandbox and compares each
with the same answers handed in untouched (the oracle), never with a number written here.
"""

from __future__ import annotations

import ast
import copy
import csv
import subprocess
import sys

import jupytext
import nbformat
import pytest

from autograder.grading.problemset import ProblemSet
from autograder.sandbox import sandbox_available
from tests import ROOT
from tests import submissions as sb
from tests.environment import require
from tests.psharness import generate_release

AVAILABLE, REASON = sandbox_available()
PS, OTHER = "ps1_pca", "ps3_mle"


def _answer_with_a_definition(builder: sb.Builder) -> tuple[str, str]:
    """The first code answer of the course's problem set that defines a function, and its name."""
    for gid, text in builder.answers.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        if defs:
            return gid, defs[0].name
    raise AssertionError(f"{PS} has no code answer that defines a function")


def _helper_and_wrapper(text: str, name: str) -> tuple[str, str]:
    """The answer as a student splits it: the work in a helper, then the function calling it."""
    helper = text.replace(f"def {name}(", f"def _{name}_work(", 1)
    return helper, f"def {name}(*args, **kwargs):\n    return _{name}_work(*args, **kwargs)\n"


def _foreign_metadata() -> dict:
    """A solution cell's grading metadata from another problem set of the course."""
    other = nbformat.read(ProblemSet(OTHER).path, as_version=4)
    cell = next(c for c in other.cells if c.metadata.get("nbgrader", {}).get("solution"))
    return copy.deepcopy(cell.metadata["nbgrader"])


def habits(builder: sb.Builder) -> dict[str, nbformat.NotebookNode]:
    """Each habit applied to the correct notebook (the answers untouched is ``correct``)."""
    gid, name = _answer_with_a_definition(builder)
    helper, wrapper = _helper_and_wrapper(builder.answers[gid], name)
    made = {"correct": builder.correct()}

    copied = builder.correct()  # the stub stays first; the answer is written in the copy
    answer = sb.cell(copied, gid)
    stub = copy.deepcopy(sb.cell(builder.blank(), gid))
    copied.cells.insert(copied.cells.index(answer), stub)
    made["copied"] = copied

    split = builder.correct()  # both halves keep the metadata
    answer = sb.cell(split, gid)
    first = copy.deepcopy(answer)
    first.source, answer.source = helper, wrapper
    split.cells.insert(split.cells.index(answer), first)
    made["split"] = split

    foreign = builder.correct()  # the helper pasted from another problem set, its grade_id kept
    answer = sb.cell(foreign, gid)
    pasted = nbformat.v4.new_code_cell(helper, metadata={"nbgrader": _foreign_metadata()})
    answer.source = wrapper
    foreign.cells.insert(foreign.cells.index(answer), pasted)
    made["foreign"] = foreign

    made["stripped"] = sb.strip_nbgrader(builder.correct())
    made["percent"] = jupytext.reads(jupytext.writes(builder.correct(), "py:percent"),
                                     "py:percent")
    return made


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    base = tmp_path_factory.mktemp("habits", numbered=True)
    (base / "release").mkdir()
    release = generate_release([PS], base / "release")
    nb = ProblemSet(PS).notebook_name
    return base, sb.Builder(ProblemSet(PS).path, release / PS / nb)


def _sources(nb) -> list[str]:
    return [c.source for c in nb.cells]


def test_a_copied_answer_cell_runs_both_in_order_and_says_which(builder):
    _, b = builder
    ps = ProblemSet(PS)
    gid, _ = _answer_with_a_definition(b)
    made = habits(b)["copied"]
    assembly = ps.assemble(made)
    sources = _sources(assembly.notebook)
    stub, answer = sb.cell(b.blank(), gid).source, b.answers[gid]
    assert sources.index(stub) < sources.index(answer)
    places = [i + 1 for i, c in enumerate(made.cells)
              if c.metadata.get("nbgrader", {}).get("grade_id") == gid]
    assert any(f"cells {places[0]} and {places[1]}" in n and "copied or split" in n
               for n in assembly.notes), assembly.notes


def test_a_split_answer_cell_keeps_both_halves(builder):
    _, b = builder
    gid, name = _answer_with_a_definition(b)
    helper, wrapper = _helper_and_wrapper(b.answers[gid], name)
    assembly = ProblemSet(PS).assemble(habits(b)["split"])
    sources = _sources(assembly.notebook)
    assert sources.index(helper) < sources.index(wrapper)
    assert any("copied or split" in n for n in assembly.notes)


def test_a_cell_with_another_problem_sets_grade_id_is_the_students(builder):
    _, b = builder
    gid, name = _answer_with_a_definition(b)
    helper, _ = _helper_and_wrapper(b.answers[gid], name)
    assembly = ProblemSet(PS).assemble(habits(b)["foreign"])
    assert helper in _sources(assembly.notebook)
    foreign = _foreign_metadata()["grade_id"]
    assert any(repr(foreign) in n and "student's own cell" in n for n in assembly.notes)


#: Their users are slow (tests/conftest.py): a grading run.
SLOW_FIXTURES = ("graded",)


@pytest.fixture(scope="module")
def graded(builder):
    """Every habit graded in one run: ``grades.csv``'s rows by habit, and the output folder."""
    require(AVAILABLE, f"no sandbox here: {REASON}")
    base, b = builder
    nb = ProblemSet(PS).notebook_name
    folder = base / "class"
    for habit, notebook in habits(b).items():
        (folder / habit).mkdir(parents=True)
        (folder / habit / nb).write_bytes(sb.to_bytes(notebook))
    out = base / "out"
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", PS, str(folder), "--out", str(out),
         "--workers", "2", "--quiet", "--course", str(base / "release")],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    with (out / "grades.csv").open(newline="") as f:
        return {r["student_id"]: r for r in csv.DictReader(f)}, out


@pytest.mark.parametrize("habit", ["copied", "split", "foreign", "stripped", "percent"])
def test_each_habit_keeps_the_marks_of_the_same_answers_untouched(graded, habit):
    graded, _ = graded
    correct = graded["correct"]
    assert float(correct["autograded_total"]) == float(correct["autograded_max"]) > 0
    assert graded[habit]["autograded_total"] == correct["autograded_total"], graded[habit]["notes"]
    assert "NameError" not in graded[habit]["notes"]  # no cell blamed for the student's own code


@pytest.mark.parametrize("habit", ["copied", "split", "foreign"])
def test_the_row_and_the_feedback_say_which_cells_were_used(graded, habit):
    rows, out = graded
    said = "copied or split" if habit != "foreign" else "student&#x27;s own cell"
    assert said.replace("&#x27;", "'") in rows[habit]["notes"]
    page = (out / "feedback" / habit / ProblemSet(PS).notebook_name).with_suffix(".html")
    assert said in page.read_text()
