"""nbgrader's own folders: the exchange's ``inbound`` and the course's ``submitted``.

``nbgrader submit`` copies a student's folder into the exchange as
``inbound/<student>+<problem set>+<timestamp>[+<random>]/`` and writes the time into its
``timestamp.txt``; ``nbgrader collect`` copies the newest into the course as
``submitted/<student>/<problem set>/``, ``timestamp.txt`` with it (nbgrader
``exchange/default/submit.py``: ``assignment_filename = '{}+{}+{}+{}'.format(student_id,
assignment_id, timestamp, random_str)``; ``exchange/default/collect.py``; the timestamp is
``strftime("%Y-%m-%d %H:%M:%S.%f %Z")`` in the exchange's zone, ``exchange/abc/exchange.py``, read
back by ``utils.parse_utc``). In a zone whose abbreviation is its offset (``Asia/Singapore``
writes ``+08``) or with a ``%z`` format (``+0800``) the timestamp holds a ``+``; nbgrader's
random string (``base64.urlsafe_b64encode(os.urandom(9))``) never does, and its student id may
(``collect.py`` splits from the right), so the folder is split where the rest reads as a
timestamp. The student is nbgrader's student id; the time is
``timestamp.txt`` (the folder name's timestamp without it), never the copy's file time. Of several
submissions of one student the newest is graded, as ``nbgrader collect`` does. Both folders hold
every problem set of the course: each file carries the problem set its folder names
(:attr:`autograder.intake.lms.Owner.problem_set`), and only the one being graded is read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

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

__all__ = ["NAME", "TITLE", "recognise", "claim", "parse_timestamp"]

NAME = "nbgrader"
TITLE = "nbgrader (exchange inbound or submitted)"
_STAMP = "timestamp.txt"


def parse_timestamp(text: str, course_offset: CourseZone = None) -> float | None:
    """nbgrader's timestamp as POSIX seconds, or None when it is not one.

    nbgrader writes it with ``Exchange.timestamp_format``, ``"%Y-%m-%d %H:%M:%S.%f %Z"`` unless
    the course sets another that ``dateutil`` reads back (``exchange/abc/exchange.py``,
    ``_valid_timestamp_format``), and reads it with ``utils.parse_utc``: a zone as the third
    word (``2026-11-19 21:03:00.123456 UTC``, ``… America/Los_Angeles``, ``… +0100``), any other
    form by ``dateutil``, and a time with no zone as UTC (it is kept as it is, and nbgrader's
    times are UTC). So a date and time in ISO 8601 (``2026-11-19T21:03:00+00:00``) is read too,
    and one with no zone (``2026-11-19 21:03:00``, a format without ``%Z``) as UTC.

    Raises
    ------
    autograder.intake.lms.AmbiguousZone
        When its zone's abbreviation names several zones and ``course_offset`` (the course's
        deadline's) does not settle which.
    """
    words = text.strip().split(" ")
    if len(words) not in (1, 2, 3) or ":" not in words[min(1, len(words) - 1)]:
        return None  # a date and a time at least (a name's random string is neither)
    if len(words) == 1 and "T" not in words[0]:
        return None
    try:
        when = datetime.fromisoformat(" ".join(words[:2]))
    except ValueError:
        return None
    where = zone(words[2], course_offset) if len(words) == 3 else timezone.utc
    if where is None:
        return None
    return (when if when.tzinfo else when.replace(tzinfo=where)).timestamp()


def _stamp(text: str, course_offset: CourseZone) -> tuple[float | None, str]:
    """A timestamp's time, or None and why not (empty when it is no timestamp at all)."""
    try:
        return parse_timestamp(text, course_offset), ""
    except AmbiguousZone as exc:
        return None, f"its time {text.strip()!r} is ambiguous: {exc}"


def _inbound(name: str) -> tuple[str, str, str] | None:
    """An inbound folder's student, problem set and timestamp (``<student>+<ps>+<timestamp>
    [+<random>]``), or None when ``name`` is not one."""
    parts = name.split("+")
    for end in (len(parts), len(parts) - 1):  # without nbgrader's random string, then with it
        for start in range(2, end):
            stamp = "+".join(parts[start:end])
            if all(parts[: start - 1]) and parts[start - 1] and any(_stamp(stamp, None)):
                return "+".join(parts[: start - 1]), parts[start - 1], stamp
    return None


def _anchor(parts: tuple[str, ...]) -> int | None:
    """The index of the submission's folder in ``parts``: an inbound folder's name."""
    return next((i for i, part in enumerate(parts[:-1]) if _inbound(part)), None)


def recognise(paths: list[tuple[str, ...]]) -> bool:
    """Whether the download holds an inbound folder, or ``<student>/<ps>/timestamp.txt``."""
    return any(_anchor(p) is not None or (len(p) >= 3 and p[-1] == _STAMP) for p in paths)


def _folders(files: Sequence[FileLike]) -> dict[tuple[str, ...], tuple[str, str, str]]:
    """Every submission's folder (as path parts) → its student, problem set and the folder's
    own time."""
    folders = {}
    for file in files:
        index = _anchor(file.parts)
        if index is not None:
            found = _inbound(file.parts[index])
            assert found is not None
            folders[file.parts[: index + 1]] = found
        elif len(file.parts) >= 3 and file.parts[-1] == _STAMP:
            folders.setdefault(file.parts[:-1], (file.parts[-3], file.parts[-2], ""))
    return folders


def claim(files: Sequence[FileLike], read: Reader, course_offset: CourseZone = None) -> Claims:
    """Each submission folder's files, owned by its student at its ``timestamp.txt`` (a zone
    abbreviation of several zones settled by ``course_offset``, the course's deadline's; when it
    does not, the submission has no time and the note says how to settle it)."""
    claims = Claims()
    folders = _folders(files)
    times: dict[tuple[str, ...], float | None] = {
        folder: _stamp(stamp, course_offset)[0] for folder, (_, _, stamp) in folders.items()
    }
    for file in files:
        if file.parts[-1] == _STAMP and file.parts[:-1] in folders:
            data = read(file)
            when, why = _stamp((data or b"").decode("utf-8", "replace"), course_offset)
            if why:
                times[file.parts[:-1]] = None
                claims.note(
                    file,
                    f"{why}; its submission has no time, so the late policy has no evidence of "
                    f"when it was handed in",
                )
            elif when is None:
                claims.note(
                    file,
                    "not an nbgrader timestamp; "
                    + (
                        "the time in its folder's name is used"
                        if times[file.parts[:-1]] is not None
                        else "its submission has no time"
                    ),
                )
            else:
                times[file.parts[:-1]] = when
                claims.note(file, "read as nbgrader's time of the submission")
    for file in files:
        folder = next((f for f in folders if file.parts[: len(f)] == f), None)
        if folder is None or file.parts[-1] == _STAMP:
            continue
        student, problem_set, _ = folders[folder]
        when = times[folder]
        if when is None:
            claims.notes.append(
                f"{file.where}: its submission has no nbgrader time (no timestamp.txt, or one "
                f"whose time is not read, as noted); the late policy has no evidence of when it "
                f"was handed in"
            )
        info = LmsInfo(NAME, student, student, False, None, "/".join(folder))
        claims.own(file, Owner(student, info, when, file.parts[-1], problem_set))
    return claims
