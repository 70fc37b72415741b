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
whose zone Blackboard does not write (read as UTC, and said so). Of several attempts the newest
is graded.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from autograder.intake.lms import Claims, FileLike, LmsInfo, Owner, Reader, zone

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
    """Whether every file is an attempt's file or receipt, and one at least a receipt."""
    names = [p[-1] for p in paths]
    matches = [_ATTEMPT.match(n) for n in names]
    return all(matches) and any(m.group("receipt") for m in matches if m)


def _when(text: str) -> tuple[float | None, str]:
    """A receipt's ``Date Submitted`` as POSIX seconds, or None and why not."""
    words = text.replace(" o'clock", "").rsplit(" ", 1)
    if len(words) != 2 or zone(words[1]) is None:
        return None, f"its time {text!r} names no time zone this grader knows"
    for form in _FORMATS:
        try:
            naive = datetime.strptime(words[0], form)
        except ValueError:
            continue
        return naive.replace(tzinfo=zone(words[1])).timestamp(), ""
    return None, f"its time {text!r} is in no format this grader reads"


def _receipt(data: bytes | None) -> dict | None:
    """What a receipt says: ``user``, ``name``, ``when`` (or None), ``why`` and ``files``
    (Blackboard's file name → the student's)."""
    text = (data or b"").decode("utf-8", "replace").replace("\r\n", "\n")
    person, date = _NAME_LINE.search(text), _DATE_LINE.search(text)
    if person is None:
        return None
    when, why = _when(date.group("when")) if date else (None, "it has no Date Submitted")
    files = {m.group("name"): m.group("original") for m in _FILES.finditer(text)}
    assignment = _ASSIGNMENT_LINE.search(text)
    return {
        "assignment": assignment.group("assignment") if assignment else "",
        "user": person.group("user"),
        "name": person.group("name"),
        "when": when,
        "why": why,
        "files": files,
    }


def _user(prefix: str, assignments: set[str]) -> str:
    """The username of an attempt without a receipt: what lies between an assignment name the
    receipts give and ``_attempt_`` (a username may hold ``_``), else the part before
    ``_attempt_`` after the last ``_``."""
    head = prefix.rsplit("_attempt_", 1)[0]
    for assignment in sorted(filter(None, assignments), key=len, reverse=True):
        if head.startswith(f"{assignment}_"):
            return head[len(assignment) + 1 :]
    return head.rsplit("_", 1)[-1]


def claim(files: list[FileLike], read: Reader) -> Claims:
    """Each attempt's files, owned by the receipt's username at the receipt's time."""
    claims = Claims()
    receipts: dict[str, dict | None] = {}
    assignments: set[str] = set()
    for file in files:
        found = _ATTEMPT.match(file.parts[-1])
        if found and found.group("receipt"):
            receipts[found.group("prefix")] = _receipt(read(file))
            assignments.add((receipts[found.group("prefix")] or {}).get("assignment", ""))
            claims.note(file, f"read as the {TITLE} receipt of its attempt")
            if receipts[found.group("prefix")] is None:
                claims.notes[-1] = f"{file.where}: not a {TITLE} receipt (no Name: line); ignored"
    for file in files:
        found = _ATTEMPT.match(file.parts[-1])
        if not found or found.group("receipt"):
            continue
        receipt = receipts.get(found.group("prefix"))
        user = receipt["user"] if receipt else _user(found.group("prefix"), assignments)
        when = receipt["when"] if receipt else None
        if when is None:
            stamp = datetime.strptime(found.group("stamp"), "%Y-%m-%d-%H-%M-%S")
            when = stamp.replace(tzinfo=timezone.utc).timestamp()
            why = receipt["why"] if receipt else "its attempt has no receipt"
            claims.notes.append(
                f"{file.where}: {why}; the time in its name is read as UTC (Blackboard does "
                f"not write its zone)"
            )
        original = (receipt or {}).get("files", {}).get(file.parts[-1], found.group("file"))
        info = LmsInfo(
            NAME, user, receipt["name"] if receipt else user, False, None, found.group("prefix")
        )
        claims.own(file, Owner(user, info, when, original))
    return claims
