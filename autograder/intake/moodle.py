"""Moodle's download names: ``<full name>_<participant id>_assignsubmission_<plugin>[_<file>]``.

Moodle's folder (or file prefix) is ``clean_filename(<full name with _ as space>_<unique id>)``
followed by ``_assignsubmission_file`` (moodle ``mod/assign/classes/downloader.php``); the unique
id is the assignment's participant id, the ``Participant <id>`` of its grading worksheet. Moodle
marks nothing late.
"""

from __future__ import annotations

import re

from autograder.intake.lms import LmsInfo

__all__ = ["parse_name"]

_MOODLE = re.compile(
    r"^(?P<name>.+?)_(?P<user>\d+)_assignsubmission_(?P<plugin>[a-z]+)"
    r"(?:_(?P<file>.*))?$"
)


def parse_name(name: str, folder: bool = False) -> LmsInfo | None:
    """The Moodle ids in a downloaded folder's name (or a flat file's prefix), or None.

    >>> parse_name("Jane Doe_123_assignsubmission_file", folder=True).user_id
    '123'
    """
    moodle = _MOODLE.match(name)
    if not (moodle and (folder or moodle.group("file"))):
        return None
    return LmsInfo(
        "moodle",
        moodle.group("user"),
        moodle.group("name"),
        False,
        None,
        f"{moodle.group('name')}_{moodle.group('user')}_assignsubmission_{moodle.group('plugin')}",
    )
