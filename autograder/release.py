"""Release a problem set to students: ``python -m autograder release NAME``.

Runs ``nbgrader generate_assignment NAME`` for the course (solutions and hidden tests removed),
after checking that the notebook's instructions state the problem set's declared rules
(:func:`autograder.rulebook.declaration_problems`), then puts the student kit's address into the
released notebook: every source notebook's setup
cell names the placeholder ``@KIT_URL@`` in the message it shows when the kit is missing, and the
release replaces it with the kit wheel's URL on the course site (and updates nbgrader's checksum
of that cell, so nbgrader's "Validate" does not report a changed cell), and removes the declared
checks from the cells' metadata (nbgrader keeps them; they name the hidden cases' inputs).

The course's public address is set in one place, ``html: baseurl:`` of ``_config.yml``; the book
(``_ext/course_site.py``) and this module both read it with :func:`site_url`. The kit's wheel is
published at ``<site>/kit/<wheel>``, its name made from ``kit/pyproject.toml`` and
``coursedata.__version__``.

While that address is still the one the repository ships with (:data:`PLACEHOLDER_SITE`), the
released notebooks would tell students to install the kit from a site that is not the course's:
the release and the book print a loud warning (:func:`warn_if_placeholder`), and with the
environment variable ``MFPM_REQUIRE_SITE=1`` (for the build that publishes) they refuse.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat

from autograder.course import Course
from autograder.problemset import ProblemSet, list_problem_sets
from autograder.rulebook import declaration_problems
from autograder.settings import COURSE_DIR, ROOT

__all__ = ["PLACEHOLDER", "PLACEHOLDER_SITE", "REQUIRE_SITE", "ROOT", "check_site_url",
           "site_url", "placeholder_warning", "warn_if_placeholder", "kit_version",
           "kit_wheel_name", "kit_url", "release", "strip_declarations", "substitute"]

PLACEHOLDER = "@KIT_URL@"
#: The course address that ``_config.yml`` ships with: not the address of any course.
PLACEHOLDER_SITE = "https://mfpm-course.github.io/companion/"
#: Environment variable: ``1`` makes the placeholder address an error instead of a warning.
REQUIRE_SITE = "MFPM_REQUIRE_SITE"
_URL = re.compile(r"^https?://[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]+/$")


def check_site_url(url: str) -> str:
    """Return ``url`` if it is a usable site address (http(s), ending with ``/``); else raise."""
    if not _URL.match(str(url or "")):
        raise ValueError(f"the course site's address must be an http(s) URL ending with '/' "
                         f"(e.g. https://example.org/mfpm/); got {url!r}")
    return str(url)


def site_url(config: Path = ROOT / "_config.yml") -> str:
    """The course site's public address, ``html: baseurl:`` of ``_config.yml`` (ends with ``/``)."""
    import yaml

    data = yaml.safe_load(Path(config).read_text()) or {}
    try:
        return check_site_url((data.get("html") or {}).get("baseurl"))
    except ValueError as exc:
        raise ValueError(f"{config}: html.baseurl: {exc}") from None


def placeholder_warning(url: str) -> str | None:
    """The instructor's warning if ``url`` is still :data:`PLACEHOLDER_SITE`, else ``None``."""
    if url.rstrip("/") != PLACEHOLDER_SITE.rstrip("/"):
        return None
    return (f"the course site's address is still the placeholder {PLACEHOLDER_SITE} "
            "(_config.yml, html: baseurl:). Every released notebook tells students to install "
            f"the kit from {PLACEHOLDER_SITE}kit/..., which is not your course's site. Set "
            "html: baseurl: to the address where you publish _build/html, then run make book "
            "again (it releases the problem sets again). The book's own pages work wherever they "
            "are served.")


def warn_if_placeholder(url: str, stream=None) -> None:
    """Print :func:`placeholder_warning` as a banner on ``stream`` (stderr); raise in strict mode.

    Raises ``ValueError`` instead of printing when the environment sets ``MFPM_REQUIRE_SITE=1``.
    """
    message = placeholder_warning(url)
    if message is None:
        return
    if os.environ.get(REQUIRE_SITE, "").strip() not in ("", "0"):
        raise ValueError(f"{message} (Refused, as {REQUIRE_SITE} is set.)")
    rule = "=" * 78
    body = textwrap.fill(f"WARNING: {message} ({REQUIRE_SITE}=1 makes this an error.)",
                         width=78, break_on_hyphens=False)
    print(f"{rule}\n{body}\n{rule}", file=stream or sys.stderr, flush=True)


def kit_version(init: Path = ROOT / "coursedata" / "__init__.py") -> str:
    """``coursedata.__version__``, read from the file (without importing the package)."""
    found = re.search(r'^__version__\s*=\s*["\']([^"\']+)["\']', Path(init).read_text(), re.M)
    if not found:
        raise ValueError(f"{init} defines no __version__")
    return found.group(1)


def kit_wheel_name(pyproject: Path = ROOT / "kit" / "pyproject.toml") -> str:
    """File name of the kit's wheel, e.g. ``mfpm_kit-0.1.0-py3-none-any.whl``."""
    found = re.search(r'^name\s*=\s*"([^"]+)"', Path(pyproject).read_text(), re.M)
    if not found:
        raise ValueError(f"{pyproject} has no project name")
    name = re.sub(r"[-_.]+", "_", found.group(1)).lower()
    return f"{name}-{kit_version()}-py3-none-any.whl"


def kit_url() -> str:
    """Where students install the kit from: ``<site>/kit/<wheel>``."""
    return f"{site_url()}kit/{kit_wheel_name()}"


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
        strip_declarations(path)
    return folder


def strip_declarations(path: Path) -> int:
    """Remove the declared checks (:mod:`autograder.checks.declared`), which nbgrader keeps, from
    the released notebook ``path``; return how many cells carried one."""
    from autograder.checks.declared import strip

    nb = nbformat.read(path, as_version=4)
    removed = strip(nb)
    if removed:
        nbformat.write(nb, path)
    return removed


def main(args) -> int:
    """The ``release`` subcommand (arguments parsed by :mod:`autograder.__main__`)."""
    try:
        warn_if_placeholder(site_url())
        for name in args.names:
            folder = release(name, args.course, args.db_url)
            if not args.quiet:
                print(f"{name}: released to {folder} (kit: {kit_url()})")
    except (ValueError, RuntimeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0
