"""Blackboard Learn's "Download assignment": files and a receipt per attempt, in one flat zip.

Grade Center → the assignment's column → "Assignment File Download" writes, for every attempt,
each file as ``<Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file>`` and a receipt
``<Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt``::

    Name: Jane Doe (jdoe)
    Assignment: PS1 PCA
    Date Submitted: Thursday, November 19, 2026 9:03:12 PM EST
    Current Grade: Needs Grading

    Submission Field:
    There is no student submission text data for this assignment.

    Comments:
    There are no student comments for this assignment.

    Files:
    \tOriginal filename: ps1_pca.ipynb
    \tFilename: PS1 PCA_jdoe_attempt_2026-11-19-21-03-12_ps1_pca.ipynb

(the names: kwurst/bb-file-cleanup ``README.md``; the receipt: CodeGra.de's parser of it,
te5in/CodeGra.de ``psef/blackboard.py``). The username in the receipt's ``Name:`` line is the
student (the one the Grade Center's upload matches on, :mod:`autograder.exports.blackboard`);
without a receipt it is the part of the file name before ``_attempt_``. The receipt's ``Date
Submitted`` is the time, in the zone it names; without a receipt, the attempt's stamp in the name,
whose zone Blackboard does not write: it is the server's, which the other receipts name (the
zone of the receipt nearest in time is used, and said so; UTC when no receipt names one). A
receipt in a zone whose abbreviation names several (``CST``: Chicago's, Shanghai's or Havana's)
is read in the one the course's deadline settles; when it does not, the attempt has no time
(the late policy has no evidence), and the note names the receipt and how to settle it. Of
several attempts the newest (with a notebook) is graded, whatever its file's name; the older
attempts' files are noted, not graded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone, tzinfo

from autograder.intake.lms import (
    AmbiguousZone,
    Claims,
    CourseZone,
    FileLike,
    LmsInfo,
    Owner,
    Reader,
    zone,
)

__all__ = ["NAME", "TITLE", "recognise", "claim"]

NAME = "blackboard"
TITLE = "Blackboard Learn"
_ATTEMPT = re.compile(
    r"^(?P<prefix>(?P<assignment>.+)_(?P<user>[^_]+)_attempt_"
    r"(?P<stamp>\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d))(?:_(?P<file>.+)|(?P<receipt>\.txt))$"
)
_NAME_LINE = re.compile(r"^Name: (?P<name>.*) \((?P<user>[^()\n]*)\)\s*$", re.M)
_ASSIGNMENT_LINE = re.compile(r"^Assignment: (?P<assignment>.+?)\s*$", re.M)
_DATE_LINE = re.compile(r"^Date Submitted: (?P<when>.+?)\s*$", re.M)
_FILES = re.compile(
    r"^\s*Original filename: (?P<original>.+?)\s*\n\s*Filename: (?P<name>.+?)\s*$", re.M
)
_FORMATS = ("%A, %B %d, %Y %I:%M:%S %p", "%A, %d %B %Y %H:%M:%S", "%A, %B %d, %Y %H:%M:%S")


def recognise(paths: list[tuple[str, ...]]) -> bool:
    """Whether every notebook is an attempt's file, and one file at least a receipt: a stray
    file beside them (the instructor's, or what a file manager leaves) is noted, not a reason
    to read the whole class's attempts as something else."""
    matches = [(p[-1], _ATTEMPT.match(p[-1])) for p in paths]
    notebooks = [m for name, m in matches if name.lower().endswith(".ipynb")]
    return all(notebooks) and any(m and m.group("receipt") for _, m in matches)


def _when(text: str, course_offset: CourseZone) -> tuple[float | None, str, str]:
    """A receipt's ``Date Submitted`` as POSIX seconds (or None and why not), and its zone
    (``"?"`` when its abbreviation names several zones and the course does not settle which)."""
    words = text.replace(" o'clock", "").rsplit(" ", 1)
    try:
        where = zone(words[1], course_offset) if len(words) == 2 else None
    except AmbiguousZone as exc:
        return None, f"its time {text!r} is ambiguous: {exc}", "?"
    if where is None:
        return None, f"its time {text!r} names no time zone this grader knows", ""
    for form in _FORMATS:
        try:
            naive = datetime.strptime(words[0], form)
        except ValueError:
            continue
        return naive.replace(tzinfo=where).timestamp(), "", words[1]
    return None, f"its time {text!r} is in no format this grader reads", ""


def _receipt(data: bytes | None, course_offset: CourseZone) -> dict | None:
    """What a receipt says: ``user``, ``name``, ``when`` (or None), ``why`` and ``files``
    (Blackboard's file name → the student's)."""
    text = (data or b"").decode("utf-8", "replace").replace("\r\n", "\n")
    person, date = _NAME_LINE.search(text), _DATE_LINE.search(text)
    if person is None:
        return None
    when, why, where = (
        _when(date.group("when"), course_offset) if date else (None, "it has no Date Submitted", "")
    )
    files = {m.group("name"): m.group("original") for m in _FILES.finditer(text)}
    assignment = _ASSIGNMENT_LINE.search(text)
    return {
        "assignment": assignment.group("assignment") if assignment else "",
        "user": person.group("user"),
        "name": person.group("name"),
        "when": when,
        "why": why,
        "zone": where,
        "files": files,
    }


def _stamp_time(
    stamp: str, receipts: list[dict], course_offset: CourseZone
) -> tuple[float | None, str]:
    """The time of an attempt's stamp (``YYYY-MM-DD-HH-MM-SS``, in the server's zone, which
    Blackboard does not write): in the zone of the receipt nearest in time, else UTC (None when
    the receipts name only a zone the course does not settle); and the zone's name."""
    naive = datetime.strptime(stamp, "%Y-%m-%d-%H-%M-%S")
    known = [r for r in receipts if r["when"] is not None]
    if not known and any(r["zone"] == "?" for r in receipts):
        return None, "?"
    if not known:
        return naive.replace(tzinfo=timezone.utc).timestamp(), ""
    guess = naive.replace(tzinfo=timezone.utc).timestamp()
    nearest = min(known, key=lambda r: abs(r["when"] - guess))
    where: tzinfo | None = zone(nearest["zone"], course_offset)
    assert where is not None  # a receipt's time is read only in a zone this grader knows
    return naive.replace(tzinfo=where).timestamp(), nearest["zone"]


def _user(prefix: str, assignments: set[str]) -> str:
    """The username of an attempt without a receipt: what lies between an assignment name the
    receipts give and ``_attempt_`` (a username may hold ``_``), else the part before
    ``_attempt_`` after the last ``_``."""
    head = prefix.rsplit("_attempt_", 1)[0]
    for assignment in sorted(filter(None, assignments), key=len, reverse=True):
        if head.startswith(f"{assignment}_"):
            return head[len(assignment) + 1 :]
    return head.rsplit("_", 1)[-1]


def claim(files: Sequence[FileLike], read: Reader, course_offset: CourseZone = None) -> Claims:
    """Each attempt's files, owned by the receipt's username at the receipt's time (a zone
    abbreviation of several zones settled by ``course_offset``, the course's deadline's)."""
    claims = Claims()
    receipts: dict[str, dict | None] = {}
    assignments: set[str] = set()
    for file in files:
        found = _ATTEMPT.match(file.parts[-1])
        if found and found.group("receipt"):
            receipts[found.group("prefix")] = _receipt(read(file), course_offset)
            assignments.add((receipts[found.group("prefix")] or {}).get("assignment", ""))
            claims.note(file, f"read as the {TITLE} receipt of its attempt")
            if receipts[found.group("prefix")] is None:
                claims.notes[-1] = f"{file.where}: not a {TITLE} receipt (no Name: line); ignored"
    parsed = [r for r in receipts.values() if r is not None]
    attempts: dict[str, list[tuple[FileLike, Owner]]] = {}
    for file in files:
        found = _ATTEMPT.match(file.parts[-1])
        if not found or found.group("receipt"):
            continue
        receipt = receipts.get(found.group("prefix"))
        user = receipt["user"] if receipt else _user(found.group("prefix"), assignments)
        when = receipt["when"] if receipt else None
        if receipt and receipt["zone"] == "?":
            claims.notes.append(
                f"{file.where}: its receipt's {receipt['why']}; its attempt has no time, so the "
                f"late policy has no evidence of when it was handed in"
            )
        elif when is None:
            when, where = _stamp_time(found.group("stamp"), parsed, course_offset)
            why = receipt["why"] if receipt else "its attempt has no receipt"
            how = (
                "in no zone: the receipts name only a zone the course does not settle, so the "
                "late policy has no evidence of when it was handed in"
                if where == "?"
                else f"in {where}, the zone of the receipt nearest in time"
                if where
                else "as UTC, no receipt naming a zone"
            )
            claims.notes.append(
                f"{file.where}: {why}; the time in its name is read {how} (Blackboard does "
                f"not write the zone in the name)"
            )
        original = (receipt or {}).get("files", {}).get(file.parts[-1], found.group("file"))
        info = LmsInfo(
            NAME, user, receipt["name"] if receipt else user, False, None, found.group("prefix")
        )
        attempts.setdefault(user, []).append((file, Owner(user, info, when, original)))
    for owned in attempts.values():
        _newest(claims, owned)
    return claims


def _newest(claims: Claims, owned: list[tuple[FileLike, Owner]]) -> None:
    """Give a student the files of their newest attempt that holds a notebook (all of theirs
    when none does), whatever its files are named; note the older attempts' files."""
    books = [o for f, o in owned if f.parts[-1].lower().endswith(".ipynb")]
    newest = max(
        books or [o for _, o in owned], key=lambda o: (o.submitted_at or 0.0, o.info.prefix)
    )
    for file, owner in owned:
        if owner.info.prefix == newest.info.prefix or not books:
            claims.own(file, owner)
            continue
        later = (owner.submitted_at or 0.0, owner.info.prefix) > (
            newest.submitted_at or 0.0,
            newest.info.prefix,
        )
        which = (
            f"a newer attempt of {owner.student}'s that holds no notebook (look at it)"
            if later
            else f"an older attempt of {owner.student}'s"
        )
        claims.note(
            file,
            f"not graded, {which}; their newest attempt with a notebook, "
            f"{newest.info.prefix}, is graded",
        )
