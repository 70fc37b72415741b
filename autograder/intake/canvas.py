"""Canvas's download names: ``<sortable name>_[LATE_]<user id>_[<attachment id>_]<file>``.

With anonymous grading Canvas writes no name and the submission's anonymous id instead of the
user id: ``[LATE_]anon_<anonymous id>_<attachment id>_<file>`` (canvas-lms
``lib/content_zipper.rb``, ``get_filename``: ``"anon_#{submission.anonymous_id}"`` when
``anonymize_students?``, joined with ``_`` after the ``LATE`` mark, then ``_<attachment id>_``
and the file's name in ``add_upload_submission``). The anonymous id is the student's id here
(``anon-<id>``): the grader never learns who it is, and Canvas's re-upload finds the submission
by the attachment id.

Canvas's "re-upload submissions" feature reads the first two all-digit parts of a file's name as
the user id and the attachment id (canvas-lms ``app/models/assignment.rb``,
``infer_comment_context_from_filename``), so both are kept, with the ``LATE`` mark. The sortable
name has no underscore.

Canvas's zip says nothing of when a file was handed in: every member carries the time the
download was made. ``add_attachment_to_zip`` (``lib/content_zipper.rb``) writes each file with
``zipfile.get_output_stream(filename)``, giving no time, and rubyzip's ``Zip::Entry`` then takes
its default, ``time: ::Zip::DOSTime.now`` (rubyzip ``lib/zip/entry.rb``, ``initialize``). So
:data:`FILE_TIME` is False: the late policy reads Canvas's ``LATE`` mark, never the file's time.
"""

from __future__ import annotations

import re

from autograder.intake.lms import LmsInfo

__all__ = ["FILE_TIME", "MARKS_LATE", "parse_name"]

#: Whether a file's time in the download is when it was handed in: no, the download's own time.
FILE_TIME = False
#: Whether the download marks a late file: ``LATE_`` in its name.
MARKS_LATE = True

_CANVAS = re.compile(
    r"^(?P<name>[^_]+)_(?P<late>LATE_)?(?P<user>\d+)_(?:(?P<attachment>\d+)_)?"
    r"(?P<file>.+)$"
)


_ANONYMOUS = re.compile(
    r"^(?P<late>LATE_)?anon_(?P<anonymous>[A-Za-z0-9]+)_(?P<attachment>\d+)_(?P<file>.+)$"
)


def parse_name(name: str, folder: bool = False) -> LmsInfo | None:
    """The Canvas ids in a downloaded file's name, or None (Canvas downloads no folders).

    >>> parse_name("doejane_LATE_101_5001_ps3_mle.ipynb").attachment_id
    '5001'
    >>> parse_name("LATE_anon_Vh2iS_5002_ps3_mle.ipynb").user_id
    'Vh2iS'
    """
    anonymous = None if folder else _ANONYMOUS.match(name)
    if anonymous:
        return LmsInfo(
            "canvas",
            anonymous.group("anonymous"),
            "anon",
            bool(anonymous.group("late")),
            anonymous.group("attachment"),
            f"anon_{anonymous.group('anonymous')}_{anonymous.group('attachment')}_",
            anonymous=True,
        )
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
