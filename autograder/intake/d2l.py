"""D2L Brightspace's assignment download: a folder per submission, and ``index.html``.

Assignments → the assignment → select the submissions → "Download" writes a zip with one folder
per submission, ``<id>-<id> - <First Last> - <Mon D, YYYY HMM PM>/<file>`` (older versions
``<Mon D, YYYY H:MM PM>``), and an ``index.html`` listing them (the folder name as d2lmf reads
it, cgmb/d2lmf ``d2lmf/d2lmf.py``, ``parse_submission_dirname``: an id, the student's name, the
time, separated by `` - ``; the current time format as Brightspace downloads show it, e.g.
``Assignment 1 Download Oct 11, 2015 803 PM.zip`` in its ``README.md``). The folder carries no
login, so the student is their name (``Jane Doe`` gives ``jane-doe``, as d2lmf merges a
student's folders by name); the ids are kept. The time is the downloading user's wall-clock time,
whose zone Brightspace does not write: it is read in the course's zone, the late policy's
``time_zone`` (summer time included), else at its deadline's offset (an hour off across a change
to or from summer time, which the note says), and as UTC only when the course gives no deadline;
``collection.txt`` says which. Of a student's several submissions the newest is graded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone, tzinfo

from autograder.intake.lms import (
    Claims,
    CourseZone,
    FileLike,
    LmsInfo,
    Owner,
    Reader,
    course_zone,
    slug,
    zone_name,
)

__all__ = ["NAME", "TITLE", "recognise", "claim"]

NAME = "d2l"
TITLE = "D2L Brightspace"
_FOLDER = re.compile(
    r"^(?P<ids>\d+-\d+) - (?P<name>.+) - "
    r"(?P<when>[A-Z][a-z]{2} \d{1,2}, \d{4} (?:\d{3,4}|\d{1,2}:\d\d) [AP]M)$"
)
_FORMAT = "%b %d, %Y %I:%M %p"
#: ``903 PM``, ``103 PM``, ``1103 PM``: the hour is what comes before the minutes' two digits.
_CLOCK = re.compile(r"(?P<date>.+ )(?P<hour>\d{1,2}):?(?P<minute>\d\d) (?P<half>[AP]M)$")


def recognise(paths: list[tuple[str, ...]]) -> bool:
    """Whether the download holds Brightspace's submission folders."""
    return any(_FOLDER.match(part) for p in paths for part in p[:-1])


def _time(text: str, where: tzinfo = timezone.utc, fold: int = 0) -> float | None:
    """A folder's time as POSIX seconds (its wall-clock time read in ``where``; of a time that
    comes twice there, the first, or the second with ``fold=1``), or None if it is no time."""
    found = _CLOCK.match(text)
    if found is None:
        return None
    clock = f"{found['date']}{found['hour']}:{found['minute']} {found['half']}"
    try:
        return datetime.strptime(clock, _FORMAT).replace(tzinfo=where, fold=fold).timestamp()
    except ValueError:
        return None


def _shared_names(claims: Claims) -> list[str]:
    """A note for each name several submission folders carry: Brightspace's download names
    students, not accounts, so two students of one name cannot be told from one student's two
    submissions; only the newest is graded, and the instructor is told which folders."""
    folders: dict[str, set[str]] = {}
    for owners in claims.owners.values():
        for owner in owners:
            folders.setdefault(owner.student, set()).add(owner.info.prefix)
    return [
        f"{TITLE}: {len(found)} submission folders carry the name of {student} "
        f"({'; '.join(sorted(found))}): graded as one student's submissions (the newest). If "
        "two students share this name, download their submissions separately"
        for student, found in sorted(folders.items())
        if len(found) > 1
    ]


def claim(files: Sequence[FileLike], read: Reader, course_offset: CourseZone = None) -> Claims:
    """Each submission folder's files, owned by the student it names, at its time: the folder's
    wall-clock time read at ``course_offset`` (the course's deadline's offset), UTC without it."""
    claims = Claims()
    where = course_zone(course_offset) or timezone.utc
    for file in files:
        folder = next((part for part in file.parts[:-1] if _FOLDER.match(part)), None)
        if folder is None:
            if file.parts[-1].lower() == "index.html":
                claims.note(file, f"{TITLE}'s list of the submissions; not graded")
            continue
        found = _FOLDER.match(folder)
        assert found is not None
        student = slug(found.group("name")) or found.group("ids")
        info = LmsInfo(NAME, found.group("ids"), found.group("name"), False, None, folder)
        when = _time(found.group("when"), where)
        if when is not None and when != _time(found.group("when"), where, fold=1):
            claims.note(
                file,
                f"its folder's time, {found.group('when')}, came twice in {zone_name(where)} "
                f"(the hour repeated at the end of summer time): read as the first, an hour "
                f"earlier than the second",
            )
        claims.own(file, Owner(student, info, when, file.parts[-1]))
    claims.notes += _shared_names(claims)
    if claims.owners:
        claims.notes.append(
            f"{TITLE}: the times in the folder names are the downloading user's wall-clock "
            f"times, whose zone Brightspace does not write; "
            + (
                "read as UTC, for the course gives no deadline (write the problem set's "
                "deadline in the late policy with your offset, and they are read at it)"
                if course_offset is None
                else f"read in the course's time_zone, {zone_name(where)}"
                if isinstance(course_offset, tzinfo)
                else f"read at the offset of the course's deadline, {zone_name(where)} (a time "
                f"on the other side of a change to or from summer time is an hour off: give the "
                f'late policy the zone\'s name, time_zone = "Region/City")'
            )
        )
    return claims
