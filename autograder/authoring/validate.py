"""Is a problem set sound enough to release? The static checks ``release`` runs first.

A problem set that would mis-grade is refused before anything is written, each refusal naming
the cell or case and what to change:

- **checks**: every autograded cell has a trusted check in ``<course>/checks/<name>.py``
  (``CHECKS``), and every check a cell;
- **cases**: every ``record("case", f, **inputs("<name>", "case"))`` of a graded cell records a
  case under the name of the inputs it passes, of its own problem set; every case a Python check
  reads is recorded, and every case recorded for a Python check is read (a typo in a case name
  would otherwise cost every correct student the cell's points); every function a ``record``
  line calls is defined (an answer renamed after its tests is named at its cell); the declared
  checks' own faults (a case declared but not recorded, an input that cannot be made, ...)
  come from :func:`autograder.checks.inventory.problems`;
- **points**: the points the text states (the header's ``**Points:** A autograded + H graded by
  hand = T``, the table's rows, each ``## Question N — ... (P points)`` heading) agree with the
  cells' nbgrader metadata, and the headings are numbered 1, 2, 3, ... in order;
- **marking scheme**: every written answer has its section
  ``## `grade_id` — P points`` in ``<course>/rubrics/<name>.md``, with the cell's points;
- the cells' nbgrader metadata is checked before these by ``release``
  (:mod:`autograder.authoring.cells`: a grade_id twice, an answer not marked as one, a check on
  a cell that is not graded): when it is wrong, only that is reported, since every count above
  reads it.

:func:`problems` returns the :class:`Problem` list (empty when all is well). The graded cells
come from :attr:`autograder.grading.problemset.ProblemSet.grade_cells`, their cases from
:func:`autograder.checks.record_calls.record_calls`, what the checks read from
:func:`check_reads`; a problem set whose checks are made elsewhere (declared rather than
written) passes its own ``checks`` mapping.
"""

from __future__ import annotations

import ast
import difflib
import importlib
import inspect
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import nbformat

from autograder.checks.answers import Answers
from autograder.checks.declared import DeclarationError, build_checks, declared_cases
from autograder.checks.inventory import problems as inventory_problems
from autograder.checks.record_calls import answer_parameters, record_calls
from autograder.checks.registry import checks_for
from autograder.grading.problemset import ProblemSet
from coursedata.naming import question_of

#: Where a source notebook's setup names the release's table of variants (a string literal).
VARIANTS_PLACEHOLDER = "@VARIANTS@"

__all__ = [
    "Problem",
    "problems",
    "grading_problems",
    "check_reads",
    "nbgrader_meta",
    "question_points",
    "refusal",
]

_HEADER = re.compile(
    r"\*\*Points:\*\*\s*(?P<auto>\d+(?:\.\d+)?)\s+autograded\s*\+\s*"
    r"(?P<hand>\d+(?:\.\d+)?)\s+graded by hand\s*=\s*(?P<total>\d+(?:\.\d+)?)"
)
_TOTAL = re.compile(r"\*\*Points:\*\*\s*(?P<total>\d+(?:\.\d+)?)\s*\.")
_QUESTION = re.compile(
    r"^##\s+Question\s+(?P<n>\d+)\b.*?\((?:[^()]*,\s*)?"
    r"(?P<points>\d+(?:\.\d+)?)\s+points?(?P<hand>,\s*graded by hand)?\)\s*$"
)
_ROW = re.compile(r"^\|\s*(?P<n>\d+)\s*\|.*\|\s*(?P<points>\d+(?:\.\d+)?)\s*\|\s*$")
_RUBRIC = re.compile(r"^##\s+`(?P<gid>[^`]+)`\s+—\s+(?P<points>\d+(?:\.\d+)?)\s+points?\b", re.M)


@dataclass(frozen=True)
class Problem:
    """One reason not to release: where, what is wrong, and what to change."""

    where: str
    what: str
    fix: str

    def __str__(self) -> str:
        return f"{self.where}: {self.what}. {self.fix}"


def nbgrader_meta(cell: nbformat.NotebookNode) -> dict:
    """The cell's nbgrader metadata, the notebook's own mapping (an edit changes the cell), or
    an empty dict when it has none (or not a mapping)."""
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def _num(points: float) -> str:
    return f"{points:g}"


class _Probe(Answers):
    """Answers with nothing recorded that note every case a check asks for."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def inputs(self, case: str) -> dict:
        self.read.add(case)
        return super().inputs(case)

    def get(self, case: str) -> tuple:
        self.read.add(case)
        return super().get(case)


def check_reads(ps: ProblemSet, checks: Mapping[str, Callable]) -> dict[str, set[str]]:
    """For each check, the cases it asks for when nothing was recorded (its inputs or answers).

    A check that gives up at its first missing answer names fewer cases than it reads; the
    string constants of the checks' modules (:func:`_named_in_checks`) make up for that where
    completeness matters."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="validate-") as empty:
        for gid, check in checks.items():
            probe = _Probe(ps.name, empty, declared_cases(ps.source))
            try:
                check(probe)
            except Exception:  # noqa: BLE001 - only what it asked for matters here
                pass
            out[gid] = probe.read
    return out


def _named_in_checks(checks: Mapping[str, Callable]) -> set[str]:
    """Every string constant in the source of the checks' modules."""
    names: set[str] = set()
    for module in {inspect.getmodule(c) for c in checks.values()}:
        if module is None:
            continue
        try:
            tree = ast.parse(inspect.getsource(module))
        except (OSError, TypeError, SyntaxError):
            continue
        names |= {
            n.value
            for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        }
    return names


def _near(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, sorted(known), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def check_problems(ps: ProblemSet, checks: Mapping[str, Callable]) -> list[Problem]:
    """Autograded cells without a check, and checks without a cell."""
    where = ps.course.checks_label(ps.name)
    cells = [c.grade_id for c in ps.grade_cells if c.autograded]
    out = [
        Problem(
            f"{ps.notebook_name}, cell `{gid}`",
            "this autograded cell has no trusted "
            "check, so every student would get a grader error on it",
            "Declare its check in the cell's metadata (course.check), or add "
            f"`{gid!r}: <check function>` to CHECKS in {where}{_near(gid, checks)}.",
        )
        for gid in cells
        if gid not in checks
    ]
    out += [
        Problem(
            f"{where}, CHECKS[{gid!r}]",
            "no autograded cell of the notebook has this grade_id",
            f"Rename it to the cell's grade_id{_near(gid, cells)} or remove it.",
        )
        for gid in checks
        if gid not in cells
    ]
    return out


def case_problems(
    ps: ProblemSet, checks: Mapping[str, Callable], declared: Mapping[str, Callable]
) -> list[Problem]:
    """Cases recorded under another case's inputs or another problem set's, and cases a Python
    check reads that nobody records (or records that no Python check reads); ``declared`` are
    the declared checks (their cases are :func:`declared_problems`')."""
    checks = {gid: check for gid, check in checks.items() if gid not in declared}
    every = record_calls(ps.source)
    recorded = [r for r in every if r.grade_id not in declared]
    names = {r.case for r in recorded}
    out = []
    for r in every:
        where = f"{ps.notebook_name}, cell `{r.grade_id}`, record({r.case!r}, ...)"
        if r.inputs_case is not None and r.inputs_case != r.case:
            out.append(
                Problem(
                    where,
                    f"it records case {r.case!r} with the inputs of case "
                    f"{r.inputs_case!r}, but the check regenerates the inputs of "
                    f"{r.case!r}",
                    "Use the same name in record(...) and inputs(...).",
                )
            )
        if r.inputs_problem_set is not None and r.inputs_problem_set != ps.name:
            out.append(
                Problem(
                    where,
                    f"its inputs are those of {r.inputs_problem_set!r}",
                    f"Write inputs({ps.name!r}, {r.case!r}).",
                )
            )
    reads = check_reads(ps, checks)
    recorded_anywhere = {r.case for r in every}  # a declared cell's case may be read here too
    for gid, read in reads.items():
        for case in sorted(read - recorded_anywhere):
            out.append(
                Problem(
                    f"{ps.course.checks_label(ps.name)}, check `{gid}`",
                    f"it reads case {case!r}, which no cell records, so it would "
                    "take the points of every correct student",
                    f"Record {case!r} in the cell `{gid}`{_near(case, names)}, or "
                    "read the case the cell records.",
                )
            )
    read_any = set().union(*reads.values()) | _named_in_checks(checks) if reads else set()
    for r in recorded:
        if r.case not in read_any:
            out.append(
                Problem(
                    f"{ps.notebook_name}, cell `{r.grade_id}`, record({r.case!r}, ...)",
                    "no check reads this case",
                    f"Read it in the check of `{r.grade_id}`, or fix its name"
                    f"{_near(r.case, read_any)}.",
                )
            )
    return out


def order_problems(ps: ProblemSet) -> list[Problem]:
    """Cases whose declared inputs cannot be passed by position, as ``record`` passes them
    (:func:`coursedata.grading.record`): an input that is not a parameter of the function, or a
    parameter left out before the last one given."""
    params, cases, out = answer_parameters(ps.source), declared_cases(ps.source), []
    answers = {  # the questions' own functions: each answer cell's grade_id
        nbgrader_meta(c).get("grade_id")
        for c in ps.source.cells
        if nbgrader_meta(c).get("solution")
    }
    for r in record_calls(ps.source):
        case = cases.get(r.inputs_case or "")
        if case is None or r.function not in params:
            continue
        question = question_of(r.grade_id)
        if question != r.function and {question, r.function} <= answers:
            out.append(
                Problem(
                    f"{ps.notebook_name}, cell `{r.grade_id}`, case {r.case!r}",
                    f"it records {r.function}, another question's function, in the cell of "
                    f"question `{question}`",
                    f"Record {question} there: record({r.case!r}, {question}, ...).",
                )
            )
            continue
        given, known = set(case.arguments), params[r.function]
        wanted = set(known[: len(given)])
        if given != wanted:
            out.append(
                Problem(
                    f"{ps.notebook_name}, cell `{r.grade_id}`, case {r.case!r}",
                    f"{r.function}({', '.join(known)}) is called by position with "
                    f"{', '.join(sorted(given))}: "
                    + (
                        f"{', '.join(sorted(given - set(known)))} is not one of its parameters"
                        if given - set(known)
                        else f"{', '.join(p for p in known if p in wanted - given)} is left out before "
                        "the last one given"
                    ),
                    argument_fix(given - set(known), [p for p in known if p not in given]),
                )
            )
    return out


def argument_fix(unknown: set[str], missing: list[str]) -> str:
    """What to change for a case whose inputs ``unknown`` are no parameter of the function (its
    parameters ``missing`` not given): rename each to the parameter it is near, when one is."""
    near = {u: m[0] for u in sorted(unknown) if (m := difflib.get_close_matches(u, missing, n=1))}
    if near:
        return (
            ", ".join(f"Rename `{u}` to `{m}`" for u, m in near.items())
            + " in the case's inputs (the course.check that declares the case)."
        )
    return "Declare every parameter up to the last one given (a default as its value)."


def _defined(cell: nbformat.NotebookNode | None) -> list[str]:
    """The top-level functions and classes a code cell defines (none when it does not parse)."""
    try:
        tree = ast.parse(cell.source if cell else "")
    except SyntaxError:
        return []
    return [
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]


def _bound(cell: nbformat.NotebookNode) -> set[str]:
    """Every name a code cell binds: definitions, imports, assignments (none if it does not
    parse)."""
    try:
        tree = ast.parse(cell.source)
    except SyntaxError:
        return set()
    out = set(_defined(cell))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            out |= {(a.asname or a.name).partition(".")[0] for a in node.names}
    return out


def undefined_problems(ps: ProblemSet) -> list[Problem]:
    """Functions the ``record(...)`` lines call that no cell defines (an answer renamed after
    its tests were written), or that only a later cell defines (a test cell moved above its
    answer): named once each, before grading fails every test that calls them."""
    code = [(i, c) for i, c in enumerate(ps.source.cells) if c.cell_type == "code"]
    first: dict[str, int] = {}
    for index, cell in reversed(code):
        first |= dict.fromkeys(_bound(cell), index)
    answers = {
        nbgrader_meta(c).get("grade_id"): c for _, c in code if nbgrader_meta(c).get("solution")
    }
    out = []
    for function in dict.fromkeys(r.function for r in record_calls(ps.source)):
        if function in first:
            continue
        cell = answers.get(function)
        instead = _defined(cell)
        out.append(
            Problem(
                f"{ps.notebook_name}, cell `{function}`" if cell else ps.notebook_name,
                f"the tests record `{function}`, which no cell defines"
                + (f" (its answer cell defines `{'`, `'.join(instead)}`)" if instead else ""),
                f"Rename `{instead[0]}` back to `{function}` there."
                if len(instead) == 1
                else f"Define `{function}` in the answer cell `{function}`.",
            )
        )
    grade_ids = {i: nbgrader_meta(c).get("grade_id", "") for i, c in code}
    late = {
        (index, r.function)
        for index, gid in grade_ids.items()
        for r in record_calls(ps.source)
        if r.grade_id == gid and first.get(r.function, -1) > index
    }
    return out + [
        Problem(
            f"{ps.notebook_name}, cell `{grade_ids[index]}`",
            f"it records `{function}`, which is defined only below it (cell "
            f"`{grade_ids[first[function]] or first[function] + 1}`), so the test runs before "
            "the answer exists",
            f"Move `{grade_ids[index]}` below the cell that defines `{function}`.",
        )
        for index, function in sorted(late)
    ]


def declared_problems(ps: ProblemSet) -> list[Problem]:
    """The declared checks' faults (:func:`autograder.checks.inventory.problems`): a case
    recorded but declared nowhere, declared but never recorded, scored but never recorded, a
    reference that does not resolve, an input that cannot be made, a cell with both kinds of
    check."""
    return [
        Problem(
            f"{ps.notebook_name}, course.check",
            message.removeprefix(f"{ps.name}: "),
            _declared_hint(message),
        )
        for message in inventory_problems(ps)
    ]


def _declared_hint(message: str) -> str:
    """What to change for one of :func:`declared_problems`' messages."""
    if "argument key" in message or "generator returns" in message:
        return (
            'Give each argument once; a key naming several ("X, y") names one argument '
            "per value its generator returns, in order (autograder/checks/declaration.py)."
        )
    tolerance = re.search(r"its ([ar]tol) is .*, not a number of 0 or more", message)
    if tolerance:
        return (
            f'Write it as a JSON number, without quotes ("{tolerance[1]}": 1e-09), in the '
            "cell's course.check."
        )
    reference = re.search(r"reference '([\w.]+):(\w*)'", message)
    if reference:
        return (
            f"Name the reference as 'package.module:function', a function of solutions/ or of "
            f"the course's checks/{_near_function(*reference.groups())}."
        )
    if "only a _hidden cell has weights" in message:
        return (
            "Move the weights to the course.check of the question's _hidden cell (they may name "
            "the visible cell's cases), or remove them: a visible cell is all or nothing."
        )
    if "weights must be" in message or "weights name" in message:
        return (
            "Give weights only to cases declared in the question's visible or hidden cell, each "
            "a positive number (relative: a case's share of the hidden cell's points)."
        )
    if "unknown comparison" in message:
        return (
            'Write "compare" as one of the known comparisons in the course.check that declares '
            "it (coursedata/compare.py says what each compares)."
        )
    if "reads a student's parameter" in message:
        return (
            "Write the value itself there (a seed of its own), or give the problem set "
            "variants (course.variants in the notebook's metadata: the author's guide, "
            "Giving every student their own numbers)."
        )
    if "cannot be made" in message:
        return (
            "Name a generator and the parameters it takes (autograder/checks/declaration.py "
            "lists them)."
        )
    return "Make the declaration and the cell's record(...) lines name the same cases."


def _near_function(module: str, name: str) -> str:
    """`` (did you mean `module:function`?)`` for the closest function of ``module``, or ``""``."""
    try:
        found = vars(importlib.import_module(module))
    except ImportError:
        return ""
    functions = [n for n, v in found.items() if callable(v) and not n.startswith("_")]
    close = difflib.get_close_matches(name, functions, n=1)
    return f" (did you mean `{module}:{close[0]}`?)" if close else ""


def question_points(ps: ProblemSet) -> dict[int, tuple[str, float, bool]]:
    """``{question number: (heading line, points of its graded cells, graded by hand)}``: a
    question owns the cells from its ``## Question N`` heading to the next ``## `` heading."""
    out: dict[int, tuple[str, float, bool]] = {}
    current = None
    for cell in ps.source.cells:
        first = cell.source.lstrip().splitlines()[0] if cell.source.strip() else ""
        if cell.cell_type == "markdown" and first.startswith("## "):
            m = re.match(r"^##\s+Question\s+(\d+)\b", first)
            current = int(m.group(1)) if m else None
            if current is not None:
                out[current] = (first, 0.0, False)
        meta = nbgrader_meta(cell)
        if current is not None and meta.get("grade"):
            heading, points, hand = out[current]
            manual = cell.cell_type != "code" or bool(meta.get("solution"))
            out[current] = (heading, points + float(meta.get("points", 0)), hand or manual)
    return out


def points_problems(ps: ProblemSet) -> list[Problem]:
    """Points the text states that disagree with the cells' metadata."""
    nb = ps.notebook_name
    auto = sum(c.points for c in ps.grade_cells if c.autograded)
    hand = sum(c.points for c in ps.grade_cells if not c.autograded)
    intro = ps.source.cells[0].source if ps.source.cells else ""
    out = []
    header = _HEADER.search(intro)
    if header:
        for key, actual, what in (
            ("auto", auto, "autograded"),
            ("hand", hand, "graded by hand"),
            ("total", auto + hand, "in all"),
        ):
            if float(header[key]) != actual:
                out.append(
                    Problem(
                        f"{nb}, the header's **Points:** line",
                        f"it says {header[key]} {what}, the cells' metadata {_num(actual)}",
                        f"Write {_num(auto)} autograded + "
                        f"{_num(hand)} graded by hand = {_num(auto + hand)}, or "
                        "change the cells' points.",
                    )
                )
    elif (total := _TOTAL.search(intro)) and float(total["total"]) != auto + hand:
        out.append(
            Problem(
                f"{nb}, the header's **Points:** line",
                f"it says {total['total']}, the cells' metadata {_num(auto + hand)}",
                f"Write {_num(auto + hand)}, or change the cells' points.",
            )
        )
    questions = question_points(ps)
    rows = [row for line in intro.splitlines() if (row := _ROW.match(line.strip()))]
    gap = _numbering_problem(ps, [int(r["n"]) for r in rows])
    out += gap
    for row in rows if not gap else []:
        n, stated = int(row["n"]), float(row["points"])
        if n not in questions:
            out.append(
                Problem(
                    f"{nb}, the table's row {n}",
                    f"there is no ## Question {n} heading",
                    "Remove the row or add the question.",
                )
            )
        elif stated != questions[n][1]:
            out.append(
                Problem(
                    f"{nb}, the table's row {n}",
                    f"it says {_num(stated)} points, "
                    f"the cells of question {n} carry {_num(questions[n][1])}",
                    f"Write {_num(questions[n][1])} there, or change the cells' points.",
                )
            )
    for heading, points, manual in questions.values():
        m = _QUESTION.match(heading)
        if not m:
            if points:
                out.append(
                    Problem(
                        f"{nb}, heading {heading!r}",
                        "it states no points",
                        f"End it with ({_num(points)} points"
                        f"{', graded by hand' if manual else ''}).",
                    )
                )
            continue
        if float(m["points"]) != points:
            out.append(
                Problem(
                    f"{nb}, heading {heading!r}",
                    f"it says {m['points']} points, its cells carry {_num(points)}",
                    f"Write ({_num(points)} points) there, or change the cells' points.",
                )
            )
        if bool(m["hand"]) != manual:
            out.append(
                Problem(
                    f"{nb}, heading {heading!r}",
                    "it says graded by hand"
                    if m["hand"]
                    else "its answer is graded by hand but the heading does not say so",
                    "Say ', graded by hand' exactly when the question's answer is written.",
                )
            )
    return out


def _heading_numbers(ps: ProblemSet) -> list[int]:
    """The numbers of the ``## Question N`` headings, in the notebook's order."""
    text = "\n".join(c.source for c in ps.source.cells if c.cell_type == "markdown")
    return [int(n) for n in re.findall(r"(?m)^##\s+Question\s+(\d+)\b", text)]


def _numbering_problem(ps: ProblemSet, rows: list[int]) -> list[Problem]:
    """Question headings not numbered 1, 2, 3, ... in order (a number skipped or repeated by
    hand): named once, with the renumbering, rather than as the table's rows each missing a
    heading."""
    numbers = _heading_numbers(ps)
    wanted = list(range(1, len(numbers) + 1))
    if numbers == wanted:
        return []
    moves = ", ".join(f"## Question {n} → {w}" for n, w in zip(numbers, wanted) if n != w)
    table = " (as the table does)" if sorted(rows) == wanted else ""
    return [
        Problem(
            f"{ps.notebook_name}, the ## Question headings",
            f"they are numbered {', '.join(map(str, numbers))}, not 1 to {len(numbers)} in order",
            f"Number them 1 to {len(numbers)}{table}: {moves}.",
        )
    ]


def _unread_heading(text: str, gid: str) -> str:
    """The first ``## `gid` ...`` heading line of ``text`` (``""`` when there is none)."""
    match = re.search(rf"(?m)^##\s*`{re.escape(gid)}`.*$", text)
    return match[0].strip() if match else ""


def rubric_problems(ps: ProblemSet) -> list[Problem]:
    """Written answers without a marking-scheme section, or with other points there."""
    written = [c for c in ps.grade_cells if not c.autograded]
    path = ps.course.rubric(ps.name)
    where = f"rubrics/{ps.name}.md"
    if not written:
        return []
    if not path.is_file():
        return [
            Problem(
                where,
                "the marking scheme is missing, and the problem set has written "
                f"answers ({', '.join(c.grade_id for c in written)})",
                f"Write {path} with a section ## `<grade_id>` — N points per answer.",
            )
        ]
    text = path.read_text()
    sections = {m["gid"]: float(m["points"]) for m in _RUBRIC.finditer(text)}
    orphans = sorted(set(sections) - {c.grade_id for c in written})
    rename = (
        f" (or rename ## `{orphans[0]}`, which is no written answer's)" if len(orphans) == 1 else ""
    )
    out = []
    for cell in written:
        heading = _unread_heading(text, cell.grade_id)
        if cell.grade_id not in sections and heading:
            out.append(
                Problem(
                    where,
                    f"the heading “{heading}” is not read as the section of `{cell.grade_id}`",
                    f"Write it ## `{cell.grade_id}` — {_num(cell.points)} points "
                    "(an em dash, —, between the name and the points).",
                )
            )
        elif cell.grade_id not in sections:
            out.append(
                Problem(
                    where,
                    f"the written answer `{cell.grade_id}` has no section",
                    f"Add ## `{cell.grade_id}` — {_num(cell.points)} points with its "
                    f"model answer and marking scheme{rename}.",
                )
            )
        elif sections[cell.grade_id] != cell.points:
            out.append(
                Problem(
                    f"{where}, ## `{cell.grade_id}`",
                    f"it says "
                    f"{_num(sections[cell.grade_id])} points, the cell carries "
                    f"{_num(cell.points)}",
                    "Make them agree.",
                )
            )
    return out


def grading_problems(ps: ProblemSet, checks: Mapping[str, Callable] | None = None) -> list[Problem]:
    """The reasons ``ps`` would score answers wrongly: a graded cell without a check, a case
    recorded, declared or read where the others do not match, a declaration that cannot be read
    or evaluated (``checks`` as in :func:`problems`)."""
    try:
        declared = build_checks(ps.source)
    except DeclarationError:  # named by declared_problems; the other checks need the declarations
        return declared_problems(ps)
    if checks is None:
        try:
            checks = checks_for(ps)
        except ModuleNotFoundError:
            checks = {}
    return [
        *check_problems(ps, checks),
        *case_problems(ps, checks, declared),
        *declared_problems(ps),
        *order_problems(ps),
        *undefined_problems(ps),
    ]


def problems(
    ps: ProblemSet, checks: Mapping[str, Callable] | None = None, rubric: bool = True
) -> list[Problem]:
    """Every reason ``ps`` would mis-grade (see the module docstring); empty when it is sound.

    Parameters
    ----------
    ps : ProblemSet
    checks : mapping of grade_id to check, optional
        The trusted checks (default: :func:`autograder.checks.registry.checks_for`, the declared
        ones and ``CHECKS`` of ``<course>/checks/<name>.py``; a problem set without that module
        has no checks, so each of its autograded cells is a problem).
    rubric : bool
        Also check the marking scheme (the self-check does, and ``release`` when the course has
        a marking scheme for the problem set: a written answer without its section would be
        graded by hand with no scheme to grade it by; a course may keep its schemes elsewhere).

    A problem set with per-student variants is judged on one sample student's declarations
    (:func:`autograder.authoring.graded.sample_variants`).
    """
    from autograder.authoring.graded import sample_variants

    ps.course.use_code()
    ps = sample_variants(ps)[0]
    return [
        *grading_problems(ps, checks),
        *points_problems(ps),
        *(rubric_problems(ps) if rubric else []),
    ]


def refusal(ps: ProblemSet, found: Sequence[Problem | str]) -> str:
    """The message of a release refused for ``found`` (the static checks' problems, or what
    grading the reference showed)."""
    lines = "\n".join(f"  - {p}" for p in found)
    return (
        f"{ps.name} would mis-grade, so it was not released ({len(found)} problem"
        f"{'s' if len(found) != 1 else ''}; nothing published was changed):\n{lines}"
    )
