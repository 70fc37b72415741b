"""A problem set's source notebook, and how a submission is put back together for grading.

The grader never runs a submitted notebook as it is. It keeps only what the student may change
(the solution cells, matched by their nbgrader ``grade_id``, and cells the student added) and takes
every other cell from the source notebook: instructions, visible tests and the hidden check cells.
So a test edited to ``assert True`` or a deleted check cell changes nothing.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import nbformat

from autograder.checks.declared import strip
from autograder.checks.personal import VariantSpec, draw, identity, personalise, read_secret
from autograder.course import Course
from coursedata.naming import TestKind, question_of, test_kind
from coursedata.rules import Rules

__all__ = [
    "ProblemSet",
    "GradedSet",
    "GradeCell",
    "Assembly",
    "InvalidNotebook",
    "list_problem_sets",
]

#: The default course's ``source/`` folder.
SOURCE_DIR = Course.default().source_dir
_MAX_NOTEBOOK_BYTES = 20 * 2**20
#: Cells a submission may have. The grader's own work on a notebook (its parse and validation,
#: the assembly, the static reading, the formgrader's copies) grows with its cells, outside every
#: limit of the sandbox: 100,000 cells cost a minute and a GB before this limit (issue 37).
MAX_CELLS = 2_000
_SURROGATE = re.compile("[\ud800-\udfff]")


class InvalidNotebook(ValueError):
    """A submission that is not a readable Jupyter notebook."""


@dataclass(frozen=True)
class GradeCell:
    """One graded cell of the source notebook."""

    grade_id: str
    points: float
    autograded: bool  # code test cell scored by a trusted check; else graded by hand

    @property
    def kind(self) -> TestKind | None:
        """``"visible"`` or ``"hidden"`` for a test cell, None for any other
        (:mod:`coursedata.naming`)."""
        return test_kind(self.grade_id)

    @property
    def question(self) -> str:
        """The question the cell belongs to: its ``grade_id`` without the test suffix."""
        return question_of(self.grade_id)


@dataclass
class Assembly:
    """A submission rebuilt for grading.

    Attributes
    ----------
    notebook : nbformat.NotebookNode
        Source cells with the student's solution cells (and added cells) put in.
    missing : list of str
        ``grade_id`` of solution cells the submission lacks (deleted or unrecognisable).
    notes : list of str
        What was repaired, in words for the student and the instructor.
    """

    notebook: nbformat.NotebookNode
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def list_problem_sets(course: str | Path | Course | None = None) -> list[str]:
    """Names of the problem sets under the ``source/`` folder of ``course`` (default: the
    default course)."""
    return Course.at(course).problem_sets()


def read_notebook_bytes(data: bytes) -> nbformat.NotebookNode:
    """Parse and validate a submitted notebook, raising :class:`InvalidNotebook` with the reason."""
    if len(data) > _MAX_NOTEBOOK_BYTES:
        raise InvalidNotebook(
            f"the notebook is {len(data) / 2**20:.0f} MB, over the "
            f"{_MAX_NOTEBOOK_BYTES // 2**20} MB limit"
        )
    try:
        text = data.decode("utf-8")
        if text.count('"cell_type"') > MAX_CELLS:  # each cell has one: count them exactly
            _count_cells(json.loads(text))  # before nbformat validates every cell
        nb = nbformat.reads(text, as_version=4)
    except InvalidNotebook:
        raise
    except UnicodeDecodeError:
        raise InvalidNotebook("the file is not UTF-8 text, so not a Jupyter notebook") from None
    except (json.JSONDecodeError, nbformat.reader.NotJSONError):
        raise InvalidNotebook("the file is not valid JSON, so Jupyter cannot open it") from None
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds of errors
        raise InvalidNotebook(f"the file is not a Jupyter notebook ({exc})") from None
    if not isinstance(nb.get("cells"), list):
        raise InvalidNotebook("the notebook has no list of cells")
    _replace_lone_surrogates(nb)
    for cell in nb.cells:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise InvalidNotebook("the notebook contains a malformed cell")
        if isinstance(cell.get("source"), list):
            cell["source"] = "".join(map(str, cell["source"]))
        if not isinstance(cell.get("source", ""), str):
            raise InvalidNotebook("the notebook contains a cell whose source is not text")
    return nb


def _count_cells(parsed) -> None:
    """Raise :class:`InvalidNotebook` when the parsed JSON holds more than :data:`MAX_CELLS`."""
    cells = parsed.get("cells") if isinstance(parsed, dict) else None
    if isinstance(cells, list) and len(cells) > MAX_CELLS:
        raise InvalidNotebook(
            f"the notebook has {len(cells):,} cells, over the {MAX_CELLS:,}-cell limit"
        )


def _replace_lone_surrogates(nb: nbformat.NotebookNode) -> None:
    """Replace, in every text of ``nb``, each lone UTF-16 surrogate by U+FFFD (in place).

    JSON may escape one (``"\\ud800"``, as a browser's ``JSON.stringify`` writes half of a
    character), and Python reads it as a character that UTF-8 cannot encode: the kernel's
    messages and the notebook's copies could not be written (issue 37: a grader fault on every
    run). Walked without recursion, whatever the nesting."""
    stack: list = [nb]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in list(items):
            if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
                node[key] = _SURROGATE.sub("\ufffd", value)
            elif isinstance(value, (dict, list)):
                stack.append(value)


class GradedSet(Protocol):
    """What scoring reads of a problem set: a :class:`ProblemSet`, or a view of some of its graded
    cells (:class:`autograder.authoring.variants.Subset`)."""

    @property
    def name(self) -> str: ...

    @property
    def course(self) -> Course: ...  # whose checks score it

    @property
    def source(self) -> nbformat.NotebookNode: ...

    @property
    def grade_cells(self) -> list[GradeCell]: ...


@dataclass
class ProblemSet:
    """A problem set: its name and source notebook ``<course>/source/NAME/NAME.ipynb``.

    Parameters
    ----------
    name : str
    course : Course, optional
        The course it belongs to (default: :meth:`Course.default`); its other files (rubric,
        release, policies) are read from there too.
    """

    name: str
    course: Course = field(default_factory=Course.default)
    #: The student this copy is personalised for (:meth:`for_student`), and their parameters.
    student: str | None = field(default=None, init=False)
    parameters: dict | None = field(default=None, init=False)

    def __post_init__(self):
        known = self.course.problem_sets()
        if self.name not in known:
            raise ValueError(
                f"unknown problem set {self.name!r} in {self.course.root}; "
                f"choose one of {', '.join(known)}"
            )
        self.path = self.course.source_notebook(self.name)
        self.source = nbformat.read(self.path, as_version=4)
        self.course.use_code()  # its declarations and checks name the course's own Python

    @property
    def notebook_name(self) -> str:
        return self.path.name

    @property
    def grade_cells(self) -> list[GradeCell]:
        """Every graded cell, in notebook order."""
        cells = []
        for cell in self.source.cells:
            meta = _nbgrader(cell)
            if meta.get("grade"):
                autograded = cell.cell_type == "code" and not meta.get("solution")
                cells.append(GradeCell(meta["grade_id"], float(meta.get("points", 0)), autograded))
        return cells

    @property
    def rules(self) -> Rules | None:
        """What the answers may not use, as the source declares it (:mod:`coursedata.rules`)."""
        return Rules.from_metadata(self.source.metadata)

    @property
    def variants(self) -> VariantSpec | None:
        """Its per-student variants, as the source declares them (:mod:`autograder.checks.
        personal`), or None: every student gets the same numbers."""
        return VariantSpec.from_metadata(self.source.metadata)

    def for_student(self, student: str, secret: bytes | None = None) -> ProblemSet:
        """This problem set as ``student`` is graded on it.

        For a problem set with variants, a copy whose declarations read the student's
        parameters (drawn from the course's secret, or ``secret`` when given, and the student's
        identity: :func:`autograder.checks.personal.draw`); for any other, itself, unchanged.

        Raises
        ------
        autograder.checks.personal.SecretMissing
            The course has no secret (no problem set with variants was released from it).
        """
        spec = self.variants
        if spec is None:
            return self
        key = secret if secret is not None else read_secret(self.course)
        parameters = draw(spec, self.name, student, key)
        mine = copy.copy(self)
        mine.source = personalise(self.source, parameters)
        mine.student, mine.parameters = identity(student), parameters
        return mine

    @property
    def shown_parameters(self) -> dict:
        """The student's numbers as their notebook holds them (the hidden ones left out); empty
        for a problem set not personalised (:meth:`for_student`)."""
        spec = self.variants
        return spec.shown(self.parameters) if spec and self.parameters is not None else {}

    @property
    def expected_values(self) -> dict:
        """``{label: number}`` the student's written answers should state; empty for a problem
        set not personalised or that declares none."""
        spec = self.variants
        return spec.expected_values(self.parameters) if spec and self.parameters else {}

    @property
    def solution_ids(self) -> list[str]:
        return [_nbgrader(c)["grade_id"] for c in self.source.cells if _nbgrader(c).get("solution")]

    @property
    def max_points(self) -> float:
        return sum(c.points for c in self.grade_cells)

    def assemble(self, submitted: nbformat.NotebookNode) -> Assembly:
        """Rebuild ``submitted`` on the source's skeleton (see the module docstring).

        Student cells without nbgrader metadata are kept, each after the last recognised cell that
        preceded it in the submission; so are the student's cells that carry grading metadata
        they should not: more cells with one answer's ``grade_id`` (a copied or split answer
        cell: all run, in their order, the first in the answer's place) and cells with a
        ``grade_id`` this problem set does not have (pasted from another notebook). A note says
        which cells were used. When a submission carries no nbgrader metadata at all (an
        editor stripped it) but has exactly the source's sequence of cell types, its cells are
        matched by position.
        """
        solution_ids = set(self.solution_ids)
        known_ids = {_nbgrader(c).get("grade_id") for c in self.source.cells} - {None}
        notes: list[str] = []
        cells = submitted.cells
        if not any(_nbgrader(c).get("grade_id") in known_ids for c in cells):
            if [c.cell_type for c in cells] == [c.cell_type for c in self.source.cells]:
                cells = [copy.deepcopy(c) for c in cells]
                for mine, src in zip(cells, self.source.cells):
                    if "nbgrader" in src.metadata:
                        mine.setdefault("metadata", {})["nbgrader"] = copy.deepcopy(
                            src.metadata["nbgrader"]
                        )
                notes.append(
                    "the notebook had lost its grading metadata; its cells were matched "
                    "to the assignment by position"
                )
        plain = {c.source for c in self.source.cells if not _nbgrader(c)}
        answers: dict[str, dict] = {}
        extras: dict[str | None, list] = {}
        copies: dict[str, list[int]] = {}  # an answer's cells, by their place in the submission
        anchor = None
        for number, cell in enumerate(cells, 1):
            gid = _nbgrader(cell).get("grade_id")
            if gid in solution_ids:
                copies.setdefault(gid, []).append(number)
                if gid in answers:  # a copy of the answer cell, or half of a split one
                    extras.setdefault(anchor, []).append(cell)
                else:
                    answers[gid] = cell
                    anchor = gid
            elif gid in known_ids:
                anchor = gid
            elif _nbgrader(cell):
                # A cell pasted from another notebook with its grading metadata: the student's.
                extras.setdefault(anchor, []).append(cell)
                notes.append(_foreign(number, gid))
            elif cell.get("source", "") not in plain:
                # An added cell, or a plain cell of the assignment the student edited (an
                # unchanged copy is skipped: the source's own copy already runs).
                extras.setdefault(anchor, []).append(cell)
        notes += [_copied(gid, at) for gid, at in copies.items() if len(at) > 1]
        out = nbformat.v4.new_notebook(metadata=copy.deepcopy(self.source.metadata))
        out.cells.extend(_added(c) for c in extras.get(None, []))
        missing = []
        for src in self.source.cells:
            gid = _nbgrader(src).get("grade_id")
            if gid in solution_ids and gid in answers:
                cell = copy.deepcopy(src)
                cell.source = answers[gid].get("source", "")
            elif gid in solution_ids:
                missing.append(gid)
                cell = _blank(src)
            else:
                cell = copy.deepcopy(src)
            out.cells.append(cell)
            if gid is not None:
                out.cells.extend(_added(c) for c in extras.get(gid, []))
        for gid in missing:
            notes.append(f"the answer cell {gid!r} is missing from the submission")
        for cell in out.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        strip(out)  # the declared checks are the grader's: the kernel runs without them
        return Assembly(out, missing, notes)


def _copied(gid: str, cells: list[int]) -> str:
    """The note on an answer cell whose grading metadata several cells carry."""
    listed = ", ".join(map(str, cells[:-1])) + f" and {cells[-1]}"
    return (
        f"the answer {gid!r} is in cells {listed} of the notebook (each carries its grading "
        f"metadata: a copied or split cell); all of them were run, in that order, as the answer "
        f"(a person should check this grade if those cells disagree)"
    )


def _foreign(number: int, gid) -> str:
    """The note on a cell with grading metadata that is not this problem set's."""
    what = f"the grade_id {gid!r}" if gid else "grading metadata without a grade_id"
    return (
        f"cell {number} of the notebook carries {what}, which is not this problem set's "
        f"(pasted from another notebook?); it was run as the student's own cell"
    )


def _added(cell):
    """A cell the student added, rebuilt from its type and source only (no metadata kept)."""
    if cell.get("cell_type") == "code":
        return nbformat.v4.new_code_cell(cell.get("source", ""))
    return nbformat.v4.new_markdown_cell(cell.get("source", ""))


def _blank(cell):
    """A solution cell as the student received it, used when the submission lost it."""
    blank = copy.deepcopy(cell)
    if blank.cell_type == "code":
        blank.source = (
            "raise NotImplementedError('this answer cell was missing from the submission')"
        )
    else:
        blank.source = "(missing from the submission)"
    return blank
