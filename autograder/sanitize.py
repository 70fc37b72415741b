"""Copies of student notebooks that are safe to open in the instructor's browser.

Formgrader renders the ``submitted/`` and ``autograded/`` notebooks with nbconvert, which puts a
notebook's HTML on the page as it is: a written answer holding ``<img src=x onerror=...>`` or a
``<script>``, or an output of type ``text/html`` or ``application/javascript``, would run in the
instructor's logged-in session. The grader therefore writes only copies made by
:func:`sanitize_notebook`, which keep text, maths, code and plain images and nothing active:

- markdown (cells and ``text/markdown`` outputs): see :func:`clean_markdown`;
- ``text/html`` outputs and raw cells: cleaned by nh3 (the Ammonia sanitizer) with
  :data:`POLICY`: no scripts, styles, frames, objects, forms, SVG, event handlers or ``id``
  attributes, no ``style`` but a table cell's ``text-align``, only the CSS classes nbconvert's
  own rendering uses; links only to http, https, mailto or relative addresses; images only from
  http(s) or ``data:image/png|jpeg|gif``;
- other outputs: ``text/plain``, ``text/latex`` (nbconvert escapes it), PNG, JPEG and GIF images
  (whose data must be base64) are kept; JavaScript, widget views, SVG and every other type are
  dropped, and an output left without ``text/plain`` says what was removed;
- streams and error tracebacks are kept as text;
- attachments of markdown cells: PNG, JPEG and GIF only (any other is replaced by a blank image,
  so that a reference to it still renders);
- metadata: of a notebook, only ``kernelspec`` and ``language_info`` with plain values; of a cell,
  only ``nbgrader``'s keys with values of the right type (formgrader writes ``grade_id`` into the
  page unescaped). Widget state, tags, ``isolated`` or ``filenames`` output metadata are dropped.

Code cells' sources are kept unchanged (nbconvert highlights them as text). Maths is typeset by
MathJax with its ``Safe`` extension, which nbconvert's templates load. What the kernel runs and how
it is scored are not affected: only the copies written for people to read pass through here.
"""

from __future__ import annotations

import functools
import html.parser
import math
import re

import nbformat
import nh3
from nbformat.corpus.words import generate_corpus_id
from pygments.token import STANDARD_TYPES

from autograder.problemset import InvalidNotebook, read_notebook_bytes

__all__ = ["POLICY", "clean_html", "clean_markdown", "clean_attachments", "sanitize_notebook",
           "safe_notebook_bytes"]

#: A transparent 1x1 PNG: stands in for an attachment of a type that is not kept.
BLANK_PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAA"
             "SUVORK5CYII=")
SHOWN_AS_TEXT = ("(Shown as plain text: this markdown held content that cannot be displayed "
                 "safely.)")

_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*\Z")
_DATA_IMAGE = re.compile(r"data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*\Z", re.I)
_WEB_URL = re.compile(r"https?://", re.I)
# Classes nbconvert's own markdown rendering uses (highlighted code, tables, task lists); other
# classes are dropped so that student content cannot pose as formgrader's controls.
_CLASSES = frozenset(STANDARD_TYPES.values()) | {"highlight", "dataframe", "task-list-item"}
_LANGUAGE_CLASS = re.compile(r"language-\S+\Z")


def _attribute_filter(tag: str, attribute: str, value: str) -> str | None:
    """nh3's last word on an attribute: image sources and CSS classes."""
    if tag == "img" and attribute == "src":
        url = value.strip()
        return value if _WEB_URL.match(url) or _DATA_IMAGE.match(url) else None
    if attribute in ("href", "cite") and value.strip().lower().startswith("data:"):
        return None
    if attribute == "class":
        kept = [c for c in value.split() if c in _CLASSES or _LANGUAGE_CLASS.match(c)]
        return " ".join(kept) or None
    return value


_ATTRIBUTES = {tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()}
_ATTRIBUTES["*"] = {"title", "lang", "class"}
_ATTRIBUTES["img"] |= {"title"}
for _cell in ("th", "td"):  # markdown tables align their columns this way
    _ATTRIBUTES[_cell] |= {"style"}

#: The keyword arguments of :class:`nh3.Cleaner` for all student HTML.
POLICY = dict(
    tags=set(nh3.ALLOWED_TAGS) - {"area", "map"},
    attributes=_ATTRIBUTES,
    attribute_filter=_attribute_filter,
    url_schemes={"http", "https", "mailto", "data"},
    filter_style_properties={"text-align"},
    link_rel=None,
    strip_comments=True,
)
_CLEANER = nh3.Cleaner(**POLICY)


def clean_html(fragment: str) -> str:
    """``fragment`` with everything active removed (see :data:`POLICY`)."""
    return _CLEANER.clean(fragment)


# --- markdown ---------------------------------------------------------------------------------

def _render_markdown(source: str, attachments: dict | None) -> str:
    """HTML of ``source`` as formgrader's exporter renders a markdown cell."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    renderer = IPythonRenderer(escape=False, attachments=attachments or {},
                               exclude_anchor_links=True)
    return MarkdownWithMath(renderer=renderer).render(source)


class _Reading(html.parser.HTMLParser):
    """What a page shows of an HTML fragment: its start tags with attributes, and its text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.items: list[tuple] = []

    def handle_starttag(self, tag, attrs):
        self.items.append((tag, tuple(sorted((k, v or "") for k, v in attrs))))

    def handle_data(self, data):
        if self.items and self.items[-1][0] == "#text":
            self.items[-1] = ("#text", self.items[-1][1] + data)
        else:
            self.items.append(("#text", data))

    def _other(self, data):  # comments, declarations, processing instructions
        self.items.append(("#other", data))

    handle_comment = handle_decl = handle_pi = unknown_decl = _other

    @classmethod
    def of(cls, fragment: str) -> list[tuple]:
        reading = cls()
        reading.feed(fragment)
        reading.close()
        return reading.items


def _renders_clean(source: str, attachments: dict | None) -> bool:
    """Whether nh3 would leave the rendered markdown as it is (so nothing in it is active).

    The rendering and nh3's cleaning of it are read by a second parser (Python's), so that a
    construct the two parsers read differently is taken as unsafe too.
    """
    try:
        rendered = _render_markdown(source, attachments)
    except Exception:  # noqa: BLE001 - e.g. a missing attachment: not renderable as it is
        return False
    return _Reading.of(rendered) == _Reading.of(clean_html(rendered))


# Rendering markdown as nbconvert does takes time quadratic in the length of some sources (many
# links, backticks or unclosed environments): longer markdown is shown as text, and so is a
# notebook's markdown beyond a total, which bounds the time one submission can take here.
_MAX_MARKDOWN = 20_000  # characters, in one cell
_MAX_NOTEBOOK_MARKDOWN = 100_000  # characters, in a notebook's cells and outputs together
_MAX_ENVIRONMENTS = 100  # LaTeX environments in one cell
_BEGIN = re.compile(r"\\begin\{([^{}]*)\}")
_AUTOLINK = re.compile(r"<((?:https?|mailto):[^\s<>]*)>", re.I)
_MATH_OPEN = re.compile(r"\$\$|\$|\\\[|\\\(|\\begin\{([A-Za-z]+\*?)\}")
_MATH_CLOSE = {"$$": "$$", "$": "$", "\\[": "\\]", "\\(": "\\)"}
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
# Escapes written by nh3 that can be undone: where the character cannot start a tag or an entity.
_HARMLESS = re.compile(r"&gt;|&lt;(?![A-Za-z/!?])|&amp;(?![A-Za-z0-9#])")


def _space_maths(text: str) -> str:
    """``text`` with a space after each ``<`` in maths that would open an HTML tag.

    In maths ``a<b`` would open a tag ``<b``; ``a< b`` typesets the same and is text to HTML.
    One pass, each delimiter paired with its nearest closer (no backtracking on long input).
    """
    parts, done, start, missing = [], 0, 0, set()
    while (opener := _MATH_OPEN.search(text, start)) is not None:
        closer = _MATH_CLOSE.get(opener.group(0)) or f"\\end{{{opener.group(1)}}}"
        end = -1 if closer in missing else text.find(closer, opener.end())
        if end < 0:
            missing.add(closer)
        if end < 0 or (closer == "$" and "\n" in text[opener.end():end]):
            start = opener.end()
            continue
        end += len(closer)
        parts += [text[done:opener.start()], _TAG_OPEN.sub("< ", text[opener.start():end])]
        done = start = end
    return "".join(parts) + text[done:]


def _cleaned_source(source: str) -> str:
    """``source`` with its HTML cleaned by nh3, keeping maths, blockquotes and autolinks."""
    text = _space_maths(_AUTOLINK.sub(r"[\1](\1)", source))
    return _HARMLESS.sub(lambda m: {"&gt;": ">", "&lt;": "<", "&amp;": "&"}[m.group(0)],
                         clean_html(text))


def _as_text(source: str) -> str:
    """``source`` as a fenced code block (shown as text by any markdown renderer)."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"*{SHOWN_AS_TEXT}*\n\n{fence}\n{source}\n{fence}\n"


def _slow_to_render(source: str) -> bool:
    """Whether ``source`` is long, or has many LaTeX environments or one left open."""
    names = _BEGIN.findall(source)
    if len(source) > _MAX_MARKDOWN or len(names) > _MAX_ENVIRONMENTS:
        return True
    for name in set(names):
        if source.rfind(f"\\begin{{{name}}}") > source.rfind(f"\\end{{{name}}}"):
            return True
    return False


def clean_markdown(source: str, attachments: dict | None = None) -> str:
    """Markdown ``source`` made safe to render, changed as little as that needs.

    Returns the first of these that renders, as nbconvert renders it, to HTML nh3 leaves as it
    is: ``source`` itself (most answers); ``source`` with its HTML cleaned by nh3 (maths,
    blockquotes and autolinks kept); ``source`` shown as a code block, under a note saying why
    (a ``javascript:`` link in markdown syntax, HTML nh3 would restructure, or a source of over
    20,000 characters, over 100 LaTeX environments or one left open).

    Parameters
    ----------
    source : str
        The markdown, untrusted.
    attachments : dict, optional
        The cell's attachments, already cleaned (:func:`clean_attachments`).
    """
    if _slow_to_render(source):
        return _as_text(source)
    if not attachments:
        return _clean_plain_markdown(source)
    return _first_clean(source, attachments)


@functools.lru_cache(maxsize=4096)  # the source's own cells recur in every submission
def _clean_plain_markdown(source: str) -> str:
    return _first_clean(source, None)


def _first_clean(source: str, attachments: dict | None) -> str:
    for candidate in (source, _cleaned_source(source), _as_text(source)):
        if _renders_clean(candidate, attachments):
            return candidate
    return f"*{SHOWN_AS_TEXT}*"


def clean_attachments(attachments) -> dict:
    """Attachments of a markdown cell: PNG, JPEG and GIF images; any other becomes a blank PNG."""
    if not isinstance(attachments, dict):
        return {}
    cleaned = {}
    for name, bundle in attachments.items():
        images = {k: v for k, v in (bundle.items() if isinstance(bundle, dict) else ())
                  if k in _IMAGE_TYPES and _is_base64(v)}
        cleaned[str(name)] = images or {"image/png": BLANK_PNG}
    return cleaned


# --- outputs ----------------------------------------------------------------------------------

def _text(value) -> str:
    if isinstance(value, list):
        return "".join(map(str, value))
    return value if isinstance(value, str) else ""


def _is_base64(value) -> bool:
    return isinstance(value, str) and _BASE64.match(value) is not None


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class _Budget:
    """The characters of markdown a notebook may still have rendered (then: shown as text)."""

    def __init__(self):
        self.left = _MAX_NOTEBOOK_MARKDOWN

    def markdown(self, source: str, attachments: dict | None = None) -> str:
        self.left -= len(source)
        return clean_markdown(source, attachments) if self.left >= 0 else _as_text(source)


def _clean_bundle(data, budget: _Budget) -> dict:
    """The representations of an output that are kept (cleaned), and a note of the others."""
    kept, dropped = {}, []
    for mime, value in (data.items() if isinstance(data, dict) else ()):
        if mime in ("text/plain", "text/latex"):
            kept[mime] = _text(value)
        elif mime == "text/html":
            kept[mime] = clean_html(_text(value))
        elif mime == "text/markdown":
            kept[mime] = budget.markdown(_text(value))
        elif mime in _IMAGE_TYPES and _is_base64(value):
            kept[mime] = value
        else:
            dropped.append(str(mime))
    if dropped and "text/plain" not in kept:
        kept["text/plain"] = f"[output not shown: {', '.join(dropped)}]"
    return kept


def _clean_output_metadata(metadata, data: dict) -> dict:
    """Only the pixel sizes of images (nbconvert writes them into the page)."""
    kept = {}
    for mime in set(data) & set(_IMAGE_TYPES):
        sizes = metadata.get(mime) if isinstance(metadata, dict) else None
        sizes = {k: v for k, v in (sizes.items() if isinstance(sizes, dict) else ())
                 if k in ("width", "height") and _count(v)}
        if sizes:
            kept[mime] = sizes
    return kept


def _clean_output(output, budget: _Budget) -> dict | None:
    kind = output.get("output_type") if isinstance(output, dict) else None
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return {"output_type": kind, "name": name, "text": _text(output.get("text"))}
    if kind == "error":
        traceback = output.get("traceback")
        return {"output_type": kind, "ename": _text(output.get("ename")),
                "evalue": _text(output.get("evalue")),
                "traceback": [_text(t) for t in traceback] if isinstance(traceback, list) else []}
    if kind in ("display_data", "execute_result"):
        data = _clean_bundle(output.get("data"), budget)
        if not data:
            return None
        cleaned = {"output_type": kind, "data": data,
                   "metadata": _clean_output_metadata(output.get("metadata"), data)}
        if kind == "execute_result":
            cleaned["execution_count"] = _count(output.get("execution_count"))
        return cleaned
    return None


# --- metadata and cells -----------------------------------------------------------------------

_PLAIN = re.compile(r"[\w .+#/-]{0,100}\Z")
_GRADE_ID = re.compile(r"[A-Za-z0-9_-]{1,200}\Z")
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")


def _is_flag(v) -> bool:
    return isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


_NBGRADER_KEYS = {
    "grade": _is_flag, "solution": _is_flag, "locked": _is_flag, "task": _is_flag,
    "points": _is_number,
    "schema_version": lambda v: _count(v) is not None,
    "grade_id": lambda v: isinstance(v, str) and _GRADE_ID.match(v) is not None,
    "checksum": lambda v: isinstance(v, str) and re.fullmatch(r"[0-9a-fA-F]{1,128}", v) is not None,
    "cell_type": lambda v: v in ("code", "markdown", "raw"),
}


def _is_plain(v) -> bool:
    return _is_number(v) or (isinstance(v, str) and _PLAIN.match(v) is not None)


def _plain_dict(value, keys: tuple[str, ...]) -> dict:
    """The entries of ``value`` under ``keys`` that are plain words or numbers."""
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if k in keys and _is_plain(v)}


def _clean_notebook_metadata(metadata) -> dict:
    metadata = metadata if isinstance(metadata, dict) else {}
    info = metadata.get("language_info")
    language = _plain_dict(info, ("name", "version", "mimetype", "file_extension",
                                  "pygments_lexer", "nbconvert_exporter"))
    mode = info.get("codemirror_mode") if isinstance(info, dict) else None
    mode = _plain_dict(mode, ("name", "version")) if isinstance(mode, dict) else mode
    if mode and (isinstance(mode, dict) or _is_plain(mode)):
        language["codemirror_mode"] = mode
    kept = {"kernelspec": _plain_dict(metadata.get("kernelspec"),
                                      ("name", "display_name", "language")),
            "language_info": language}
    return {k: v for k, v in kept.items() if v}


def _clean_cell_metadata(metadata) -> dict:
    grading = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    if not isinstance(grading, dict):
        return {}
    kept = {k: v for k, v in grading.items() if k in _NBGRADER_KEYS and _NBGRADER_KEYS[k](v)}
    if "grade_id" in grading and "grade_id" not in kept:
        return {}  # a cell nbgrader cannot name is no graded cell
    return {"nbgrader": kept} if kept else {}


def _clean_cell(cell, budget: _Budget) -> dict | None:
    kind, source = cell.get("cell_type"), _text(cell.get("source"))
    cell_id = cell.get("id")
    new = {"cell_type": kind, "metadata": _clean_cell_metadata(cell.get("metadata")),
           "id": cell_id if isinstance(cell_id, str) and _CELL_ID.match(cell_id)
           else generate_corpus_id()}
    if kind == "code":
        outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
        new.update(source=source, execution_count=_count(cell.get("execution_count")),
                   outputs=[o for o in (_clean_output(o, budget) for o in outputs) if o])
    elif kind == "markdown":
        attachments = clean_attachments(cell.get("attachments"))
        new["source"] = budget.markdown(source, attachments)
        if attachments:
            new["attachments"] = attachments
    elif kind == "raw":
        new["source"] = clean_html(source)
    else:
        return None
    return new


def sanitize_notebook(nb) -> nbformat.NotebookNode:
    """A copy of the notebook ``nb`` without active content (see the module docstring).

    Parameters
    ----------
    nb : nbformat.NotebookNode or dict
        A version-4 notebook, untrusted (it is not changed).

    Returns
    -------
    nbformat.NotebookNode
        A new notebook (format 4.5) of the same cells in the same order.
    """
    cells = nb.get("cells") if isinstance(nb.get("cells"), list) else []
    budget = _Budget()
    cleaned = [c for c in (_clean_cell(c, budget) for c in cells if isinstance(c, dict)) if c]
    return nbformat.from_dict({"nbformat": 4, "nbformat_minor": 5, "cells": cleaned,
                               "metadata": _clean_notebook_metadata(nb.get("metadata"))})


def safe_notebook_bytes(data: bytes | str | None) -> bytes | None:
    """The file of :func:`sanitize_notebook` of the notebook ``data``; None if it is unreadable.

    Parameters
    ----------
    data : bytes or str or None
        A notebook file's content, untrusted.
    """
    if data is None:
        return None
    try:
        nb = read_notebook_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    except InvalidNotebook:
        return None
    return nbformat.writes(sanitize_notebook(nb)).encode("utf-8")


def formgrader_copies(submitted: bytes, executed: str | None) -> dict[str, bytes | None]:
    """nbgrader's ``submitted`` and ``autograded`` copies of one submission, made safe.

    Computed by the grading worker (:func:`autograder.task.grade_task`), so the coordinator only
    writes them: sanitising takes tens of milliseconds per notebook.

    Returns
    -------
    dict
        ``{"submitted": bytes or None, "autograded": bytes or None}``: the
        :func:`safe_notebook_bytes` of the file handed in and of the notebook as it ran (None
        when unreadable).
    """
    return {"submitted": safe_notebook_bytes(submitted),
            "autograded": safe_notebook_bytes(executed)}
