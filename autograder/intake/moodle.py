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

**Team submissions.** In an assignment with "Students submit in groups" the download holds one
folder (or prefix) per group, not per student: ``downloader::get_student_prefix`` names it
``clean_filename(<group name with _ as space>_<group id>)``, or ``Default group`` with no id for
the students in no group (``get_string('defaultteam')``), then ``_assignsubmission_<plugin>``,
and writes each group's files once. The zip does not say who a group's members are, and a
group's folder reads like a student's (the group id where the participant id would be). Only the
folder of the students in no group carries no id, whatever the site's language (a participant's
always carries one): a download that holds it, or a team worksheet, is a team download, in which
every folder is a group's (:func:`no_group`). The members come from the assignment's grading
worksheet ("Download grading worksheet"), which
lists every participant with their ``Identifier`` (``Participant <id>``), ``Full name`` and, in
a team assignment, ``Group`` (the group's name, or ``Default group``: ``mod/assign/
gradingtable.php``, ``col_team``). Put it in the download, beside the folders: a folder whose
name is a group of the worksheet gives each member their own row, under the id (and participant
id) an individual download gives them. In a team download, a group's folder the worksheet does
not list, or every group's folder without a worksheet, is not graded and says why (never graded
as a participant of the group's id); where nothing says the download is a team one, every
Moodle download's notes say that a team assignment needs the worksheet.

The worksheet is read by its English column titles, and in another language by what its
columns hold: Moodle writes the titles, and ``Participant``, in the downloading user's language
(``gradingtable.php``: ``get_string('recordid', 'assign')``, ``get_string('fullname')``,
``get_string('submissionteam', 'assign')``, ``get_string('hiddenuser', 'assign')``; a German
site writes ``ID``, ``Gruppe`` and ``Teilnehmer/in``, and ``defaultteam`` is
``Standard-Gruppe``), so the participant is the first column (``<word> <id>`` in every row), the
name the second, and the group the column that names the download's groups (:func:`read_teams`).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from autograder.intake.lms import LmsInfo, spreadsheet

__all__ = [
    "FILE_TIME",
    "MARKS_LATE",
    "DEFAULT_TEAM",
    "parse_name",
    "read_teams",
    "team_of",
    "no_group",
]

#: Whether a file's time in the download is when it was handed in: no, the download's own time.
FILE_TIME = False
#: Whether the download marks a late file: no.
MARKS_LATE = False

#: The group Moodle names the students in no group (``defaultteam``, English).
DEFAULT_TEAM = "Default group"
_TEAM = re.compile(
    r"^(?P<team>.+?)(?:_(?P<group>\d+))?_assignsubmission_(?P<plugin>[a-z]+)(?:_(?P<file>.*))?$"
)
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


def team_of(name: str, folder: bool = False) -> str | None:
    """The group a team submission's folder (or flat file's prefix) names, or None.

    >>> team_of("Team Alpha_42_assignsubmission_file", folder=True)
    'Team Alpha'
    >>> team_of("Default group_assignsubmission_file", folder=True)
    'Default group'
    """
    team = _TEAM.match(name)
    if not (team and (folder or team.group("file"))):
        return None
    return team.group("team")


def no_group(name: str, folder: bool = False) -> bool:
    """Whether a team submission's folder (or flat file's prefix) is the one of the students in
    no group: a team's name with no group id (``Default group`` in English, another name in
    another language), which no participant's folder is.

    >>> no_group("Standard-Gruppe_assignsubmission_file", folder=True)
    True
    >>> no_group("Jane Doe_201_assignsubmission_file", folder=True)
    False
    """
    team = _TEAM.match(name)
    return bool(team and (folder or team.group("file")) and team.group("group") is None)


def read_teams(
    data: bytes | None, folders: Collection[str] = ()
) -> tuple[dict[str, list[LmsInfo]], bool] | None:
    """The groups of a grading worksheet: each group's name → its members (participant id and
    full name, with the prefix an individual download gives them), and whether its columns were
    found by what they hold rather than by their English titles; None when ``data`` is not a
    worksheet of a team assignment.

    Its columns are found by their English titles (``Identifier``, ``Full name``, ``Group``),
    else, in a worksheet of another language (``gradingtable.php`` titles them with
    ``get_string('recordid', 'assign')``, ``get_string('fullname')`` and
    ``get_string('submissionteam', 'assign')`` in the downloading user's language), by what they
    hold: the first column holds ``get_string('hiddenuser', 'assign')`` and the participant id
    in every row (``col_recordid``), the second the full name (the order of the columns in a
    download), and the group's column the names of the groups whose ``folders`` the download
    holds (``col_team``). The worksheet, which Moodle means to be edited in a spreadsheet, is
    read as one saves it again too (:func:`autograder.intake.lms.spreadsheet`)."""
    rows = spreadsheet(data).rows  # as Moodle wrote it, or saved again by a spreadsheet
    columns = _columns(rows or [], folders)
    if not rows or columns is None:
        return None
    ident, full, group = columns
    teams: dict[str, list[LmsInfo]] = {}
    for row in rows:
        participant = _RECORD.match((row[ident] or "").strip())
        if participant and row[group]:
            name, user = (row[full] or "").strip(), participant.group("id")
            prefix = f"{name.replace('_', ' ')}_{user}_assignsubmission_file"
            teams.setdefault(row[group].strip().replace("_", " "), []).append(
                LmsInfo("moodle", user, name, False, None, prefix)
            )
    return teams, columns != _ENGLISH


#: The worksheet's columns of the participant, their name and their group, in English.
_ENGLISH = ("Identifier", "Full name", "Group")
#: A participant's record id: ``hiddenuser`` (``Participant `` in English) and their id.
_RECORD = re.compile(r"^(?P<word>\D*?)\s*(?P<id>\d+)$")


def _columns(rows: list[dict[str, str]], folders: Collection[str]) -> tuple[str, str, str] | None:
    """The titles of the participant's, the name's and the group's columns (:func:`read_teams`),
    or None."""
    titles = list(rows[0]) if rows else []
    if set(_ENGLISH) <= set(titles):
        return _ENGLISH
    if len(titles) < 3:
        return None
    records = [_RECORD.match((row[titles[0]] or "").strip()) for row in rows]
    if not all(records) or len({r.group("word") for r in records if r}) != 1:
        return None
    groups = {f.replace("_", " ") for f in folders}
    hits = {
        title: len({(row[title] or "").strip().replace("_", " ") for row in rows} & groups)
        for title in titles[2:]
    }
    best = max(hits, key=lambda title: hits[title], default=None)
    return (titles[0], titles[1], best) if best is not None and hits[best] else None
