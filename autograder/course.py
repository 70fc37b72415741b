"""The nbgrader course a command works on: one folder, chosen once and passed down.

A command chooses its course once (``--course DIR``, else ``$AUTOGRADER_COURSE``, else the
repository's ``course/``: :data:`autograder.settings.COURSE_DIR`) and hands the :class:`Course`
to everything that reads a course file, so that two courses kept side by side (two terms, two
sections) are each graded against their own sources and policies. The folder holds::

    nbgrader_config.py
    source/<problem set>/<problem set>.ipynb    the problem sets, with their hidden tests
    rubrics/<problem set>.md                    the marking schemes of the written answers
    release/<problem set>/<problem set>.ipynb   the student versions
    late.toml                                   the late policy (optional)
    feedback.toml                               what feedback shows of hidden checks (optional)
    gradebook.db                                nbgrader's gradebook
    submitted/, autograded/                     the formgrader's copies
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coursesite import problem_sets

from autograder import settings

__all__ = ["Course"]


@dataclass(frozen=True)
class Course:
    """An nbgrader course folder and the paths of the files the grader reads in it.

    Parameters
    ----------
    root : path-like
        The course folder (made absolute).
    """

    root: Path

    def __post_init__(self):
        object.__setattr__(self, "root", Path(self.root).resolve())

    @classmethod
    def default(cls) -> Course:
        """The course of :data:`autograder.settings.COURSE_DIR`."""
        return cls(settings.COURSE_DIR)

    @classmethod
    def at(cls, root: str | Path | Course | None) -> Course:
        """``root`` as a course: a :class:`Course` as it is, a path, or None for the default."""
        if isinstance(root, Course):
            return root
        return cls.default() if root is None else cls(Path(root))

    @property
    def source_dir(self) -> Path:
        return self.root / "source"

    @property
    def late_policy_file(self) -> Path:
        return self.root / "late.toml"

    @property
    def feedback_file(self) -> Path:
        return self.root / "feedback.toml"

    @property
    def gradebook_file(self) -> Path:
        return self.root / "gradebook.db"

    def problem_sets(self) -> list[str]:
        """Names of the problem sets: folders ``source/NAME`` holding ``NAME.ipynb``."""
        return problem_sets(self.root)

    def source_notebook(self, name: str) -> Path:
        return self.source_dir / name / f"{name}.ipynb"

    def rubric(self, name: str) -> Path:
        return self.root / "rubrics" / f"{name}.md"

    def release_notebook(self, name: str) -> Path:
        return self.root / "release" / name / f"{name}.ipynb"
