"""The whole book builds from scratch with warnings as errors, and every page reads as it should.

The build runs once per session into a temporary folder (no execution cache, so every chapter is
executed as in CI); the tests then read the HTML as a reader's browser gets it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = []
    for part in toc.get("parts", [{"chapters": toc.get("chapters", [])}]):
        files += [c["file"] for c in part["chapters"]]
    return files


CHAPTERS = [f for f in _toc_files() if f.startswith("chapters/")]


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("book")
    jb = Path(sys.executable).parent / "jupyter-book"
    done = subprocess.run([str(jb), "build", str(ROOT), "--path-output", str(out),
                           "--warningiserror", "--keep-going", "--quiet"],
                          capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-5000:]
    return out / "_build" / "html"


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
    assert re.search(r'id="equation-', page), f"{chapter}: no labelled equation"
    downloads = re.findall(r'href="([^"]*_downloads/[^"]+/(ps\d_[a-z_]+)\.ipynb)"', page)
    assert downloads, f"{chapter}: no problem set to download"
    for href, _ in downloads:
        assert (html / chapter).parent.joinpath(href).resolve().is_file(), href
