"""WCAG 2.2 AA on every page the project produces: the book's and the grader's.

axe-core (the pinned npm package the Makefile fetches and checks by its hash into ``_build/axe``)
runs in Debian's Chromium, driven by Playwright, with the rules of WCAG 2.0, 2.1 and 2.2, levels A
and AA, and axe's best practices, on every page of the built book (fixture ``html`` in
conftest.py: the book built once per run) and on every kind of page the grader writes (feedback,
class report, similarity report, marking scheme), made with realistic content by the grader's own
functions. No rule is turned off: a page passes when axe finds nothing.

What axe cannot see is checked here as well: at 320 px and with the text at 200 % a page loses
nothing and the keyboard still reaches whatever scrolls; every figure's text alternative says
what it shows (not a file name, at least a sentence); the interactive parts of a chapter (search,
solution dropdowns, the JupyterLite button, copy buttons) are reached with Tab, show where the
focus is, and work with the keyboard; every formula carries MathML for screen readers (MathJax's
assistive MathML); headings form an outline without skipped levels; the problem-set notebooks
have alternative text for their images and an outline of headings.
"""

from __future__ import annotations

import functools
import html as html_module
import http.server
import importlib.util
import json
import re
import threading
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from autograder.authoring.release import ROOT
from autograder.pages.feedback import feedback_html, marking_scheme_html
from autograder.pages.report import report_html
from tests.browser import chromium
from tests.environment import skip_unless

pytestmark = pytest.mark.slow

AXE = ROOT / "_build" / "axe" / "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def _toc_pages() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"], *(c["file"] for part in toc["parts"] for c in part["chapters"])]


#: Every page of the book: the table of contents, and what Sphinx and its extensions add (the
#: search page, the general index, the proof index). A test below checks that the built site has
#: no other page (but ``index.html``, which only sends the browser on to the introduction).
BOOK_PAGES = [*_toc_pages(), "search", "genindex", "prf-prf"]
CHAPTERS = [p for p in BOOK_PAGES if p.startswith("chapters/")]
GRADER_PAGES = ["feedback-partial", "feedback-final", "feedback-grader-error",
                "feedback-unmatched", "report", "similarity", "marking-scheme"]


# --- the pages ----------------------------------------------------------------------------------

def _grader_pages(folder: Path) -> None:
    """Write one page of every kind the grader writes, with realistic content, into ``folder``."""
    from autograder.pages.similarity import write_similarity
    from tests.autograder.grading.test_similarity import disguised
    from tests.autograder.pages.test_report import synthetic_class
    from tests.honest import builder
    from tests.submissions import to_bytes

    records = synthetic_class(60)
    by_status = {}
    for r in records:
        by_status.setdefault(r["status"], r)
    wrong = next(r for r in records if r["status"] == "awaiting-manual-grading"
                 and any(s["points"] == 0 for s in r["scores"]))
    final = {**records[0], "problem_set": "ps1_pca", "status": "graded",
             "manual": {"derivation": 3.0},
             "late": {"days": 1, "percent": 10.0, "reason": "1 day late"}}
    pages = {"feedback-partial": feedback_html({**wrong, "problem_set": "ps1_pca"}),
             "feedback-final": feedback_html(final),
             "feedback-grader-error": feedback_html(by_status["grader-error"]),
             "feedback-unmatched": feedback_html(by_status["unmatched"]),
             "report": report_html("ps1_pca", records, rubric=True, similarity=True),
             "marking-scheme": marking_scheme_html(
                 "ps1_pca", (ROOT / "course" / "rubrics" / "ps1_pca.md").read_text())}
    for name, page in pages.items():
        (folder / f"{name}.html").write_text(page)
    b = builder("ps1_pca")
    write_similarity("ps1_pca", {"ann": to_bytes(b.correct()),
                                 "bob": to_bytes(disguised(b.correct(), "all")),
                                 "cat": to_bytes(b.blank())}, folder)


@pytest.fixture(scope="module")
def site(html, tmp_path_factory):
    """The book at ``http://127.0.0.1:PORT/`` and the grader's pages under ``grader/``."""
    grader = tmp_path_factory.mktemp("grader")
    _grader_pages(grader)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            if path.startswith("/grader/"):
                return str(grader / path.split("?")[0][len("/grader/"):])
            return super().translate_path(path)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(html)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium under Playwright, with no network but 127.0.0.1."""
    skip_unless(importlib.util.find_spec("playwright") is not None,
                "playwright is not installed (make installs requirements.txt)")
    skip_unless(AXE.is_file(), f"{AXE} is missing (make test fetches axe-core from npm)")
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chrome = pw.chromium.launch(executable_path=executable, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
            "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1"])
        try:
            yield chrome
        finally:
            chrome.close()


def _open(browser, url: str):
    """A fresh context and page at ``url``, its formulas typeset; the grader's pages forbid
    scripts, so the context bypasses their Content-Security-Policy for axe alone."""
    context = browser.new_context(bypass_csp=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(url, wait_until="load")
    page.evaluate("""async () => {
        if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
            await MathJax.startup.promise;
        }
    }""")
    return context, page


def _url(site: str, name: str) -> str:
    return f"{site}grader/{name}.html" if name in GRADER_PAGES else f"{site}{name}.html"


def axe_violations(page, tags: list[str] = TAGS) -> list[dict]:
    """axe-core's violations of the rules tagged ``tags`` (WCAG 2.1 A/AA unless told) on
    ``page``: rule, impact, and each failing node."""
    page.add_script_tag(content=AXE.read_text())
    return page.evaluate("""async (tags) => {
        const result = await axe.run(document, {runOnly: {type: 'tag', values: tags},
                                                resultTypes: ['violations']});
        return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.map(n => ({target: n.target.join(' '),
                                      summary: n.failureSummary}))}));
    }""", tags)


HEADINGS_JS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
    .filter(h => h.checkVisibility() || h.closest('details, .dropdown, .toggle-hidden'))
    .map(h => [Number(h.tagName[1]), h.textContent.trim().slice(0, 60)])"""

#: Every heading a screen reader lists (h1-h6 and role=heading, not hidden from it), in order.
HEADING_LIST_JS = """() => [...document.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]')]
    .filter(h => h.checkVisibility() && !h.closest('[aria-hidden=true]')
        && !['none', 'presentation'].includes(h.getAttribute('role')))
    .map(h => [Number(h.getAttribute('aria-level') || h.tagName.slice(1)),
               h.textContent.trim().slice(0, 60)])"""


def skipped_levels(headings: list[tuple[int, str]]) -> list[str]:
    """The headings that go down more than one level from the one before (h2 then h4)."""
    out, level = [], 0
    for depth, text in headings:
        if depth > level + 1:
            out.append(f"h{level} -> h{depth} {text!r}")
        level = depth
    return out


def test_skipped_levels_are_found():
    assert skipped_levels([(1, "a"), (2, "b"), (3, "c"), (2, "d"), (3, "e")]) == []
    assert skipped_levels([(1, "a"), (3, "b")]) == ["h1 -> h3 'b'"]
    assert skipped_levels([(2, "a")]) == ["h0 -> h2 'a'"]


def test_the_book_has_no_page_left_unchecked(html):
    built = {str(p.relative_to(html).with_suffix("")) for p in html.rglob("*.html")
             if not p.relative_to(html).parts[0].startswith(("_", "lite"))}
    assert built == {*BOOK_PAGES, "index"}
    assert (html / "index.html").read_text().strip() == (
        f'<meta http-equiv="Refresh" content="0; url={BOOK_PAGES[0]}.html" />')


#: Beyond WCAG 2.1: 2.2's rules, and axe's best practices, among them one main landmark that holds
#: the content (a screen reader's "jump to main" found nothing on the grader's pages), all content
#: in a landmark (axe's region: the theme's logo was in none) and no empty table header cell
#: (pandas' tables in chapter 6 had some).
MORE_TAGS = ["wcag22a", "wcag22aa", "best-practice"]


@pytest.mark.parametrize("name", BOOK_PAGES + GRADER_PAGES)
def test_no_axe_violation_and_an_outline_of_headings(browser, site, name):
    """axe finds nothing (WCAG 2.0 to 2.2, A and AA, and best practices); the page says its
    language; its headings form an outline with one h1 and no skipped level; and on the book's
    pages the first heading a screen reader lists is the page's title (its article's h1), not
    the sidebar's part captions (which the theme marks role=heading, level 2)."""
    context, page = _open(browser, _url(site, name))
    try:
        violations = axe_violations(page, TAGS + MORE_TAGS)
        headings = page.evaluate(HEADINGS_JS)
        listed = page.evaluate(HEADING_LIST_JS)
        lang = page.evaluate("document.documentElement.lang")
    finally:
        context.close()
    found = {v["id"]: len(v["nodes"]) for v in violations}
    print(f"AXE {name} {json.dumps(found)} lang={lang!r} skipped={skipped_levels(headings)} "
          f"h1={sum(h[0] == 1 for h in headings)}")
    detail = [f"{v['id']} ({v['impact']}): {v['help']}; {len(v['nodes'])} nodes, e.g. "
              f"{v['nodes'][0]['target']}: {v['nodes'][0]['summary']}" for v in violations]
    assert not violations, f"{name}:\n" + "\n".join(detail)
    assert lang == "en", f"{name}: the page does not say its language"
    assert sum(h[0] == 1 for h in headings) == 1, f"{name}: {headings}"
    assert not skipped_levels(headings), f"{name}: {skipped_levels(headings)}"
    if name in BOOK_PAGES:  # the page's one h1 first
        assert listed[0] == [1, next(t for level, t in headings if level == 1)], listed[:6]


@pytest.mark.parametrize("name", BOOK_PAGES)
def test_no_axe_violation_in_dark_mode(browser, site, name):
    """The theme's dark mode (its switch keeps the choice in localStorage as ``theme``) keeps
    WCAG's contrast: the formula switch (#6c757d on #222832 gave 3.15:1) and the proof index's
    rows (Sphinx's #f2f2f2 behind the dark theme's #ced6dd text gave 1.31:1) among them."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    context.add_init_script("localStorage.setItem('theme', 'dark')")
    try:
        page = context.new_page()
        page.goto(_url(site, name), wait_until="load")
        page.evaluate("async () => { if (window.MathJax?.startup?.promise) "
                      "await MathJax.startup.promise; }")
        page.wait_for_timeout(500)  # the theme's 0.3 s transitions
        assert page.evaluate("document.documentElement.dataset.theme") == "dark"
        violations = axe_violations(page)
    finally:
        context.close()
    detail = [f"{v['id']}: {len(v['nodes'])} nodes, e.g. {v['nodes'][0]['target']}: "
              f"{v['nodes'][0]['summary']}" for v in violations]
    assert not violations, f"{name} (dark):\n" + "\n".join(detail)


# --- every figure says what it shows -----------------------------------------------------------

class _Images(HTMLParser):
    """The ``alt`` of every image in a page's article (the theme's logos are outside it)."""

    def __init__(self):
        super().__init__()
        self.depth = 0
        self.alts: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article":
            self.depth += 1
        elif tag == "img" and self.depth:
            self.alts.append((attrs.get("src", ""), attrs.get("alt")))

    def handle_endtag(self, tag):
        if tag == "article":
            self.depth -= 1


def alt_problem(src: str, alt: str | None) -> str | None:
    """Why ``alt`` is no text alternative for the image at ``src`` (None when it is one).

    A text alternative is at least one sentence (eight words or more, ending in a full stop),
    and not a file name or an address.
    """
    if not alt or not alt.strip():
        return "no alternative text"
    if re.search(r"\.(png|jpe?g|svg|gif|webp)\b|_images/|^[\w./-]+$", alt) or alt == src:
        return f"a file name, not a description: {alt!r}"
    if len(alt.split()) < 8 or not alt.rstrip().endswith("."):
        return f"shorter than a sentence: {alt!r}"
    return None


def test_the_alternative_text_check_can_fail():
    assert alt_problem("a.png", None) and alt_problem("a.png", "  ")
    assert "file name" in alt_problem("../_images/ab12.png", "../_images/ab12.png")
    assert "file name" in alt_problem("x.png", "figure_3")
    assert "sentence" in alt_problem("x.png", "A plot of the data.")
    assert alt_problem("x.png", "Histogram of the waiting times, which has two clusters.") is None


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_has_a_text_alternative(html, chapter):
    parser = _Images()
    parser.feed((html / f"{chapter}.html").read_text())
    assert len(parser.alts) >= 2, f"{chapter}: {len(parser.alts)} figures"
    problems = [(src, why) for src, alt in parser.alts if (why := alt_problem(src, alt))]
    assert not problems, f"{chapter}: {problems}"


def test_every_figure_cell_of_the_chapters_carries_its_alternative_text():
    """In the sources (no build needed): each cell that draws a figure has ``image: alt`` in
    its metadata, captioned or not."""
    cells = 0
    for path in sorted((ROOT / "chapters").glob("*.md")):
        text = path.read_text()
        for header, body in re.findall(r"```\{code-cell\}[^\n]*\n(?:---\n(.*?)\n---\n)?(.*?)```",
                                       text, flags=re.S):
            if "plt.show()" not in body:
                continue
            cells += 1
            mystnb = (yaml.safe_load(header) or {}).get("mystnb", {}) if header else {}
            alt = mystnb.get("image", {}).get("alt")
            where = f"{path.name}: {mystnb.get('figure', {}).get('name') or body[:60]!r}"
            assert alt_problem("", alt) is None, f"{where}: {alt_problem('', alt)}"
    assert cells >= 40



class _HeaderCells(HTMLParser):
    """The text of every table header cell (``<th>``) of a page, its ``aria-label`` counted."""

    def __init__(self):
        super().__init__()
        self.cells: list[str] = []
        self._open = False

    def handle_starttag(self, tag, attrs):
        if tag == "th":
            self._open = True
            self.cells.append(dict(attrs).get("aria-label") or "")

    def handle_endtag(self, tag):
        if tag == "th":
            self._open = False

    def handle_data(self, data):
        if self._open:
            self.cells[-1] += data


def empty_header_cells(page: str) -> int:
    """How many of the page's table header cells have no text for a screen reader to read."""
    parser = _HeaderCells()
    parser.feed(page)
    return sum(not cell.strip() for cell in parser.cells)


def test_empty_header_cells_are_found():
    assert empty_header_cells("<table><tr><th>a</th><th> </th></tr></table>") == 1
    assert empty_header_cells('<table><tr><th aria-label="x"></th><th><b>b</b></th></tr>'
                              "</table>") == 0


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_table_of_the_chapters_has_an_empty_header_cell(html, chapter):
    """A table's header cell names its column for a screen reader, which reads it with every cell
    below (axe's empty-table-header). Read in the built page, so that both the Markdown tables
    (chapter 7's comparison tables began with an empty cell) and the tables a code cell prints
    are covered: pandas writes an empty ``<th>`` above an unnamed index and beside the names of
    a table's column levels (chapter 6's)."""
    empty = empty_header_cells((html / f"{chapter}.html").read_text())
    assert empty == 0, (f"{chapter}: {empty} empty table header cells; name the index of a "
                        "DataFrame (df.rename_axis(...)) or leave its header empty of cells")

# --- the problem sets ---------------------------------------------------------------------------

def _problem_set_notebooks() -> list[Path]:
    return sorted((ROOT / "course" / "source").glob("*/*.ipynb"))


#: A call that draws with matplotlib, in a problem set's code.
DRAWS = re.compile(r"\bplt\.(subplots|figure|plot|hist|imshow)\(|\bax\.(plot|hist|semilogx|semilogy|"
                   r"loglog|scatter|imshow|bar)\(")


def figure_cells(cells: list[dict]) -> list[int]:
    """The indices of the code cells that draw a figure: a matplotlib call of their own, or a call
    of a function that an earlier cell defines with one (found in the code, not in the metadata).
    """
    drawing: set[str] = set()
    found = []
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        calls = {n for n in drawing if re.search(rf"^\s*(\w+ = )?{n}\(", source, re.M)}
        if DRAWS.search(source) or calls:
            found.append(index)
        for name, body in re.findall(r"^def (\w+)\(.*?\n((?:(?:    .*)?\n)*)", source + "\n", re.M):
            if DRAWS.search(body):
                drawing.add(name)
    return found


def shown_descriptions(source: str) -> list[str | None]:
    """The description of each ``show_figure(...)`` call in ``source`` (None where it is no
    string literal but an expression, whose value the executed notebook's test checks)."""
    import ast
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) \
                == "show_figure":
            arg = node.args[0] if node.args else None
            found.append(arg.value if isinstance(arg, ast.Constant) else None)
    return found


def test_figure_cells_are_found_by_their_drawing():
    cells = [{"cell_type": "code", "source": ["def curves(a):\n", "    ax.plot(a)\n", "\n"]},
             {"cell_type": "markdown", "source": ["plt.plot(x)"]},
             {"cell_type": "code", "source": ["x = 1"]},
             {"cell_type": "code", "source": ["curves(x)"]},
             {"cell_type": "code", "source": ["fig, ax = plt.subplots()"]}]
    assert figure_cells(cells) == [0, 3, 4]
    assert shown_descriptions("coursedata.show_figure('A.')\nshow_figure(f(x))") == ["A.", None]


@pytest.mark.parametrize("notebook", _problem_set_notebooks(), ids=lambda p: p.stem)
def test_problem_set_headings_and_figures(notebook):
    """One title, no skipped heading level, and every figure a cell draws shown with its
    description (``coursedata.show_figure``, never ``plt.show()``, whose image has no ``alt`` in
    JupyterLab: see coursedata/figures.py); a description written in the code is a sentence.
    tests/course/test_problem_sets.py checks in the executed notebook that every image has its ``alt``."""
    nb = json.loads(notebook.read_text())
    headings = []
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            headings += [(len(m.group(1)), m.group(2)[:60])
                         for m in re.finditer(r"(?m)^(#{1,6}) (.*)$", source)]
            for alt in re.findall(r"!\[([^\]]*)\]\(([^)]*)\)", source):
                assert alt_problem(alt[1], alt[0]) is None, (notebook.name, alt)
        elif cell["cell_type"] == "code":
            assert "plt.show(" not in source, (notebook.name, source[:80])
            for alt in shown_descriptions(re.sub(r"(?m)^[%!].*$", "", source)):
                assert alt is None or alt_problem("", alt) is None, (notebook.name, alt)
    code = "".join("".join(c["source"]) + "\n" for c in nb["cells"] if c["cell_type"] == "code")
    shown = "show_figure(" in code
    assert shown or not figure_cells(nb["cells"]), (notebook.name, "draws without show_figure")
    assert sum(level == 1 for level, _ in headings) == 1, (notebook.name, headings)
    assert not skipped_levels(headings), (notebook.name, skipped_levels(headings))


def test_a_figure_is_shown_with_its_description():
    """The display of coursedata.show_figure: the PNG, and an HTML image whose ``alt`` is the
    description (escaped), which JupyterLab prefers to the PNG (rendermime's default order)."""
    from coursedata.figures import figure_bundle
    text = 'The curve "rises" & falls <twice>, as the data set has two clusters of points.'
    bundle, metadata = figure_bundle(b"\x89PNG fake", text)
    img = re.fullmatch(r'<img src="data:image/png;base64,([^"]+)" alt="([^"]*)">',
                       bundle["text/html"])
    assert img and img.group(1) == bundle["image/png"]
    assert html_module.unescape(img.group(2)) == text == metadata["image/png"]["alt"]
    assert text in bundle["text/plain"]
    with pytest.raises(ValueError):
        figure_bundle(b"", "  ")


# --- the keyboard and the screen reader, on a chapter -------------------------------------------

#: Whether an element shows that it has the focus: an outline or a focus ring (box shadow), and
#: the element itself visible (not transparent, as copy buttons are until the code is hovered).
FOCUS_SHOWN_JS = """(el) => {
    const style = getComputedStyle(el);
    const ring = (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 1)
                 || style.boxShadow !== 'none';
    let opaque = true;
    for (let e = el; e; e = e.parentElement) {
        if (parseFloat(getComputedStyle(e).opacity) < 0.5) opaque = false;
    }
    const box = el.getBoundingClientRect();
    return ring && opaque && box.width > 0 && box.height > 0 && el.checkVisibility();
}"""

#: Put the focus on the element that comes just before ``el`` in the page's tab order, so that
#: one press of Tab must reach ``el`` if it is in that order at its place.
FOCUS_BEFORE_JS = """(el) => {
    const all = [...document.querySelectorAll(
        'a[href], button, input, select, textarea, summary, [tabindex]')].filter(e =>
        e.tabIndex >= 0 && !e.disabled && e.checkVisibility());
    const at = all.indexOf(el);
    if (at < 1) return false;
    all[at - 1].focus();
    return document.activeElement === all[at - 1];
}"""


def _tab_to(page, selector: str) -> None:
    """Reach the first element matching ``selector`` with the Tab key, as a keyboard user does."""
    target = page.locator(selector).first
    target.scroll_into_view_if_needed()
    assert target.evaluate(FOCUS_BEFORE_JS), f"{selector} is not in the tab order"
    page.keyboard.press("Tab")
    assert target.evaluate("el => el === document.activeElement"), (
        f"Tab did not reach {selector}: the focus is on "
        + page.evaluate("document.activeElement.outerHTML.slice(0, 200)"))
    page.wait_for_timeout(500)  # the themes fade controls in (0.3 s transitions)
    assert target.evaluate(FOCUS_SHOWN_JS), f"{selector} has the focus but does not show it"


@pytest.fixture
def chapter_page(browser, site):
    context, page = _open(browser, f"{site}{CHAPTERS[0]}.html")
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    yield page
    context.close()


def test_search_by_keyboard(chapter_page, site):
    page = chapter_page
    for _ in range(40):  # from the top of the page: the search field comes early
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('.search-button-field')"):
            break
    else:
        pytest.fail("Tab never reached the search field")
    page.wait_for_timeout(500)
    assert page.evaluate(f"({FOCUS_SHOWN_JS})(document.activeElement)")
    page.keyboard.press("Enter")
    search = page.locator("#pst-search-dialog input[type=search]")
    search.wait_for(state="visible")
    assert search.evaluate("el => el === document.activeElement")
    page.keyboard.type("singular value")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search.html?q=singular*")
    page.locator("#search-results li").first.wait_for(timeout=30_000)
    assert page.locator("#search-results li").count() >= 2


def test_solutions_open_by_keyboard(chapter_page):
    page = chapter_page
    button = ".solution.dropdown button.toggle-button"
    _tab_to(page, button)
    content = page.locator(".solution.dropdown").first.locator("section").first
    assert not content.is_visible()
    page.keyboard.press("Enter")
    content.wait_for(state="visible")
    assert page.locator(button).first.get_attribute("aria-expanded") == "true"


def test_copy_buttons_work_by_keyboard(chapter_page):
    page = chapter_page
    _tab_to(page, "button.copybtn")
    page.keyboard.press("Enter")
    copied = page.evaluate("navigator.clipboard.readText()")
    code = page.locator("div.cell_input pre").first.inner_text()
    assert copied.strip() and copied.strip() in code


def test_jupyterlite_button_by_keyboard(chapter_page):
    page = chapter_page
    menu = "button.dropdown-toggle:has(+ .dropdown-menu .btn-launch-jupyterlite-button)"
    _tab_to(page, menu)
    page.keyboard.press("Enter")
    lite = page.locator(".btn-launch-jupyterlite-button").first
    lite.wait_for(state="visible")
    for _ in range(5):  # the menu's items, one Tab each
        if lite.evaluate("el => el === document.activeElement"):
            break
        page.keyboard.press("Tab")
    assert lite.evaluate("el => el === document.activeElement")
    page.wait_for_timeout(500)
    assert lite.evaluate(FOCUS_SHOWN_JS)
    with page.context.expect_page() as opened:
        page.keyboard.press("Enter")
    new = opened.value
    assert f"lite/notebooks/index.html?path={CHAPTERS[0]}.ipynb" in new.url
    new.close()


def test_every_formula_has_mathml_and_speech_for_screen_readers(chapter_page):
    """Each formula: its visual form hidden from screen readers, a MathML copy they can read, and
    speech text (MathJax's Speech Rule Engine, as the MathML's ``alttext``) for those that read
    no MathML; the speech rules come from the site (the page has no network but the site)."""
    counts = chapter_page.evaluate("""() => {
        const all = [...document.querySelectorAll('mjx-container')];
        const maths = all.map(c => c.querySelector('mjx-assistive-mml math')).filter(m => m);
        return {formulas: all.length, mathml: maths.length,
            hidden: all.filter(c => c.querySelector(':scope > mjx-math')
                ?.getAttribute('aria-hidden') === 'true').length,
            readable: all.filter(c => c.querySelector('mjx-assistive-mml')
                ?.getAttribute('aria-hidden') !== 'true').length,
            speech: maths.filter(m => (m.getAttribute('alttext') || '').trim()
                && m.getAttribute('alttext') === m.getAttribute('aria-label')).length,
            distinct: new Set(maths.map(m => m.getAttribute('alttext'))).size};
    }""")
    assert counts["formulas"] >= 10
    assert counts["mathml"] == counts["formulas"] == counts["hidden"] == counts["readable"], counts
    assert counts["speech"] == counts["formulas"], counts
    assert counts["distinct"] > counts["formulas"] / 4, counts


#: What the focus is on, after a press of Tab: a control (something a reader operates), a formula,
#: or an element that scrolls (Chromium puts a scroll container with no focusable child in the
#: tab order, so that the keyboard can scroll it: a display formula or code wider than the page).
TAB_STOP_JS = """() => {
    const el = document.activeElement;
    const control = el.matches('a[href], button, input, select, textarea, summary, '
        + '[role=button], [role=link], [role=tab], [role=menuitem], [role=checkbox], [role=switch]');
    return {control, formula: !!el.closest('mjx-container'),
            scrolls: el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1,
            toggle: el.matches('.solution.dropdown button.toggle-button'),
            what: el.outerHTML.slice(0, 120), body: el === document.body};
}"""

#: The chapter whose tab order is counted (the one with the most formulas and solutions).
TAB_CHAPTER = "chapters/05_density_estimation"
#: Tab presses within which the first solution's toggle must come on it (481 before formulas
#: left the tab order).
FIRST_TOGGLE_WITHIN = 160


def tab_stops(page, limit: int = 1500) -> list[dict]:
    """Every stop of the page's tab order, from the top, one press of Tab each."""
    stops: list[dict] = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        stop = page.evaluate(TAB_STOP_JS)
        if stop["body"] or (stops and stop["what"] == stops[0]["what"]):
            break
        stops.append(stop)
    return stops


def test_a_chapters_tab_stops_are_controls_and_the_first_solution_comes_early(browser, site):
    """Tab moves from control to control: no formula is a stop (but one that scrolls sideways,
    which the keyboard must be able to scroll), nothing else that is not a control either, and
    the first solution's toggle comes within FIRST_TOGGLE_WITHIN presses."""
    context, page = _open(browser, f"{site}{TAB_CHAPTER}.html")
    try:
        page.wait_for_timeout(500)
        stops = tab_stops(page)
    finally:
        context.close()
    assert len(stops) >= 20, stops
    idle = [s["what"] for s in stops if not s["control"] and not s["scrolls"]]
    assert idle == [], f"{len(idle)} Tab stops that are neither controls nor scroll: {idle[:5]}"
    formulas = [s["what"] for s in stops if s["formula"] and not s["scrolls"]]
    assert formulas == [], formulas[:5]
    first = next(i for i, s in enumerate(stops, 1) if s["toggle"])
    assert first <= FIRST_TOGGLE_WITHIN, f"the first solution is Tab stop {first}"


def test_solution_toggles_are_named_with_the_text_they_show(chapter_page):
    """WCAG 2.5.3: each toggle's name holds its visible hint ("Click to show", then "Click to
    hide" once open), not only "Toggle hidden content"."""
    page = chapter_page
    names = page.evaluate("""() => [...document.querySelectorAll('button.toggle-button')].map(
        b => [b.getAttribute('aria-label') || '', b.dataset.toggleHint || ''])""")
    assert len(names) >= 2
    assert all(hint and hint in name and name != hint for name, hint in names), names[:3]
    button = page.locator(".solution.dropdown button.toggle-button").first
    button.click()
    page.wait_for_function("""(b) => b.getAttribute('aria-label').includes(b.dataset.toggleHint)
        && b.getAttribute('aria-expanded') === 'true'""", arg=button.element_handle())
    assert button.get_attribute("aria-label").startswith(button.get_attribute("data-toggle-hint"))
    assert button.get_attribute("data-toggle-hint") != names[0][1]


def test_formulas_join_the_tab_order_on_request_and_show_their_focus(chapter_page):
    """The explorer's switch puts formulas back in the tab order, and an inline formula with
    the focus changes pixels (its focus ring is not clipped by ``span.math``)."""
    page = chapter_page
    switch = page.locator("button.course-formula-explorer")
    assert switch.count() == 1 and switch.get_attribute("aria-pressed") == "false"
    assert page.evaluate("""() => [...document.querySelectorAll('mjx-container[tabindex]')]
        .every(c => c.scrollWidth > c.clientWidth + 1)"""), "a formula that does not scroll is a stop"
    switch.click()
    assert switch.get_attribute("aria-pressed") == "true"
    formula = page.locator("p mjx-container[tabindex='0']").first
    formula.scroll_into_view_if_needed()
    box = formula.bounding_box()
    clip = {"x": box["x"] - 6, "y": box["y"] - 6, "width": box["width"] + 12,
            "height": box["height"] + 12}
    before = page.screenshot(clip=clip)
    assert formula.evaluate(FOCUS_BEFORE_JS)
    page.keyboard.press("Tab")
    assert formula.evaluate("el => el === document.activeElement")
    assert page.screenshot(clip=clip) != before, "the focused formula shows no focus"


def test_copying_code_is_announced(chapter_page):
    page = chapter_page
    _tab_to(page, "button.copybtn")
    page.keyboard.press("Enter")
    status = page.locator("[role=status]")
    status.filter(has_text="Copied!").wait_for(state="attached")


def test_feedback_gives_every_score_in_words_not_only_in_colour():
    scores = [{"grade_id": "center_visible", "points": 2.0, "max_points": 2.0, "message": "ok"},
              {"grade_id": "center_hidden", "points": 1.0, "max_points": 2.0, "message": "half"},
              {"grade_id": "pca_hidden", "points": 0.0, "max_points": 3.0, "message": "wrong"},
              {"grade_id": "derivation", "points": None, "max_points": 4.0, "message": "by hand"}]
    record = {"student_id": "ann", "problem_set": "ps1_pca", "status": "awaiting-manual-grading",
              "scores": scores, "notes": [], "total": 3.0, "max_auto": 7.0}
    page = feedback_html(record)
    cells = re.findall(r"<td class='(\w*)'>([^<]*)</td>", page)
    assert cells == [("ok", "2 / 2 (full marks)"), ("partial", "1 / 2 (part of the points)"),
                     ("bad", "0 / 3 (no points)"), ("", "– / 4")], cells


# --- reflow and text at 200 % ------------------------------------------------------------------

#: The narrowest width WCAG 1.4.10 (reflow) asks for: 320 CSS pixels.
REFLOW_WIDTH = 320

#: How far the page scrolls sideways, and what sticks out of the window with no box around it
#: that scrolls or clips.
WIDER_THAN_WINDOW_JS = """() => { const root = document.documentElement;
    return {over: root.scrollWidth - root.clientWidth,
            what: [...document.querySelectorAll('article *, main *')]
                .filter(e => e.getBoundingClientRect().right > root.clientWidth + 1)
                .filter(e => ![...function* () { for (let a = e.parentElement; a;
                        a = a.parentElement) yield a; }()]
                    .some(a => getComputedStyle(a).overflowX !== 'visible'))
                .slice(-3).map(e => e.outerHTML.slice(0, 100))}; }"""


@pytest.mark.parametrize("name", BOOK_PAGES + GRADER_PAGES)
def test_a_page_does_not_scroll_sideways_at_320_px(browser, name, site):
    """WCAG 1.4.10: at 320 px a page, the book's or the grader's, is no wider than the window
    (what is wider, a display formula, code or a data table, scrolls in its own box)."""
    context = browser.new_context(viewport={"width": REFLOW_WIDTH, "height": 640})
    try:
        page = context.new_page()
        page.goto(_url(site, name), wait_until="load")
        page.evaluate("async () => { if (window.MathJax?.startup?.promise) "
                      "await MathJax.startup.promise; }")
        wider = page.evaluate(WIDER_THAN_WINDOW_JS)
    finally:
        context.close()
    assert wider["over"] <= 0, f"{name} scrolls sideways by {wider['over']} px: {wider['what']}"


#: The words of the article (the main content where a page has none, as the search page) that a
#: box with ``overflow: hidden`` cuts off (not formulas: MathJax's
#: own boxes are left to their scroll and focus rules above; text in a box that scrolls, as code
#: does, is not cut).
CUT_WORDS_JS = """() => {
    const cut = [];
    const walker = document.createTreeWalker(
        document.querySelector('article') || document.querySelector('main'), NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const el = node.parentElement;
        if (!node.textContent.trim() || !el.checkVisibility() || el.closest('mjx-container')
            || el.closest('.visually-hidden, .sr-only')) continue;
        let clip = el;  // the nearest box that does not let it overflow: one that scrolls is fine
        while (clip && getComputedStyle(clip).overflowX === 'visible') clip = clip.parentElement;
        if (!clip || !['hidden', 'clip'].includes(getComputedStyle(clip).overflowX)) continue;
        const right = clip.getBoundingClientRect().right;
        const range = document.createRange();
        range.selectNodeContents(node);
        if ([...range.getClientRects()].some(r => r.width > 0 && r.right > right + 1)) {
            cut.push(node.textContent.trim().slice(0, 40));
        }
    }
    return cut;
}"""


#: Every inline formula of the article drawn wider than its line (its mjx-math: MathJax's hidden
#: assistive MathML overflows most formulas by a few pixels): whether the reader can still see all
#: of it (its box scrolls rather than hiding what overflows), reach it by keyboard (a Tab stop) and
#: hear what it is (a name).
WIDER_JS = "el => el.querySelector('mjx-math')?.getBoundingClientRect().width > el.clientWidth + 1"
WIDE_INLINE_FORMULAS_JS = f"""() => [...document.querySelectorAll('article span.math')]
    .filter(el => el.checkVisibility() && ({WIDER_JS})(el))
    .map(el => ({{what: el.textContent.trim().slice(0, 40),
                  scrolls: ['auto', 'scroll'].includes(getComputedStyle(el).overflowX),
                  stop: el.tabIndex === 0, named: !!el.getAttribute('aria-label')}}))"""

#: The inline formulas that are Tab stops though they fit their line.
IDLE_INLINE_STOPS_JS = f"""() => [...document.querySelectorAll('article span.math[tabindex]')]
    .filter(el => !({WIDER_JS})(el)).map(el => el.textContent.slice(0, 40))"""


@pytest.mark.parametrize("name", BOOK_PAGES)
def test_a_page_at_200_percent_text_loses_nothing_and_keeps_the_keyboard(browser, site, name):
    """WCAG 1.4.4, 1.4.10 and 2.1.1 with the text at 200 % (set after the page is shown, as a
    reader does: the window's width unchanged):

    - the page does not scroll sideways (a test's path in inline code made the authors' guide
      946 px wider than the window);
    - no word of the article is cut by a box that hides what overflows (the Overview's
      "decomposition" was);
    - an inline formula wider than its line scrolls in its line, as a named Tab stop (it was cut
      by pydata-sphinx-theme's ``span.math {overflow: hidden}``: chapter 1's Overview showed
      X = QSU^T as "X = QS"; MathJax 3.2 breaks no inline formula:
      https://docs.mathjax.org/en/v3.2/output/linebreaks.html);
    - every box that now scrolls (code, a table, an output) is a Tab stop: axe finds no
      scrollable region the keyboard cannot reach (the theme checks at load and on a window's
      resize only; the tables of the maintainers' guide and the code of the grading guide were
      missed);
    - back at 100 %, a formula that fits is no Tab stop again."""
    context, page = _open(browser, f"{site}{name}.html")
    try:
        page.evaluate("document.documentElement.style.fontSize = '200%'")
        page.wait_for_timeout(300)
        wider = page.evaluate(WIDER_THAN_WINDOW_JS)
        cut = page.evaluate(CUT_WORDS_JS)
        wide = page.evaluate(WIDE_INLINE_FORMULAS_JS)
        unreachable = [v for v in axe_violations(page, ["wcag2a", "wcag21a", "best-practice"])
                       if v["id"] == "scrollable-region-focusable"]
        page.evaluate("document.documentElement.style.fontSize = ''")
        page.wait_for_timeout(300)
        idle = page.evaluate(IDLE_INLINE_STOPS_JS)
    finally:
        context.close()
    assert wider["over"] <= 0, f"{name} scrolls sideways by {wider['over']} px: {wider['what']}"
    assert cut == [], f"{name}: {len(cut)} texts cut at 200 %: {cut[:5]}"
    lost = [f for f in wide if not (f["scrolls"] and f["stop"] and f["named"])]
    assert lost == [], f"{name}: {len(lost)} of {len(wide)} wide inline formulas: {lost[:3]}"
    assert unreachable == [], [(v["id"], [n["target"] for n in v["nodes"]]) for v in unreachable]
    assert idle == [], f"{name}: inline formulas that fit but are Tab stops: {idle[:3]}"
