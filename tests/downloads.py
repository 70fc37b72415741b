"""File names as the LMSs write them in their downloads, for the tests that build a download.

Each follows the platform's own source, cited in its docstring; the intake's own tests
(``tests/autograder/intake/``) and the course's tests of per-student variants build their
Canvas downloads with the same function, so a change of Canvas's form is made once.
"""

from __future__ import annotations

import re

__all__ = ["canvas_file"]


def canvas_file(
    name: str, user_id: int, attachment_id: int, file: str, *, late: bool = False
) -> str:
    """A file's name in Canvas's "Download Submissions" zip, as canvas-lms
    ``lib/content_zipper.rb`` makes it from ``name`` (a student's sortable name, "Hopper, Grace";
    a group's name for a group assignment's submission; the name the test's download shows
    otherwise): ``get_user_name`` takes it through
    ``sanitize_user_name`` (``_<digits>_`` joined, then ``downcase``); ``get_filename`` joins it,
    ``LATE`` for a late submission and the user id with ``_`` and drops every character that is
    not ``[[:word:]]`` (``sanitize_file_name``: Unicode letters stay); ``add_upload_submission``
    appends ``_<attachment id>_<file>``.

    >>> canvas_file("Hopper, Grace", 103, 9001, "ps1.ipynb", late=True)
    'hoppergrace_LATE_103_9001_ps1.ipynb'
    """
    name = re.sub(r"_(\d+)_", r"\1", name).lower()
    parts = [name, "LATE", str(user_id)] if late else [name, str(user_id)]
    stem = re.sub(r"[^\w]", "", "_".join(parts))
    return f"{stem}_{attachment_id}_{file}"
