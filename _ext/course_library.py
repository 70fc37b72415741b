"""The book's library (the chapters' code, package ``solutions``) published with the book.

A local Sphinx extension (``_config.yml``: ``sphinx: local_extensions: course_library: _ext``).
``course_library`` in ``_config.yml`` chooses:

- ``public`` (the default, for an open book): the wheel that ``make`` builds into
  ``_build/library/`` (``library/build.py``, distribution ``mfpm-book``) is published at
  ``<site>/library/<wheel>``, added to the JupyterLite site's package index (``lite/pypi/``) and to
  its Pyodide lock file under its import name ``solutions`` (so ``import solutions`` in a browser
  loads it from the site, with the kit and the numerical packages it depends on), and the
  substitutions ``{{ library_url }}``, ``{{ reader_install }}`` (one ``pip install`` of the kit and
  the library, naming them by the address the page is served from, as ``course_site``'s commands
  do) and ``{{ notebook_install }}`` (the install cell a chapter notebook carries) name it;
- ``private``: nothing is published; the chapters run only where the repository is installed, and
  their notebooks' first cell says why.

The library's part of the JupyterLite site is added after ``course_lite`` has written the
JupyterLite inputs (``config-inited`` priority 150, before ``jupyterlite_sphinx`` reads them at 500).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
LIBRARY_DIR = ROOT / "_build" / "library"
#: Where the wheel is published in the built site.
SITE_FOLDER = "library"
#: The library's import name and lock entry, and what it imports (lock dependencies).
IMPORT_NAME = "solutions"
DEPENDS = ["coursedata", "numpy", "scipy", "pandas", "matplotlib", "scikit-learn"]
MODES = ("public", "private")


@dataclass(frozen=True)
class Library:
    """What the build publishes: ``mode``, and for ``public`` the wheel and its address."""

    mode: str
    wheel: Path | None = None
    url: str | None = None

    @property
    def public(self) -> bool:
        return self.mode == "public"


def library_wheel() -> Path:
    """The one wheel ``make`` built into ``_build/library/``."""
    wheels = sorted(LIBRARY_DIR.glob("mfpm_book-*.whl"))
    if len(wheels) != 1:
        raise ExtensionError(f"expected one library wheel in {LIBRARY_DIR}, found {len(wheels)}: "
                             "build it first (make book, or python library/build.py _build/library)")
    return wheels[0]


def install_cell(kit_url: str, library: Library) -> str:
    """The code of a chapter notebook's install cell (Colab, a JupyterHub, a fresh kernel).

    It installs the kit and the library from the course site where ``solutions`` cannot be
    imported yet, and does nothing in the browser (JupyterLite loads both by itself) or where
    they are installed already.
    """
    if not library.public:
        return ("# The course keeps the book's code (package `solutions`) private: this notebook "
                "runs\n# only where the course's repository is installed.")
    return ("# On Colab or a JupyterHub, run this cell first: it installs the book's code and data\n"
            "# from the course site (in the browser, or where they are installed, it does nothing).\n"
            "import importlib.util, sys\n"
            f"if sys.platform != \"emscripten\" and importlib.util.find_spec(\"{IMPORT_NAME}\") is None:\n"
            f"    %pip install --quiet {kit_url} {library.url}")


def _add_to_lite(library: Library, lite_dir: Path) -> None:
    """Put the wheel into the index and an entry ``solutions`` into the lock files of the lite
    site's inputs ``lite_dir`` (which ``course_lite`` prepared)."""
    from course_lite import _lock_entry

    locks = sorted((lite_dir / "static").glob("*/pyodide-lock.json"))
    if not locks:
        raise ExtensionError(f"no Pyodide lock file under {lite_dir}/static: course_lite must "
                             "run before course_library")
    shutil.copyfile(library.wheel, lite_dir / "pypi" / library.wheel.name)
    for path in locks:
        lock = json.loads(path.read_text())
        # Named by its import, like the kit: `import solutions` loads it with its dependencies.
        lock["packages"][IMPORT_NAME] = {
            **_lock_entry(library.wheel, "../../pypi/" + library.wheel.name, [IMPORT_NAME],
                          DEPENDS), "name": IMPORT_NAME}
        path.write_text(json.dumps(lock, indent=1, sort_keys=True))


#: Stands for the library's address in the reader's command while it is highlighted (as
#: ``course_site._URL_TOKEN`` for the kit's).
_LIBRARY_TOKEN = "COURSELIBRARYURL"
_NO_SCRIPT_NOTE = (
    '<noscript><p class="course-site-url-note">Your browser runs no scripts here, so the command '
    "names the kit and the library by their file names: download them first (the links above) "
    "into the folder where the command runs.</p></noscript>")


def reader_command(kit_wheel: str, library_wheel_name: str, site: str, placeholder: bool) -> str:
    """The reader's ``pip install`` of the kit and the library (HTML, for a page at the site's
    root), naming each wheel by the address the page is served from (``course_site.js``).

    Without scripts the addresses are those under ``site``, or, while ``site`` is the
    placeholder, the wheels' file names, with a note to download them first.
    """
    from course_site import _URL_TOKEN, _command

    kit_path, library_path = f"kit/{kit_wheel}", f"{SITE_FOLDER}/{library_wheel_name}"
    kit_text, library_text = ((kit_wheel, library_wheel_name) if placeholder
                              else (site + kit_path, site + library_path))
    html = _command("bash", f'python -m pip install "{_URL_TOKEN}" "{_LIBRARY_TOKEN}" '
                    "jupyterlab\n", kit_path, kit_text,
                    (_LIBRARY_TOKEN, library_path, library_text))
    return html + (f"\n{_NO_SCRIPT_NOTE}" if placeholder else "")


def _config_inited(app, config) -> None:
    from coursesite import check_site_url, kit_wheel_name, placeholder_warning

    mode = config.course_library
    if mode not in MODES:
        raise ExtensionError(f"_config.yml course_library: 'public' or 'private', not {mode!r}")
    site = check_site_url(config.html_baseurl)
    kit_url = f"{site}kit/{kit_wheel_name()}"
    if mode == "public":
        wheel = library_wheel()
        library = Library(mode, wheel, f"{site}{SITE_FOLDER}/{wheel.name}")
        _add_to_lite(library, Path(config.jupyterlite_dir))
        reader = reader_command(kit_wheel_name(), wheel.name, site,
                                placeholder_warning(site) is not None)
    else:
        library = Library(mode)
        reader = ("The course keeps the book's code private: the chapters run only where the "
                  "course's repository is installed.")
    app.course_library = library
    app.course_library_install_cell = install_cell(kit_url, library)
    app.course_library_reader = reader
    if library.public:  # the JupyterLite notebooks' first note (course_lite)
        app.course_library_note = (
            "The chapter's code calls the book's library `solutions`, which loads from this site, "
            "like the kit, the first time a cell imports it.")


def _substitutions(app, config) -> None:
    """The library's MyST substitutions (after jupyter-book and myst have set theirs)."""
    library, reader = app.course_library, app.course_library_reader
    config.myst_substitutions = {
        **(config.myst_substitutions or {}),
        "library_url": library.url or "(not published)",
        # relative to the page (the book's pages lie at the site's root), as the kit's link
        "library_link": (f'<a class="course-library-link" href="{SITE_FOLDER}/{library.wheel.name}" '
                         f'download>{library.wheel.name}</a>' if library.public
                         else "(not published)"),
        "reader_install": reader,
        "notebook_install": f"```ipython3\n{app.course_library_install_cell}\n```",
    }


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    folder = Path(app.outdir) / SITE_FOLDER
    shutil.rmtree(folder, ignore_errors=True)
    library = app.course_library
    if library.public:
        folder.mkdir()
        shutil.copyfile(library.wheel, folder / library.wheel.name)


def setup(app):
    app.add_config_value("course_library", "public", "html")
    app.connect("config-inited", _config_inited, priority=150)
    app.connect("config-inited", _substitutions, priority=901)
    app.connect("build-finished", _build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
