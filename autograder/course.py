"""The nbgrader course a command works on: one folder, chosen once and passed down.

A command chooses its course once (``--course DIR``, else ``$AUTOGRADER_COURSE``, else the
repository's ``course/``: :data:`autograder.settings.COURSE_DIR`) and hands the :class:`Course`
to everything that reads a course file, so that two courses kept side by side (two terms, two
sections) are each graded against their own sources and policies. The folder holds::

    nbgrader_config.py
    source/<problem set>/<problem set>.ipynb    the problem sets, with their hidden tests
    rubrics/<problem set>.md                    the marking schemes of the written answers
    checks/<problem set>.py                     its own Python, grader-side only (optional):
                                                input generators, references, hand-written checks
    honest/<problem set>.py                     honest answers other than the reference (optional)
    release/<problem set>/<problem set>.ipynb   the student versions
    late.toml                                   the late policy (optional)
    feedback.toml                               what feedback shows of hidden checks (optional)
    gradebook.db                                nbgrader's gradebook
    submitted/, autograded/                     the formgrader's copies

The course's own Python is named from the course folder as the package ``course``: the
declaration ``"course.checks.ps2_matrix_completion:ratings"`` is the function ``ratings`` of
``<course>/checks/ps2_matrix_completion.py`` (in this repository, that very path from its root).
:meth:`Course.use_code` makes ``course`` the chosen course's folder, so a course kept elsewhere is
graded with its own code and the grader holds none of it.
"""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from autograder import settings
from coursesite import problem_sets

__all__ = ["Course", "CODE_PACKAGE"]

#: The package name of a course's own Python (``<course>/checks/``, ``<course>/honest/``).
CODE_PACKAGE = "course"


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

    def checks_module(self, name: str) -> Path:
        """The problem set's own Python, grader-side only: ``<course>/checks/NAME.py``."""
        return self.root / "checks" / f"{name}.py"

    def checks_label(self, name: str) -> str:
        """How a message names the problem set's own Python: ``checks/NAME.py``, relative to the
        course folder (as ``rubrics/NAME.md`` and ``NAME.ipynb`` are named)."""
        return f"checks/{name}.py"

    def honest_module(self, name: str) -> Path:
        """Honest answers other than the reference: ``<course>/honest/NAME.py``."""
        return self.root / "honest" / f"{name}.py"

    def use_code(self) -> None:
        """Make the package ``course`` (:data:`CODE_PACKAGE`) this course's folder.

        ``course.checks.NAME`` then imports ``<root>/checks/NAME.py``. Modules of another course
        imported before are dropped from :data:`sys.modules` (functions already taken from them
        keep working), so two courses graded in one process each get their own code.
        """
        current = sys.modules.get(CODE_PACKAGE)
        if current is not None and list(getattr(current, "__path__", [])) == [str(self.root)]:
            return
        for loaded in [
            m for m in sys.modules if m == CODE_PACKAGE or m.startswith(CODE_PACKAGE + ".")
        ]:
            del sys.modules[loaded]
        package = types.ModuleType(CODE_PACKAGE, f"The course's own Python, from {self.root}.")
        package.__path__ = [str(self.root)]
        sys.modules[CODE_PACKAGE] = package
        importlib.invalidate_caches()
