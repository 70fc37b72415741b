"""The HTML policy: what of a student's HTML a page may show, and :func:`clean_html`.

``text/html`` outputs and raw cells, and the HTML that markdown holds or renders to, are cleaned
by nh3 (the Ammonia sanitizer) with :data:`POLICY`: no scripts, styles, frames, objects, forms,
SVG, event handlers or ``id`` attributes, no ``style`` but a table cell's ``text-align``, only the
CSS classes nbconvert's own rendering uses; links only to http, https, mailto or relative
addresses; images only from http(s) or ``data:image/png|jpeg|gif``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Set
from typing import TypedDict

import nh3
from pygments.token import STANDARD_TYPES

__all__ = ["POLICY", "clean_html"]

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


class CleanerArguments(TypedDict):
    """The keyword arguments of :class:`nh3.Cleaner` that :data:`POLICY` sets."""

    tags: Set[str]
    attributes: Mapping[str, Set[str]]
    attribute_filter: Callable[[str, str, str], str | None]
    url_schemes: Set[str]
    filter_style_properties: Set[str]
    link_rel: str | None
    strip_comments: bool


#: The keyword arguments of :class:`nh3.Cleaner` for all student HTML.
POLICY = CleanerArguments(
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
    """``fragment`` with everything active removed (see :data:`POLICY`).

    Parameters
    ----------
    fragment : str
        HTML, untrusted.

    Returns
    -------
    str
        The HTML nh3 keeps of it.
    """
    return _CLEANER.clean(fragment)
