"""Gradescope's "Export Submissions": a folder per submission and ``submission_metadata.yml``.

The assignment's "Review Grades" → "Export Submissions" writes ``assignment_<id>_export/`` with a
folder ``submission_<id>/`` of each submission's files and ``submission_metadata.yml``, keyed by
those folder names::

    submission_90001:
      :submitters:
      - :name: Jane Doe
        :sid: '1001'
        :email: jdoe@example.edu
      - :name: John Roe
        :sid: '1002'
        :email: jroe@example.edu
      :created_at: 2026-11-19 21:03:12.123456000 -05:00
      :score: 0.0
      :history: []

(the layout and keys as a reader of the export uses them: Gradescope-Utils, hazelgrove/hazel
``src/haz3lschool/Gradescope-Utils-2023.02.17/bin/join.pl``, which globs ``assignment*export``,
loads ``submission_metadata.yml`` and reads each key's folder and ``:submitters`` →
``:email``; ``:created_at`` is a YAML time with its offset, ``:history`` the earlier ones).
Each submitter is a student: the SIS id (``:sid``) when Gradescope has one,
else the email; a group's submission is every member's, so each gets the group's grade.
``:created_at`` is the time. A folder the metadata does not name belongs to nobody.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

import yaml

from autograder.intake.lms import Claims, CourseZone, FileLike, LmsInfo, Owner, Reader

__all__ = ["NAME", "TITLE", "recognise", "claim"]

NAME = "gradescope"
TITLE = "Gradescope (Export Submissions)"
_METADATA = "submission_metadata.yml"
_OFFSET = re.compile(r"^(?P<time>.+?)\s*(?P<zone>[+-]\d\d:?\d\d|Z|UTC)$")


def recognise(paths: list[tuple[str, ...]]) -> bool:
    """Whether the download holds Gradescope's ``submission_metadata.yml``."""
    return any(p[-1] == _METADATA for p in paths)


def _time(value: object) -> float | None:
    """``:created_at`` (a YAML time, or its text) as POSIX seconds; None without a zone."""
    if isinstance(value, datetime):
        return value.timestamp() if value.tzinfo else None
    found = _OFFSET.match(str(value or "").strip())
    if found is None:
        return None
    zone = found.group("zone").replace("UTC", "+00:00").replace("Z", "+00:00")
    text = re.sub(r"(\.\d{6})\d+", r"\1", found.group("time"))  # nanoseconds to micro
    try:
        return datetime.fromisoformat(f"{text}{zone}").timestamp()
    except ValueError:
        return None


def _owners(key: str, entry: dict) -> tuple[list[Owner], str]:
    """The students of one submission (the same notebook name filled in later), and a problem."""
    submitters = entry.get(":submitters") or []
    when = _time(entry.get(":created_at"))
    owners = []
    for person in submitters if isinstance(submitters, list) else []:
        if not isinstance(person, dict):
            continue
        sid, email = str(person.get(":sid") or ""), str(person.get(":email") or "")
        student = sid or email
        if student:
            name = str(person.get(":name") or student)
            owners.append(Owner(student, LmsInfo(NAME, student, name, False, None, key), when, ""))
    problem = "" if when is not None else "its :created_at gives no time with a zone"
    return owners, problem


def claim(files: Sequence[FileLike], read: Reader, course_offset: CourseZone = None) -> Claims:
    """Each submission folder's files, owned by every one of its submitters.
    ``course_offset`` is not read: these times name no zone abbreviation."""
    claims = Claims()
    metadata: dict = {}
    for file in files:
        if file.parts[-1] == _METADATA:
            try:
                loaded = yaml.safe_load(read(file) or b"")
            except yaml.YAMLError as exc:
                claims.note(file, f"not readable as YAML ({exc}); no submission is matched")
                continue
            metadata.update(loaded if isinstance(loaded, dict) else {})
            claims.note(file, f"read as {TITLE}'s metadata: {len(metadata)} submissions")
    for file in files:
        if file.parts[-1] == _METADATA:
            continue
        key = next((p for p in file.parts[:-1] if p in metadata), None)
        if key is None:
            continue
        owners, problem = _owners(key, metadata[key] or {})
        if problem:
            claims.notes.append(f"{file.where}: {problem}; the late policy has no evidence")
        if not owners:
            claims.notes.append(f"{file.where}: {key} names no submitter with an id or email")
        for owner in owners:
            claims.own(file, Owner(owner.student, owner.info, owner.submitted_at, file.parts[-1]))
    return claims
