"""Which images a sanitised notebook keeps: PNG, JPEG and GIF, as base64.

Image outputs of these types are kept when their data is base64; attachments of markdown cells
are kept when they are such images, and any other attachment is replaced by a blank image, so that
a reference to it still renders.
"""

from __future__ import annotations

import re

__all__ = ["BLANK_PNG", "IMAGE_TYPES", "is_base64", "clean_attachments"]

#: A transparent 1x1 PNG: stands in for an attachment of a type that is not kept.
BLANK_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="
)
#: The MIME types of the images that are kept.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*\Z")


def is_base64(value) -> bool:
    """Whether ``value`` is a string of base64 characters (and whitespace)."""
    return isinstance(value, str) and _BASE64.match(value) is not None


def clean_attachments(attachments) -> dict:
    """Attachments of a markdown cell: PNG, JPEG and GIF images; any other becomes a blank PNG.

    Parameters
    ----------
    attachments : object
        A cell's ``attachments``, untrusted (anything but a dict means none).

    Returns
    -------
    dict
        ``{name: {mime: base64}}`` with only :data:`IMAGE_TYPES`, or :data:`BLANK_PNG` as PNG.
    """
    if not isinstance(attachments, dict):
        return {}
    cleaned = {}
    for name, bundle in attachments.items():
        images = {
            k: v
            for k, v in (bundle.items() if isinstance(bundle, dict) else ())
            if k in IMAGE_TYPES and is_base64(v)
        }
        cleaned[str(name)] = images or {"image/png": BLANK_PNG}
    return cleaned
