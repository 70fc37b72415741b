"""Record grades in nbgrader's gradebook, so formgrader and ``nbgrader export`` see them.

The trusted grader scores submissions itself (:mod:`autograder.grading.scoring`); this module only
writes its scores where nbgrader keeps them: a ``Grade`` row per graded cell (``auto_score``;
written answers are flagged ``needs_manual_grade`` for formgrader), the check's message as the
cell's automatic comment, and the submitted and executed notebooks under ``submitted/`` and
``autograded/``, where formgrader looks for them. Those two are copies without active content
(:func:`autograder.grading.sanitize.formgrader_copies`, made by the grading worker): formgrader
shows a notebook's HTML as it is, in the instructor's logged-in session. A submission that is
not a readable notebook is not copied.

Regrading keeps the hand-grading: a hand-given score (``Grade.manual_score``, from the
formgrader) stays, and a written answer whose text is unchanged since the copy under
``submitted/`` stays graded (``needs_manual_grade`` false); a written answer the student changed
loses its old score and waits for a human again.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

from nbgrader.api import (
    Assignment,
    BaseCell,
    Comment,
    Grade,
    Gradebook,
    MissingEntry,
    Notebook,
    Student,
    SubmittedAssignment,
    SubmittedNotebook,
)
from sqlalchemy import update
from sqlalchemy.exc import SAWarning

from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record, as_record

__all__ = ["GradebookWriter"]


class GradebookWriter:
    """Writes grades of one problem set into the course at ``course_dir``.

    Parameters
    ----------
    problem_set : ProblemSet
    course_dir : path-like
        The nbgrader course root (holding ``nbgrader_config.py`` and ``source/``); its
        ``gradebook.db`` is used. If the problem set is not in the gradebook yet, ``nbgrader
        generate_assignment`` is run first, as an instructor would before releasing it; if the
        source has cells the gradebook lacks (a question added since), they are added
        (:func:`autograder.gradebook.cells.sync_cells`), and a gradebook of an earlier term's
        problem set is refused with the command that archives the term.
    """

    def __init__(self, problem_set: ProblemSet, course_dir: str | Path):
        self.ps = problem_set
        self.course = Path(course_dir).resolve()
        self.db_url = f"sqlite:///{self.course / 'gradebook.db'}"
        self.notebook_id = Path(problem_set.notebook_name).stem
        self._gb: Gradebook | None = None
        # nbgrader runs the `alembic` program of this environment to create or migrate the db.
        bin_dir = str(Path(sys.executable).parent)
        if bin_dir not in os.environ.get("PATH", "").split(os.pathsep):
            os.environ["PATH"] = bin_dir + os.pathsep + os.environ.get("PATH", "")
        with Gradebook(self.db_url) as gb:
            try:
                gb.find_notebook(self.notebook_id, problem_set.name)
                present = True
            except MissingEntry:
                present = False
        if not present:
            self._generate_assignment()
        else:  # a question added since the release: its cells, as nbgrader's release would
            from autograder.gradebook.cells import sync_cells

            sync_cells(self.db_url, problem_set, self.notebook_id, self.course)

    def _generate_assignment(self) -> None:
        """nbgrader records the cells, as the release does; the published release stays."""
        from autograder.authoring.release import register

        register(self.ps.name, self.course, self.db_url)

    def record(self, record: Record | dict, copies: dict | None = None) -> None:
        """Store one record; see :meth:`record_many`."""
        self.record_many([(record, copies)])

    def record_many(self, items: list[tuple[Record | dict, dict | None]]) -> None:
        """Store records (from :func:`autograder.run.task.grade_task`) in one transaction.

        A few queries per batch, not per cell: the students and submissions missing from the
        gradebook are added as ``nbgrader``'s own ``add_submission`` would (one ``Grade`` per
        graded cell, one ``Comment`` per answer cell), then every score and comment is set by
        one bulk update each.

        Parameters
        ----------
        items : list of (record, copies)
            The records (or their JSON objects: scores, status and notes); and the formgrader's
            copies of the notebook handed in and of the notebook as it ran, already sanitised
            (:func:`autograder.grading.sanitize.formgrader_copies`), or None.
        """
        changed: dict[str, set[str]] = {}
        stored = [(as_record(record), copies) for record, copies in items]
        for record, copies in stored:
            hand = record.hand_graded
            old = self._written(self._submitted_path(record.student_id), hand)
            self._copy_notebooks(record.student_id, copies or {})
            new = (
                self._written(self._submitted_path(record.student_id), hand)
                if (copies or {}).get("submitted") is not None
                else {}
            )
            changed[record.student_id] = {g for g in hand if g not in old or old[g] != new.get(g)}
        if not stored:
            return
        records = {r.student_id: r for r, _ in stored}
        with warnings.catch_warnings():
            # nbgrader's own models trip a harmless SQLAlchemy autoflush warning.
            warnings.simplefilter("ignore", SAWarning)
            gb = self._gradebook()
            try:
                self._add_missing(gb, sorted(records))
                grades, comments = self._rows(gb, records, changed)
                gb.db.execute(update(Grade), grades)
                gb.db.execute(update(Comment), comments)
                gb.db.commit()
            except BaseException:
                gb.db.rollback()
                raise

    def _add_missing(self, gb: Gradebook, students: list[str]) -> None:
        """Add the students and the submissions of this problem set the gradebook lacks."""
        known = {s for (s,) in gb.db.query(Student.id).filter(Student.id.in_(students))}
        gb.db.add_all(Student(id=s) for s in students if s not in known)
        assignment = gb.find_assignment(self.ps.name)
        submitted = {
            s
            for (s,) in gb.db.query(SubmittedAssignment.student_id).filter(
                SubmittedAssignment.assignment_id == assignment.id,
                SubmittedAssignment.student_id.in_(students),
            )
        }
        for student in students:
            if student in submitted:
                continue
            submission = SubmittedAssignment(assignment=assignment, student_id=student)
            for notebook in assignment.notebooks:  # as nbgrader's add_submission
                nb = SubmittedNotebook(notebook=notebook, assignment=submission)
                for cell in notebook.grade_cells:
                    Grade(cell_id=cell.id, notebook=nb)
                for cell in list(notebook.solution_cells) + list(notebook.task_cells):
                    Comment(cell_id=cell.id, notebook=nb)
                for cell in notebook.task_cells:
                    Grade(cell_id=cell.id, notebook=nb)
            gb.db.add(submission)
        gb.db.flush()

    def _submitted_path(self, student: str) -> Path:
        return self.course / "submitted" / student / self.ps.name / self.ps.notebook_name

    @staticmethod
    def _written(path: Path, grade_ids: tuple[str, ...]) -> dict[str, str]:
        """The text of the written answers ``grade_ids`` in the notebook at ``path``."""
        import nbformat

        try:
            nb = nbformat.read(path, as_version=4)
        except (OSError, ValueError, nbformat.reader.NotJSONError):
            return {}
        found = {}
        for cell in nb.cells:
            gid = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")
            if gid in grade_ids:
                found[gid] = cell.source
        return found

    def _rows(
        self, gb: Gradebook, records: dict[str, Record], changed: dict[str, set[str]] | None = None
    ) -> tuple[list[dict], list[dict]]:
        """The bulk updates: ``Grade`` and ``Comment`` rows by primary key.

        ``changed`` names, per student, the written answers whose text differs from the last
        copy (or that had none): they lose their hand-given score; every other hand-given
        score is kept."""

        def ids(model):
            query = (
                gb.db.query(model.id, SubmittedAssignment.student_id, BaseCell.name)
                .join(BaseCell, BaseCell.id == model.cell_id)
                .join(SubmittedNotebook, SubmittedNotebook.id == model.notebook_id)
                .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id)
                .join(
                    SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id
                )
                .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id)
                .filter(
                    Assignment.name == self.ps.name,
                    Notebook.name == self.notebook_id,
                    SubmittedAssignment.student_id.in_(list(records)),
                )
            )
            return {(student, cell): row_id for row_id, student, cell in query}

        grade_ids, comment_ids = ids(Grade), ids(Comment)
        given = dict(
            gb.db.query(Grade.id, Grade.manual_score).filter(Grade.id.in_(list(grade_ids.values())))
        )
        grades, comments = [], []
        for student, record in records.items():
            flagged = not record.status.complete
            fresh = (changed or {}).get(student, set())
            for score in record.scores:
                key = (student, score.grade_id)
                manual = None if score.grade_id in fresh else given.get(grade_ids[key])
                if score.points is None:  # a written answer: a human grades it
                    grades.append(
                        {
                            "id": grade_ids[key],
                            "auto_score": None,
                            "manual_score": manual,
                            "needs_manual_grade": manual is None,
                        }
                    )
                else:
                    grades.append(
                        {
                            "id": grade_ids[key],
                            "auto_score": score.points,
                            "manual_score": manual,
                            "needs_manual_grade": bool(
                                manual is None and flagged and score.points < score.max_points
                            ),
                        }
                    )
                if key in comment_ids:
                    comments.append({"id": comment_ids[key], "auto_comment": score.message})
        return grades, comments

    def _gradebook(self) -> Gradebook:
        if self._gb is None:  # opened once: a connection per result costs ~100 ms
            self._gb = Gradebook(self.db_url)
        return self._gb

    def close(self) -> None:
        if self._gb is not None:
            self._gb.close()
            self._gb = None

    def _copy_notebooks(self, student: str, copies: dict) -> None:
        """nbgrader's ``submitted`` and ``autograded`` copies (sanitised by the worker)."""
        for folder in ("submitted", "autograded"):
            content = copies.get(folder)
            if content is not None:
                path = self.course / folder / student / self.ps.name / self.ps.notebook_name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
