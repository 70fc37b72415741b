"""Canvas's download names: ``<sortable name>_[LATE_]<user id>_[<attachment id>_]<file>``.

Canvas's "re-upload submissions" feature reads the first two all-digit parts of a file's name as
the user id and the attachment id (canvas-lms ``app/models/assignment.rb``,
``infer_comment_context_from_filename``), so both are kept, with the ``LATE`` mark. The sortable
name has no underscore.
"""

from __future__ import annotations

import re

from autograder.intake.lms import LmsInfo

__all__ = ["parse_name"]

_CANVAS = re.compile(
    r"^(?P<name>[^_]+)_(?P<late>LATE_)?(?P<user>\d+)_(?:(?P<attachment>\d+)_)?"
    r"(?P<file>.+)$"
)


def parse_name(name: str, folder: bool = False) -> LmsInfo | None:
    """The Canvas ids in a downloaded file's name, or None (Canvas downloads no folders).

    >>> parse_name("doejane_LATE_101_5001_ps3_mle.ipynb").attachment_id
    '5001'
    """
    canvas = None if folder else _CANVAS.match(name)
    if not canvas:
        return None
    attachment = canvas.group("attachment")
    prefix = f"{canvas.group('name')}_{canvas.group('user')}_" + (
        f"{attachment}_" if attachment else ""
    )
    return LmsInfo(
        "canvas",
        canvas.group("user"),
        canvas.group("name"),
        bool(canvas.group("late")),
        attachment,
        prefix,
    )
