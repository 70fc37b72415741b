"""The book's student site: the course address, the kit, the problem sets and offline maths.

A local Sphinx extension (``_config.yml``: ``sphinx: local_extensions: course_site: _ext``).

- Reads the course's public address from ``html: baseurl:`` of ``_config.yml`` (Sphinx's
  ``html_baseurl``, the one place it is set), warns loudly while it is still the placeholder
  (``MFPM_REQUIRE_SITE=1`` makes that an error: :func:`coursesite.warn_if_placeholder`),
  and gives the pages MyST substitutions: ``{{ kit_link }}`` and ``{{ kit_wheel }}`` in text, and,
  on a line of their own, the blocks ``{{ install_command }}``, ``{{ colab_cell }}``,
  ``{{ hub_install }}``, ``{{ check_command }}`` and ``{{ problem_set_list }}`` (substitutions are
  not applied inside code fences, so the code blocks come whole, highlighted here as Sphinx would).
- The install lines work wherever the site is served. Links (to the kit and the notebooks) are
  relative to the page, so these substitutions are for pages at the book's root (the page "Doing
  the problem sets"). The commands name the kit by its full address, which ``course_site.js``
  fills in from the page's own location; without scripts they keep the configured address, or,
  while that is the placeholder, the kit's file name with a note to download it first.
- Publishes the student files at stable paths of the built site: the kit's wheel at
  ``kit/<wheel>`` (built by ``make`` into ``_build/kit/``) and each released problem set at
  ``problem-sets/<name>.ipynb`` (``course/release/``, written by ``python -m autograder
  release``, which puts the same kit URL into its setup cell). A missing or stale file fails the
  build. ``{{ problem_set_list }}`` also links each problem set in the book's JupyterLite site
  (``_ext/course_lite.py``).
- Serves MathJax from the site: ``mathjax_path`` (in ``_config.yml``) is relative to ``_static/``,
  and this adds ``_build/static/`` (where ``make`` unpacks the pinned npm package) to the static
  path, failing the build if the script is not there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from course_lite import lite_link  # _ext/ is on the path (a local extension)
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
KIT_DIR = ROOT / "_build" / "kit"
STATIC_DIR = ROOT / "_build" / "static"
RELEASE_DIR = ROOT / "course" / "release"
PROBLEM_SETS = "problem-sets"


def _problem_sets() -> list[str]:
    from coursesite import problem_sets

    return problem_sets()


def _title(notebook: Path) -> str:
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook.stem


def _released(name: str) -> Path:
    return RELEASE_DIR / name / f"{name}.ipynb"


#: Stands for the kit's address in the commands while they are highlighted (one token in each).
_URL_TOKEN = "COURSEKITURL"
_NO_SCRIPT_NOTE = (
    '<noscript><p class="course-site-url-note">Your browser runs no scripts here, so the commands '
    "name the kit by its file name: download it first (the link above) into the folder where the "
    "command runs.</p></noscript>")


def _command(language: str, code: str, path: str, fallback: str,
             *others: tuple[str, str, str]) -> str:
    """A highlighted code block of ``code`` whose :data:`_URL_TOKEN` is the kit's address.

    The address is a ``span.course-site-url`` that ``course_site.js`` fills in from the page's
    location (``path`` is relative to the site's root); ``fallback`` is its text without scripts.
    ``others`` are more addresses of the site in the command, each ``(token, path, fallback)``
    (the book's library, ``course_library``).
    """
    from html import escape

    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import get_lexer_by_name

    html = highlight(code, get_lexer_by_name(language), HtmlFormatter(nowrap=True))
    for token, where, text in [(_URL_TOKEN, path, fallback), *others]:
        if html.count(token) != 1:
            raise ExtensionError(f"the {language} command {code!r} does not show the address "
                                 f"of {where} once")
        span = (f'<span class="course-site-url" data-path="{escape(where)}">{escape(text)}'
                "</span>")
        html = html.replace(token, span)
    return (f'<div class="highlight-{language} notranslate"><div class="highlight"><pre><span>'
            f"</span>{html}</pre></div></div>")


def _config_inited(app, config) -> None:
    from coursesite import (
        PLACEHOLDER,
        check_site_url,
        kit_wheel_name,
        placeholder_warning,
        warn_if_placeholder,
    )

    try:
        site = check_site_url(config.html_baseurl)
        warn_if_placeholder(site)
    except ValueError as exc:
        raise ExtensionError(f"_config.yml html.baseurl: {exc}") from None
    wheel = kit_wheel_name()
    kit_url = f"{site}kit/{wheel}"
    placeholder = placeholder_warning(site) is not None
    app.course_site = {"site": site, "wheel": wheel, "kit_url": kit_url}
    kit_path = f"kit/{wheel}"
    fallback = wheel if placeholder else kit_url

    def command(language: str, code: str) -> str:
        return _command(language, code, kit_path, fallback)

    items = []
    for name in _problem_sets():
        path = _released(name)
        if not path.is_file():
            raise ExtensionError(f"{path} is missing: release the problem sets first (make book)")
        text = path.read_text()
        if PLACEHOLDER in text or kit_url not in text:
            raise ExtensionError(f"{path} does not name the kit at {kit_url}: it is stale, "
                                 f"release it again (python -m autograder release {name})")
        items.append(f'- <a href="{PROBLEM_SETS}/{name}.ipynb" download>{name}.ipynb</a>: '
                     f"{_title(path)} "
                     f'(<a class="jupyterlite-link" href="{lite_link(f"{PROBLEM_SETS}/{name}.ipynb")}">'
                     "open it in JupyterLite</a>)")
    note = f"\n{_NO_SCRIPT_NOTE}" if placeholder else ""
    config.myst_substitutions = {
        **(config.myst_substitutions or {}),
        "kit_link": f'<a class="course-kit-link" href="{kit_path}" download>{wheel}</a>',
        "kit_wheel": wheel,
        "install_command": command("bash", f'python -m pip install "{_URL_TOKEN}" jupyterlab\n')
        + note,
        "colab_cell": command("ipython3", f"%pip install {_URL_TOKEN}\n") + note,
        "hub_install": command("dockerfile",
                               f"RUN python -m pip install --no-cache-dir {_URL_TOKEN}\n") + note,
        "check_command": "```bash\npython -m coursedata.check ps1_pca.ipynb\n```",
        "problem_set_list": "\n".join(items),
    }

    if not (KIT_DIR / wheel).is_file():
        raise ExtensionError(f"the student kit {KIT_DIR / wheel} is missing: build it first "
                             "(make book, or python kit/build.py _build/kit)")
    mathjax = str(config.mathjax_path or "")
    if not mathjax.startswith(("http:", "https:", "/")):
        if not (STATIC_DIR / mathjax).is_file():
            raise ExtensionError(f"MathJax is not installed at {STATIC_DIR / mathjax}: "
                                 "run make book (it unpacks npm mathjax there)")
        config.html_static_path = [*config.html_static_path, str(STATIC_DIR)]
    config.html_static_path = [*config.html_static_path, str(HERE / "static")]
    app.add_js_file("course_site.js")


def _build_finished(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    kit = out / "kit"
    shutil.rmtree(kit, ignore_errors=True)
    kit.mkdir()
    shutil.copyfile(KIT_DIR / app.course_site["wheel"], kit / app.course_site["wheel"])
    sets = out / PROBLEM_SETS
    shutil.rmtree(sets, ignore_errors=True)
    sets.mkdir()
    for name in _problem_sets():
        shutil.copyfile(_released(name), sets / f"{name}.ipynb")


def setup(app):
    # After jupyter-book and myst have registered their configuration values.
    app.connect("config-inited", _config_inited, priority=900)
    app.connect("build-finished", _build_finished)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
