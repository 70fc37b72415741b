"""A student's own numbers in a problem set with per-student variants.

The released notebook is one for the whole class. Its setup asks the student once for their
course identity (``STUDENT_ID = "..."``, in an answer cell) and then calls::

    V = coursedata.variant("ps4_map_naive_bayes", STUDENT_ID, "<the release's table>")

which returns that student's parameters (a dict), used by the question text's numbers and the
visible tests. The table, written into the notebook by the release for the course's roster, maps
``HMAC-SHA256(salt, "<problem set>:<identity>")`` to each student's parameters, with a salt made
anew at each release and written beside it (:func:`table_key`), so it works offline and in
the browser; the secret the parameters are drawn from stays with the grader. Anyone who knows a
classmate's identity can look their numbers up (the price of an offline notebook); the salt
makes a precomputed list of guessed identities' keys useless, though identities can still be
guessed one by one against one release's table.

When the notebook is graded, the grader writes the parameters of the student the LMS names into
``$GRADER_RESULTS_DIR/inputs/variant.json`` before it runs, and this returns those, whatever
``STUDENT_ID`` says (the grader reports an identity that differs from the LMS's).

A notebook released without a roster (the copy the course site publishes) knows one identity,
:data:`PRACTICE` (``STUDENT_ID = "practice"``), to try the problem set on; a student of a course
enters their own identity in the notebook their instructor released for the class.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import unicodedata
from pathlib import Path

from coursedata.grading import INPUTS_FOLDER, RESULTS_ENV

__all__ = [
    "variant",
    "identity",
    "table_key",
    "salted_table",
    "VARIANT_FILE",
    "IDENTITY_CELL",
    "IDENTITY_NAME",
    "PRACTICE",
    "UnknownIdentity",
    "FOLDER_ID",
    "LMS_ID",
]

#: The file of the results folder's inputs holding the graded student's parameters.
VARIANT_FILE = "variant.json"
#: The ``grade_id`` of the answer cell where the student enters their identity, and its name.
IDENTITY_CELL = "student_identity"
IDENTITY_NAME = "STUDENT_ID"
#: The one identity of a release without a roster (the course site's copy): anyone may try the
#: problem set on its numbers, drawn as a student's are; no student of a course has it.
PRACTICE = "practice"


#: A student id as the grader takes it from a folder of submissions (the folder's name); a
#: Canvas or Moodle id is ``<name>-<the LMS's number for the student>``.
FOLDER_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}$")
LMS_ID = re.compile(r"-\d+$")


class UnknownIdentity(ValueError):
    """An identity that is not on the roster the problem set was released for."""


def identity(student: str) -> str:
    """A student's identity as it is compared, the same on every side (the release's roster,
    ``STUDENT_ID`` in the notebook, the LMS's name for the student at grading): letters folded
    to ASCII (``ë`` is ``e``), lower case, every run of anything else one hyphen, none at the
    ends. The grader makes a Canvas or Moodle student's id with this function
    (``autograder.intake.lms.slug``), so the id as ``grades.csv`` shows it, as Canvas's file
    name spells it or as Moodle's full name and participant id read, is one identity.

    >>> identity("  AB123 "), identity("oneilzoë-104"), identity("Ada Lovelace-201")
    ('ab123', 'oneilzoe-104', 'ada-lovelace-201')
    """
    ascii_text = unicodedata.normalize("NFKD", str(student)).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")


def table_key(problem_set: str, student: str, salt: str | None = None) -> str:
    """The released table's key of ``student``: HMAC-SHA256 of ``"<problem set>:<identity>"``
    keyed with the release's ``salt`` (hexadecimal), in hex, so the table lists no identity in
    clear and a table of guessed identities' keys made for one release is useless for another;
    without a salt (a table released before salts), SHA-256 of the same text."""
    message = f"{problem_set}:{identity(student)}".encode()
    if salt is None:
        return hashlib.sha256(message).hexdigest()
    return hmac.new(bytes.fromhex(salt), message, hashlib.sha256).hexdigest()


def salted_table(rows: dict, salt: str) -> dict:
    """The table a release writes: ``{"salt": salt, "rows": {table_key: parameters}}``."""
    return {"salt": salt, "rows": rows}


def _graded_parameters() -> dict | None:
    """The parameters the grader wrote for this run, if it is one."""
    folder = os.environ.get(RESULTS_ENV)
    path = Path(folder, INPUTS_FOLDER, VARIANT_FILE) if folder else None
    if path is None or not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def variant(problem_set: str, student_id: str, table: str | dict) -> dict:
    """The parameters of ``student_id``'s variant of ``problem_set``.

    Parameters
    ----------
    problem_set : str
    student_id : str
        The student's course identity, as the course's LMS knows it (spaces and case do not
        matter).
    table : str or dict
        The release's table, ``{"salt": hex, "rows": {key: parameters}}`` (or its JSON;
        :func:`table_key`), or an older release's ``{key: parameters}``.

    Returns
    -------
    dict
        ``{name: number or list}``; in a graded run, those of the student the LMS names.

    Raises
    ------
    UnknownIdentity
        No identity entered, or one that is not on the roster of the release.
    """
    graded = _graded_parameters()
    if graded is not None:
        return graded
    if not str(student_id).strip():
        raise UnknownIdentity(
            "enter your course identity (as the course's LMS knows you) in STUDENT_ID above, "
            "then run this cell again: your numbers in this problem set are your own (on the "
            f'course site, without a course: STUDENT_ID = "{PRACTICE}")'
        )
    rows = json.loads(table) if isinstance(table, str) and table.startswith("{") else table
    if not isinstance(rows, dict):
        raise UnknownIdentity(
            f"this notebook has no table of variants ({table!r}): it is the course's source, "
            "not a released problem set; variants are drawn at release and at grading"
        )
    salt = rows.get("salt") if set(rows) == {"salt", "rows"} else None
    rows = rows["rows"] if salt is not None else rows
    found = rows.get(table_key(problem_set, student_id, salt))
    if found is None and set(rows) == {table_key(problem_set, PRACTICE, salt)}:
        raise UnknownIdentity(
            f"this is the course site's copy of the problem set, released without a roster: "
            f'it knows only STUDENT_ID = "{PRACTICE}", to try the problem set. For your course, '
            "do it in the notebook your instructor released to your class"
        )
    if found is None:
        raise UnknownIdentity(
            f"{student_id!r} is not on the roster this problem set was released for: check "
            "STUDENT_ID (your identity as the course's LMS knows you); if it is right, ask "
            "your instructor to release the problem set again with you on the roster"
        )
    return dict(found)
