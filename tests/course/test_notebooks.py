"""Chapter notebooks that read like the page (_ext/course_notebooks.py).

The converter on small MyST inputs with hand-written expectations, then the built site's
notebooks: no MyST syntax left, the page's numbers (equations, figures, exercises read from the
built HTML), citations as "Author (year)", solutions folded, hidden cells left out, a download
button on every chapter page, and the JupyterLite copies the same notebooks.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from tests import ROOT

sys.path.insert(0, str(ROOT / "_ext"))

from course_notebooks import (  # noqa: E402
    References,
    _State,
    convert_markdown,
    convert_notebook,
    leftover_myst,
    lost_names,
)

CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.md"))
REFS = References(numbers={"theorem": ["1", "2"], "exercise": ["1", "2"], "figure": ["1"]},
                  labels={"fig-a": "Figure 1", "thm-b": "Theorem 2"},
                  equations={"eq-a": "3"}, titles={"sec-x": "The toy matrix"},
                  citations={"bishop2006prml": "Bishop (2006)"}, site="https://c.org/")


def test_markdown_conversion_on_every_construct():
    source = """(sec-x)=
## Title

See {eq}`eq-a`, {numref}`fig-a`, {numref}`Thm. %s <thm-b>`, {ref}`sec-x` and {cite}`bishop2006prml`.

$$
a = b
$$ (eq-a)

```{admonition} Data
:class: note
Ratings from {cite}`bishop2006prml`.
```

```{prf:theorem} Monotone
:label: thm-a

It holds.
```

```{prf:proof}
Trivial.
```

```{exercise} Try it
:label: ex-a

Compute it.
```

```{solution} ex-a
:class: dropdown

It is 4.
```

```python
x = {"a": 1}  # a code block is kept as it is
```"""
    got = convert_markdown(source, REFS, _State())
    assert "(sec-x)=" not in got
    assert "See eq. (3), Figure 1, Thm. 2, The toy matrix and Bishop (2006)." in got
    assert "$$\na = b\n\\tag{3}\n$$" in got
    assert "> **Data**\n>\n> Ratings from Bishop (2006)." in got
    assert "> **Theorem 1** **(Monotone)**\n>\n> It holds." in got
    assert "*Proof.* Trivial.\n\n$\\square$" in got
    assert "> **Exercise 1** **(Try it)**\n>\n> Compute it." in got
    assert ("<details><summary><b>Solution to Exercise 1</b> (click to show)</summary>\n\n"
            "It is 4.\n\n</details>") in got
    assert '```python\nx = {"a": 1}' in got
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(got)])
    assert leftover_myst(nb) == []


def test_leftover_check_finds_each_kind_of_myst():
    cells = ["(ch-x)=", "see {eq}`a`", "```{note}\nx\n```", ":class: tip", "$$ (eq-a)",
             "{{ kit_url }}"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(c) for c in cells])
    nb.cells.append(nbformat.v4.new_code_cell("1", metadata={"tags": ["remove-cell"]}))
    found = leftover_myst(nb)
    assert len({f.split(":")[0] for f in found}) == len(cells) + 1, found


def test_solution_spanning_cells_is_folded_and_its_code_collapsed():
    text = """```{exercise}
:label: ex-a
Do it.
```

```{solution-start} ex-a
:class: dropdown
```
First part."""
    cells = [nbformat.v4.new_markdown_cell(text), nbformat.v4.new_code_cell("x = 1"),
             nbformat.v4.new_markdown_cell("More.\n\n```{solution-end}\n```\nAfter."),
             nbformat.v4.new_code_cell("y = 2")]
    nb = convert_notebook(nbformat.v4.new_notebook(cells=cells), REFS)
    md = [c.source for c in nb.cells if c.cell_type == "markdown"]
    assert md[0].count("<details>") == md[0].count("</details>") == 1
    assert "Solution to Exercise 1" in md[0]
    assert md[1].startswith("<details>") and md[1].count("</details>") == 1
    assert md[1].rstrip().endswith("After.")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code[0].metadata["jupyter"] == {"source_hidden": True}
    assert "jupyter" not in code[1].metadata


def test_a_hidden_cell_the_notebook_needs_is_kept_and_a_lost_name_is_found():
    shim = nbformat.v4.new_code_cell("def glue(name, value):\n    pass",
                                     metadata={"tags": ["remove-cell"]})
    check = nbformat.v4.new_code_cell("assert x == 1", metadata={"tags": ["remove-cell"]})
    cells = [shim, nbformat.v4.new_code_cell("import numpy as np\nx = 1\nglue('x', x)"), check]
    nb = nbformat.v4.new_notebook(cells=cells)
    assert lost_names(nb) == ["glue"]
    shim.metadata["tags"].append("keep-in-notebook")
    assert lost_names(nb) == []
    converted = convert_notebook(nb, REFS)
    assert [c.source for c in converted.cells] == [shim.source, cells[1].source]
    assert leftover_myst(converted) == []


@pytest.mark.parametrize("name", CHAPTERS)
def test_no_kept_cell_needs_a_cell_the_notebook_leaves_out(name):
    """A reader's notebook runs only if no name it reads lives in a hidden check alone."""
    assert lost_names(jupytext.read(ROOT / "chapters" / f"{name}.md")) == []


# --- the built site ----------------------------------------------------------------------------

def _notebook(html: Path, name: str):
    return nbformat.read(html / "notebooks" / "chapters" / f"{name}.ipynb", as_version=4)


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_notebook_reads_like_the_page(html, name):
    nb = _notebook(html, name)
    nbformat.validate(nb)
    assert leftover_myst(nb) == []
    text = _markdown(nb)
    assert not re.search(r"(eq\. \(\?\)|\\tag\{\?\}|(Figure|Exercise|Theorem|Definition) \?)",
                         text), "a number the page has is missing"
    assert text.count("<details>") == text.count("</details>")
    # Hidden checks are left out: no remove-cell source of the chapter is in the notebook.
    source = jupytext.read(ROOT / "chapters" / f"{name}.md")
    hidden = [c.source for c in source.cells if "remove-cell" in c.metadata.get("tags", [])
              and "keep-in-notebook" not in c.metadata["tags"] and len(c.source.strip()) > 40]
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not [h for h in hidden if h in code]
    # The install cell comes before the first code that imports the library.
    first = next(c for c in nb.cells if c.cell_type == "code")
    assert "%pip install" in first.source and "library/mfpm_book-" in first.source


def test_numbers_and_citations_are_the_pages(html):
    nb = _notebook(html, "03_mle")
    text = _markdown(nb)
    page = (html / "chapters" / "03_mle.html").read_text()
    number = re.search(r'<span class="eqno">\((\d+)\)<a class="headerlink" '
                       r'href="#equation-eq-mle-coin-loglik"', page).group(1)
    assert f"\\tag{{{number}}}" in text
    assert f"eq. ({number})" in text
    assert "Bishop (2006)" in text and "bishop2006prml" not in text
    assert "Solution to Exercise 1" in text
    figure = re.search(r'id="fig-mle-coin".*?Fig\. (\d+)', page, re.S).group(1)
    assert f"Figure {figure}" in text


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_page_offers_its_notebook_and_lite_has_the_same(html, name):
    page = (html / "chapters" / f"{name}.html").read_text()
    assert f'href="../notebooks/chapters/{name}.ipynb"' in page
    lite = nbformat.read(html / "lite" / "files" / "chapters" / f"{name}.ipynb", as_version=4)
    assert leftover_myst(lite) == []
    download = _notebook(html, name)
    assert [c.source for c in lite.cells[1:]] == [c.source for c in download.cells]
