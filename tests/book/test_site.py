"""The student site: what the built book publishes, and its maths typeset with no network.

Reads the book built once per run (fixture ``html`` in conftest.py). The browser tests serve it
from a local HTTP server on 127.0.0.1 and load pages in headless Debian Chromium with every other
host unreachable (names resolve to nothing, and any proxied request goes to a closed port); a
control page that asks the CDN for MathJax shows that the block is real. Playwright's Chromium
(tests/browser.py) serves the site from two addresses to see the install lines of "Doing the
problem sets" and "Running the chapters" follow the page's own address (and pip fetch the kit
and the library from it), reads them without scripts, and records every request of every page:
none may leave the site.
"""

from __future__ import annotations

import functools
import html as html_lib
import http.server
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from autograder.authoring.release import (
    PLACEHOLDER,
    ROOT,
    kit_url,
    kit_wheel_name,
    placeholder_warning,
    site_url,
)
from autograder.grading.problemset import list_problem_sets
from tests.browser import chromium, dump_dom, offline_browser, serve, settle, third_party

pytestmark = pytest.mark.slow

PROBLEM_SETS = list_problem_sets()
CDN_MATHJAX = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"
#: Whether _config.yml still has the placeholder address (the page then shows another fallback).
PLACEHOLDER_SITE_IN_USE = placeholder_warning(site_url()) is not None


def _chapters() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [c["file"] for part in toc["parts"] for c in part["chapters"]
            if c["file"].startswith("chapters/")]


CHAPTERS = _chapters()


def _pages(html: Path) -> list[Path]:
    return sorted(html.rglob("*.html"))


# --- what the site publishes -------------------------------------------------------------------

def test_site_address_is_set_once_in_the_config():
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    assert config["html"]["baseurl"] == site_url()
    assert kit_url() == f"{site_url()}kit/{kit_wheel_name()}"
    # No button to the private repository, nor Binder or Colab launchers that would need it.
    assert "repository" not in config
    launch = config.get("launch_buttons") or {}
    assert not launch.get("binderhub_url") and not launch.get("colab_url"), launch


def test_kit_and_problem_sets_are_published(html):
    wheel = html / "kit" / kit_wheel_name()
    assert wheel.read_bytes() == (ROOT / "_build" / "kit" / kit_wheel_name()).read_bytes()
    assert sorted(p.name for p in (html / "problem-sets").iterdir()) == [
        f"{name}.ipynb" for name in PROBLEM_SETS]
    for name in PROBLEM_SETS:
        published = (html / "problem-sets" / f"{name}.ipynb").read_text()
        assert published == (ROOT / "course" / "release" / name / f"{name}.ipynb").read_text()
        assert kit_url() in published and "BEGIN SOLUTION" not in published


def _install_commands(kit: str) -> list[str]:
    """The page's three install lines (own machine, Colab, JupyterHub image) naming ``kit``."""
    return [f'python -m pip install "{kit}" jupyterlab', f"%pip install {kit}",
            f"RUN python -m pip install --no-cache-dir {kit}"]


def test_doing_the_problem_sets_page(html):
    """As a browser without scripts gets it: the kit's address is the configured one, or, while
    that is the placeholder, the kit's file name and a note to download it first."""
    page = (html / "problem_sets.html").read_text()
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", page))
    assert "Doing the problem sets" in text
    wheel = kit_wheel_name()
    fallback = wheel if PLACEHOLDER_SITE_IN_USE else kit_url()
    for command in _install_commands(fallback):
        assert command in text, command
    assert page.count(f'<span class="course-site-url" data-path="kit/{wheel}">') == 3
    assert page.count('class="course-site-url-note"') == (3 if PLACEHOLDER_SITE_IN_USE else 0)
    assert page.count(f'href="kit/{wheel}"') == 1  # the kit's link, relative to the page
    assert f"mfpm-course.github.io/companion/kit/{wheel}" not in page
    assert '<script src="_static/course_site.js' in page
    assert "python -m coursedata.check ps1_pca.ipynb" in text
    for name in PROBLEM_SETS:
        href = f"problem-sets/{name}.ipynb"
        assert f'href="{href}"' in page, f"no link to {name}"
        assert (html / href).is_file()
    assert "{{" not in text, "a substitution was left unreplaced"
    assert 'href="problem_sets.html"' in (html / "intro.html").read_text(), "not in the navigation"


def test_no_placeholder_repository_launch_button_or_unreleased_notebook(html):
    for page in _pages(html):
        text = page.read_text()
        for bad in ("github.com/mfpm-course", "mybinder.org", "colab.research.google.com",
                    "btn-source-repository-button", "btn-source-issues-button", PLACEHOLDER):
            assert bad not in text, f"{page.relative_to(html)}: {bad}"
    for notebook in html.rglob("*.ipynb"):
        assert PLACEHOLDER not in notebook.read_text(), notebook.relative_to(html)


def test_mathjax_is_served_by_the_site(html):
    for chapter in CHAPTERS:
        page = (html / f"{chapter}.html").read_text()
        scripts = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', page, flags=re.I)
        local = ["../_static/mathjax/tex-mml-chtml.js"]
        assert [s.split("?")[0] for s in scripts] == local, scripts
        assert "cdn.jsdelivr.net" not in page
    mathjax = html / "_static" / "mathjax"
    assert "3.2.2" in (mathjax / "tex-mml-chtml.js").read_text()
    assert (mathjax / "output/chtml/fonts/woff-v2/MathJax_Main-Regular.woff").is_file()
    assert (mathjax / "input/tex/extensions/ams.js").is_file()


# --- maths in a real browser, offline ----------------------------------------------------------

class _Text(HTMLParser):
    """The text a reader sees: everything outside scripts, styles and code."""

    SKIP = {"script", "style", "pre", "code", "textarea", "noscript"}

    def __init__(self):
        super().__init__()
        self.skipping: list[str] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skipping.append(tag)

    def handle_endtag(self, tag):
        if self.skipping and self.skipping[-1] == tag:
            self.skipping.pop()

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def visible_text(dom: str) -> str:
    parser = _Text()
    parser.feed(dom)
    return "".join(parser.parts)


@pytest.fixture(scope="module")
def server(html, tmp_path_factory):
    """The built book (plus a control page) on http://127.0.0.1:PORT/, recording every request."""
    root = tmp_path_factory.mktemp("site")
    site = root / "html"
    shutil.copytree(html, site)
    chapter = CHAPTERS[0]
    control = (site / f"{chapter}.html").read_text()
    control = re.sub(r'src="[^"]*_static/mathjax/tex-mml-chtml\.js[^"]*"', f'src="{CDN_MATHJAX}"',
                     control)
    assert CDN_MATHJAX in control
    (site / chapter).parent.joinpath("control-cdn.html").write_text(control)
    requests: list[tuple[str, int]] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_request(self, code="-", size="-"):
            requests.append((self.path, int(code) if str(code).isdigit() else 0))

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", requests
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def rendered(server) -> dict[str, str]:
    """Every chapter page, and the control page, as Chromium shows them (a few at a time)."""
    base, _ = server
    names = [*CHAPTERS, "control"]
    urls = [base + (f"{c}.html" if c != "control"
                    else f"{Path(CHAPTERS[0]).parent}/control-cdn.html") for c in names]
    chromium()  # skip (or fail, on CI) before starting the pool
    with ThreadPoolExecutor(max_workers=3) as pool:
        doms = list(pool.map(dump_dom, urls))
    return dict(zip(names, doms))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_maths_are_typeset_offline(html, rendered, chapter):
    dom = rendered[chapter]
    formulas = (html / f"{chapter}.html").read_text().count('class="math notranslate nohighlight"')
    assert formulas >= 10
    typeset = dom.count("<mjx-container")
    assert typeset >= formulas, f"{chapter}: {typeset} of {formulas} formulas typeset"
    text = visible_text(dom)
    raw = [text[max(m.start() - 40, 0):m.start() + 40] for m in re.finditer(r"\\[(\[]", text)]
    assert not raw, f"{chapter}: raw TeX left: {raw[:3]}"


def test_mathjax_loaded_everything_it_asked_for(rendered, server):
    """Fonts and TeX extensions come from the site: no request to it failed."""
    _, requests = server
    assert any(path.startswith("/_static/mathjax/output/chtml/fonts/") for path, _ in requests)
    failed = [(path, code) for path, code in requests
              if code >= 400 and not path.startswith("/favicon")]
    assert not failed, failed


def test_control_page_from_the_cdn_stays_raw(rendered):
    """The check can fail: with MathJax from the CDN, unreachable here, nothing is typeset."""
    dom = rendered["control"]
    assert "<mjx-container" not in dom
    assert re.search(r"\\[(\[]", visible_text(dom))


# --- the install lines, wherever the site is served --------------------------------------------

@pytest.fixture(scope="module")
def browser():
    """Chromium driven by Playwright, with no network but 127.0.0.1."""
    with offline_browser() as offline:
        yield offline.browser


@pytest.mark.parametrize("prefix", ["/", "/courses/mfpm/2026-autumn/"])
def test_install_lines_name_the_address_the_site_is_served_from(html, browser, prefix, tmp_path):
    """Served at two addresses (another port and path each time), the page's commands and links
    name that address, pip downloads the kit from the command's address, and the kit's link
    downloads the published wheel."""
    wheel = (ROOT / "_build" / "kit" / kit_wheel_name()).read_bytes()
    with serve(html, prefix) as site:
        context = browser.new_context(accept_downloads=True)
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        try:
            page = context.new_page()
            page.goto(f"{site.base}problem_sets.html")
            kit = f"{site.base}kit/{kit_wheel_name()}"
            blocks = page.locator("div.highlight pre:has(span.course-site-url)")
            shown = [blocks.nth(i).inner_text().strip() for i in range(blocks.count())]
            assert sorted(shown) == sorted(_install_commands(kit)), shown
            link = page.locator("a.course-kit-link")
            assert link.evaluate("a => a.href") == kit
            with page.expect_download() as download:
                link.click()
            assert Path(download.value.path()).read_bytes() == wheel
            for name in PROBLEM_SETS:
                href = page.locator(f'a[download][href$="{name}.ipynb"]').evaluate("a => a.href")
                assert href == f"{site.base}problem-sets/{name}.ipynb"
                lite = page.locator(f'a.jupyterlite-link[href$="{name}.ipynb"]')
                assert lite.evaluate("a => a.href") == (
                    f"{site.base}lite/notebooks/index.html?path=problem-sets/{name}.ipynb")
            command = next(c for c in shown if c.startswith("python -m pip install"))
        finally:
            context.close()
        # The page's own command, given to pip (download only: the kit, not its dependencies).
        url = shlex.split(command)[4]  # python -m pip install URL jupyterlab
        env = dict(os.environ, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-index",
                               "--disable-pip-version-check", "-d", str(tmp_path), url],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        assert (tmp_path / kit_wheel_name()).read_bytes() == wheel
        assert not site.failed(), site.failed()
    assert not third_party(requests, site.base), third_party(requests, site.base)


def test_without_scripts_the_install_lines_keep_their_fallback(html, browser):
    with serve(html, "/elsewhere/") as site:
        context = browser.new_context(java_script_enabled=False)
        try:
            page = context.new_page()
            page.goto(f"{site.base}problem_sets.html")
            shown = page.locator("span.course-site-url").all_inner_texts()
            notes = page.locator(".course-site-url-note")
            visible = [notes.nth(i).is_visible() for i in range(notes.count())]
        finally:
            context.close()
    if PLACEHOLDER_SITE_IN_USE:  # the file name, with a note to download the kit first
        assert shown == [kit_wheel_name()] * 3 and visible == [True] * 3, (shown, visible)
    else:
        assert shown == [kit_url()] * 3 and not visible, (shown, visible)


def _reader_command(kit: str, library: str) -> str:
    """The own-machine command of "Running the chapters", naming the two wheels so."""
    return f'python -m pip install "{kit}" "{library}" jupyterlab'


def _library_wheel_name(html: Path) -> str:
    wheels = sorted(p.name for p in (html / "library").glob("mfpm_book-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


@pytest.mark.parametrize("prefix", ["/", "/books/mfpm/"])
def test_reader_install_line_names_the_address_the_site_is_served_from(html, browser, prefix,
                                                                       tmp_path):
    """"Running the chapters", served elsewhere than _config.yml says: its own-machine command
    names the kit and the library at the page's address, and pip, given the command's two
    addresses, downloads the site's two wheels."""
    from playwright.sync_api import expect

    library = _library_wheel_name(html)
    with serve(html, prefix) as site:
        context = browser.new_context()
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        try:
            page = context.new_page()
            page.goto(f"{site.base}running.html")
            block = page.locator("div.highlight pre:has(span.course-site-url)")
            expected = _reader_command(f"{site.base}kit/{kit_wheel_name()}",
                                       f"{site.base}library/{library}")
            expect(block).to_have_text(expected)  # one block, filled in from the page's address
            command = block.inner_text().strip()
            links = [page.locator(f"a.{c}").evaluate("a => a.href")
                     for c in ("course-kit-link", "course-library-link")]
        finally:
            context.close()
        assert links == [f"{site.base}kit/{kit_wheel_name()}", f"{site.base}library/{library}"]
        urls = shlex.split(command)[4:6]  # python -m pip install KIT LIBRARY jupyterlab
        env = dict(os.environ, NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-index",
                               "--disable-pip-version-check", "-d", str(tmp_path), *urls],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        for name, folder in ((kit_wheel_name(), "kit"), (library, "library")):
            assert (tmp_path / name).read_bytes() == (html / folder / name).read_bytes()
        assert not site.failed(), site.failed()
    assert not third_party(requests, site.base), third_party(requests, site.base)


def test_without_scripts_the_reader_install_line_keeps_its_fallback(html, browser):
    library = _library_wheel_name(html)
    with serve(html, "/elsewhere/") as site:
        context = browser.new_context(java_script_enabled=False)
        try:
            page = context.new_page()
            page.goto(f"{site.base}running.html")
            command = page.locator("div.highlight pre:has(span.course-site-url)").inner_text()
            notes = page.locator(".course-site-url-note")
            visible = [notes.nth(i).is_visible() for i in range(notes.count())]
        finally:
            context.close()
    if PLACEHOLDER_SITE_IN_USE:  # the file names, with a note to download the wheels first
        assert command.strip() == _reader_command(kit_wheel_name(), library), command
        assert visible == [True], visible
    else:
        assert command.strip() == _reader_command(kit_url(), f"{site_url()}library/{library}")
        assert not visible, visible


def test_no_book_page_asks_a_third_party_host(html, browser):
    """Every page of the book (JupyterLite's are in tests/book/test_jupyterlite.py), with every request
    recorded; a control stylesheet from Google's font host, added to a page, is recorded."""
    pages = sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")  # not the
                   if not {"lite", "_static"} & set(p.relative_to(html).parts))  # theme's macros
    assert "problem_sets.html" in pages and len(pages) >= len(CHAPTERS) + 2
    control_css = "https://fonts.googleapis.com/css?family=Vibur"
    seen: list[tuple[str, str]] = []  # (page, URL asked for)
    with serve(html) as site:
        context = browser.new_context()
        current = [""]
        context.on("request", lambda r: seen.append((current[0], r.url)))
        try:
            for name in pages:
                current[0] = name
                page = context.new_page()
                page.goto(site.base + name, wait_until="load")
                settle(page, seen)
                if name == pages[0]:  # the control
                    with page.expect_request(control_css):
                        page.evaluate("href => { const l = document.createElement('link'); "
                                      "l.rel = 'stylesheet'; l.href = href; "
                                      "document.head.appendChild(l); }", control_css)
                page.close()
        finally:
            context.close()
        assert not site.failed(), site.failed()
    found = {name: third_party([u for p, u in seen if p == name], site.base) for name in pages}
    assert all(any(p == name for p, _ in seen) for name in pages)
    control = found.pop(pages[0])
    assert control == [control_css], control
    assert not {name: urls for name, urls in found.items() if urls}
