"""What a grading result can say about a submission: one type for every stage.

A record's ``status`` (written to ``records/<student>.json``, ``grades.csv``, the gradebook, the
feedback and the report) is a :class:`Status`. It is a :class:`str` enum, so records stay plain
JSON and compare equal to the words they hold (``Status.TIMEOUT == "timeout"``).
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status", "FINAL", "SCORED"]


class Status(StrEnum):
    """The status of one submission, in the order the report lists them.

    ``OK`` is only an execution's outcome (every cell ran); grading turns it into one of the
    others.
    """

    #: Every cell has its score, the hand-graded ones included.
    GRADED = "graded"
    #: Every autograded cell was scored; written answers wait for a human.
    AWAITING_MANUAL = "awaiting-manual-grading"
    #: An answer cell is missing from the submission (deleted or unrecognisable); it scores 0 and
    #: an instructor may want to look.
    MISSING_ANSWER = "missing-answer-cell"
    #: The notebook did not finish in time; what it recorded before was scored.
    TIMEOUT = "timeout"
    #: The kernel died (or its worker did); what it recorded before was scored.
    CRASHED = "crashed"
    #: The file is not a readable notebook; nothing was scored.
    INVALID = "invalid-notebook"
    #: The student's files hold no notebook for this problem set.
    UNMATCHED = "unmatched"
    #: The student's notebook could not be read from the download (a damaged archive member, an
    #: unreadable file, one that expands past the size limit); nothing was scored, the reason is
    #: in the notes, and the instructor should ask for the file again.
    UNREADABLE = "unreadable-file"
    #: A trusted check or the grader itself failed: the scores are not final, the instructor gets
    #: the traceback, the student never does, and the next run grades it again.
    GRADER_ERROR = "grader-error"
    #: An execution in which every cell ran (before scoring only).
    OK = "ok"


#: Statuses whose scores are the student's (a grader's fault is not).
SCORED = frozenset(s for s in Status if s not in (Status.GRADER_ERROR, Status.OK))
#: Statuses with nothing left to do for a human or the grader.
FINAL = frozenset({Status.GRADED})
