"""The gradebook's cells follow the source notebook, within a term.

nbgrader records a problem set's cells in the gradebook when it releases it, and then refuses to
add or remove any ("Cannot add or remove cells ... because there are submissions associated with
it"). An instructor who adds a question during a term, or releases through a scratch gradebook,
leaves the course's gradebook behind the source. :func:`sync_cells` brings it up to date as
nbgrader's own release would have: a new graded cell gets its ``GradeCell`` (and
``SolutionCell``, ``SourceCell``) and every submission already there an empty ``Grade`` (and
``Comment``) for it; changed points change the cell's ``max_score``. A cell the source no longer
has, while submissions hold grades for it, is a new term's problem set: that is refused with the
command that archives the term (:mod:`autograder.gradebook.term`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import nbformat
from nbgrader.api import Comment, Grade, Gradebook
from sqlalchemy.exc import SAWarning

from autograder.grading.problemset import ProblemSet

__all__ = ["CellChanges", "GradebookBehind", "cell_changes", "sync_cells"]


class GradebookBehind(ValueError):
    """The gradebook holds submissions for cells the source no longer has."""


@dataclass
class CellChanges:
    """How the gradebook's cells of a notebook differ from the source's."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    repointed: dict[str, tuple[float, float]] = field(default_factory=dict)  # old, new
    submissions: int = 0

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.repointed)


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def _source_cells(ps: ProblemSet) -> dict[str, nbformat.NotebookNode]:
    """The cells nbgrader records: every cell with a ``grade_id``."""
    return {_nbgrader(c)["grade_id"]: c for c in ps.source.cells if _nbgrader(c).get("grade_id")}


def cell_changes(gb: Gradebook, ps: ProblemSet, notebook_id: str) -> CellChanges:
    """Compare the gradebook's graded and source cells of ``notebook_id`` with ``ps``'s."""
    notebook = gb.find_notebook(notebook_id, ps.name)
    known = {c.name: c.max_score for c in notebook.grade_cells}
    graded = {c.grade_id: c.points for c in ps.grade_cells}
    recorded = set(known) | {c.name for c in notebook.source_cells}
    source = set(_source_cells(ps))
    return CellChanges(
        added=sorted(source - recorded),
        removed=sorted(recorded - source),
        repointed={g: (known[g], p) for g, p in graded.items() if g in known and known[g] != p},
        submissions=len(notebook.submissions),
    )


def sync_cells(db_url: str, ps: ProblemSet, notebook_id: str, course_root) -> CellChanges:
    """Add the source's new cells to the gradebook and update changed points; return the changes.

    Raises
    ------
    GradebookBehind
        If the gradebook holds submissions and a cell the source no longer has: archive the term
        (``python -m autograder new-term``) or grade without ``--gradebook``.
    """
    from nbgrader.utils import compute_checksum, is_grade, is_locked, is_solution

    with warnings.catch_warnings(), Gradebook(db_url) as gb:
        warnings.simplefilter("ignore", SAWarning)
        changes = cell_changes(gb, ps, notebook_id)
        if changes.removed and changes.submissions:
            raise GradebookBehind(
                f"the gradebook holds {changes.submissions} submission(s) of {ps.name} with "
                f"cells the source notebook no longer has ({', '.join(changes.removed)}): it is "
                f"an earlier term's. Archive that term with `python -m autograder new-term "
                f"--course {course_root}` and grade again (or grade without --gradebook)"
            )
        cells = _source_cells(ps)
        for gid in changes.added:
            cell = cells[gid]
            if is_grade(cell):
                gb.update_or_create_grade_cell(
                    gid,
                    notebook_id,
                    ps.name,
                    max_score=float(_nbgrader(cell)["points"]),
                    cell_type=cell.cell_type,
                )
            if is_solution(cell):
                gb.update_or_create_solution_cell(gid, notebook_id, ps.name)
            gb.update_or_create_source_cell(
                gid,
                notebook_id,
                ps.name,
                cell_type=cell.cell_type,
                locked=is_locked(cell),
                source=cell.source,
                checksum=_nbgrader(cell).get("checksum") or compute_checksum(cell),
            )
        for gid, (_, points) in changes.repointed.items():
            gb.update_or_create_grade_cell(gid, notebook_id, ps.name, max_score=points)
        if changes.added and changes.submissions:
            _add_rows(gb, ps, notebook_id, changes.added)
    return changes


def _add_rows(gb: Gradebook, ps: ProblemSet, notebook_id: str, added: list[str]) -> None:
    """An empty ``Grade`` (and ``Comment``) of each new cell in every submission already there,
    as nbgrader's ``add_submission`` makes for each cell."""
    notebook = gb.find_notebook(notebook_id, ps.name)
    grade_cells = [c for c in notebook.grade_cells if c.name in added]
    comment_cells = [c for c in notebook.solution_cells if c.name in added]
    for submitted in notebook.submissions:
        have_grade = {g.cell_id for g in submitted.grades}
        have_comment = {c.cell_id for c in submitted.comments}
        for cell in grade_cells:
            if cell.id not in have_grade:
                gb.db.add(Grade(cell_id=cell.id, notebook=submitted))
        for cell in comment_cells:
            if cell.id not in have_comment:
                gb.db.add(Comment(cell_id=cell.id, notebook=submitted))
    gb.db.commit()
