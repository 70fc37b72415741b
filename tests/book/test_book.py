"""The whole book builds from scratch with warnings as errors, and every page reads as it should.

The build runs once per session into a temporary folder (no execution cache, so every chapter is
executed as in CI; fixture ``html`` in conftest.py); the tests then read the HTML as a reader's
browser gets it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests import ROOT

pytestmark = pytest.mark.slow


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = []
    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        files += [c["file"] for c in part["chapters"]]
    return files


CHAPTERS = [f for f in _toc_files() if f.startswith("chapters/")]


class _ReaderCode(HTMLParser):
    """Collect the text of the code a reader sees: cell inputs and Python code blocks.

    A myst-nb cell renders as ``<div class="cell_input ...">`` holding a highlighted ``<pre>``;
    a fenced code block renders as ``<div class="highlight-python ...">`` (or ``ipython3``).
    Cell outputs (``<div class="cell_output ...">``) are text the code printed, not code, and
    are skipped. Cells tagged ``remove-cell`` are not in the HTML at all.
    """

    CODE = ("cell_input", "highlight-python", "highlight-ipython", "highlight-default")

    def __init__(self):
        super().__init__()
        self.stack: list[tuple[str, bool]] = []     # (tag, inside reader-visible code?)
        self.blocks: list[list[str]] = []

    def _inside(self) -> bool:
        return bool(self.stack) and self.stack[-1][1]

    def handle_starttag(self, tag, attrs):
        if tag in ("br", "img", "hr", "meta", "link", "input", "wbr"):
            return
        classes = (dict(attrs).get("class") or "").split()
        if any(c.startswith("cell_output") for c in classes):
            inside = False
        elif any(c.startswith(self.CODE) for c in classes) and not self._inside():
            inside = True
            self.blocks.append([])
        else:
            inside = self._inside()
        self.stack.append((tag, inside))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if self._inside():
            self.blocks[-1].append(data)


def reader_code_blocks(page: str) -> list[str]:
    """The reader-visible code blocks of an HTML page, as plain text."""
    parser = _ReaderCode()
    parser.feed(page)
    return ["".join(block) for block in parser.blocks]


def visible_asserts(page: str) -> list[str]:
    """Lines of reader-visible code that are ``assert`` statements."""
    return [line.strip() for block in reader_code_blocks(page)
            for line in block.splitlines() if re.match(r"\s*assert\b", line)]


def test_visible_asserts_are_found_in_cell_inputs_only():
    """The check below can fail: an assert in a cell input is found, one in an output is not."""
    page = (
        '<div class="cell docutils container"><div class="cell_input docutils container">'
        '<div class="highlight-ipython3 notranslate"><div class="highlight"><pre><span></span>'
        '<span class="n">x</span> <span class="o">=</span> <span class="mi">1</span>\n'
        '<span class="k">assert</span> <span class="n">x</span> <span class="o">==</span> '
        '<span class="mi">1</span>\n</pre></div></div></div>'
        '<div class="cell_output docutils container"><div class="output stream highlight-myst-ansi'
        ' notranslate"><div class="highlight"><pre><span></span>assert in printed text\n'
        '</pre></div></div></div></div>'
    )
    assert visible_asserts(page) == ["assert x == 1"]
    assert visible_asserts(page.replace("assert</span>", "print</span>")) == []


def test_every_chapter_file_is_in_the_toc():
    on_disk = {f"chapters/{p.stem}" for p in (ROOT / "chapters").glob("*.md")}
    assert on_disk == set(CHAPTERS)


def test_intro_and_bibliography(html):
    intro = (html / "intro.html").read_text()
    assert "Matrix Factorization and Probabilistic Models" in intro
    for chapter in CHAPTERS:
        assert f'href="{chapter}.html"' in intro, f"the navigation misses {chapter}"
    bib = (html / "bibliography.html").read_text()
    assert bib.count('class="citation"') >= 5 or bib.count("<dt") >= 5


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_page_is_complete(html, chapter):
    page = (html / f"{chapter}.html").read_text()
    figures = re.findall(r"<figure.*?</figure>", page, flags=re.S)
    with_images = [f for f in figures if "<img" in f and "<figcaption" in f]
    assert len(with_images) >= 2, f"{chapter}: {len(with_images)} captioned figures"
    for fig in with_images:
        src = re.search(r'<img[^>]+src="([^"]+)"', fig).group(1)
        assert (html / chapter).parent.joinpath(src).resolve().is_file(), src
    assert not re.search(r'class="output (traceback|stderr)', page), f"{chapter}: error output"
    assert "Traceback (most recent call last)" not in page
    assert page.count('class="exercise admonition"') >= 3
    assert page.count('class="solution dropdown admonition"') + page.count(
        "solution dropdown") >= 3
    assert page.count('class="math notranslate nohighlight"') >= 10, "maths missing"
    code = reader_code_blocks(page)
    assert len(code) >= 5, f"{chapter}: only {len(code)} code cells visible"
    shown = visible_asserts(page)
    assert not shown, f"{chapter}: checks visible to the reader (tag them remove-cell): {shown[:3]}"
    assert re.search(r'id="equation-', page), f"{chapter}: no labelled equation"
    downloads = re.findall(r'href="([^"]*_downloads/[^"]+/(ps\d_[a-z_]+)\.ipynb)"', page)
    assert downloads, f"{chapter}: no problem set to download"
    for href, _ in downloads:
        assert (html / chapter).parent.joinpath(href).resolve().is_file(), href


def test_strict_build_refuses_the_placeholder_address(tmp_path):
    """``MFPM_REQUIRE_SITE=1 make book`` (a publishing job) stops at once, saying why, while
    ``_config.yml`` still has the placeholder address; by default the build only warns."""
    from autograder.authoring.release import REQUIRE_SITE, placeholder_warning, site_url

    if placeholder_warning(site_url()) is None:  # the course's own address: nothing to refuse
        return
    jb = Path(sys.executable).parent / "jupyter-book"
    done = subprocess.run([str(jb), "build", str(ROOT), "--path-output", str(tmp_path),
                           "--warningiserror", "--quiet"], capture_output=True, text=True,
                          env=dict(os.environ, **{REQUIRE_SITE: "1"}), timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert "the course site's address is still the placeholder" in output, output[-3000:]
    assert not list(tmp_path.rglob("problem_sets.html")), "the book was built anyway"


def test_a_chapter_cell_that_raises_fails_the_strict_build(tmp_path):
    """The book build is what executes the chapters in ``make test`` (no other run of them in the
    dev environment): with the book's execution settings, a code cell that raises stops the
    strict build and names its page."""
    header = (ROOT / "chapters" / "03_mle.md").read_text().split("\n---\n", 1)[0] + "\n---\n"
    book = tmp_path / "book"
    book.mkdir()
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    (book / "_config.yml").write_text(yaml.safe_dump(
        {"title": "A broken chapter", "only_build_toc_files": True,
         "execute": config["execute"]}))
    (book / "_toc.yml").write_text("format: jb-book\nroot: intro\nchapters:\n  - file: broken\n")
    (book / "intro.md").write_text("# Intro\n\nA page.\n")
    (book / "broken.md").write_text(header + "\n# Broken\n\n```{code-cell} ipython3\n"
                                    "x = 1\n```\n\n```{code-cell} ipython3\n"
                                    "raise ValueError('this chapter does not run')\n```\n")
    jb = Path(sys.executable).parent / "jupyter-book"
    done = subprocess.run([str(jb), "build", str(book), "--path-output", str(tmp_path / "out"),
                           "--warningiserror", "--keep-going", "--quiet"],
                          capture_output=True, text=True, timeout=600)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output[-3000:]
    assert "broken" in output and "Executing notebook failed" in output, output[-3000:]
