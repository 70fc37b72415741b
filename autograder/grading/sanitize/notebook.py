"""Sanitised copies of whole notebooks: cells, outputs and metadata.

- markdown cells and ``text/markdown`` outputs: :mod:`autograder.grading.sanitize.markdown`;
- ``text/html`` outputs and raw cells: :func:`autograder.grading.sanitize.markup.clean_html`;
- other outputs: ``text/plain``, ``text/latex`` (nbconvert escapes it), PNG, JPEG and GIF images
  (whose data must be base64) are kept; JavaScript, widget views, SVG and every other type are
  dropped, and an output left without ``text/plain`` says what was removed;
- streams and error tracebacks are kept as text;
- attachments of markdown cells: :func:`autograder.grading.sanitize.images.clean_attachments`;
- metadata: of a notebook, only ``kernelspec`` and ``language_info`` with plain values; of a cell,
  only ``nbgrader``'s keys with values of the right type (formgrader writes ``grade_id`` into the
  page unescaped). Widget state, tags, ``isolated`` or ``filenames`` output metadata are dropped.

Code cells' sources are kept unchanged (nbconvert highlights them as text).
"""

from __future__ import annotations

import math
import re

import nbformat
from nbformat.corpus.words import generate_corpus_id

from autograder.grading.problemset import InvalidNotebook, read_notebook_bytes
from autograder.grading.sanitize.images import IMAGE_TYPES, clean_attachments, is_base64
from autograder.grading.sanitize.markdown import MarkdownBudget
from autograder.grading.sanitize.markup import clean_html

__all__ = ["sanitize_notebook", "safe_notebook_bytes", "formgrader_copies"]


# --- outputs ----------------------------------------------------------------------------------


def _text(value) -> str:
    if isinstance(value, list):
        return "".join(map(str, value))
    return value if isinstance(value, str) else ""


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _clean_bundle(data, budget: MarkdownBudget) -> dict:
    """The representations of an output that are kept (cleaned), and a note of the others."""
    kept, dropped = {}, []
    for mime, value in data.items() if isinstance(data, dict) else ():
        if mime in ("text/plain", "text/latex"):
            kept[mime] = _text(value)
        elif mime == "text/html":
            kept[mime] = clean_html(_text(value))
        elif mime == "text/markdown":
            kept[mime] = budget.markdown(_text(value))
        elif mime in IMAGE_TYPES and is_base64(value):
            kept[mime] = value
        else:
            dropped.append(str(mime))
    if dropped and "text/plain" not in kept:
        kept["text/plain"] = f"[output not shown: {', '.join(dropped)}]"
    return kept


def _clean_output_metadata(metadata, data: dict) -> dict:
    """Only the pixel sizes of images (nbconvert writes them into the page)."""
    kept = {}
    for mime in set(data) & set(IMAGE_TYPES):
        sizes = metadata.get(mime) if isinstance(metadata, dict) else None
        sizes = {
            k: v
            for k, v in (sizes.items() if isinstance(sizes, dict) else ())
            if k in ("width", "height") and _count(v)
        }
        if sizes:
            kept[mime] = sizes
    return kept


def _clean_output(output, budget: MarkdownBudget) -> dict | None:
    kind = output.get("output_type") if isinstance(output, dict) else None
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return {"output_type": kind, "name": name, "text": _text(output.get("text"))}
    if kind == "error":
        traceback = output.get("traceback")
        return {
            "output_type": kind,
            "ename": _text(output.get("ename")),
            "evalue": _text(output.get("evalue")),
            "traceback": [_text(t) for t in traceback] if isinstance(traceback, list) else [],
        }
    if kind in ("display_data", "execute_result"):
        data = _clean_bundle(output.get("data"), budget)
        if not data:
            return None
        cleaned = {
            "output_type": kind,
            "data": data,
            "metadata": _clean_output_metadata(output.get("metadata"), data),
        }
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
    "grade": _is_flag,
    "solution": _is_flag,
    "locked": _is_flag,
    "task": _is_flag,
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
    language = _plain_dict(
        info,
        ("name", "version", "mimetype", "file_extension", "pygments_lexer", "nbconvert_exporter"),
    )
    mode = info.get("codemirror_mode") if isinstance(info, dict) else None
    mode = _plain_dict(mode, ("name", "version")) if isinstance(mode, dict) else mode
    if mode and (isinstance(mode, dict) or _is_plain(mode)):
        language["codemirror_mode"] = mode
    kept = {
        "kernelspec": _plain_dict(metadata.get("kernelspec"), ("name", "display_name", "language")),
        "language_info": language,
    }
    return {k: v for k, v in kept.items() if v}


def _clean_cell_metadata(metadata) -> dict:
    grading = metadata.get("nbgrader") if isinstance(metadata, dict) else None
    if not isinstance(grading, dict):
        return {}
    kept = {k: v for k, v in grading.items() if k in _NBGRADER_KEYS and _NBGRADER_KEYS[k](v)}
    if "grade_id" in grading and "grade_id" not in kept:
        return {}  # a cell nbgrader cannot name is no graded cell
    return {"nbgrader": kept} if kept else {}


def _clean_cell(cell, budget: MarkdownBudget) -> dict | None:
    kind, source = cell.get("cell_type"), _text(cell.get("source"))
    cell_id = cell.get("id")
    new = {
        "cell_type": kind,
        "metadata": _clean_cell_metadata(cell.get("metadata")),
        "id": cell_id
        if isinstance(cell_id, str) and _CELL_ID.match(cell_id)
        else generate_corpus_id(),
    }
    if kind == "code":
        outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
        new.update(
            source=source,
            execution_count=_count(cell.get("execution_count")),
            outputs=[o for o in (_clean_output(o, budget) for o in outputs) if o],
        )
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


# --- notebooks --------------------------------------------------------------------------------


def sanitize_notebook(nb) -> nbformat.NotebookNode:
    """A copy of the notebook ``nb`` without active content (see this module's docstring).

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
    budget = MarkdownBudget()
    cleaned = [c for c in (_clean_cell(c, budget) for c in cells if isinstance(c, dict)) if c]
    return nbformat.from_dict(
        {
            "nbformat": 4,
            "nbformat_minor": 5,
            "cells": cleaned,
            "metadata": _clean_notebook_metadata(nb.get("metadata")),
        }
    )


def safe_notebook_bytes(data: bytes | str | None) -> bytes | None:
    """The file of :func:`sanitize_notebook` of the notebook ``data``; None if it is unreadable.

    Parameters
    ----------
    data : bytes or str or None
        A notebook file's content, untrusted.

    Returns
    -------
    bytes or None
        The sanitised notebook as UTF-8 JSON, or None when ``data`` is None or no notebook.
    """
    if data is None:
        return None
    try:
        nb = read_notebook_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    except InvalidNotebook:
        return None
    return nbformat.writes(sanitize_notebook(nb)).encode("utf-8")


def formgrader_copies(submitted, executed) -> dict[str, bytes | None]:
    """nbgrader's ``submitted`` and ``autograded`` copies of one submission, made safe.

    Computed by the grading worker (:func:`autograder.grading.pipeline.sanitize`), so the coordinator only
    writes them: sanitising takes tens of milliseconds per notebook.

    Parameters
    ----------
    submitted : nbformat.NotebookNode or None
        The notebook handed in, as parsed (:func:`read_notebook_bytes`); None if unreadable.
    executed : nbformat.NotebookNode or None
        The notebook as it ran (None if it did not).

    Returns
    -------
    dict
        ``{"submitted": bytes or None, "autograded": bytes or None}``: the
        :func:`sanitize_notebook` of each, as UTF-8 JSON (None where there is no notebook).
    """
    return {"submitted": _safe_bytes(submitted), "autograded": _safe_bytes(executed)}


def _safe_bytes(nb) -> bytes | None:
    return nbformat.writes(sanitize_notebook(nb)).encode("utf-8") if nb is not None else None
