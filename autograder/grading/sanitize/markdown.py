"""Markdown made safe to render: cells and ``text/markdown`` outputs.

A source is kept as it is when nbconvert's rendering of it holds nothing nh3 would remove (see
:mod:`autograder.grading.sanitize.markup`); else its HTML is cleaned (maths, blockquotes and autolinks
kept, and a ``<`` in maths spaced so that it opens no tag); else it is shown as text. Maths is
typeset by MathJax with its ``Safe`` extension, which nbconvert's templates load. Rendering takes
time quadratic in the length of some sources, so long ones, and a notebook's markdown beyond a
total (:class:`MarkdownBudget`), are shown as text without being rendered.
"""

from __future__ import annotations

import functools
import html.parser
import re

from autograder.grading.sanitize.markup import clean_html

__all__ = ["SHOWN_AS_TEXT", "clean_markdown", "MarkdownBudget"]

SHOWN_AS_TEXT = "(Shown as plain text: this markdown held content that cannot be displayed safely.)"


def _render_markdown(source: str, attachments: dict | None) -> str:
    """HTML of ``source`` as formgrader's exporter renders a markdown cell."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    renderer = IPythonRenderer(
        escape=False, attachments=attachments or {}, exclude_anchor_links=True
    )
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
        if end < 0 or (closer == "$" and "\n" in text[opener.end() : end]):
            start = opener.end()
            continue
        end += len(closer)
        parts += [text[done : opener.start()], _TAG_OPEN.sub("< ", text[opener.start() : end])]
        done = start = end
    return "".join(parts) + text[done:]


def _cleaned_source(source: str) -> str:
    """``source`` with its HTML cleaned by nh3, keeping maths, blockquotes and autolinks."""
    text = _space_maths(_AUTOLINK.sub(r"[\1](\1)", source))
    return _HARMLESS.sub(
        lambda m: {"&gt;": ">", "&lt;": "<", "&amp;": "&"}[m.group(0)], clean_html(text)
    )


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
        The cell's attachments, already cleaned
        (:func:`autograder.grading.sanitize.images.clean_attachments`).
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


class MarkdownBudget:
    """The characters of markdown a notebook may still have rendered (then: shown as text)."""

    def __init__(self):
        self.left = _MAX_NOTEBOOK_MARKDOWN

    def markdown(self, source: str, attachments: dict | None = None) -> str:
        """:func:`clean_markdown` of ``source`` while the budget lasts, else ``source`` as text.

        Parameters
        ----------
        source : str
            The markdown, untrusted; its length is spent from the budget.
        attachments : dict, optional
            The cell's attachments, already cleaned.
        """
        self.left -= len(source)
        return clean_markdown(source, attachments) if self.left >= 0 else _as_text(source)
