"""Where the course is published, and what it publishes: read by the book and by the grader.

The book (the local Sphinx extensions in ``_ext/``) and the grader (:mod:`autograder.authoring.release`)
both need the course site's address, the student kit's wheel and the course's problem sets; this
package holds them and imports neither (only the standard library, and PyYAML to read
``_config.yml``), so that building the book never imports the grader.

- The course's public address is set in one place, ``html: baseurl:`` of ``_config.yml``
  (:func:`site_url`). While it is still the address the repository ships with
  (:data:`PLACEHOLDER_SITE`), released notebooks would tell students to install the kit from a
  site that is not the course's: the release and the book print a loud warning
  (:func:`warn_if_placeholder`), and with the environment variable ``MFPM_REQUIRE_SITE=1`` (for
  the build that publishes) they refuse.
- The kit's wheel is published at ``<site>/kit/<wheel>`` (:func:`kit_url`), its name made from
  ``kit/pyproject.toml`` and ``coursedata.__version__`` (:func:`kit_wheel_name`); a source
  notebook's setup cell names it by :data:`PLACEHOLDER` until the release fills it in.
- The nbgrader course lives in :data:`COURSE_DIR`: the repository's ``course/`` folder unless the
  environment variable ``AUTOGRADER_COURSE`` names another; its problem sets are the folders
  ``source/NAME`` holding ``NAME.ipynb`` (:func:`problem_sets`).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
from pathlib import Path

__all__ = [
    "ROOT",
    "COURSE_DIR",
    "problem_sets",
    "PLACEHOLDER",
    "PLACEHOLDER_SITE",
    "REQUIRE_SITE",
    "check_site_url",
    "site_url",
    "placeholder_warning",
    "warn_if_placeholder",
    "kit_version",
    "kit_wheel_name",
    "kit_url",
]

#: The project root (the checkout holding the book, the grader, the reference and the course).
ROOT = Path(__file__).resolve().parent.parent
#: The nbgrader course folder: ``$AUTOGRADER_COURSE`` or ``ROOT/course``.
COURSE_DIR = Path(os.environ.get("AUTOGRADER_COURSE") or ROOT / "course").resolve()

#: What a source notebook's setup cell says where the release puts the kit's address.
PLACEHOLDER = "@KIT_URL@"
#: The course address that ``_config.yml`` ships with: not the address of any course.
PLACEHOLDER_SITE = "https://mfpm-course.github.io/companion/"
#: Environment variable: ``1`` makes the placeholder address an error instead of a warning.
REQUIRE_SITE = "MFPM_REQUIRE_SITE"
_URL = re.compile(r"^https?://[A-Za-z0-9._~:/?#\[\]@!$&'()*+,;=%-]+/$")


def problem_sets(course: str | Path = COURSE_DIR) -> list[str]:
    """Names of the problem sets of the course folder ``course``: its folders ``source/NAME``
    holding ``NAME.ipynb``, sorted (none if it has no ``source/``)."""
    source = Path(course) / "source"
    if not source.is_dir():
        return []
    return sorted(
        p.name for p in source.iterdir() if p.is_dir() and (p / f"{p.name}.ipynb").is_file()
    )


def check_site_url(url: str | None) -> str:
    """Return ``url`` if it is a usable site address (http(s), ending with ``/``); else raise."""
    if not _URL.match(str(url or "")):
        raise ValueError(
            f"the course site's address must be an http(s) URL ending with '/' "
            f"(e.g. https://example.org/mfpm/); got {url!r}"
        )
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
    return (
        f"the course site's address is still the placeholder {PLACEHOLDER_SITE} "
        "(_config.yml, html: baseurl:). Every released notebook tells students to install "
        f"the kit from {PLACEHOLDER_SITE}kit/..., which is not your course's site. Set "
        "html: baseurl: to the address where you publish _build/html, then run make book "
        "again (it releases the problem sets again). The book's own pages work wherever they "
        "are served."
    )


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
    body = textwrap.fill(
        f"WARNING: {message} ({REQUIRE_SITE}=1 makes this an error.)",
        width=78,
        break_on_hyphens=False,
    )
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
