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

**Group assignments** graded as a group: the zip holds one submission per group, the one of a
"representative" member (``zip_assignment`` takes ``assignment.representatives``), whose name
``representatives`` (``app/models/assignment.rb``) replaces with the group's: the file is
``<group name, sanitized>_<representative's user id>_<attachment id>_<file>``, and the other
members are not in the zip. Their names come from the group set's CSV export (canvas-lms
``GET /api/v1/group_categories/:id/export``, the group set's "Export" in People → Groups: columns
``name, canvas_user_id, user_id, login_id, sections, group_name, canvas_group_id, group_id``, as
``spec/apis/v1/group_categories_api_spec.rb`` checks), put in the download beside the files: a
file whose name is its user's group's (:func:`group_file_name`) goes to every member of the group,
each under their own user id (``jane-doe-101``, the CSV giving the display name, not the sortable
one). Without the CSV, the notes say that a group assignment needs it.
"""

from __future__ import annotations

import dataclasses
import re

from autograder.intake.lms import LmsInfo, spreadsheet

__all__ = [
    "FILE_TIME",
    "MARKS_LATE",
    "parse_name",
    "read_groups",
    "group_file_name",
    "group_members",
]

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


def group_file_name(group: str) -> str:
    """The name part Canvas writes for a group's submission: the group's name as
    ``sanitize_user_name`` and ``sanitize_file_name`` leave it (canvas-lms
    ``lib/content_zipper.rb``: ``_<digits>_`` loses its underscores, lower case, then every
    character that is not a word character dropped).

    >>> group_file_name("Team 7: Büro")
    'team7büro'
    """
    return re.sub(r"[^\w]", "", re.sub(r"_(\d+)_", r"\1", group).lower())


#: The columns of a group set's export that name a member and their group.
_COLUMNS = ("name", "canvas_user_id", "group_name")


def read_groups(
    data: bytes | None,
) -> tuple[dict[tuple[str, str], list[LmsInfo]] | None, list[str]]:
    """Each member's user id and their group's file name (:func:`group_file_name`) → the group's
    members (user id and name), from a Canvas group set's CSV export, keyed so that the exports
    of several group sets merge without a student in two of them losing either group (None
    when ``data`` is not one: no ``name``, ``canvas_user_id`` and ``group_name`` columns); and
    what of it cannot be read, in words: a file whose header names the export's columns but that
    is not read as one, a member whose user id is not a Canvas user id (a spreadsheet that
    showed it as a number in its own way). The export saved again by a spreadsheet is read too
    (:func:`autograder.intake.lms.spreadsheet`: its code page, ``;`` or a tab)."""
    sheet = spreadsheet(data)
    rows, header = sheet.rows, sheet.header.lower()
    titles = {title.strip().lower(): title for title in sheet.titles}
    if not rows or not set(_COLUMNS) <= set(titles):
        if "canvas_user_id" not in header and "group_name" not in header:
            return None, []
        why = (
            "it holds no member"
            if rows is not None and not rows
            else "its columns are not read as the export's "
            f"({', '.join(_COLUMNS)}; found: {', '.join(titles) or 'none'})"
        )
        return None, [f"its header names a Canvas group set's columns, but {why}"]
    members: dict[str, list[LmsInfo]] = {}
    problems = []
    for number, row in enumerate(rows, start=2):
        name, user, group = ((row[titles[c]] or "").strip() for c in _COLUMNS)
        if group and not user.isdigit():
            problems.append(
                f"line {number}: {name or '?'} of {group!r} has the user id {user!r}, not a "
                f"Canvas user id (a spreadsheet may have shown it in its own way), so they are "
                f"not graded with their group: export the group set again and give it unchanged"
            )
        elif group:
            members.setdefault(group, []).append(LmsInfo("canvas", user, name))
    groups = {
        (m.user_id, group_file_name(group)): team for group, team in members.items() for m in team
    }
    return groups, problems


def group_members(info: LmsInfo, groups: dict[tuple[str, str], list[LmsInfo]]) -> list[LmsInfo]:
    """The members a Canvas file is graded for: every member of its user's group when the file
    carries the group's name (a group assignment's submission), each with the file's late mark,
    attachment id and prefix (Canvas's re-upload finds the group's submission by them); none
    when it is the user's own."""
    team = groups.get((info.user_id, info.name), [])
    if info.anonymous:
        return []
    return [dataclasses.replace(info, user_id=m.user_id, name=m.name) for m in team]
