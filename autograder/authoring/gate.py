"""The release gate: what ``release`` checks beyond :mod:`autograder.authoring.validate`.

Each check is cheap (seconds for a whole problem set: no kernel, no nbgrader run) and each
refusal is a :class:`~autograder.authoring.validate.Problem` naming the cell or case and the fix:

- **markers** (:func:`marker_problems`): the student's cell is made here as nbgrader makes it
  (its own ``ClearSolutions`` and ``ClearHiddenTests``, with the course's configuration) and
  compared with the source cell. A misspelt or unmatched ``### BEGIN/END SOLUTION`` or
  ``HIDDEN TESTS`` line is named (nbgrader would stop with a traceback naming no cell, or
  silently replace the whole cell); an answer cell whose release loses a function the source
  defines (markers forgotten: the student reads only ``# YOUR CODE HERE``) is refused; and a
  released line that is a line of the cell's solution region, of the declared reference's source,
  a statement left in a stub's body beside ``raise NotImplementedError()`` (``END SOLUTION``
  moved up), or one above the stub that computes (``BEGIN SOLUTION`` moved down; a line given on
  purpose ends with :data:`GIVEN`) is a solution line students would read;
- **pairs** (:mod:`autograder.authoring.pairing`): an answer cell whose grade_id was changed
  away from its tests' (``QUESTION_visible``, ``QUESTION_hidden``) is named with the tests it lost;
- **names** (:func:`unbound_problems`): a reference answer that uses a name no cell defines
  (a helper of the reference's module, copied with its body by ``add-question``) raises
  NameError on every case;
- **rules** (:func:`rule_problems`): what the reference answers use (a solution cell's names,
  with the given cells' imports, and the declared reference functions' own imports) must be
  allowed by the rules in force for that answer (:mod:`coursedata.rules`): otherwise the
  reference scores full marks and a student who writes the same loses the points;
- **reference** (:func:`reference_problems`): the declared reference is called on every declared
  case's inputs, its outputs are recorded as the kernel records a student's
  (:func:`coursedata.grading.record`), and every check whose cases are all declared must give
  them full marks; a case whose inputs make the reference raise, a reference that is a class, and
  a tolerance that cannot hold across machines (zero, tighter than rounding, or not holding
  :data:`MARGIN` times over the reference's move under rounding of its inputs) are refused, and
  so is one so loose that a wrong answer passes (:mod:`autograder.authoring.loose`);
- **repeats** (:func:`repeat_problems`): a hidden case identical to a visible one (the same
  reference on the same inputs) gives no new evidence and is refused;
- **leaks** (:func:`leak_problems`): a number of the student's notebook (its text, or a line left
  outside a cell's hidden tests) that states a hidden case's expected value, to
  :data:`LEAK_DIGITS` significant digits or more, is refused: students would read the answer;
- **marking scheme** (:func:`scheme_problems`): the points table of each section of
  ``<course>/rubrics/<name>.md`` adds up to the section's points.

The deeper checks that need a kernel (the notebook's own reference answers graded, generic wrong
answers, mutants) stay in ``check-problem-set`` (:mod:`autograder.authoring.selfcheck`).
"""

from __future__ import annotations

import ast
import copy
import difflib
import inspect
import os
import re
import tempfile
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from unittest.mock import patch

import nbformat
import numpy as np

from autograder.authoring.inherited import Fault, said_once
from autograder.authoring.loose import loose_tolerance
from autograder.authoring.pairing import pairing_problems
from autograder.authoring.validate import (
    VARIANTS_PLACEHOLDER,
    Problem,
    argument_fix,
    check_reads,
    nbgrader_meta,
)
from autograder.checks import load_checks
from autograder.checks.answers import Answers
from autograder.checks.declaration import (
    Declaration,
    DeclarationError,
    case_inputs,
    declarations,
    generate_case,
    reference_of,
    resolve,
)
from autograder.checks.declared import build_checks
from autograder.grading.problemset import ProblemSet
from coursedata.grading import RESULTS_ENV, record
from coursedata.naming import HIDDEN, VISIBLE, question_of, test_id, test_kind

__all__ = [
    "gate_problems",
    "marker_problems",
    "released_cell",
    "rule_problems",
    "reference_problems",
    "unbound_problems",
    "repeat_problems",
    "scheme_problems",
    "weight_problems",
    "LEAKS",
    "ROUNDING",
]

#: nbgrader's markers, as the course's nbgrader_config.py leaves them (nbgrader's defaults).
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")

#: Lines of the source that must not reach students.
LEAKS = re.compile(
    r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|END HIDDEN TESTS|"
    r"coursedata\.grading|\brecord\(|import solutions|from solutions"
)

#: The smallest relative tolerance that holds across machines: a result computed with another
#: BLAS or summation order differs from the reference by many units in the last place (about
#: 1e-16 each), so a tolerance below this fails a correct answer on another machine. This
#: course's references, run under the other OpenBLAS kernels of tests/blas.py, moved by up to
#: 4.2e-13 (relative, element by element: ps6's logistic regression after 300 gradient steps; a
#: rank-k approximation 1.3e-13), under this floor; above it each case's own move is measured
#: (:func:`_moved`, held :data:`MARGIN` times over). Integer-valued inputs are not jittered
#: (:func:`_jittered`), so for them this floor is the only check.
ROUNDING = 1e-12

#: Comparisons with a tolerance (``integer`` is exact by design).
_TOLERANT = {
    "close",
    "log",
    "relative",
    "log_probability_rows",
    "rows_up_to_sign",
    "columns_up_to_sign",
    "rows_up_to_constant",
    "permutation",
}


def _label(cell: nbformat.NotebookNode, index: int) -> str:
    gid = nbgrader_meta(cell).get("grade_id")
    return f"cell `{gid}`" if gid else f"cell {index + 1}"


# --- markers ---------------------------------------------------------------------------------


def _misspelt_marker(line: str) -> str | None:
    """The marker a comment line was probably meant to be, when it is not one nbgrader sees."""
    text = line.strip()
    if not text.startswith("#") or any(m in text for m in MARKERS):
        return None
    words = " ".join(text.lstrip("#").split()).upper()
    close = difflib.get_close_matches(words, MARKERS, n=1, cutoff=0.8)
    return close[0] if close else None


def released_cell(cell: nbformat.NotebookNode) -> str:
    """The source of ``cell`` in the student's notebook, made by nbgrader's own preprocessors.

    Raises
    ------
    RuntimeError
        nbgrader's refusal (a BEGIN without its END, nested regions, ...).
    """
    from nbgrader.preprocessors import ClearHiddenTests, ClearSolutions

    cell = copy.deepcopy(cell)
    clear = ClearSolutions()
    stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    clear.code_stub = stub
    replaced = clear._replace_solution_region(cell, "python")
    if nbgrader_meta(cell).get("solution") and not replaced:
        cell.source = stub["python"] if cell.cell_type == "code" else clear.text_stub
    ClearHiddenTests()._remove_hidden_test_region(cell)
    return cell.source


def _defs(source: str) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The top-level functions and classes of ``source`` (empty when it does not parse)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    return {
        n.name: n
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)


def _is_stub(node: ast.stmt) -> bool:
    """``raise NotImplementedError()``, nbgrader's stub."""
    return isinstance(node, ast.Raise) and "NotImplementedError" in ast.unparse(node)


def _stub_leftovers(released: str) -> list[str]:
    """Statements of a stub's function body below the stub (``raise NotImplementedError()``):
    code no student's answer reaches, left there by an ``END SOLUTION`` moved up. Lines above
    the stub may be code given to students; they are a leak only when they are the solution's
    (:func:`_answer_problems`)."""
    out = []
    for node in _defs(released).values():
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        stubs = [i for i, s in enumerate(node.body) if _is_stub(s)]
        if stubs:
            out += [
                ast.get_source_segment(released, s) or ast.unparse(s)
                for s in node.body[stubs[-1] + 1 :]
            ]
    return out


#: Calls a line given above a stub may make without computing the answer: type conversions.
_CONVERSIONS = {"asarray", "array", "asanyarray", "atleast_1d", "atleast_2d", "float", "int"}

#: The comment that marks a line above ``### BEGIN SOLUTION`` as given to students on purpose.
GIVEN = "# given"


def _computes(node: ast.stmt) -> bool:
    """Whether ``node`` does arithmetic or calls anything but a type conversion."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.BinOp | ast.AugAssign | ast.Compare):
            return True
        if isinstance(sub, ast.Call):
            name = ast.unparse(sub.func).rpartition(".")[2]
            if name not in _CONVERSIONS:
                return True
    return False


def _given_computations(released: str) -> list[str]:
    """Statements of a stub's function body above the stub that compute (``### BEGIN
    SOLUTION`` moved down: the solution's first lines given to every student), unless their
    line ends with :data:`GIVEN`."""
    lines = released.splitlines()
    out = []
    for node in _defs(released).values():
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        stubs = [i for i, s in enumerate(node.body) if _is_stub(s)]
        for statement in node.body[: stubs[0]] if stubs else []:
            last = lines[(statement.end_lineno or statement.lineno) - 1]
            if _is_docstring(statement) or last.rstrip().endswith(GIVEN):
                continue
            if _computes(statement):
                out.append(ast.get_source_segment(released, statement) or ast.unparse(statement))
    return out


def _code_lines(source: str) -> set[str]:
    """The stripped lines of ``source`` that are code (no blank line, comment or bare bracket)."""
    return {
        s
        for line in source.splitlines()
        if (s := line.strip()) and not s.startswith("#") and len(s) > 3 and not _trivial(s)
    }


def _trivial(line: str) -> bool:
    return line.startswith(("def ", "class ", '"""', "'''", "@")) or bool(
        re.fullmatch(r"[\])}\s,:]*|return|pass|else:|try:|raise NotImplementedError\(\)", line)
    )


def _solution_lines(source: str) -> set[str]:
    """The code lines between the cell's ``BEGIN SOLUTION`` and ``END SOLUTION`` markers."""
    inside, lines = False, []
    for line in source.splitlines():
        if MARKERS[0] in line:
            inside = True
        elif MARKERS[1] in line:
            inside = False
        elif inside:
            lines.append(line)
    return _code_lines("\n".join(lines))


def _reference_lines(ps: ProblemSet) -> dict[str, set[str]]:
    """``{function name: code lines of its body}`` of every declared reference function."""
    out: dict[str, set[str]] = {}
    for ref in _references(ps):
        try:
            function = resolve(ref)
            source = textwrap.dedent(inspect.getsource(function))
        except (DeclarationError, OSError, TypeError):
            continue  # named by reference_problems
        definition = ast.parse(source).body[0]
        assert isinstance(definition, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef), (
            "the source of a function or a class is its definition"
        )
        body = [n for n in definition.body if not _is_docstring(n)]
        out[ref.partition(":")[2]] = _code_lines(
            "\n".join(ast.get_source_segment(source, n) or "" for n in body)
        )
    return out


def _references(ps: ProblemSet) -> list[str]:
    try:
        found = declarations(ps.source)
    except DeclarationError:
        return []
    return list(dict.fromkeys(r for d in found.values() for r in d.references))


def marker_problems(ps: ProblemSet) -> list[Problem]:
    """Misspelt or unmatched markers, answer cells whose release loses a function, and solution
    lines left in the release (see the module docstring)."""
    nb = ps.notebook_name
    references = _reference_lines(ps)
    out: list[Problem] = []
    for index, cell in enumerate(ps.source.cells):
        if cell.cell_type != "code":
            continue
        where = f"{nb}, {_label(cell, index)}"
        for line in cell.source.splitlines():
            meant = _misspelt_marker(line)
            if meant:
                out.append(
                    Problem(
                        where,
                        f"the line {line.strip()!r} is no marker nbgrader sees",
                        f"Write it as ### {meant}, exactly.",
                    )
                )
        try:
            released = released_cell(cell)
        except RuntimeError as exc:
            out.append(
                Problem(
                    where,
                    f"nbgrader cannot make the student's cell: {exc}",
                    "Give each ### BEGIN SOLUTION (or BEGIN HIDDEN TESTS) its own END line "
                    "below it, one region at a time.",
                )
            )
            continue
        leak = LEAKS.search(released)
        if leak:
            out.append(
                Problem(
                    where,
                    f"the student's cell keeps {leak.group(0)!r}",
                    "Put that line between ### BEGIN/END SOLUTION or ### BEGIN/END HIDDEN TESTS.",
                )
            )
        if nbgrader_meta(cell).get("solution"):
            out += _answer_problems(where, cell.source, released, references)
    return out


def _answer_problems(
    where: str, source: str, released: str, references: Mapping[str, set[str]]
) -> list[Problem]:
    """What is wrong with the student's version ``released`` of the answer cell ``source``."""
    broken = _syntax_error(released)
    if broken and not _syntax_error(source):
        return [
            Problem(
                where,
                f"the student's cell is not Python ({broken}), so no student's answer can run",
                "Put ### BEGIN SOLUTION and ### END SOLUTION around whole statements, at the "
                "indentation of the function's body.",
            )
        ]
    lost = [n for n in _defs(source) if n not in _defs(released)]
    out = [
        Problem(
            where,
            f"the student's cell loses `{_header(source, name)}` and its docstring: nbgrader "
            "replaces a solution cell without ### BEGIN SOLUTION / ### END SOLUTION by "
            "`# YOUR CODE HERE` alone",
            f"Put ### BEGIN SOLUTION below the docstring of `{name}` and ### END SOLUTION "
            "after its last line, indented as its body.",
        )
        for name in lost
    ]
    solution = _solution_lines(source) | set().union(
        *(lines for name, lines in references.items() if name in _defs(source))
    )
    leaked = list(dict.fromkeys([*_stub_leftovers(released), *_given_computations(released)]))
    leaked += [
        s for line in released.splitlines() if (s := line.strip()) in solution and s not in leaked
    ]
    out += [
        Problem(
            where,
            f"the student's cell keeps the solution line `{line.splitlines()[0]}`",
            f"{_marker_move(source, line)}, so that the student's cell keeps only the "
            "signature, the docstring and what students are given (a line given on purpose "
            f"above ### BEGIN SOLUTION ends with `{GIVEN}`).",
        )
        for line in leaked
    ]
    return out


def _marker_move(source: str, line: str) -> str:
    """The marker to move so that the solution line ``line`` of the answer cell ``source`` is
    cleared: BEGIN when the line stands above the cell's first ``### BEGIN SOLUTION`` (BEGIN was
    moved down), END when it stands below its last ``### END SOLUTION`` (END was moved up)."""
    lines = [ln.strip() for ln in source.splitlines()]
    at = [i for i, ln in enumerate(lines) if ln == line.splitlines()[0].strip()]
    begins = [i for i, ln in enumerate(lines) if "### BEGIN SOLUTION" in ln]
    ends = [i for i, ln in enumerate(lines) if "### END SOLUTION" in ln]
    if begins and any(i < begins[0] for i in at):
        return "Move ### BEGIN SOLUTION above it"
    if ends and any(i > ends[-1] for i in at):
        return "Move ### END SOLUTION below it"
    return "Move ### END SOLUTION below it (or ### BEGIN SOLUTION above it)"


def _names_bound(tree: ast.AST) -> set[str]:
    """Every name ``tree`` binds anywhere: definitions, parameters, imports, assignments,
    loop and ``except ... as`` names."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            out.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            out.update(node.names)
    return out | set(_imports(tree))


def _parsed(cell: nbformat.NotebookNode) -> ast.AST | None:
    """The cell's code, its IPython lines (``%magic``, ``!command``) left out; None when it is
    not Python."""
    lines = cell.source.splitlines()
    code = "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in lines)
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def unbound_problems(ps: ProblemSet) -> list[Problem]:
    """Names a reference answer calls or reads that no cell of the notebook binds and Python
    does not provide (a helper of the reference's module, copied with its body by
    ``add-question``): the notebook's own answer raises NameError on every case."""
    import builtins

    trees = [
        (i, c, t)
        for i, c in enumerate(ps.source.cells)
        if c.cell_type == "code"
        if (t := _parsed(c)) is not None
    ]
    bound = set(dir(builtins)).union(*(_names_bound(t) for _, _, t in trees))
    out = []
    for index, cell, tree in trees:
        if not nbgrader_meta(cell).get("solution"):
            continue
        missing = sorted(
            {
                n.id
                for n in ast.walk(tree)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            }
            - bound
        )
        if missing:
            names = ", ".join(f"`{n}`" for n in missing)
            out.append(
                Problem(
                    f"{ps.notebook_name}, {_label(cell, index)}",
                    f"its reference answer uses {names}, which no cell of the notebook defines, "
                    "so it raises NameError on every case (a helper of the reference's module "
                    "does not come with its body)",
                    f"Write the answer without {names} (numpy's own calls), or define "
                    f"{'it' if len(missing) == 1 else 'them'} in the answer cell.",
                )
            )
    return out


def _syntax_error(source: str) -> str | None:
    """Why ``source`` is not Python (its first error and the line), or None."""
    try:
        ast.parse(source)
    except SyntaxError as exc:
        return f"{exc.msg}, at `{(exc.text or '').strip()}`"
    return None


def _header(source: str, name: str) -> str:
    line = next(ln for ln in source.splitlines() if re.match(rf"\s*(def|class)\s+{name}\b", ln))
    return line.strip()


# --- rules -----------------------------------------------------------------------------------


def _imports(tree: ast.AST) -> dict[str, str]:
    """``{local name: dotted name}`` bound by the import statements of ``tree``."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:  # `import a.b` binds `a`; `import a.b as c` binds `c` to a.b
                out[a.asname or a.name.partition(".")[0]] = (
                    a.name if a.asname else a.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _dotted(node: ast.expr) -> list[str] | None:
    """``["np", "linalg", "solve"]`` for ``np.linalg.solve``; None for anything but a chain."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return [node.id, *reversed(parts)]


def _uses(tree: ast.AST, names: Mapping[str, str]) -> Iterator[str]:
    """The dotted names ``tree`` imports or reaches through the imported ``names``."""
    own = _imports(tree)
    yield from own.values()
    names = {**names, **own}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute | ast.Name):
            chain = _dotted(node)
            if chain and chain[0] in names:
                yield ".".join([names[chain[0]], *chain[1:]])


def _given_imports(ps: ProblemSet) -> dict[str, str]:
    """What the code cells given to the student (the setup, locked or not: every code cell but
    the answers) import, ``{local name: dotted name}``: the reference answers run after them."""
    out: dict[str, str] = {}
    for cell in ps.source.cells:
        if cell.cell_type == "code" and not nbgrader_meta(cell).get("solution"):
            try:
                out |= _imports(ast.parse(cell.source))
            except SyntaxError:
                continue
    return out


def _forbidden(ps: ProblemSet, answer: str, used: Iterator[str]) -> dict[str, str]:
    """``{dotted name: the forbid entry}`` for each of ``used`` the rules of ``answer`` forbid."""
    policy = ps.rules.policy(answer) if ps.rules else None
    out: dict[str, str] = {}
    for name in used if policy else ():
        entry = policy.forbidding(name) if policy else None
        if entry and not any(name.startswith(n + ".") for n in out):
            out.setdefault(name, entry)
    return out


def _rule_fix(name: str) -> str:
    return (
        f'Allow it where the rules are declared (metadata course.rules: "{name}" in allow, and '
        "the statement saying so), or write the reference without it."
    )


def rule_problems(ps: ProblemSet) -> list[Problem]:
    """Reference answers (solution cells and declared references) that use what the rules
    forbid for their question."""
    if ps.rules is None:
        return []  # named by autograder.grading.rulebook.declaration_problems
    given = _given_imports(ps)
    out = []
    for index, cell in enumerate(ps.source.cells):
        meta = nbgrader_meta(cell)
        if cell.cell_type != "code" or not meta.get("solution"):
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue  # the markers' problem, named by marker_problems
        for name, entry in _forbidden(ps, meta.get("grade_id", ""), _uses(tree, given)).items():
            origin = " (imported by a given cell)" if name in given.values() else ""
            out.append(
                Problem(
                    f"{ps.notebook_name}, {_label(cell, index)}",
                    f"its reference answer uses `{name}`{origin}, which the rules forbid "
                    f"(`{entry}`): the reference would score full marks and a student who "
                    "writes the same would lose the points",
                    _rule_fix(name),
                )
            )
    return out


# --- the reference on the declared inputs ----------------------------------------------------


def reference_problems(ps: ProblemSet) -> list[Problem]:
    """Run every declared reference on its cases' inputs, record what it returns as a student's
    answer, and grade those answers with every check whose cases all have a reference."""
    try:
        found = declarations(ps.source)
    except DeclarationError:
        return []  # named by validate.declared_problems
    cases = {c: case for d in found.values() for c, case in d.cases.items()}
    nb = ps.notebook_name
    out: list[Problem] = []
    with tempfile.TemporaryDirectory(prefix=f"gate-{ps.name}-") as folder:
        recorded = set()
        for name, case in cases.items():
            where = f"{nb}, cell `{case.cell}`, case {name!r}"
            try:
                problem = _run_reference(where, name, case, cases, folder)
            except DeclarationError:
                continue  # named by validate.declared_problems; no check can grade the case
            if problem is None:
                recorded.add(name)
            else:
                out.append(problem)
        out += _tolerance_problems(ps, found, cases, recorded, folder)
        out += _graded_problems(ps, recorded, folder)
    return out


def _run_reference(where: str, name: str, case, cases, folder: str) -> Problem | None:
    """Call the reference of ``case`` on its inputs and record the result in ``folder``.

    Raises
    ------
    DeclarationError
        The reference or the inputs cannot be had (named by ``validate.declared_problems``).
    """
    if case.reference is None:
        return None
    reference = reference_of(case)  # a DeclarationError is the caller's to pass over
    inputs = case_inputs(cases, name)
    if inspect.isclass(reference):
        return Problem(
            where,
            f"the reference `{case.reference}` is a class, so calling it on the case's "
            "inputs does not give the expected values",
            'Declare how to use it, next to the reference: "fitted": {"fit": [the '
            'arguments fit takes], "returns": [the fitted attributes or {method: '
            "[arguments]} the student's function returns]} (see the author's guide), or name "
            "a function that returns those values.",
        )
    try:
        result = reference(**inputs)
    except Exception as exc:  # noqa: BLE001 - every student's run would be compared with this
        given = _nan_inputs(inputs)
        return Problem(
            where,
            (f"its input {', '.join(f'`{k}`' for k in given)} holds NaN, and " if given else "")
            + f"the reference `{case.reference}` raises {type(exc).__name__}: {exc} on this "
            "case's inputs, so the case can never be passed",
            _renamed(reference, inputs)
            or "Change the case's inputs in the cell's course.check (a seed, a size, a class "
            "that gets no point), or make the reference handle them.",
        )
    with patch.dict(os.environ, {RESULTS_ENV: folder}):
        record(name, lambda: result)
    error = Path(folder, f"{name}.error.json")
    if error.is_file():
        return Problem(
            where,
            f"the reference `{case.reference}` returns something the grader cannot record "
            f"({error.read_text()[:200]})",
            "Return numbers or numeric arrays (a tuple of them for several outputs).",
        )
    return _nan_problem(where, case, inputs, result)


def _renamed(reference, inputs: Mapping) -> str | None:
    """The renaming of the case's inputs that the reference takes no parameter of (a misspelt
    argument, ``respp`` for ``resp``), when each is near one of its parameters."""
    try:
        params = list(inspect.signature(reference).parameters)
    except (TypeError, ValueError):
        return None
    unknown = set(inputs) - set(params)
    fix = argument_fix(unknown, [p for p in params if p not in inputs]) if unknown else ""
    return fix if fix.startswith("Rename") else None


def _outputs_of(case, result) -> list:
    """The reference's ``result`` as one value per declared output (as the checks read it)."""
    values = (
        list(result) if len(case.outputs) > 1 and isinstance(result, tuple | list) else [result]
    )
    return values if len(values) == len(case.outputs) else []


def _nan_inputs(inputs: Mapping) -> list[str]:
    """The arguments of ``inputs`` holding a NaN."""
    out = []
    for key, value in inputs.items():
        try:
            if np.isnan(np.asarray(value, dtype=float)).any():
                out.append(key)
        except (TypeError, ValueError):
            continue
    return out


def _nan_problem(where: str, case, inputs: Mapping, result) -> Problem | None:
    """A reference that returns NaN for an output: no answer can match it (every comparison
    wants the expected values finite, or ``-inf`` for a log-probability)."""
    for output, value in zip(case.outputs, _outputs_of(case, result)):
        try:
            nan = bool(np.isnan(np.asarray(value, dtype=float)).any())
        except (TypeError, ValueError):
            continue
        if nan:
            given = _nan_inputs(inputs)
            cause = (
                f"its input {', '.join(f'`{k}`' for k in given)} holds NaN, and " if given else ""
            )
            return Problem(
                where,
                f"{cause}the reference `{case.reference}` returns NaN for {output.name!r}, "
                "which no student's answer can match, so the case can never be passed",
                "Change the case's inputs in the cell's course.check (a NaN there is a number "
                "the data never holds; a seed, a size or a class that makes the reference "
                "undefined), or make the reference handle them.",
            )
    return None


def _tolerance_problems(
    ps: ProblemSet,
    found: Mapping[str, Declaration],
    cases: Mapping,
    recorded: set[str],
    folder: str,
) -> list[Problem]:
    """Tolerances that are zero, tighter than rounding at the reference's values, so loose that
    a wrong answer passes (each said once, for the cell that states the tolerance:
    :func:`autograder.authoring.inherited.said_once`), or tighter than what the reference's own
    values move when its inputs move by rounding (:func:`_moved`)."""
    out: list[Problem] = []
    faults: list[Fault] = []  # said once below, for the cell that states the tolerance
    loose: set[tuple[str, str]] = set()  # (cell, output) found loose, on its first case
    for gid, declaration in found.items():
        for name, case in declaration.cases.items():
            saved = Path(folder, f"{name}.npz")
            if name not in recorded or not saved.is_file():
                continue
            with np.load(saved) as z:
                values = [z[k] for k in sorted(z.files, key=lambda k: (len(k), k))]
            moved = _moved(case, cases, name)
            for output, value, other in zip(case.outputs, values, moved or [None] * len(values)):
                problem = _tolerance_problem(output, value)
                if problem:
                    kind = "zero" if "is zero" in problem else "rounding"
                    faults.append(Fault(gid, name, output.name, kind, problem, ROUNDING_FIX))
                    continue
                if (gid, output.name) not in loose:
                    too_loose = loose_tolerance(output, value, name)
                    if too_loose:
                        loose.add((gid, output.name))
                        faults.append(Fault(gid, name, output.name, "loose", *too_loose))
                        continue
                if other is not None:
                    where = f"cell `{gid}`, case {name!r}, output {output.name!r}"
                    out += _moved_problem(where, output, value, other)
    return said_once(ps.source, ps.notebook_name, faults) + out


#: What to change for a tolerance that is zero or tighter than rounding.
ROUNDING_FIX = (
    f"Give it rtol of at least {ROUNDING:g} (1e-9 is usual) or an atol of the size of the "
    "values' rounding, in the cell's course.check."
)


#: The relative change given to the declared inputs' non-integer numbers to see how far the
#: reference's own values move with rounding (:func:`_moved`): another machine's BLAS kernel or
#: summation order computes, at best, the exact answer for inputs changed by a few units in the
#: last place times the number of terms summed; 1e-13 stands for sums of some hundreds of terms.
JITTER = 1e-13

#: How many times over a tolerance must hold the reference's move under :data:`JITTER`: the
#: jitter stands for another machine's arithmetic but measures it short for an iterative fit. This
#: course's logistic regression (ps6, 300 gradient steps) moved its weights by 4.2e-13 (relative,
#: element by element) between OpenBLAS kernels where the jitter moved them by 3.1e-13, so a
#: tolerance of 3.8e-13 held the jitter and failed the other kernel. The margin covers that
#: ratio three times over, and no more: ps5's Epanechnikov kernel (``1 - u**2``, cancelling near
#: ``|u| = 1``) is moved 1.4e-13 by the jitter and by no kernel, and its tolerance of 1e-12 must
#: still pass (it would not at a margin of ten).
MARGIN = 4.0


def _jittered(value, rng: np.random.Generator):
    """``value`` with each non-integer float changed by a relative :data:`JITTER` at most;
    integers, integer-valued floats (labels, counts, 0/1 features) and anything else as given."""
    if isinstance(value, bool | int | str) or value is None:
        return value
    array = np.asarray(value)
    if array.dtype.kind != "f":
        return value
    keep = ~np.isfinite(array) | (array == np.round(array))
    moved = np.where(keep, array, array * (1 + JITTER * rng.uniform(-1, 1, array.shape)))
    return moved if isinstance(value, np.ndarray) else type(value)(moved)


def _moved(case, cases: Mapping, name: str) -> list | None:
    """The reference's values, one per output, on the case's inputs changed by rounding
    (:func:`_jittered`, seeded: the gate says the same each time); ``None`` when they cannot be
    had (the reference raises there, or returns another number of values)."""
    rng = np.random.default_rng(20261128)
    try:
        inputs = {k: _jittered(v, rng) for k, v in case_inputs(cases, name).items()}
        values = _outputs_of(case, reference_of(case)(**inputs))
    except Exception:  # noqa: BLE001 - a fragile case, not a tolerance's fault
        return None
    return values or None


def _moved_problem(where: str, output, value: np.ndarray, other) -> list[Problem]:
    """A declared comparison that fails, at a :data:`MARGIN`-th of its tolerance, the
    reference's own values computed from inputs changed by rounding (a correct answer from another
    machine's arithmetic would fail it too)."""
    from coursedata.compare import compare_output

    try:
        other = np.asarray(other, dtype=value.dtype if value.dtype.kind in "fc" else float)
        message = compare_output(
            output.compare,
            other,
            value,
            output.name,
            rtol=output.rtol / MARGIN,
            atol=output.atol / MARGIN,
        )
    except (TypeError, ValueError):
        return []
    if message is None:
        return []
    shift = _relative_shift(value, other)
    return [
        Problem(
            where,
            f"its tolerance (rtol {output.rtol:g}, atol {output.atol:g}) is tighter than the "
            f"reference itself holds: with its inputs changed by rounding (relative {JITTER:g}, "
            f"as another machine's arithmetic changes them) the reference's own values move "
            f"by {shift:.2g} relative and fail the check with a margin of {MARGIN:g} for "
            f"other machines ({message})",
            f"Give it rtol of at least {_suggested(shift):g} in the cell's course.check (for "
            "an iterative fit, at least its stopping tolerance), or make the reference "
            "converge further.",
        )
    ]


def _relative_shift(value: np.ndarray, other: np.ndarray) -> float:
    """The largest change between two arrays of values, relative to the largest value."""
    a, b = np.asarray(value, dtype=float), np.asarray(other, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    finite = np.isfinite(a) & np.isfinite(b)
    scale = float(np.abs(a[finite]).max()) if finite.any() else 0.0
    change = float(np.abs(a[finite] - b[finite]).max()) if finite.any() else 0.0
    return change / scale if scale else change


def _suggested(shift: float) -> float:
    """A relative tolerance a hundred times ``shift``, as a power of ten (at least 1e-9, the
    usual one)."""
    if not np.isfinite(shift):
        return 1e-6
    return max(1e-9, 10.0 ** np.ceil(np.log10(max(shift, 1e-300) * 100)))


def _tolerance_problem(output, value: np.ndarray) -> str | None:
    if output.compare not in _TOLERANT or value.dtype.kind not in "fiuc":
        return None
    if output.rtol == 0 and output.atol == 0:
        return "its tolerance is zero: a correct answer computed in another order fails"
    finite = np.abs(value[np.isfinite(value)]) if value.size else value
    scale = float(finite.max()) if finite.size else 0.0
    if scale and output.rtol < ROUNDING and output.atol < ROUNDING * scale:
        return (
            f"its tolerance (rtol {output.rtol:g}, atol {output.atol:g}) is tighter than "
            f"rounding at values of size {scale:.3g}: a correct answer computed on another "
            "machine fails"
        )
    return None


def _graded_problems(ps: ProblemSet, recorded: set[str], folder: str) -> list[Problem]:
    """Every declared check (not replaced by a Python one) whose cases were all recorded, on the
    reference's recorded answers."""
    try:
        python = set(load_checks(ps.name, ps.course).CHECKS)
    except ModuleNotFoundError:
        python = set()
    found = declarations(ps.source)
    cases = {c: case for d in found.values() for c, case in d.cases.items()}
    out = []
    for gid, check in build_checks(ps.source).items():
        if gid in python or not set(found[gid].scored) <= recorded:
            continue
        try:
            outcome = check(Answers(ps.name, folder, cases))
            fraction, message = outcome.fraction, outcome.message
        except Exception as exc:  # noqa: BLE001 - a check that cannot grade the reference
            fraction, message = 0.0, f"{type(exc).__name__}: {exc}"
        if fraction < 1:
            out.append(
                Problem(
                    f"{ps.notebook_name}, cell `{gid}`",
                    f"the reference's own answers, recorded as a student's, score "
                    f"{fraction:.0%} ({message})",
                    "Make the declaration agree with its reference: as many outputs as it "
                    "returns, and a comparison each output can pass (course.check).",
                )
            )
    return out


# --- the weights of the hidden cells ---------------------------------------------------------


def weight_problems(ps: ProblemSet) -> list[Problem]:
    """Declared cases (with a reference) that no cell scores, weights of 0, and a ``_hidden``
    cell that declares checked cases but no weights: a case without a weight is recorded for
    every student and never counts, and a hidden cell without weights would be all or nothing
    over its own cases alone."""
    try:
        found = declarations(ps.source)
        python = load_checks(ps.name, ps.course).CHECKS
    except (DeclarationError, ModuleNotFoundError):
        return []  # named by validate.declared_problems; no Python checks: none read a case
    read = set().union(*check_reads(ps, python).values()) if python else set()
    scored = {c for gid, d in found.items() if gid not in python for c in d.scored} | read
    out = []
    for gid, declaration in found.items():
        if gid in python:
            continue  # its cases are the Python check's to read
        where = f"{ps.notebook_name}, cell `{gid}`"
        checked = [c for c, case in declaration.cases.items() if case.reference]
        if test_kind(gid) == HIDDEN and declaration.weights is None and checked:
            listed = ", ".join(f'"{c}": 1' for c in [*_visible_cases(found, gid), *checked])
            out.append(
                Problem(
                    where,
                    f"it declares the cases {', '.join(map(repr, checked))} but no weights, "
                    "so it would be all or nothing over them and the visible cell's cases "
                    "would count nothing here",
                    f'Add "weights": {{{listed}}} to its course.check (relative: each case\'s '
                    "share of the cell's points).",
                )
            )
            continue
        out += [
            Problem(
                f"{where}, case {name!r}",
                "it is declared and recorded, but no cell's weights name it, so it is never "
                "scored: a wrong answer on it loses nothing",
                f'Add "{name}": 1 to the weights in the course.check of '
                f"`{_hidden_of(found, gid)}`, or remove the case and its record(...) line.",
            )
            for name in checked
            if name not in scored
        ]
        out += _foreign_weights(found, gid, where)
        out += [
            Problem(
                f"{where}, case {name!r}",
                "its weight is 0, so the case counts for nothing: a wrong answer on it loses "
                "nothing",
                "Give it a positive weight (weights are relative: 1 is a share like a case of "
                "weight 1), or remove the case and its record(...) line.",
            )
            for name, weight in (declaration.weights or {}).items()
            if weight == 0
        ]
    return out


def _foreign_weights(found: Mapping[str, Declaration], gid: str, where: str) -> list[Problem]:
    """Weights of ``gid`` naming a case another question declares: that question's answer
    would count in this cell's points."""
    owner = {c: case.cell for d in found.values() for c, case in d.cases.items()}
    question = question_of(gid)
    return [
        Problem(
            f"{where}, case {name!r}",
            f"its weights name the case {name!r} of `{owner[name]}`, another question's, so a "
            f"student's `{question_of(owner[name])}` would count in the points of `{gid}`",
            f'Remove "{name}" from the weights in the course.check of `{gid}`: they name only '
            f"the cases of `{test_id(question, VISIBLE)}` and `{test_id(question, HIDDEN)}`.",
        )
        for name in (found[gid].weights or {})
        if name in owner and question_of(owner[name]) != question
    ]


#: How many significant digits a number of the released notebook needs to count as stating a
#: hidden case's value (fewer would match by chance: 0.5, 2.25, a round tolerance).
LEAK_DIGITS = 6

_NUMBER = re.compile(r"(?<![\w.])-?(\d+\.\d*|\.\d+|\d+)(?:[eE]([-+]?\d+))?(?![\w.])")


def _stated(text: str) -> Iterator[tuple[str, float, float]]:
    """``(as written, value, half a unit of its last digit)`` of each number of ``text`` with
    at least :data:`LEAK_DIGITS` significant digits."""
    for m in _NUMBER.finditer(text):
        mantissa, exponent = m[1], int(m[2] or 0)
        digits = mantissa.replace(".", "").lstrip("0")
        if len(digits) < LEAK_DIGITS:
            continue
        decimals = len(mantissa.partition(".")[2])
        yield m[0], float(m[0]), 0.5 * 10.0 ** (exponent - decimals)


def _expected_values(
    found: Mapping[str, Declaration], kind: str
) -> list[tuple[str, str, str, np.ndarray]]:
    """``(cell, case, output, its finite non-zero values)`` of every case with a reference of
    the ``kind`` (visible or hidden) cells, the reference run on its inputs (a case it cannot
    run on is named elsewhere)."""
    cases = {c: case for d in found.values() for c, case in d.cases.items()}
    out = []
    for gid, declaration in found.items():
        if test_kind(gid) != kind:
            continue
        for name, case in declaration.cases.items():
            if case.reference is None or case.fitted:
                continue
            try:
                result = reference_of(case)(**case_inputs(cases, name))
                values = [np.asarray(v, dtype=float).ravel() for v in _outputs_of(case, result)]
            except Exception:  # noqa: BLE001 - named by reference_problems
                continue
            for output, value in zip(case.outputs, values, strict=False):
                out.append((gid, name, output.name, value[np.isfinite(value) & (value != 0)]))
    return out


def leak_problems(ps: ProblemSet) -> list[Problem]:
    """Numbers the student's notebook states that are a hidden case's expected values (and no
    visible case's, which students may be shown): a one-number output stated, or two values or
    more of one output stated in one cell (one entry of an array may be a value any student can
    work out, such as 5000 log 0.5 on a grid through 0.5)."""
    try:
        found = declarations(ps.source)
    except DeclarationError:
        return []  # named by validate.declared_problems
    hidden = _expected_values(found, HIDDEN)
    shown = [v for *_, v in _expected_values(found, VISIBLE)]
    out = []
    for index, cell in enumerate(ps.source.cells):
        try:
            text = released_cell(cell) if cell.cell_type == "code" else cell.source
        except RuntimeError:
            continue  # named by marker_problems
        stated = [
            (written, number, half)
            for written, number, half in _stated(text)
            if not any(np.any(np.abs(v - number) <= half * (1 + 1e-9)) for v in shown)
        ]
        for gid, case, output, values in hidden:
            written = list(
                dict.fromkeys(
                    w for w, number, half in stated if np.any(np.abs(values - number) <= half)
                )
            )
            if written and (values.size == 1 or len(written) > 1):
                out.append(
                    Problem(
                        f"{ps.notebook_name}, {_label(cell, index)}",
                        f"the student's notebook states {', '.join(written)}: the expected "
                        f"{output!r} of the hidden case {case!r} of `{gid}`, so every student "
                        "would read the answer",
                        "Delete it, or move the line between ### BEGIN HIDDEN TESTS and "
                        "### END HIDDEN TESTS.",
                    )
                )
    return out


def unshown_problems(ps: ProblemSet) -> list[Problem]:
    """Parameters a problem set's variants draw that the student is never shown (no
    ``V["name"]`` in the notebook) and that ``hidden`` does not keep for the grader: the student
    could not know the number they are graded on (``ps`` is a sample student's copy)."""
    if ps.variants is None or ps.parameters is None:
        return []
    text = "\n".join(cell.source for cell in ps.source.cells)
    return [
        Problem(
            f"{ps.notebook_name}, metadata course.variants",
            f"its draw gives {name!r}, which the notebook never shows (no V[{name!r}] in a cell) "
            'and its "hidden" does not name, so students cannot know that number of theirs',
            f"Show it where the question uses it (V[{name!r}] in the text or the variant cell's "
            "print), list it in \"hidden\" if it is the grader's alone (a hidden case's seed), "
            "or stop drawing it.",
        )
        for name in ps.parameters
        if name not in ps.variants.hidden
        and not re.search(rf"""V\[\s*['"]{re.escape(name)}['"]\s*\]""", text)
    ]


def placeholder_problems(ps: ProblemSet) -> list[Problem]:
    """A problem set with variants whose cells no longer pass ``"@VARIANTS@"`` (the literal the
    release replaces by the students' numbers): named at the cell that draws the variant, before
    nbgrader runs."""
    literal = f'"{VARIANTS_PLACEHOLDER}"'
    code = [(i, c) for i, c in enumerate(ps.source.cells) if c.cell_type == "code"]
    if ps.variants is None or any(literal in c.source for _, c in code):
        return []
    where = f"{ps.notebook_name}, metadata course.variants"
    for index, cell in code:
        if "coursedata.variant(" in cell.source:
            where = f"{ps.notebook_name}, {_label(cell, index)}"
            break
    return [
        Problem(
            where,
            f"no cell passes {literal}, which the release replaces by the students' numbers",
            f'Write V = coursedata.variant({ps.name!r}, globals().get("STUDENT_ID", ""), '
            f"{literal}) there.",
        )
    ]


def repeat_problems(ps: ProblemSet) -> list[Problem]:
    """Hidden cases identical to a visible one (the same reference, outputs and comparison, on
    the same inputs; for a case checked in Python, which names no reference, the same inputs as
    a visible case of its question): the student already saw that case pass or fail, so it
    gives no new evidence and its weight rewards the visible test twice. A hidden case identical
    to an earlier hidden one (a case pasted, its seed left as it was) counts one test twice."""
    try:
        found = declarations(ps.source)
    except DeclarationError:
        return []  # named by validate.declared_problems
    shown = [
        (gid, case, inputs)
        for gid, declaration in found.items()
        if test_kind(gid) == VISIBLE
        for case in declaration.cases.values()
        if (inputs := _generated(case)) is not None
    ]
    out = []
    earlier: list[tuple[str, object, dict]] = []
    for gid, declaration in found.items():
        if test_kind(gid) != HIDDEN:
            continue
        for name, case in declaration.cases.items():
            inputs = _generated(case)
            if inputs is None:
                continue
            seen = _first_same(gid, case, inputs, shown)
            if seen:
                out.append(_repeat(ps, gid, name, "visible", *seen))
            elif seen := _first_same(gid, case, inputs, earlier):
                out.append(_repeat(ps, gid, name, "hidden", *seen))
            earlier.append((gid, case, inputs))
    return out


def _first_same(gid: str, case, inputs: Mapping, others) -> tuple[str, str] | None:
    """``(cell, case)`` of the first of ``others`` (``(cell, case, inputs)``) that asks the same
    of a student as ``case`` of ``gid``, or None."""
    for seen, other, given in others:
        if (
            _same_case(case, inputs, other, given)
            if case.reference
            else question_of(seen) == question_of(gid) and _same_inputs(inputs, given)
        ):
            return seen, other.name
    return None


def _repeat(ps: ProblemSet, gid: str, name: str, kind: str, seen: str, other: str) -> Problem:
    """The problem of the case ``name`` of ``gid`` identical to the ``kind`` case ``other``."""
    what = (
        "it gives no evidence a student has not already seen: a wrong answer there loses "
        "twice, a right one is never tested beyond it"
        if kind == "visible"
        else "the same test counts twice and a second one is never made"
    )
    return Problem(
        f"{ps.notebook_name}, cell `{gid}`, case {name!r}",
        f"it is identical to the {kind} case {other!r} of `{seen}` (the same reference on the "
        f"same inputs, compared alike), so {what}",
        f"Give it inputs the {kind} case does not cover (another seed, size, or an edge such as "
        "ties or one class) in the cell's course.check, or remove it, its weight and its "
        "record(...) line.",
    )


def _generated(case) -> dict | None:
    """The inputs of ``case``, generated; ``None`` when they cannot be (named elsewhere)."""
    try:
        return generate_case(case)
    except Exception:  # noqa: BLE001 - a generator that fails is reference_problems' to name
        return None


def _same_case(case, inputs: Mapping, other, given: Mapping) -> bool:
    """Whether two declared cases ask the same of a student: the same reference, fitted use and
    outputs, and equal inputs argument by argument, in whatever order the declarations list them
    (the student's function gets them by parameter)."""
    if any(getattr(case, k) != getattr(other, k) for k in ("reference", "fitted", "outputs")):
        return False
    return _same_inputs(inputs, given)


def _same_inputs(inputs: Mapping, given: Mapping) -> bool:
    """Whether two cases' generated inputs are equal argument by argument, in any order."""
    if set(inputs) != set(given):
        return False
    try:
        return all(
            np.array_equal(np.asarray(inputs[k]), np.asarray(given[k]), equal_nan=True)
            for k in inputs
        )
    except TypeError:  # not numbers: equal as given
        return all(np.asarray(inputs[k]).tolist() == np.asarray(given[k]).tolist() for k in inputs)


def _visible_cases(found: Mapping[str, Declaration], gid: str) -> list[str]:
    """The checked cases of the ``_visible`` cell of ``gid``'s question."""
    visible = found.get(test_id(question_of(gid), VISIBLE))
    return [c for c, case in visible.cases.items() if case.reference] if visible else []


def _hidden_of(found: Mapping[str, Declaration], gid: str) -> str:
    """The ``_hidden`` cell of ``gid``'s question (itself for a hidden cell)."""
    return test_id(question_of(gid), HIDDEN)


# --- the marking scheme ----------------------------------------------------------------------

_SECTION = re.compile(r"^##\s+`(?P<gid>[^`]+)`\s+—\s+(?P<points>\d+(?:\.\d+)?)\s+points?\b")
#: A points table's header and rows, however the first column is headed ("Points", "Pts",
#: "Marks") and whether its numbers carry the unit ("| 2 pts |").
_UNIT = r"(?:points?|pts?\.?|marks?)"
_TABLE_HEAD = re.compile(rf"^\|\s*{_UNIT}\s*\|", re.IGNORECASE)
_TABLE_ROW = re.compile(rf"^\|\s*(?P<points>\d+(?:\.\d+)?)\s*{_UNIT}?\s*\|", re.IGNORECASE)


def scheme_problems(ps: ProblemSet) -> list[Problem]:
    """Sections of the marking scheme whose points table does not add up to their points."""
    path = ps.course.rubric(ps.name)
    if not path.is_file():
        return []  # named by validate.rubric_problems when there are written answers
    out = []
    for gid, stated, rows in _sections(path.read_text(encoding="utf-8")):
        if rows and abs(sum(rows) - stated) > 1e-9:
            out.append(
                Problem(
                    f"rubrics/{ps.name}.md, ## `{gid}`",
                    f"its marking scheme's table awards {' + '.join(f'{r:g}' for r in rows)} "
                    f"= {sum(rows):g} points, the section {stated:g}",
                    f"Make the table's rows add up to {stated:g}, or change the section's "
                    "points together with the cell's.",
                )
            )
    return out


def _sections(text: str) -> Iterator[tuple[str, float, list[float]]]:
    """``(grade_id, stated points, the points of its table's rows)`` for each section."""
    current: tuple[str, float, list[float]] | None = None
    in_table = False
    for line in text.splitlines():
        if line.startswith("## "):
            if current:
                yield current
            m = _SECTION.match(line)
            current = (m["gid"], float(m["points"]), []) if m else None
            in_table = False
        elif current is not None:
            stripped = line.strip()
            if _TABLE_HEAD.match(stripped):
                in_table = True
            elif in_table and (row := _TABLE_ROW.match(stripped)):
                current[2].append(float(row["points"]))
            elif not stripped.startswith("|"):
                in_table = False
    if current:
        yield current


def gate_problems(ps: ProblemSet) -> list[Problem]:
    """Every problem of the release gate (see the module docstring); empty when all is well. A
    problem set with per-student variants is judged on one sample student's declarations
    (:func:`autograder.authoring.graded.sample_variants`)."""
    from autograder.authoring.graded import sample_variants

    ps.course.use_code()
    placeholder = placeholder_problems(ps)
    ps = sample_variants(ps)[0]
    return [
        *placeholder,
        *pairing_problems(ps),
        *marker_problems(ps),
        *unbound_problems(ps),
        *rule_problems(ps),
        *weight_problems(ps),
        *repeat_problems(ps),
        *unshown_problems(ps),
        *reference_problems(ps),
        *leak_problems(ps),
        *scheme_problems(ps),
    ]
