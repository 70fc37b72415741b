r"""Chapter notebooks that read like the page: the MyST chapters converted to plain Jupyter notebooks.

A local Sphinx extension (``_config.yml``: ``sphinx: local_extensions: course_notebooks: _ext``).
A chapter's source (``chapters/*.md``, MyST) is written for the book; opened as a notebook it
would show its markup raw. After Sphinx has read every page and numbered its equations, figures,
theorems and exercises (at ``build-finished``, every build), each chapter is converted into a plain notebook:

- labels ``(name)=`` are dropped; ``{eq}`label``` becomes "eq. (n)", ``{numref}`label``` the
  page's "Figure n" / "Theorem n" / "Exercise n", ``{ref}`label``` the section's title,
  ``{cite}`key``` "Bishop (2006)" (from ``references.bib``), ``{download}`` a link on the site;
- a labelled display equation ``$$ ... $$ (label)`` gets its number as ``\tag{n}``;
- admonitions, notes, theorems, definitions and exercises become block quotes headed by their
  title and number; proofs end with a square; a solution is folded (an HTML ``<details>`` block,
  and its code cells' input collapsed), so a reader sees it only on asking;
- a figure's caption follows its code cell as text; ``remove-cell`` cells (the page's hidden
  checks) are left out, except those also tagged ``keep-in-notebook`` (plumbing the page hides but
  the notebook needs, such as the fallback ``glue``); :func:`lost_names` finds a name the kept
  cells use that only a left-out cell defines;
- the first code cell is preceded by the install cell of :mod:`course_library` (Colab, a
  JupyterHub; a no-op in the browser and where the library is installed);
- ``%matplotlib inline`` lines are left out (:data:`_REDUNDANT_LINES`): every Jupyter kernel plots
  inline already (ipykernel and JupyterLite's Pyodide kernel set that backend), and in JupyterLite
  the magic stops the kernel from loading the cell's imports, which it finds by parsing the cell
  as Python.

The notebooks are published at ``<site>/notebooks/<chapter>.ipynb``, offered by a "Download
notebook" button on each chapter page, and replace the JupyterLite site's chapter notebooks
(``course_lite`` writes them first; its browser note is kept, converted too).
:func:`leftover_myst` finds any MyST syntax left in a notebook (tests/course/test_notebooks.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Where the converted chapters are published in the built site.
SITE_FOLDER = "notebooks"

_LABEL = re.compile(r"^\([\w:.-]+\)=\s*$")
_FENCE = re.compile(r"^(`{3,}|:{3,})\{([\w:-]+)\}\s*(.*)$")
_PLAIN_FENCE = re.compile(r"^(`{3,})(?!\{)")
_OPTION = re.compile(r"^:([\w-]+):\s*(.*)$")
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_EQ_LABEL = re.compile(r"^\$\$\s*\(([\w:.-]+)\)\s*$")
_TARGET = re.compile(r"^(.*?)\s*<([^<>]+)>$")
#: Lines of the chapters' code that the notebooks leave out (see the module's docstring).
_REDUNDANT_LINES = re.compile(r"^%matplotlib inline\s*$")
#: A ``remove-cell`` cell with this tag too is hidden on the page but kept in the notebook.
KEEP_TAG = "keep-in-notebook"

#: Leftover MyST syntax, any of which fails the converted notebooks' test.
_LEFTOVERS = {
    "role": re.compile(r"\{[\w:-]+\}`"),
    "directive": re.compile(r"^\s*(`{3,}|:{3,})\{", re.M),
    "label": re.compile(r"^\([\w:.-]+\)=\s*$", re.M),
    "option": re.compile(r"^:(class|label|tags|name|caption|nonumber|width|align):", re.M),
    "equation label": re.compile(r"\$\$\s*\([\w:.-]+\)"),
    "substitution": re.compile(r"\{\{[^}]*\}\}"),
}


def leftover_myst(nb) -> list[str]:
    """Every leftover MyST construct in a notebook's cells, as ``"cell 3: role '{eq}`'"``."""
    found = []
    for i, cell in enumerate(nb.cells):
        tags = cell.get("metadata", {}).get("tags", [])
        if "remove-cell" in tags:
            found.append(f"cell {i}: a remove-cell cell")
        if cell.cell_type != "markdown":
            continue
        for what, pattern in _LEFTOVERS.items():
            found += [f"cell {i}: {what} {m.group(0)!r}" for m in pattern.finditer(cell.source)]
    return found


def _left_out(cell) -> bool:
    tags = cell.get("metadata", {}).get("tags", [])
    return "remove-cell" in tags and KEEP_TAG not in tags


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a code cell binds and the names it reads (IPython's magics and shell lines skipped)."""
    import ast

    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    bound, read = set(), set()
    for node in ast.walk(ast.parse("\n".join(lines))):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return bound, read


def lost_names(nb) -> list[str]:
    """Names the notebook's kept code cells read that only a left-out cell binds, sorted."""
    kept_bound, kept_read, lost_bound = set(), set(), set()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        bound, read = _names(cell.source)
        if _left_out(cell):
            lost_bound |= bound
        else:
            kept_bound |= bound
            kept_read |= read
    return sorted((kept_read & lost_bound) - kept_bound)


@dataclass
class References:
    """What a chapter's cross-references resolve to, read from Sphinx's environment.

    ``numbers[figtype]`` lists the page's numbers of that kind in page order (``"3"``);
    ``labels[label]`` is the text that ``{numref}``/``{eq}`` give a label; ``titles[label]`` a
    section's title; ``citations[key]`` "Bishop (2006)"; ``site`` the course address.
    """

    numbers: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    equations: dict[str, str] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)
    citations: dict[str, str] = field(default_factory=dict)
    site: str = ""

    def next_number(self, figtype: str, counters: dict[str, int]) -> str:
        """The next number of ``figtype`` in the page (``"?"`` past the last one)."""
        k = counters.get(figtype, 0)
        counters[figtype] = k + 1
        found = self.numbers.get(figtype, [])
        return found[k] if k < len(found) else "?"


# --- inline markup ---------------------------------------------------------------------------

def _role(name: str, content: str, refs: References) -> str:
    text, target = content, content
    if m := _TARGET.match(content):
        text, target = m.group(1), m.group(2)
    if name == "eq":
        return f"eq. ({refs.equations.get(target, '?')})"
    if name == "numref":
        label = refs.labels.get(target, target)
        if m:  # "Figure %s <label>": the page's text with the number
            number = label.rsplit(" ", 1)[-1]
            return text.replace("%s", number)
        return label
    if name == "ref":
        return text if m else refs.titles.get(target, refs.labels.get(target, target))
    if name.startswith("cite"):
        return "; ".join(refs.citations.get(k.strip(), k.strip()) for k in content.split(","))
    if name == "download":
        release = re.search(r"course/release/([\w-]+)/\1\.ipynb$", target)
        if release and refs.site:
            return f"[{text}]({refs.site}problem-sets/{release.group(1)}.ipynb)"
        return f"`{text}`"
    if name in ("math",):
        return f"${content}$"
    return text


def convert_inline(text: str, refs: References) -> str:
    """Replace every MyST role of ``text`` by what the page shows."""
    return _ROLE.sub(lambda m: _role(m.group(1), m.group(2), refs), text)


# --- block markup ----------------------------------------------------------------------------

def _quote(lines: list[str]) -> list[str]:
    return [f"> {line}".rstrip() for line in lines]


@dataclass
class _State:
    """Per chapter: the page counters and the exercise each label names."""

    counters: dict[str, int] = field(default_factory=dict)
    exercises: dict[str, str] = field(default_factory=dict)
    in_solution: str | None = None


def _directive(name: str, arg: str, options: dict, body: list[str], refs: References,
               state: _State) -> list[str]:
    title = arg.strip()
    if name in ("admonition", "note", "tip", "warning", "important", "seealso", "hint",
                "caution", "attention", "danger", "error"):
        head = title or name.title()
        return _quote([f"**{head}**", "", *body])
    if name.startswith("prf:"):
        kind = name.split(":", 1)[1]
        if kind == "proof":
            return ["*Proof.* " + (body[0] if body else ""), *body[1:], "", "$\\square$"]
        number = refs.next_number(kind, state.counters)
        head = f"**{kind.title()} {number}**" + (f" **({title})**" if title else "")
        return _quote([head, "", *body])
    if name == "exercise":
        number = refs.next_number("exercise", state.counters)
        if "label" in options:
            state.exercises[options["label"]] = number
        head = f"**Exercise {number}**" + (f" **({title})**" if title else "")
        return _quote([head, "", *body])
    if name == "solution":
        number = state.exercises.get(title, "")
        return [f"<details><summary><b>Solution to Exercise {number}</b> (click to show)</summary>",
                "", *body, "", "</details>"]
    return body  # an unknown directive: its content, as text


def convert_markdown(source: str, refs: References, state: _State) -> str:
    """A markdown cell's MyST source as plain Markdown (see the module's docstring)."""
    lines, out, i = source.splitlines(), [], 0
    while i < len(lines):
        line = lines[i]
        if _LABEL.match(line):
            i += 1
            continue
        plain = _PLAIN_FENCE.match(line)
        if plain:  # a code block: copied as it is
            j = i + 1
            while j < len(lines) and not lines[j].startswith(plain.group(1)):
                j += 1
            out += lines[i:j + 1]
            i = j + 1
            continue
        fence = _FENCE.match(line)
        if not fence:
            out.append(line)
            i += 1
            continue
        marker, name, arg = fence.groups()
        j, options = i + 1, {}
        while j < len(lines) and (m := _OPTION.match(lines[j])):
            options[m.group(1)] = m.group(2)
            j += 1
        body = []
        while j < len(lines) and lines[j].strip() != marker:
            body.append(lines[j])
            j += 1
        i = j + 1
        if name == "solution-start":
            state.in_solution = state.exercises.get(arg.strip(), "")
            out += [f"<details><summary><b>Solution to Exercise {state.in_solution}</b> "
                    "(click to show)</summary>", ""]
            continue
        if name == "solution-end":
            state.in_solution = None
            out += ["", "</details>"]
            continue
        while body and not body[0].strip():
            body.pop(0)
        body = convert_markdown("\n".join(body), refs, state).splitlines()
        out += _directive(name, arg, options, body, refs, state)
    text = "\n".join(out)
    text = _number_equations(text, refs)
    return convert_inline(text, refs)


def _number_equations(text: str, refs: References) -> str:
    r"""``$$ ... $$ (label)`` → ``$$ ... \tag{n} $$``."""
    lines = text.splitlines()
    for k, line in enumerate(lines):
        m = _EQ_LABEL.match(line.strip().removeprefix("> ").strip()) if "$$" in line else None
        if m:
            prefix = line[:len(line) - len(line.lstrip("> "))]
            lines[k] = f"{prefix}\\tag{{{refs.equations.get(m.group(1), '?')}}}"
            lines.insert(k + 1, f"{prefix}$$")
    return "\n".join(lines)


def convert_notebook(nb, refs: References, install_cell: str | None = None):
    """A chapter's notebook (as jupytext reads its MyST source) converted for Jupyter."""
    import nbformat

    state, cells = _State(), []
    for cell in nb.cells:
        if _left_out(cell):
            continue
        tags = [t for t in cell.metadata.get("tags", []) if t not in ("remove-cell", KEEP_TAG)]
        if tags != cell.metadata.get("tags", tags):
            cell.metadata["tags"] = tags
        if cell.cell_type == "markdown":
            # A solution spanning cells: each of its markdown cells is folded on its own.
            started_inside = state.in_solution is not None
            cell.source = convert_markdown(cell.source, refs, state)
            if started_inside:
                cell.source = ("<details><summary>Solution (continued)</summary>\n\n"
                               + cell.source)
            if state.in_solution is not None:
                cell.source += "\n\n</details>"
            if cell.source.strip():
                cells.append(cell)
            continue
        if cell.cell_type != "code":
            cells.append(cell)
            continue
        lines = cell.source.splitlines()
        if any(_REDUNDANT_LINES.match(line) for line in lines):
            cell.source = "\n".join(line for line in lines if not _REDUNDANT_LINES.match(line))
            if not cell.source.strip():
                continue
        figure = cell.metadata.get("mystnb", {}).get("figure")
        cell.metadata.pop("mystnb", None)
        if state.in_solution is not None:
            cell.metadata["jupyter"] = {"source_hidden": True}
            cell.metadata["tags"] = [*tags, "solution"]
        if install_cell and not any(c.cell_type == "code" for c in cells):
            cells.append(nbformat.v4.new_code_cell(install_cell))
        cells.append(cell)
        if figure:
            number = refs.next_number("figure", state.counters)
            caption = convert_inline(str(figure.get("caption", "")).strip(), refs)
            cells.append(nbformat.v4.new_markdown_cell(f"*Figure {number}.* {caption}"))
    nb.cells = cells
    nb.metadata.pop("jupytext", None)
    return nb


# --- Sphinx ------------------------------------------------------------------------------------

def _citations(bibfile: Path) -> dict[str, str]:
    """``{key: "Bishop (2006)"}`` for every entry of a BibTeX file (author-year, as the page)."""
    from pybtex.database import parse_file

    out = {}
    for key, entry in parse_file(str(bibfile)).entries.items():
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [" ".join(p.last_names).replace("{", "").replace("}", "") for p in people]
        who = (names[0] if len(names) == 1 else f"{names[0]} and {names[1]}" if len(names) == 2
               else f"{names[0]} et al." if names else key)
        out[key] = f"{who} ({entry.fields.get('year', 'n.d.')})"
    return out


def references_for(env, docname: str, site: str) -> References:
    """The chapter's cross-references, numbered as Sphinx numbered its page."""
    def text(number) -> str:
        return ".".join(map(str, number))

    fignumbers = env.toc_fignumbers
    numbers = {kind: [text(n) for n in sorted(ids.values())]
               for kind, ids in fignumbers.get(docname, {}).items()}
    std = env.get_domain("std")
    labels, titles = {}, {}
    formats = env.config.numfig_format
    for label, (doc, node_id) in std.anonlabels.items():
        for kind, ids in fignumbers.get(doc, {}).items():
            if node_id in ids:
                fmt = formats.get(kind) or f"{kind.title()} %s"
                if kind == "figure":
                    fmt = "Figure %s"
                labels[label] = fmt % text(ids[node_id])
    for label, (_doc, _, title) in std.labels.items():
        if title:
            titles[label] = title
    equations = {}
    for label, (doc, number) in env.get_domain("math").data["objects"].items():
        found = fignumbers.get(doc, {}).get("displaymath", {}).get(f"equation-{label}")
        equations[label] = text(found) if found else str(number)
    bib = [Path(env.srcdir) / b for b in env.config.bibtex_bibfiles]
    citations = {k: v for b in bib for k, v in _citations(b).items()}
    return References(numbers, labels, equations, titles, citations, site)


def _chapter_notebook(app, docname: str):
    import jupytext

    refs = references_for(app.env, docname, getattr(app, "course_site", {}).get("site", ""))
    nb = jupytext.read(Path(app.srcdir) / f"{docname}.md")
    return convert_notebook(nb, refs, getattr(app, "course_library_install_cell", None))


def _write_notebooks(app, exception) -> None:
    import nbformat

    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    chapters = [d for d in sorted(env.found_docs) if d.startswith("chapters/")]
    out = Path(app.outdir) / SITE_FOLDER
    lite = getattr(app, "course_lite", {}).get("contents")
    refs_site = getattr(app, "course_site", {}).get("site", "")
    for docname in chapters:
        nb = _chapter_notebook(app, docname)
        path = out / f"{docname}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
        lite_path = Path(lite) / f"{docname}.ipynb" if lite else None
        if lite_path and lite_path.is_file():  # keep course_lite's browser note and kernel
            lite_nb = nbformat.read(lite_path, as_version=4)
            note = lite_nb.cells[0]
            note.source = convert_markdown(note.source, References(site=refs_site), _State())
            lite_nb.cells = [note, *nb.cells]
            nbformat.write(lite_nb, lite_path)


def _download_button(app, pagename, templatename, context, doctree) -> None:
    """A "Download notebook" entry in the theme's download menu of every chapter page."""
    if not pagename.startswith("chapters/") or pagename not in app.env.found_docs:
        return
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    entry = {"type": "link", "text": ".ipynb (notebook)", "label": "download-notebook-button",
             "tooltip": "Download this chapter as a Jupyter notebook", "icon": "fas fa-code",
             "url": context["pathto"](f"{SITE_FOLDER}/{pagename}.ipynb", 1)}
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"].insert(0, entry)
            return
    buttons.append({"type": "group", "tooltip": "Download this page", "icon": "fas fa-download",
                    "label": "download-buttons", "buttons": [entry]})


def setup(app):
    # On every build (also one that rewrites no page), after Sphinx numbered the pages, and
    # before jupyterlite_sphinx builds the lite site from its contents (build-finished, 500).
    app.connect("build-finished", _write_notebooks, priority=100)
    app.connect("html-page-context", _download_button, priority=503)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
