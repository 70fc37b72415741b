"""The student site: what the built book publishes, and its maths typeset with no network.

Reads the book built once per run (fixture ``html`` in conftest.py). The browser tests serve it
from a local HTTP server on 127.0.0.1 and load pages in headless Debian Chromium with every other
host unreachable (names resolve to nothing, and any proxied request goes to a closed port); a
control page that asks the CDN for MathJax shows that the block is real.
"""

from __future__ import annotations

import functools
import http.server
import re
import shutil
import threading
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from autograder.problemset import list_problem_sets
from autograder.release import PLACEHOLDER, ROOT, kit_url, kit_wheel_name, site_url
from tests.browser import chromium, dump_dom

pytestmark = pytest.mark.slow

PROBLEM_SETS = list_problem_sets()
CDN_MATHJAX = "https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"


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


def test_doing_the_problem_sets_page(html):
    page = (html / "problem_sets.html").read_text()
    text = re.sub(r"<[^>]+>", "", page)
    assert "Doing the problem sets" in text
    assert f'python -m pip install "{kit_url()}" jupyterlab' in text.replace("&quot;", '"')
    assert f"%pip install {kit_url()}" in text  # the Colab cell
    assert f"pip install --no-cache-dir {kit_url()}" in text  # the JupyterHub image
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
