"""What a grading result can say about a submission: one type for every stage, and its words.

A record's ``status`` (written to ``records/<student>.json``, ``grades.csv``, the gradebook, the
feedback and the report) is a :class:`Status`. It is a :class:`str` enum, so records stay plain
JSON and compare equal to the words they hold (``Status.TIMEOUT == "timeout"``). Everything the
grader decides or says by status lives here: which statuses count as the student's score
(:attr:`Status.scored`), which ones the report's statistics leave out (:attr:`Status.ran`), the
sentence the student's feedback shows (:attr:`Status.explanation`), what an unscored cell says
(:attr:`Status.unscored_message`) and why a final score is missing (:attr:`Status.why_no_final`).
No other module spells a status word: a test reads ``autograder/`` for them.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status", "RECORDED"]


class Status(StrEnum):
    """The status of one submission, in the order the report lists them.

    ``OK`` is only an execution's outcome (every cell ran); grading turns it into one of the
    others, and no record holds it.
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
    #: The student's notebook could not be read from the download (a damaged archive member, an
    #: unreadable file, one that expands past the size limit); nothing was scored, the reason is
    #: in the notes, and the instructor should ask for the file again.
    UNREADABLE = "unreadable-file"
    #: The student's files hold no notebook for this problem set.
    UNMATCHED = "unmatched"
    #: A trusted check or the grader itself failed: the scores are not final, the instructor gets
    #: the traceback, the student never does, and the next run grades it again.
    GRADER_ERROR = "grader-error"
    #: An execution in which every cell ran (before scoring only).
    OK = "ok"

    @property
    def scored(self) -> bool:
        """Whether the record's scores are the student's (a grader's fault gives no score)."""
        return self not in (Status.GRADER_ERROR, Status.OK)

    @property
    def complete(self) -> bool:
        """Whether every cell that can be scored was (``graded``, or waiting only for the
        written answers' hand-graded scores): the two differ by the hand-grading alone."""
        return self in (Status.GRADED, Status.AWAITING_MANUAL)

    @property
    def ran(self) -> bool:
        """Whether the scores say how the student's answers did: not where nothing ran (no
        notebook, an unreadable or invalid file) or the grader failed."""
        return self not in (
            Status.INVALID,
            Status.UNREADABLE,
            Status.UNMATCHED,
            Status.GRADER_ERROR,
        )

    @property
    def stopped(self) -> bool:
        """Whether the notebook was stopped before its end (out of time, or its kernel died)."""
        return self in (Status.TIMEOUT, Status.CRASHED)

    @property
    def file_read(self) -> bool:
        """Whether a file of the student's was read (its time counts for lateness): not for
        ``unmatched`` (no notebook) or ``unreadable-file``."""
        return self not in (Status.UNMATCHED, Status.UNREADABLE)

    @property
    def explanation(self) -> str:
        """The sentence the student's feedback shows for this status."""
        return _EXPLANATION.get(self, str(self))

    @property
    def unscored_message(self) -> str:
        """What each autograded cell of a submission that got no result says (the feedback's
        "what we found")."""
        return _UNSCORED.get(self, _UNSCORED[Status.GRADER_ERROR])

    @property
    def why_no_final(self) -> str:
        """Why a record with this status has no final score, for the instructor and the LMS
        exports (empty: the status itself does not stand in the way)."""
        return _NO_FINAL.get(self, "")


#: Every status a record can have, in the order the report lists them.
RECORDED = tuple(s for s in Status if s is not Status.OK)

_EXPLANATION = {
    Status.GRADED: "Every question was scored, the written answers included.",
    Status.AWAITING_MANUAL: "All autograded questions were scored. Your written answers are "
    "graded by hand; their points are added later.",
    Status.MISSING_ANSWER: "An answer cell was missing from your notebook (deleted or changed "
    "beyond recognition), so that question scored 0; an instructor will "
    "look at it.",
    Status.TIMEOUT: "Your notebook did not finish within the time limit; answers recorded before "
    "that were scored.",
    Status.CRASHED: "Your notebook's kernel stopped (it crashed or exited); answers recorded "
    "before that were scored.",
    Status.INVALID: "Your file could not be read as a Jupyter notebook, so nothing was scored.",
    Status.UNMATCHED: "We found no notebook for this problem set among the files you handed in, "
    "so nothing was scored; the files are named below.",
    Status.UNREADABLE: "The file you handed in could not be read from the course's download (it "
    "arrived damaged or incomplete), so nothing was scored yet. This is not a "
    "mark against your work: your instructor will ask you for it again.",
    Status.GRADER_ERROR: "The grader failed on your submission (a fault of the grader, not of "
    "your work), so your score is not final. Your instructor has been told "
    "and will grade it again.",
}

_UNSCORED = {
    Status.TIMEOUT: "not graded: no result in time",
    Status.UNMATCHED: "not graded: no notebook for this problem set was found",
    Status.UNREADABLE: "not graded: the file handed in could not be read",
    Status.CRASHED: "not graded: the notebook stopped its grading worker",
    Status.GRADER_ERROR: "not graded yet: the grader failed; your instructor has been told",
}

_NO_FINAL = {
    Status.GRADER_ERROR: "the grader failed on this submission; grade it again",
    Status.UNMATCHED: "no notebook for this problem set was handed in",
    Status.UNREADABLE: "the file handed in could not be read; ask the student for it again",
}
