"""Release a problem set to students: ``python -m autograder release NAME``.

Runs ``nbgrader generate_assignment NAME`` for the course (solutions and hidden tests removed),
after checking that the notebook's instructions state the problem set's declared rules
(:func:`autograder.rulebook.declaration_problems`), then puts the student kit's address into the
released notebook: every source notebook's setup
cell names the placeholder ``@KIT_URL@`` in the message it shows when the kit is missing, and the
release replaces it with the kit wheel's URL on the course site (and updates nbgrader's checksum
of that cell, so nbgrader's "Validate" does not report a changed cell).

The course's public address and the kit's wheel are read as the book reads them, from
:mod:`coursesite` (the address is set in one place, ``html: baseurl:`` of ``_config.yml``; the
kit's wheel is published at ``<site>/kit/<wheel>``). While that address is still the one the
repository ships with, the release prints a loud warning, and refuses with ``MFPM_REQUIRE_SITE=1``
(:func:`coursesite.warn_if_placeholder`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

from coursesite import (PLACEHOLDER, PLACEHOLDER_SITE, REQUIRE_SITE, check_site_url, kit_url,
                        kit_version, kit_wheel_name, placeholder_warning, site_url,
                        warn_if_placeholder)

from autograder.course import Course
from autograder.problemset import ProblemSet, list_problem_sets
from autograder.rulebook import declaration_problems
from autograder.settings import COURSE_DIR, ROOT

# The site and kit settings of coursesite are the release's too (re-exported here).
__all__ = ["PLACEHOLDER", "PLACEHOLDER_SITE", "REQUIRE_SITE", "ROOT", "check_site_url",
           "site_url", "placeholder_warning", "warn_if_placeholder", "kit_version",
           "kit_wheel_name", "kit_url", "release", "substitute"]


def substitute(path: Path, url: str) -> int:
    """Replace :data:`PLACEHOLDER` by ``url`` in the notebook ``path``; return the cells changed.

    Raises ``ValueError`` if no cell names the placeholder (a setup cell without the kit guard).
    """
    from nbgrader.utils import compute_checksum, is_locked

    nb = nbformat.read(path, as_version=4)
    changed = 0
    for cell in nb.cells:
        if PLACEHOLDER in cell.source:
            cell.source = cell.source.replace(PLACEHOLDER, url)
            meta = cell.metadata.get("nbgrader", {})
            if "checksum" in meta and is_locked(cell):
                meta["checksum"] = compute_checksum(cell)
            changed += 1
    if not changed:
        raise ValueError(f"{path}: no cell names {PLACEHOLDER}; the setup cell must start with "
                         "the guard that tells students how to install the kit")
    nbformat.write(nb, path)
    return changed


def release(name: str, course: Path = COURSE_DIR, db_url: str | None = None,
            url: str | None = None) -> Path:
    """Generate the student version of ``name`` in ``course/release/name/``; return the folder."""
    if name not in list_problem_sets(course):
        raise ValueError(f"unknown problem set {name!r} in {course}; choose one of "
                         f"{', '.join(list_problem_sets(course))}")
    problems = declaration_problems(ProblemSet(name, Course(course)))
    if problems:
        raise ValueError("; ".join(problems))
    url = url or kit_url()
    course = Path(course).resolve()
    bin_dir = Path(sys.executable).parent  # nbgrader runs `alembic` from PATH
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    command = [sys.executable, "-m", "nbgrader", "generate_assignment", name, "--force",
               "--log-level=WARN", f"--CourseDirectory.root={course}"]
    if db_url:
        command.append(f"--CourseDirectory.db_url={db_url}")
    done = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n"
                           f"{(done.stdout + done.stderr)[-3000:]}")
    folder = course / "release" / name
    notebooks = sorted(folder.glob("*.ipynb"))
    if not notebooks:
        raise RuntimeError(f"nbgrader wrote no notebook into {folder}")
    for path in notebooks:
        substitute(path, url)
    return folder
