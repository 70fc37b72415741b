"""What an LMS download says about a submission: one type for every platform.

An LMS names each downloaded file (or folder) after the student and its own ids. Canvas and
Moodle are read by their names (:mod:`autograder.intake.canvas`, :mod:`autograder.intake.moodle`,
each with a ``parse_name(name, folder) -> LmsInfo | None``, listed in
:data:`autograder.intake.collect.LMS_NAMES`). Every other platform is one module that reads its
whole download (:data:`autograder.intake.collect.PLATFORMS`), a :class:`Platform`, with:

- ``NAME`` (what ``--lms`` takes) and ``TITLE`` (what ``collection.txt`` says);
- ``recognise(paths) -> bool``: whether a download (every file's path, as a tuple of its parts)
  holds what this platform writes, and nothing that says otherwise;
- ``claim(files, read, course_offset=None) -> Claims``: each notebook's :class:`Owner` (the
  student, the platform's ids, the time the platform gives), from the names and the files the
  platform adds (receipts, metadata); ``read(file)`` gives a small file's bytes (None if it
  cannot be read); ``course_offset`` is the course's zone (:data:`CourseZone`: the late
  policy's ``time_zone``, or only its deadline's offset from UTC), which settles a zone
  abbreviation that names several zones (:data:`AMBIGUOUS`) and gives a time that names no zone
  its zone (D2L's folders).

A new platform is a module beside them, one entry in that list, and its test.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from coursedata.variants import identity

__all__ = [
    "ABBREVIATIONS",
    "AMBIGUOUS",
    "AmbiguousZone",
    "CourseZone",
    "course_zone",
    "LmsInfo",
    "lms_student",
    "Owner",
    "Claims",
    "FileLike",
    "Reader",
    "Platform",
    "slug",
    "spreadsheet",
    "Spreadsheet",
    "spreadsheet_text",
    "zone",
]


@dataclass(frozen=True)
class LmsInfo:
    """What an LMS download's file name says about a submission.

    Attributes
    ----------
    system : str
        The platform: ``"canvas"``, ``"moodle"`` or the ``NAME`` of its module.
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
    anonymous : bool
        Whether ``user_id`` is an anonymous id (Canvas's anonymous grading), not the person's.
    """

    system: str
    user_id: str
    name: str
    late: bool = False
    attachment_id: str | None = None
    prefix: str = ""
    anonymous: bool = False

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def lms_student(info: LmsInfo) -> str:
    """The student id of an LMS file: the name and the LMS's id of the person.

    Moodle's full name and participant id ``Jane Doe``, 123 give ``jane-doe-123``; Canvas's
    sortable name and user id ``smithjohn``, 101 give ``smithjohn-101`` (letters folded to ASCII,
    anything else a hyphen). Two students with one name differ by their ids; the same student
    gets the same id from every download.
    """
    fallback = "participant" if info.system == "moodle" else "user"
    return f"{slug(info.name) or fallback}-{info.user_id}"


def slug(text: str) -> str:
    """``text`` as a piece of a student id: letters folded to ASCII, lower case, anything else a
    hyphen (``Zoë O'Neil`` gives ``zoe-o-neil``), cut to 80 characters: the form a student's
    identity is compared in (:func:`coursedata.variants.identity`), so that a roster and a
    notebook naming the student as the LMS does name the student the grader does."""
    return identity(text)[:80]


class FileLike(Protocol):
    """A file of a download, as a platform module sees it."""

    @property
    def parts(self) -> tuple[str, ...]: ...  # its path, as components

    @property
    def where(self) -> str: ...  # its path, for messages

    @property
    def mtime(self) -> float | None: ...  # its time in the archive or on disk


@dataclass(frozen=True)
class Owner:
    """Whose a notebook is, by what the platform says.

    Attributes
    ----------
    student : str
        The student id the grader uses (a row of ``grades.csv``).
    info : LmsInfo
        The platform's ids, for the exports back.
    submitted_at : float or None
        When it was handed in (POSIX seconds), from the platform's own record (a receipt, a
        ``timestamp.txt``, the metadata, a commit); None when the platform gives no time, which
        the late policy reports as no evidence.
    name : str
        The notebook's own name, without what the platform added to it.
    problem_set : str or None
        The problem set the platform says it was handed in for (nbgrader's assignment id, in a
        download that holds every problem set of the course), None when the download is one
        problem set's.
    """

    student: str
    info: LmsInfo
    submitted_at: float | None
    name: str
    problem_set: str | None = None


@dataclass
class Claims:
    """What a platform module made of a download: each notebook's owner (by the file's ``where``),
    and a note for every file it read or left out, and why."""

    owners: dict[str, list[Owner]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    explained: set[str] = field(default_factory=set)

    def own(self, file: FileLike, owner: Owner) -> None:
        self.owners.setdefault(file.where, []).append(owner)

    def note(self, file: FileLike, text: str) -> None:
        self.notes.append(f"{file.where}: {text}")
        self.explained.add(file.where)


#: What a platform module reads a small file with (receipts, metadata): its bytes, or None when
#: it cannot be read.
Reader = Callable[[FileLike], "bytes | None"]


#: The course's time zone, as its late policy gives it: the zone itself (``time_zone``, an
#: IANA name: its offset changes with summer time), or only its deadline's offset from UTC;
#: None when the policy gives no deadline.
CourseZone = timedelta | tzinfo | None


def course_zone(course: CourseZone) -> tzinfo | None:
    """The course's zone as a ``tzinfo`` (a fixed offset when only the deadline's is known)."""
    return timezone(course) if isinstance(course, timedelta) else course


def zone_name(where: tzinfo) -> str:
    """A zone in words: its IANA name, or its offset (``UTC-06:00``)."""
    return getattr(where, "key", None) or where.tzname(None) or str(where)


class Platform(Protocol):
    """A platform module (see the module docstring): what it is called, whether a download is
    its, and whose each notebook of it is."""

    NAME: str
    TITLE: str

    def recognise(self, paths: list[tuple[str, ...]]) -> bool: ...

    def claim(
        self, files: Sequence[FileLike], read: Reader, course_offset: CourseZone = None
    ) -> Claims: ...


#: Zone abbreviations a platform writes in its times, as the offsets from UTC (hours) they stand
#: for. An abbreviation names an offset, standard or summer time, not a region: ``EST`` is five
#: hours behind UTC on any date. An abbreviation that names several zones is in :data:`AMBIGUOUS`
#: instead, never guessed.
ABBREVIATIONS: dict[str, float] = {
    "UTC": 0,
    "GMT": 0,
    "Z": 0,
    "WET": 0,
    "WEST": 1,
    "BST": 1,
    "CET": 1,
    "CEST": 2,
    "MET": 1,
    "MEST": 2,
    "EET": 2,
    "EEST": 3,
    "MSK": 3,
    "EST": -5,
    "EDT": -4,
    "CDT": -5,
    "MST": -7,
    "MDT": -6,
    "PST": -8,
    "PDT": -7,
    "AKST": -9,
    "AKDT": -8,
    "HST": -10,
    "AST": -4,
    "ADT": -3,
    "NST": -3.5,
    "NDT": -2.5,
    "JST": 9,
    "KST": 9,
    "HKT": 8,
    "SGT": 8,
    "AWST": 8,
    "ACST": 9.5,
    "ACDT": 10.5,
    "AEST": 10,
    "AEDT": 11,
    "NZST": 12,
    "NZDT": 13,
}


#: Abbreviations that the time-zone database gives to several zones (``strftime``'s ``%Z`` of
#: each region, tzdata): for each, the zones it may be, as (the zone, the abbreviation's offset
#: there, the offsets that zone is in through the year), in hours from UTC.
AMBIGUOUS: dict[str, tuple[tuple[str, float, tuple[float, ...]], ...]] = {
    "CST": (
        ("North America's Central (America/Chicago)", -6, (-6, -5)),
        ("China's (Asia/Shanghai)", 8, (8,)),
        ("Cuba's (America/Havana)", -5, (-5, -4)),
    ),
    "IST": (
        ("India's (Asia/Kolkata)", 5.5, (5.5,)),
        ("Ireland's (Europe/Dublin)", 1, (0, 1)),
        ("Israel's (Asia/Jerusalem)", 2, (2, 3)),
    ),
}


class AmbiguousZone(ValueError):
    """A zone abbreviation that names several zones, which the course's offset does not settle;
    its message says which zones and how to settle it."""


def _hours(hours: float) -> str:
    sign = "+" if hours >= 0 else "-"
    whole, rest = divmod(abs(hours) * 60, 60)
    return f"UTC{sign}{int(whole):02d}:{int(rest):02d}"


def _course_hours(course: CourseZone) -> tuple[set[float], bool]:
    """The offsets (hours) the course is in through the year, and whether that is all of them
    (its zone is known) or only one of them (its deadline's)."""
    if isinstance(course, timedelta):
        return {course.total_seconds() / 3600}, False
    if course is None:
        return set(), False
    year = datetime.now(timezone.utc).year
    seasons = (datetime(year, month, 15, tzinfo=course) for month in (1, 7))
    return {(t.utcoffset() or timedelta()).total_seconds() / 3600 for t in seasons}, True


def _settled(name: str, course_offset: CourseZone) -> tzinfo:
    """The one zone of :data:`AMBIGUOUS` ``name`` that the course's is (the same offsets through
    the year) or may be (its deadline's offset is one of them), or :class:`AmbiguousZone`."""
    choices = AMBIGUOUS[name]
    hours, whole = _course_hours(course_offset)
    fits = [c for c in choices if (hours == set(c[2]) if whole else hours <= set(c[2]))]
    if hours and len(fits) == 1:
        return timezone(timedelta(hours=fits[0][1]), name)
    zones = ", ".join(f"{where} {_hours(hours)}" for where, hours, _ in choices)
    where = course_zone(course_offset)
    course = (
        "the course gives no offset (no deadline in its late policy)"
        if where is None
        else f"the course's zone, {zone_name(where)}, does not settle which"
    )
    raise AmbiguousZone(
        f"{name} is {zones}, and {course}; write the problem set's deadline in the late policy "
        f"(course/late.toml) with the offset of the platform's zone (e.g. -06:00 for "
        f"America/Chicago, +08:00 for Asia/Shanghai) or its time_zone, or set the platform's "
        f"time zone to one whose abbreviation is unique"
    )


def zone(name: str, course_offset: CourseZone = None) -> tzinfo | None:
    """The time zone a platform's time names (``UTC``, ``EST``, ``Europe/Paris``,
    ``+0100``, ``+01:00``, ``+01``: ``strftime``'s ``%Z`` of a zone whose abbreviation is its
    offset, such as ``Asia/Singapore``), or None when this grader does not know it.

    An abbreviation of several zones (:data:`AMBIGUOUS`: ``CST``, ``IST``) is the one zone among
    them the course is in at some time of the year (``course_offset``, its deadline's offset).

    Raises
    ------
    AmbiguousZone
        When ``course_offset`` is None or does not settle such an abbreviation.
    """
    offset = re.fullmatch(r"([+-])(\d\d)(?::?(\d\d))?", name)
    if offset:
        sign = 1 if offset.group(1) == "+" else -1
        minutes = int(offset.group(2)) * 60 + int(offset.group(3) or 0)
        return timezone(sign * timedelta(minutes=minutes))
    if name.upper() in AMBIGUOUS:
        return _settled(name.upper(), course_offset)
    if name.upper() in ABBREVIATIONS:
        return timezone(timedelta(hours=ABBREVIATIONS[name.upper()]), name.upper())
    try:
        return ZoneInfo(name)
    except (ValueError, ZoneInfoNotFoundError):
        return None


def spreadsheet_text(data: bytes | None) -> str:
    """A CSV file's text as an LMS wrote it or a spreadsheet saved it again: UTF-16 with its
    byte-order mark (Excel's "Unicode Text"), UTF-8 with or without one, else the system's code
    page (cp1252: Excel's "CSV (Comma delimited)")."""
    data = data or b""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


@dataclass(frozen=True)
class Spreadsheet:
    """A CSV file as :func:`spreadsheet` reads it: its first line, its titles and its rows by
    title (None when it is not CSV)."""

    header: str
    titles: tuple[str, ...]
    rows: list[dict[str, str]] | None


def spreadsheet(data: bytes | None) -> Spreadsheet:
    """A CSV file (:func:`spreadsheet_text`) read by its header's titles, the delimiter being the
    one of ``,``, ``;`` (Excel where ``,`` is the decimal mark) and a tab that the header line
    holds most of."""
    text = spreadsheet_text(data)
    header = text.partition("\n")[0]
    delimiter = max(",;\t", key=header.count)
    reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
    try:
        rows = list(reader)
        titles = tuple(reader.fieldnames or ())
    except csv.Error:
        return Spreadsheet(header, (), None)
    return Spreadsheet(header, titles, rows)
