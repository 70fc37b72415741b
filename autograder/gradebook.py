"""Record grades in nbgrader's gradebook, so formgrader and ``nbgrader export`` see them.

The trusted grader scores submissions itself (:mod:`autograder.scoring`); this module only
writes its scores where nbgrader keeps them: a ``Grade`` row per graded cell (``auto_score``;
written answers are flagged ``needs_manual_grade`` for formgrader), the check's message as the
cell's automatic comment, and the submitted and executed notebooks under ``submitted/`` and
``autograded/``, where formgrader looks for them. Those two are copies without active content
(:func:`autograder.sanitize.safe_notebook_bytes`): formgrader shows a notebook's HTML as it is,
in the instructor's logged-in session. A submission that is not a readable notebook is not copied.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

from sqlalchemy.exc import SAWarning

from nbgrader.api import Gradebook, MissingEntry

from autograder.problemset import ProblemSet
from autograder.sanitize import safe_notebook_bytes

__all__ = ["GradebookWriter"]


class GradebookWriter:
    """Writes grades of one problem set into the course at ``course_dir``.

    Parameters
    ----------
    problem_set : ProblemSet
    course_dir : path-like
        The nbgrader course root (holding ``nbgrader_config.py`` and ``source/``); its
        ``gradebook.db`` is used. If the problem set is not in the gradebook yet, ``nbgrader
        generate_assignment`` is run first, as an instructor would before releasing it.
    """

    def __init__(self, problem_set: ProblemSet, course_dir: str | Path):
        self.ps = problem_set
        self.course = Path(course_dir).resolve()
        self.db_url = f"sqlite:///{self.course / 'gradebook.db'}"
        self.notebook_id = Path(problem_set.notebook_name).stem
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

    def _generate_assignment(self) -> None:
        done = subprocess.run(
            [sys.executable, "-m", "nbgrader", "generate_assignment", self.ps.name, "--force",
             f"--CourseDirectory.root={self.course}", f"--CourseDirectory.db_url={self.db_url}"],
            cwd=self.course, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nbgrader generate_assignment {self.ps.name} failed:\n"
                               f"{done.stderr[-2000:]}")

    def record(self, record: dict, submitted: bytes, executed: str | None) -> None:
        """Store one record (from :func:`autograder.task.grade_task`) for its student.

        Parameters
        ----------
        record : dict
            The scores, status and notes.
        submitted : bytes
            The file the student handed in (untrusted).
        executed : str or None
            The notebook as it ran, as JSON text (its outputs are untrusted too).
        """
        student, name = record["student_id"], self.ps.name
        for folder, notebook in (("submitted", submitted), ("autograded", executed)):
            content = safe_notebook_bytes(notebook)
            if content is not None:
                path = self.course / folder / student / name / self.ps.notebook_name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
        flagged = record["status"] != "graded"
        with Gradebook(self.db_url) as gb, warnings.catch_warnings():
            # nbgrader's own add_submission trips a harmless SQLAlchemy autoflush warning.
            warnings.simplefilter("ignore", SAWarning)
            gb.update_or_create_student(student)
            gb.update_or_create_submission(name, student)
            for score in record["scores"]:
                grade = gb.find_grade(score["grade_id"], self.notebook_id, name, student)
                if score["points"] is None:  # a written answer: a human grades it
                    grade.auto_score = None
                    grade.needs_manual_grade = True
                else:
                    grade.auto_score = score["points"]
                    grade.needs_manual_grade = flagged and score["points"] < score["max_points"]
                try:
                    comment = gb.find_comment(score["grade_id"], self.notebook_id, name, student)
                    comment.auto_comment = score["message"]
                except MissingEntry:
                    pass
            gb.db.commit()
