"""Moodle's download names: ``<full name>_<participant id>_assignsubmission_<plugin>[_<file>]``.

Moodle's folder (or file prefix) is ``clean_filename(<full name with _ as space>_<unique id>)``
followed by ``_assignsubmission_file`` (moodle ``mod/assign/classes/downloader.php``); the unique
id is the assignment's participant id, the ``Participant <id>`` of its grading worksheet. Moodle
marks nothing late.

Moodle's zip says nothing of when a file was handed in either: ``downloader::download_zip``
(``mod/assign/classes/downloader.php``) streams each file with ``zip_writer::
add_file_from_stored_file`` (``files/classes/local/archive_writer/zip_writer.php``), which calls
ZipStream's ``addFileFromStream`` with no options, and ZipStream's file options then default the
time to ``new DateTime()``, the moment of the download (``lib/zipstream/src/Option/File.php``,
``defaultTo``). So :data:`FILE_TIME` is False, and with no mark either a Moodle download gives the
late policy no evidence: each student's row says so.
"""

from __future__ import annotations

import re

from autograder.intake.lms import LmsInfo

__all__ = ["FILE_TIME", "MARKS_LATE", "parse_name"]

#: Whether a file's time in the download is when it was handed in: no, the download's own time.
FILE_TIME = False
#: Whether the download marks a late file: no.
MARKS_LATE = False

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
