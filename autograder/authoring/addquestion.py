"""A question added to a problem set in one command: ``python -m autograder add-question PS``.

:func:`add_question` inserts the question's cells before question ``at`` (or after the last
question) of ``<course>/source/PS/PS.ipynb`` and renumbers the later questions everywhere the
number appears: their ``## Question N`` headings, the header's table rows, their text cells'
``qN_text`` grade_ids (so feedback never names another question's cell), "question N" in the
notebook's text and in its code cells' strings and comments, and ``(QN)`` in the marking
scheme. The header's ``**Points:**``
line and table row get the new question's points.

- An **autograded** question (:class:`Autograded`): its text, the answer cell (the reference's
  signature and docstring, its body between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` for
  the author to make the notebook's own), and a visible and a hidden test cell, each with its
  ``record(...)`` lines and the declaration (``metadata.course.check``) of its cases against the
  reference: the first case is the visible cell's, the others the hidden cell's.
- A **written** question (:class:`Written`): its text, the answer cell, and its marking-scheme
  section in ``<course>/rubrics/PS.md`` with a points table that adds up.

Nothing is written when the question cannot be added (:class:`QuestionError` says why). The
result passes :mod:`autograder.authoring.validate` and the release gate as it stands; the
author then writes the question's text, visible asserts and answer.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import textwrap
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field

import nbformat

from autograder.authoring.validate import nbgrader_meta
from autograder.checks.declaration import DeclarationError, case_inputs, declarations, resolve
from autograder.course import Course
from autograder.grading.problemset import ProblemSet
from coursedata.naming import HIDDEN, VISIBLE, test_id

__all__ = ["Autograded", "Written", "QuestionError", "add_question", "renumber"]

#: A question's heading, on any line of its cell (problem set 4 opens a part and its first
#: question in one cell: "## Part A — ...", then "## Question 1 — ...").
_HEADING = re.compile(r"^##\s+Question\s+(\d+)\b", re.M)
_MENTION = re.compile(
    r"(\b[Qq]uestions\s+)(\d+(?:(?:\s*[–—-]\s*|\s*,\s*|\s+(?:and|or|to)\s+)\d+)*)\b"
    r"|(\b[Qq]uestion\s+|\(Q)(\d+)\b"
)
_ROW = re.compile(r"^\|\s*(\d+)\s*\|")
_POINTS = re.compile(
    r"\*\*Points:\*\*\s*(\d+(?:\.\d+)?)\s+autograded\s*\+\s*(\d+(?:\.\d+)?)\s+graded by hand\s*="
    r"\s*(\d+(?:\.\d+)?)"
)


class QuestionError(ValueError):
    """A question that cannot be added; the message says why and what to do."""


@dataclass(frozen=True)
class Autograded:
    """An autograded question: ``function`` checked against ``reference`` on ``cases``.

    Attributes
    ----------
    function : str
        The student's function (the answer cell's grade_id; its tests ``<function>_visible``
        and ``<function>_hidden``).
    reference : str
        ``"module:function"`` of a trusted module (:func:`autograder.checks.declaration.resolve`).
    cases : dict
        ``{case: {argument: input}}`` as a declaration's ``cases``; the first is the visible
        cell's, the others the hidden cell's (at least one each).
    title : str
    visible_points, hidden_points : float
    """

    function: str
    reference: str
    cases: Mapping[str, Mapping]
    title: str
    visible_points: float = 1
    hidden_points: float = 2
    rtol: float = 1e-9
    atol: float = 1e-12

    @property
    def points(self) -> float:
        return self.visible_points + self.hidden_points


@dataclass(frozen=True)
class Written:
    """A written question graded by hand: its answer cell ``grade_id`` and its points."""

    grade_id: str
    title: str
    points: float = 2
    parts: list[str] = field(default_factory=list)


def _num(x: float) -> str:
    return f"{x:g}"


def _cell_text(title: str) -> str:
    """``title`` as one cell of a Markdown table: its ``|`` escaped (``p(z \\| x)``)."""
    return title.replace("|", "\\|")


def _headings(nb: nbformat.NotebookNode) -> list[tuple[int, int]]:
    """``[(cell index, question number)]`` of the ``## Question N`` headings, in order."""
    out = []
    for i, cell in enumerate(nb.cells):
        m = _HEADING.search(cell.source) if cell.cell_type == "markdown" else None
        if m:
            out.append((i, int(m[1])))
    return out


def _insert_index(nb: nbformat.NotebookNode, at: int) -> int:
    """Where question ``at``'s cells go: before its heading, or after the last question."""
    headings = _headings(nb)
    for index, number in headings:
        if number == at:
            return index
    last = headings[-1][1] if headings else 0
    if at != last + 1:
        raise QuestionError(
            f"there is no question {at}: give --at between 1 and {last + 1} (the questions "
            f"are numbered 1 to {last})"
        )
    after = headings[-1][0] + 1 if headings else len(nb.cells)
    for i in range(after, len(nb.cells)):  # a closing section (## ...) stays last
        if nb.cells[i].cell_type == "markdown" and nb.cells[i].source.lstrip().startswith("## "):
            return i
    return len(nb.cells)


def renumber(text: str, start: int, by: int = 1, rows: bool = False) -> str:
    """``text`` with every "Question N", "question N" and "(QN)" of ``N >= start`` moved by
    ``by``, and each number of "questions 3–5" or "questions 2 and 4" (one pass: no number moves
    twice); with ``rows``, a table row ``| N |`` too (the header's table of questions)."""

    def shift(number: re.Match) -> str:
        n = int(number[0])
        return str(n + by if n >= start else n)

    def move(m: re.Match) -> str:  # "questions 3–5", "questions 2 and 4", "question 3", "(Q3)"
        words, numbers = (m[1], m[2]) if m[1] else (m[3], m[4])
        return words + re.sub(r"\d+", shift, numbers)

    lines = []
    for line in _MENTION.sub(move, text).splitlines(keepends=True):
        row = _ROW.match(line)
        if rows and row and int(row[1]) >= start:
            line = line.replace(row[0], f"| {int(row[1]) + by} |", 1)
        lines.append(line)
    return "".join(lines)


def _renumber_notebook(nb: nbformat.NotebookNode, start: int) -> None:
    """Renumber every question from ``start`` on, their text cells' grade_ids (and ids that
    follow them) included; the header's table rows too."""
    for cell in nb.cells:
        meta = nbgrader_meta(cell)
        gid = meta.get("grade_id", "")
        m = re.fullmatch(r"q(\d+)_text", gid)
        if m and int(m[1]) >= start:
            meta["grade_id"] = f"q{int(m[1]) + 1}_text"
            if cell.get("id") in (gid, gid.replace("_", "-")):
                cell["id"] = meta["grade_id"].replace("_", "-")
        if cell.cell_type == "markdown":
            cell.source = renumber(cell.source, start, rows=cell is nb.cells[0])
        else:  # code: its strings and comments ("# Question 5, part 3", f"question 4: {x}")
            cell.source = _renumber_code(cell.source, start)


def _renumber_code(source: str, start: int) -> str:
    """``source`` with :func:`renumber` applied to each of its strings and comments (a question
    number is text there; the code's own numbers never move). Code that does not tokenize (an
    IPython magic) has its comment lines renumbered alone."""
    lines = io.StringIO(source).readlines()  # the lines tokenize numbers
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return "".join(
            renumber(line, start) if line.lstrip().startswith("#") else line for line in lines
        )
    text = {"STRING", "FSTRING_MIDDLE", "COMMENT"}  # FSTRING_MIDDLE: an f-string's text (3.12)
    for tok in reversed(tokens):
        if tokenize.tok_name[tok.type] not in text or tok.end[0] > len(lines):
            continue
        begin = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[tok.end[0] - 1] + tok.end[1]
        if source[begin:end] == tok.string:  # 3.12 gives an f-string's "{{" as "{"
            source = source[:begin] + renumber(tok.string, start) + source[end:]
    return source


def _renumber_rules(nb: nbformat.NotebookNode, start: int) -> None:
    """Renumber the questions the rules' statements name (metadata ``course.rules``: the
    problem set's and each answer's), which the header repeats word for word."""
    rules = nb.metadata.get("course", {}).get("rules")
    if not isinstance(rules, dict):
        return
    for declared in [rules, *(rules.get("questions") or {}).values()]:
        if isinstance(declared, dict) and isinstance(declared.get("statement"), str):
            declared["statement"] = renumber(declared["statement"], start)


def _header(nb: nbformat.NotebookNode, at: int, row: str, auto: float, hand: float) -> None:
    """Add ``row`` to the header's table as row ``at`` and the points to its Points line."""
    cell = nb.cells[0]
    points = _POINTS.search(cell.source)
    if points:
        a, h = float(points[1]) + auto, float(points[2]) + hand
        cell.source = cell.source.replace(
            points[0],
            f"**Points:** {_num(a)} autograded + {_num(h)} graded by hand = {_num(a + h)}",
        )
    lines = cell.source.split("\n")
    rows = [(i, int(found[1])) for i, ln in enumerate(lines) if (found := _ROW.match(ln))]
    if not rows:
        return
    before = next((i for i, number in rows if number > at), rows[-1][0] + 1)
    lines.insert(before, row)
    cell.source = "\n".join(lines)


def _docstring(function, question: Autograded) -> str:
    """The answer's docstring literal: the reference's, its doctests calling the question's
    function, raw (``r\"\"\"``) when it holds a backslash (LaTeX), so it reads as written."""
    doc = inspect.getdoc(function) or question.title
    own = re.compile(rf"\b{re.escape(function.__name__)}(?=\()")
    doc = "\n".join(
        own.sub(question.function, line) if line.lstrip().startswith((">>>", "...")) else line
        for line in doc.split("\n")
    )
    raw = "r" if "\\" in doc else ""
    return f'{raw}"""{doc}\n"""'


def _answer_source(question: Autograded) -> str:
    """The answer cell: the reference's parameters and docstring, its body between the
    markers."""
    function = resolve(question.reference)
    source = textwrap.dedent(inspect.getsource(function))
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef))
    body = node.body[1:] if ast.get_docstring(node) is not None else node.body
    lines = source.split("\n")[body[0].lineno - 1 : body[-1].end_lineno]
    signature = inspect.signature(function)
    plain = signature.replace(  # the defaults kept: the checks call it with the cases' inputs
        parameters=[p.replace(annotation=p.empty) for p in signature.parameters.values()],
        return_annotation=signature.empty,
    )
    doc = textwrap.indent(_docstring(function, question), "    ")
    code = textwrap.indent(textwrap.dedent("\n".join(lines)), "    ")
    return (
        f"def {question.function}{plain}:\n{doc}\n    ### BEGIN SOLUTION\n{code}\n"
        "    ### END SOLUTION"
    )


def _record_lines(name: str, function: str, cases) -> str:
    records = "\n".join(f'record("{c}", {function}, **inputs("{name}", "{c}"))' for c in cases)
    return (
        f"### BEGIN HIDDEN TESTS\nfrom coursedata.grading import inputs, record\n{records}\n"
        "### END HIDDEN TESTS"
    )


def _is_class(reference: str) -> bool:
    try:
        return inspect.isclass(resolve(reference))
    except Exception:  # noqa: BLE001 - a reference that cannot be found is named by _outputs
        return False


def _argument_problem(question: Autograded) -> None:
    """Refuse a case giving an argument the reference has no parameter for (a name of the
    author's own for it), naming the reference's parameters."""
    try:
        parameters = inspect.signature(resolve(question.reference)).parameters
    except Exception:  # noqa: BLE001 - a reference that cannot be found is named by _outputs
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    for case, inputs in question.cases.items():
        given = [n.strip() for key in inputs for n in key.split(",")]
        unknown = [n for n in given if n not in parameters]
        if unknown:
            raise QuestionError(
                f"the case {case!r} gives {', '.join(map(repr, unknown))}, which "
                f"{question.reference} has no parameter for: name the case's arguments after "
                f"its parameters ({', '.join(parameters)}); nothing was changed"
            )


def _outputs(question: Autograded, visible: dict) -> list[str]:
    """One name per value the reference returns on the visible case's inputs."""
    from autograder.checks.declaration import declared_cases

    if _is_class(question.reference):
        raise QuestionError(
            f"the reference {question.reference} is a class (an estimator), and add-question "
            "writes the answer from a function's body: name a function that fits it and returns "
            "what the student's function returns (in solutions/, or in the problem set's module "
            "of the course's checks/), or add the question with such a function and then "
            'declare the class in the visible cell\'s course.check with "fitted" (the '
            "author's guide, The keys of a declaration); nothing was changed"
        )

    _argument_problem(question)
    probe = {"cells": [_cell("code", test_id(question.function, VISIBLE), "", check=visible)]}
    try:
        inputs = case_inputs(declared_cases(probe), next(iter(visible["cases"])))
        value = resolve(question.reference)(**inputs)
    except Exception as exc:  # noqa: BLE001 - named for the author
        raise QuestionError(
            f"the reference {question.reference} cannot run on the case "
            f"{next(iter(visible['cases']))!r}: {type(exc).__name__}: {exc}; nothing was "
            "changed"
        ) from None
    n = len(value) if isinstance(value, tuple) else 1
    return (
        [f"{question.function}'s value"]
        if n == 1
        else [f"value {i + 1} of {question.function}" for i in range(n)]
    )


def _cell(kind: str, grade_id: str, source: str, *, points=None, solution=False, **course):
    meta = {
        "nbgrader": {
            "grade": points is not None,
            "grade_id": grade_id,
            "locked": not solution,
            "schema_version": 3,
            "solution": solution,
            "task": False,
            **({"points": points} if points is not None else {}),
        }
    }
    if course:
        meta["course"] = course
    make = nbformat.v4.new_code_cell if kind == "code" else nbformat.v4.new_markdown_cell
    return make(source, metadata=meta, id=grade_id.replace("_", "-"))


def _autograded_cells(name: str, at: int, q: Autograded) -> list:
    cases = list(q.cases)
    if len(cases) < 2:
        raise QuestionError(
            "give at least two cases: the first for the visible test, the others for the "
            "hidden one; nothing was changed"
        )
    visible = {
        "reference": q.reference,
        "rtol": q.rtol,
        "atol": q.atol,
        "cases": {cases[0]: dict(q.cases[cases[0]])},
    }
    visible["outputs"] = _outputs(q, visible)
    hidden = {
        "cases": {c: dict(q.cases[c]) for c in cases[1:]},
        "weights": dict.fromkeys(cases, 1),
    }
    visible_id, hidden_id = test_id(q.function, VISIBLE), test_id(q.function, HIDDEN)
    text = (
        f"## Question {at} — {q.title} ({_num(q.points)} points)\n\n"
        f"Write `{q.function}`: (the question's statement, for students)."
    )
    return [
        _cell("markdown", f"q{at}_text", text),
        _cell("code", q.function, _answer_source(q), solution=True),
        _cell(
            "code",
            visible_id,
            _record_lines(name, q.function, cases[:1])
            + "\n# The visible asserts: values students can check before they submit.",
            points=q.visible_points,
            check=visible,
        ),
        _cell(
            "code",
            hidden_id,
            _record_lines(name, q.function, cases[1:])
            + "\n# Hidden tests run here when your notebook is graded. Nothing to do in this "
            "cell: the grader\n# runs its own copy of it, so edits here change nothing.",
            points=q.hidden_points,
            check=hidden,
        ),
    ]


def _written_cells(at: int, q: Written) -> list:
    text = (
        f"## Question {at} — {q.title} ({_num(q.points)} points, graded by hand)\n\n"
        "(The question, for students.)\n\nWrite your answer in the cell below in Markdown with "
        "LaTeX ($...$)."
    )
    return [
        _cell("markdown", f"q{at}_text", text),
        _cell("markdown", q.grade_id, "YOUR ANSWER HERE", points=q.points, solution=True),
    ]


def _rubric_section(at: int, q: Written) -> str:
    return (
        f"\n## `{q.grade_id}` — {_num(q.points)} points\n\n**Question (Q{at}).** {q.title}.\n\n"
        "**Model answer.** (to write)\n\n**Marking scheme.**\n\n| Points | Award for |\n"
        f"|---:|---|\n| {_num(q.points)} | (what earns the points) |\n"
    )


def _taken(ps: ProblemSet, ids: list[str]) -> None:
    existing = {nbgrader_meta(c).get("grade_id") for c in ps.source.cells}
    clash = [i for i in ids if i in existing]
    if clash:
        raise QuestionError(
            f"{ps.notebook_name} already has the cell `{clash[0]}`; choose another function "
            "or grade_id; nothing was changed"
        )


def add_question(
    name: str, question: Autograded | Written, at: int | None = None, course=None
) -> int:
    """Add ``question`` to problem set ``name`` of ``course`` as question ``at`` (default: after
    the last); return its number. Raises :class:`QuestionError`, writing nothing, when it
    cannot be added."""
    course = Course.at(course)
    ps = ProblemSet(name, course)
    course.use_code()
    nb = nbformat.read(ps.path, as_version=4)
    at = at or (_headings(nb)[-1][1] + 1 if _headings(nb) else 1)
    index = _insert_index(nb, at)
    if isinstance(question, Autograded):
        cells = _autograded_cells(name, at, question)
        row = f"| {at} | `{question.function}` — {_cell_text(question.title)} | "
        row += f"{_num(question.points)} |"
        auto, hand = question.points, 0.0
    else:
        cells = _written_cells(at, question)
        row = f"| {at} | {_cell_text(question.title)} (by hand) | {_num(question.points)} |"
        auto, hand = 0.0, question.points
    _taken(
        ps,
        [nbgrader_meta(c)["grade_id"] for c in cells if "text" not in nbgrader_meta(c)["grade_id"]],
    )
    try:
        declarations({"cells": [*nb.cells, *cells]})
    except DeclarationError as exc:
        raise QuestionError(f"the question's cases cannot be declared: {exc}") from None
    _renumber_notebook(nb, at)
    _renumber_rules(nb, at)
    _header(nb, at, row, auto, hand)
    nb.cells[index:index] = cells
    rubric = course.rubric(name)
    if rubric.is_file():
        text = renumber(rubric.read_text(encoding="utf-8"), at)
    else:
        text = f"# {name}: marking scheme\n"
    if isinstance(question, Written):
        text += _rubric_section(at, question)
    if rubric.is_file() or isinstance(question, Written):
        rubric.write_text(text, encoding="utf-8")
    nbformat.write(nb, ps.path)
    return at
