"""What an LMS download's names say about a submission: one type for every LMS.

An LMS names each downloaded file (or folder) after the student and its own ids. One module per LMS
reads its names (:mod:`autograder.intake.canvas`, :mod:`autograder.intake.moodle`), each with a
``parse_name(name, folder) -> LmsInfo | None``; :data:`autograder.intake.collect.LMS_NAMES`
lists them, tried in order. A new LMS is a module beside them and one entry in that list.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from dataclasses import dataclass

__all__ = ["LmsInfo", "lms_student"]


@dataclass(frozen=True)
class LmsInfo:
    """What an LMS download's file name says about a submission.

    Attributes
    ----------
    system : str
        The LMS: ``"canvas"`` or ``"moodle"``.
    user_id : str
        Canvas's user id, or Moodle's participant id (the ``Participant <id>`` of the grading
        worksheet).
    name : str
        The name part (Canvas's ``lastfirst`` login-like name, Moodle's full name).
    late : bool
        Whether the LMS marked the file late (Canvas's ``LATE``; Moodle marks nothing).
    attachment_id : str or None
        Canvas's attachment id (needed to re-upload feedback to that submission).
    prefix : str
        The file-name prefix the LMS matches on re-upload: Canvas ``<name>_<user>_<attachment>_``
        (without ``LATE_``), Moodle ``<Full Name>_<id>_assignsubmission_file``.
    """

    system: str
    user_id: str
    name: str
    late: bool = False
    attachment_id: str | None = None
    prefix: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def lms_student(info: LmsInfo) -> str:
    """The student id of an LMS file: the name and the LMS's id of the person.

    Moodle's full name and participant id ``Jane Doe``, 123 give ``jane-doe-123``; Canvas's
    sortable name and user id ``smithjohn``, 101 give ``smithjohn-101`` (letters folded to ASCII,
    anything else a hyphen). Two students with one name differ by their ids; the same student
    gets the same id from every download.
    """
    ascii_name = unicodedata.normalize("NFKD", info.name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-")[:80]
    fallback = "participant" if info.system == "moodle" else "user"
    return f"{slug or fallback}-{info.user_id}"
