"""The cells of a problem-set notebook as a student sees them, and what is missing or changed.

A released problem set (nbgrader's student version) is a run of questions. Each starts with a
Markdown cell headed ``## Question N``; a question with code has an answer cell (nbgrader
``solution``) that defines a function ``f``, a visible test cell ``f_visible`` and a cell
``f_hidden`` where hidden tests run when the notebook is graded; a written question has a
Markdown answer cell. nbgrader stores in every read-only cell a checksum of what it held when
released (:func:`nbgrader_checksum`), so an edited test cell can be told apart from the original.

:func:`read_cells` names every cell the way a student finds it in Jupyter: by its question and
by the function it defines or tests, never by its position. :func:`findings` lists what a student
can fix before anything runs: answer cells that Python cannot parse, written answers still
reading ``YOUR ANSWER HERE``, and test cells that are missing or were changed.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

from coursedata.naming import HIDDEN, VISIBLE, question_of, test_id, test_kind
from coursedata.variants import IDENTITY_CELL

__all__ = ["Cell", "Finding", "read_cells", "findings", "nbgrader_checksum", "is_test_code", "users",
           "syntax_error", "describe_syntax_error", "PLACEHOLDER"]

#: What nbgrader writes into a written answer's cell for the student to replace.
PLACEHOLDER = "YOUR ANSWER HERE"
_QUESTION = re.compile(r"^#{1,3}\s*(Question\s+\d+)\b", re.M)
_POINTS = re.compile(r"\*\*Points:\*\*\s*(\d+(?:\.\d+)?)\s+autograded")
_BLANK_CODE = re.compile(r"^\s*raise NotImplementedError\(\)\s*$", re.M)


@dataclass(frozen=True)
class Cell:
    """One cell of the notebook, with what a student needs to find it.

    Attributes
    ----------
    index : int
        Position in the notebook (for the program only; never shown to the student).
    kind : str
        ``"answer"`` (code answer), ``"written"`` (Markdown answer), ``"test"`` (a visible test
        cell), ``"hidden"`` (a slot where hidden tests run at grading), ``"setup"``, ``"text"``
        (other Markdown) or ``"code"`` (any other code cell, the student's own included).
    grade_id : str or None
        nbgrader's name for the cell.
    question : str or None
        ``"Question 3"``: the last question heading above the cell.
    defines : tuple of str
        The functions the cell defines at its top level.
    after : str or None
        The ``grade_id`` of the nearest named cell above (to find an unnamed cell).
    source : str
    """

    index: int
    kind: str
    grade_id: str | None
    question: str | None
    defines: tuple[str, ...]
    after: str | None
    source: str

    @property
    def short(self) -> str:
        """The label inside a sentence, e.g. ``"your gaussian_mle (Question 2)"``."""
        label = self.label
        if self.question and label.startswith(self.question + ", "):
            return f"{label[len(self.question) + 2:]} ({self.question})"
        return label

    @property
    def label(self) -> str:
        """How the student finds the cell, e.g. ``"Question 2, your gaussian_mle"``."""
        where = f"{self.question}, " if self.question else ""
        if self.kind == "answer":
            name = ", ".join(self.defines) or self.grade_id
            return f"{where}your {name}"
        if self.kind == "written":
            return f"{where}your written answer ({self.grade_id})"
        if self.kind in ("test", "hidden"):
            return f"{where}test {self.grade_id}"
        if self.kind == "setup":
            return "the setup cell at the top"
        first = next((line.strip() for line in self.source.splitlines() if line.strip()), "")
        first = first if len(first) <= 50 else first[:47] + "..."
        near = f"the code cell after {self.after}" if self.after else "a code cell"
        return f"{where}{near} (starting {first!r})" if first else f"{where}{near}"


@dataclass(frozen=True)
class Finding:
    """Something to fix that the check finds without running anything.

    ``kind`` is ``"syntax"``, ``"unanswered"``, ``"missing test"`` (a visible test cell),
    ``"missing"`` (another cell) or ``"changed"``; ``message`` is the
    sentence for the student (possibly several lines); ``affects`` names the tests it breaks;
    ``cell`` is the cell at fault, when it is in the notebook.
    """

    kind: str
    message: str
    affects: tuple[str, ...] = ()
    cell: Cell | None = None


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _defined_functions(source: str) -> tuple[str, ...]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return tuple(re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", source, re.M))
    return tuple(node.name for node in tree.body
                 if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _kind(cell, meta: dict) -> str:
    if cell.get("cell_type") != "code":
        return "written" if meta.get("solution") else "text"
    if meta.get("solution"):
        return "answer"
    if meta.get("grade"):
        return "test" if is_test_code(_source(cell)) else "hidden"
    return "setup" if meta.get("grade_id") == "setup" else "code"


def is_test_code(source: str) -> bool:
    """Whether a graded cell holds visible test code, not only comments (a hidden tests' slot)."""
    return any(line.strip() and not line.strip().startswith("#") for line in source.splitlines())


def read_cells(nb) -> list[Cell]:
    """Every cell of ``nb``, in order, named by question and function."""
    cells, question, after = [], None, None
    for index, cell in enumerate(nb.get("cells", [])):
        meta, source = _nbgrader(cell), _source(cell)
        if cell.get("cell_type") == "markdown":
            heading = _QUESTION.search(source)
            if heading:
                question = heading.group(1)
        kind = _kind(cell, meta)
        defines = _defined_functions(source) if kind in ("answer", "code") else ()
        cells.append(Cell(index, kind, meta.get("grade_id"), question, defines, after, source))
        if meta.get("grade_id") and cell.get("cell_type") == "code":
            after = meta["grade_id"]
    return cells


def nbgrader_checksum(cell) -> str:
    """nbgrader's checksum of a cell (``nbgrader.utils.compute_checksum``, without nbgrader)."""
    meta = _nbgrader(cell)
    grade, solution = bool(meta.get("grade", False)), bool(meta.get("solution", False))
    locked = False if solution else (True if grade else bool(meta.get("locked", False)))
    digest = hashlib.md5(usedforsecurity=False)  # a fingerprint, as nbgrader uses it
    for part in (_source(cell), cell.get("cell_type", ""), str(meta.get("grade", False)),
                 str(meta.get("solution", False)), str(locked), meta.get("grade_id", "")):
        digest.update(str(part).encode("utf-8"))
    if grade:
        digest.update(str(float(meta.get("points", 0))).encode("utf-8"))
    return digest.hexdigest()


def users(cells: list[Cell], names: tuple[str, ...]) -> tuple[str, ...]:
    """The visible tests whose code uses any of ``names``."""
    if not names:
        return ()
    word = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    return tuple(c.grade_id for c in cells
                 if c.kind == "test" and c.grade_id and word.search(c.source))


def syntax_error(source: str) -> SyntaxError | None:
    """The error Python (with IPython's ``%`` magics and ``!`` commands) finds parsing a cell."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
        source = TransformerManager().transform_cell(source)
    except ImportError:  # pragma: no cover - the kit depends on ipykernel, hence IPython
        pass
    except SyntaxError as exc:
        return exc
    try:
        compile(source, "<cell>", "exec")
    except SyntaxError as exc:
        return exc
    return None


def describe_syntax_error(exc: SyntaxError) -> str:
    """``SyntaxError: '(' was never closed, at line 3:`` and the line, with a caret."""
    text = f"{type(exc).__name__}: {exc.msg}"
    if exc.lineno:
        text += f", at line {exc.lineno}"
        if exc.text:
            line = exc.text.rstrip("\n")
            text += f":\n    {line.strip()}"
            if exc.offset and exc.offset >= 1:
                indent = len(line) - len(line.lstrip())
                text += "\n    " + " " * max(exc.offset - 1 - indent, 0) + "^"
    return text


def findings(nb) -> list[Finding]:
    """What is wrong before anything runs, answers' syntax errors first."""
    cells = read_cells(nb)
    return (_syntax_findings(cells) + _unanswered_findings(cells)
            + _missing_findings(nb, cells) + _changed_findings(nb, cells))


def _syntax_findings(cells: list[Cell]) -> list[Finding]:
    out = []
    for cell in cells:
        if cell.kind in ("answer", "code") and (exc := syntax_error(cell.source)):
            affects = users(cells, cell.defines)
            out.append(Finding("syntax", f"{cell.label}: {describe_syntax_error(exc)}", affects,
                               cell))
    return out


def _unanswered_findings(cells: list[Cell]) -> list[Finding]:
    out = []
    for cell in cells:
        if cell.kind == "written" and (PLACEHOLDER in cell.source or not cell.source.strip()):
            out.append(Finding("unanswered", f"{cell.label} still reads {PLACEHOLDER}"))
        elif cell.kind == "answer" and _BLANK_CODE.search(cell.source):
            out.append(Finding("unanswered", f"{cell.label} still raises NotImplementedError "
                               "(not written yet)", users(cells, cell.defines)))
    return out


def _missing_findings(nb, cells: list[Cell]) -> list[Finding]:
    """Test cells and answer cells that the notebook's own structure says should be there."""
    by_id = {c.grade_id: c for c in cells if c.grade_id}
    if not by_id:
        return [Finding("missing", "the notebook carries no grading metadata (an editor other "
                        "than Jupyter may have removed it), so the check cannot tell its tests "
                        "from its answers; the grader matches its cells by position: keep every "
                        "cell in its place, or paste your answers into a fresh download")]
    out = []
    for cell in cells:
        if cell.kind != "answer" or cell.grade_id in ("", None, IDENTITY_CELL):
            continue  # the student's identity (a problem set with variants) has no tests
        for test, what, kind in ((VISIBLE, "visible test", "missing test"),
                                 (HIDDEN, "hidden tests' slot", "missing")):
            if test_id(cell.grade_id, test) not in by_id:
                out.append(Finding(kind, f"{cell.question or cell.grade_id}: the {what} cell "
                                   f"{test_id(cell.grade_id, test)} is missing (deleted?)"))
    for cell in cells:
        gid = cell.grade_id or ""
        base = question_of(gid)
        if cell.kind == "test" and test_kind(gid) == VISIBLE and base not in by_id:
            out.append(Finding("missing", f"{cell.question or base}: the answer cell of {base} "
                               "is missing (deleted?): the grader counts it as unanswered",
                               (gid,)))
    stated = _POINTS.search(_source(nb.cells[0])) if nb.get("cells") else None
    if stated:
        present = sum(float(_nbgrader(c).get("points", 0)) for c in nb.cells
                      if _nbgrader(c).get("grade") and c.get("cell_type") == "code"
                      and not _nbgrader(c).get("solution"))
        if present < float(stated.group(1)):
            out.append(Finding("missing", f"the notebook's test cells carry {present:g} of the "
                               f"{float(stated.group(1)):g} autograded points its first cell "
                               "states: some test cells were deleted"))
    return out


def _changed_findings(nb, cells: list[Cell]) -> list[Finding]:
    out = []
    for cell, raw in zip(cells, nb.get("cells", [])):
        stored = _nbgrader(raw).get("checksum")
        if cell.kind in ("test", "hidden", "setup") and stored \
                and stored != nbgrader_checksum(raw):
            out.append(Finding("changed", f"{cell.label} was changed: the grader runs the "
                               "original instead (Edit > Undo, or copy it from a fresh download)",
                               (cell.grade_id or "",) if cell.kind == "test" else ()))
    return out
