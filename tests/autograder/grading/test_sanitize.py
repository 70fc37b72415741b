"""Student content never runs in the instructor's browser.

One ps1_pca submission carries every kind of active content a student could hide in a notebook:
raw HTML in written answers (``<script>``, ``onerror``, ``<svg onload>``, ``javascript:`` links,
``<iframe srcdoc>``, ``<object>``, ``<embed>``, ``<style>``, ``<meta http-equiv=refresh>``), a
markdown ``javascript:`` link, an SVG attachment, rich outputs (``text/html`` with a script,
``application/javascript``, an SVG with a script, a widget view and the notebook's widget state,
``text/markdown``), a ``grade_id`` that formgrader writes unescaped, and an exception message
that reaches the feedback and the report. It is graded through the real path (``python -m
autograder grade --unsafe``: the sandbox is not the point here, so any machine runs this), and
every file the grader writes for people to read is opened in headless Chromium: the
``submitted/`` and ``autograded/`` notebooks, rendered with formgrader's own exporter and with
nbconvert's default one, the feedback page and the report.

Each payload, if it ran, would request ``http://127.0.0.1:PORT/PAYLOAD-<kind>`` from a server the
test runs and set the page's title. As a control, the submission as handed in, rendered the same
way, sets off every payload Chromium runs without a click: so the harness does see a payload fire.
Payloads that need a click or a network (``javascript:`` links, widgets, SVG shown as an image)
are looked for in the page Chromium built instead: no attribute, script or style may hold one.
"""

from __future__ import annotations

import base64
import html.parser
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.grading.sanitize import (
    SHOWN_AS_TEXT,
    clean_markdown,
    safe_notebook_bytes,
    sanitize_notebook,
)
from tests import ROOT
from tests import submissions as sb
from tests.browser import chromium, dump_dom
from tests.psharness import generate_release

PS, NB, STUDENT = "ps1_pca", "ps1_pca.ipynb", "mallory"
MARK = "PAYLOAD-"
HONEST = "The first principal direction maximises the variance of the projections."
FORMULA = "$x^2$"
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
       "rkJggg==")
#: The payloads Chromium runs on its own when the unsanitized notebook is opened.
FIRES_UNSANITIZED = {"md-script", "md-img-onerror", "md-svg-onload", "md-iframe-srcdoc",
                     "md-object", "md-embed", "md-style", "md-meta-refresh", "out-html",
                     "out-javascript", "out-markdown", "grade-id"}

# --- the payloads ----------------------------------------------------------------------------

def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Payloads:
    """Every payload of the submission, each calling ``base/PAYLOAD-<kind>`` if it runs."""

    def __init__(self, base: str):
        self.base = base

    def js(self, kind: str) -> str:
        return f"new Image().src='{self.base}/{MARK}{kind}';document.title='fired {kind}'"

    def markdown(self) -> str:
        """A written answer: honest text and maths, then raw HTML of every kind."""
        svg = f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"{self.js('md-embed')}\"/>"
        return "\n\n".join([
            f"{HONEST} Its variance is {FORMULA}, and $a<b$ for $a = 1$.",
            f"<script>{self.js('md-script')}</script>",
            f'<img src=x onerror="{self.js("md-img-onerror")}">',
            f'<svg onload="{self.js("md-svg-onload")}"><circle r="1"/></svg>',
            f'<a href="javascript:{self.js("md-a-javascript")}">see here</a>',
            f'<iframe srcdoc="<script>{self.js("md-iframe-srcdoc")}</script>"></iframe>',
            f'<object data="data:text/html;base64,'
            f'{_b64("<script>" + self.js("md-object") + "</script>")}"></object>',
            f'<embed src="data:image/svg+xml;base64,{_b64(svg)}">',
            f"<style>body {{background: url({self.base}/{MARK}md-style)}}"
            f" p {{background: url('javascript:{self.js('md-style-js')}')}}</style>",
            f'<meta http-equiv="refresh" content="1;url={self.base}/{MARK}md-meta-refresh">',
        ])

    def bundles(self) -> list[dict]:
        """Rich outputs, one display each, then an honest PNG."""
        svg = (f"<svg xmlns='http://www.w3.org/2000/svg' onload=\"{self.js('out-svg')}\">"
               f"<script>{self.js('out-svg-script')}</script></svg>")
        return [
            {"text/html": f"<p>html output</p><script>{self.js('out-html')}</script>",
             "text/plain": "html output"},
            {"application/javascript": self.js("out-javascript"), "text/plain": "js output"},
            {"image/svg+xml": svg},
            {"application/vnd.jupyter.widget-view+json":
                {"model_id": f"{MARK}out-widget", "version_major": 2, "version_minor": 0},
             "text/plain": "widget output"},
            {"text/markdown": f'<img src=x onerror="{self.js("out-markdown")}"> markdown output'},
            {"image/png": PNG, "text/plain": "<png figure>"},
        ]

    def widget_state(self) -> dict:
        model = {"model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls",
                 "model_module_version": "2.0.0",
                 "state": {"value": f'<img src=x onerror="{self.js("widget-state")}">'}}
        return {"application/vnd.jupyter.widget-state+json":
                {"version_major": 2, "version_minor": 0, "state": {f"{MARK}widget": model}}}

    def exception(self) -> str:
        return f'<img src=x onerror="{self.js("feedback")}">'


def hostile_submission(builder: sb.Builder, payloads: Payloads) -> bytes:
    """Honest answers to ps1_pca with every payload added (see the module docstring)."""
    nb = builder.correct()
    sb.cell(nb, "derivation").source = payloads.markdown()
    numerics = sb.cell(nb, "numerics")
    numerics.source = f"{HONEST}\n\n![my figure](attachment:figure.svg)"
    svg = (f"<svg xmlns='http://www.w3.org/2000/svg'><script>{payloads.js('attachment')}"
           f"</script></svg>")
    numerics["attachments"] = {"figure.svg": {"image/svg+xml": _b64(svg)}}
    sb.replace(nb, "center", "return X - mean, mean",
               f"raise ValueError({payloads.exception()!r})")
    outputs = [nbformat.v4.new_output("display_data", data=b) for b in payloads.bundles()]
    shown = nbformat.v4.new_code_cell(
        f"from IPython.display import display\nfor b in {payloads.bundles()!r}:\n"
        f"    display(b, raw=True)", outputs=outputs)
    link = nbformat.v4.new_markdown_cell(
        f"{HONEST} [A link](javascript:location='{payloads.base}/{MARK}md-link') in markdown.")
    nb.cells += [shown, link]
    nb.metadata["widgets"] = payloads.widget_state()
    raw = json.loads(nbformat.writes(nb))
    # formgrader writes a grade_id into the page unescaped
    raw["cells"].append({"cell_type": "markdown", "id": "gradeid", "source": "A task.",
                         "metadata": {"nbgrader": {
                             "grade": True, "solution": False, "locked": False, "points": 1,
                             "grade_id": f'x" autofocus onfocus="{payloads.js("grade-id")}" y="'}}})
    return json.dumps(raw).encode()


# --- the browser and the server it would call ------------------------------------------------

class Listener:
    """An HTTP server on 127.0.0.1 that records the payloads that call it."""

    def __init__(self):
        hits = self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 - the name http.server calls
                hits.append(self.path.lstrip("/"))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def fired(self) -> set[str]:
        return {h[len(MARK):] for h in self.hits if h.startswith(MARK)}

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def open_in_chromium(page: Path, listener: Listener) -> tuple[str, set[str]]:
    """The DOM Chromium built from ``page`` and the payloads that called the listener."""
    listener.hits.clear()
    dom = dump_dom(page.resolve().as_uri(), budget_ms=5000)
    time.sleep(0.5)  # a request sent just before Chromium quit
    return dom, listener.fired()


def render(notebook: Path, template: str, out: Path) -> Path:
    """``notebook`` as HTML: ``formgrade`` as nbgrader's formgrader renders it, or ``lab``."""
    from nbconvert.exporters import HTMLExporter
    from nbgrader.server_extensions.formgrader import handlers
    from traitlets.config import Config

    config = Config()
    resources = {}
    if template == "formgrade":
        config.HTMLExporter.template_name = "formgrade"
        config.HTMLExporter.extra_template_basedirs = [handlers.template_path]
        # formgrader's own scripts, loaded from the installed package as the server would
        static = Path(handlers.static_path).parents[1].as_uri()
        resources = {"assignment_id": PS, "notebook_id": Path(NB).stem, "submission_id": "s1",
                     "index": 0, "total": 1, "base_url": static, "student": STUDENT,
                     "last_name": "", "first_name": "", "notebook_path": NB}
    page, _ = HTMLExporter(config=config).from_filename(str(notebook), resources=resources)
    target = out / f"{notebook.parent.parent.parent.name}-{notebook.stem}-{template}.html"
    target.write_text(page, encoding="utf-8")
    return target


class _Elements(html.parser.HTMLParser):
    """Where a payload could still act in a page: attributes, scripts, styles, embedded frames."""

    _HOSTS = ("script", "style", "iframe", "object", "svg", "noscript")  # elements with content
    _SCHEMES = ("javascript:", "vbscript:", "data:text/html", "data:image/svg")

    def __init__(self):
        super().__init__()
        self.found: list[str] = []
        self.inside: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = (value or "").strip().lower()
            if MARK.lower() in value or value.startswith(self._SCHEMES) or (
                    name.startswith("on") and "fired" in value):
                self.found.append(f"<{tag} {name}={value[:80]!r}>")
        if tag in ("iframe", "object", "embed", "frame") or (
                tag == "script" and "widget" in dict(attrs).get("type", "")):
            self.found.append(f"<{tag}>")
        if tag in self._HOSTS:
            self.inside.append(tag)

    def handle_endtag(self, tag):
        if self.inside and self.inside[-1] == tag:
            self.inside.pop()

    def handle_data(self, data):
        if self.inside and MARK in data:
            self.found.append(f"<{self.inside[-1]}> holding {data.strip()[:80]!r}")


def active_traces(dom: str) -> list[str]:
    parser = _Elements()
    parser.feed(dom)
    return parser.found


def title_of(page: str) -> str:
    start = page.index("<title>") + len("<title>")
    return page[start:page.index("</title>", start)].strip()


# --- grading the submission ------------------------------------------------------------------

#: Their users are slow (tests/conftest.py): a grading run of the hostile submission.
SLOW_FIXTURES = ("graded",)


@pytest.fixture(scope="module")
def graded():
    """The hostile submission graded by the CLI into a temporary course; the listener."""
    chromium()  # skip (or fail, on CI) before grading
    base = Path(tempfile.mkdtemp(prefix="sanitize-test-"))
    listener = Listener()
    try:
        course, subs, out = base / "course", base / "submissions", base / "out"
        course.mkdir()
        release = generate_release([PS], course)
        builder = sb.Builder(course / "source" / PS / NB, release / PS / NB)
        data = hostile_submission(builder, Payloads(listener.base))
        (subs / STUDENT).mkdir(parents=True)
        (subs / STUDENT / NB).write_bytes(data)
        done = subprocess.run(
            [sys.executable, "-m", "autograder", "grade", PS, str(subs), "--out", str(out),
             "--course", str(course), "--gradebook", "--unsafe", "--workers", "1",
             "--timeout", "60", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        (base / "pages").mkdir()
        yield {"base": base, "course": course, "out": out, "original": subs / STUDENT / NB,
               "listener": listener, "pages": base / "pages"}
    finally:
        listener.close()
        shutil.rmtree(base, ignore_errors=True)


def written(graded, folder: str) -> Path:
    return graded["course"] / folder / STUDENT / PS / NB


def test_the_unsanitized_submission_fires_its_payloads(graded):
    """The control: the harness sees a payload fire (so the tests below could fail)."""
    fired = set()
    for template in ("formgrade", "lab"):
        page = render(graded["original"], template, graded["pages"])
        dom, hits = open_in_chromium(page, graded["listener"])
        fired |= hits
    assert FIRES_UNSANITIZED <= fired, FIRES_UNSANITIZED - fired


@pytest.mark.parametrize("template", ["formgrade", "lab"])
@pytest.mark.parametrize("folder", ["submitted", "autograded"])
def test_written_notebooks_fire_nothing(graded, folder, template):
    page = render(written(graded, folder), template, graded["pages"])
    dom, fired = open_in_chromium(page, graded["listener"])
    assert fired == set()
    assert title_of(dom) == title_of(page.read_text())
    assert active_traces(dom) == []
    # the honest answer is still there: text, maths and the PNG figure
    assert HONEST in dom and FORMULA in dom and PNG in dom
    assert "html output" in dom


@pytest.mark.parametrize("page", ["feedback", "report"])
def test_feedback_and_report_fire_nothing(graded, page):
    """Student text reaches the feedback page (the hostile grade_id, named in a note) and fires
    nothing; the exception's message reaches neither page (issue 37: it is never shown)."""
    path = (graded["out"] / "feedback" / STUDENT / f"{Path(NB).stem}.html" if page == "feedback"
            else graded["out"] / "report.html")
    text = path.read_text()
    if page == "feedback":
        assert f"{MARK}grade-id" in text  # the student's grade_id did reach the page
    assert f"{MARK}feedback" not in text  # the exception's message did not
    dom, fired = open_in_chromium(path, graded["listener"])
    assert fired == set()
    assert title_of(dom) == title_of(text)
    assert active_traces(dom) == []


# --- the sanitizer on its own ----------------------------------------------------------------

def test_written_answers_of_the_course_are_kept_as_they_are():
    for path in sorted((ROOT / "course" / "source").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        assert [c.source for c in sanitize_notebook(nb).cells] == [c.source for c in nb.cells]


def test_markdown_keeps_maths_text_and_safe_links():
    source = (f"{HONEST} $a<b$ and $$\\begin{{pmatrix}} a & b \\\\ c & d \\end{{pmatrix}}$$\n\n"
              "> a quote <https://example.org> and <img src=x onerror=alert(1)>")
    cleaned = clean_markdown(source)
    assert "onerror" not in cleaned and "<img" in cleaned
    for kept in (HONEST, "$a< b$", "a & b", "> a quote", "(https://example.org)"):
        assert kept in cleaned


def test_markdown_link_to_javascript_is_shown_as_text():
    cleaned = clean_markdown("[x](javascript:alert(1)) and $x^2$")
    assert cleaned.startswith(f"*{SHOWN_AS_TEXT}*") and "$x^2$" in cleaned


def test_outputs_attachments_and_metadata_are_cleaned():
    nb = nbformat.v4.new_notebook(metadata={"widgets": {"state": {}}, "title": "<b>x</b>"})
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data={"image/svg+xml": "<svg/>"},
                               metadata={"image/svg+xml": {"isolated": True}}),
        nbformat.v4.new_output("display_data", data={"image/png": 'AA" onerror="x'})]),
        nbformat.v4.new_markdown_cell("![a](attachment:a.svg)",
                                      metadata={"tags": ["x"], "nbgrader": {"grade_id": "a b"}})]
    nb.cells[1].attachments = {"a.svg": {"image/svg+xml": _b64("<svg/>")}}
    nb.cells[0].execution_count = "1]<img src=x onerror=alert(1)>"  # written unescaped
    clean = sanitize_notebook(nb)
    assert clean.metadata == {} and clean.cells[0].execution_count is None
    assert [o.data for o in clean.cells[0].outputs] == [
        {"text/plain": "[output not shown: image/svg+xml]"},
        {"text/plain": "[output not shown: image/png]"}]
    assert clean.cells[1].metadata == {}
    assert list(clean.cells[1].attachments["a.svg"]) == ["image/png"]
    nbformat.validate(clean)


def test_an_unreadable_submission_is_not_copied():
    assert safe_notebook_bytes(b"<script>alert(1)</script>") is None
    assert safe_notebook_bytes(None) is None
