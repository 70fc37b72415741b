"""The record of one graded submission: one type, and the one module that creates, reads and
writes it.

A :class:`Record` is everything the grader states about one student's submission of one problem
set: how it was graded (``status``, one :class:`~autograder.grading.scoring.CellScore` per graded cell,
``notes``), how long it took, what a person should read (``flags``, ``breaches``), the
signatures of its recorded values for the report (``recorded``), where its file came from
(``origin``, ``lms``, ``submitted_at``) and, merged in later, its lateness (``late``) and
hand-graded scores (``manual``). The grader's fault, if any, is kept for the instructor only
(``grader_error``).

It is made in two places, each with :meth:`Record.of_scores`: a worker grading a submission
(:func:`autograder.run.task.grade_task`), and :func:`autograder.run.task.failed_record` for a submission
that got no result (the coordinator's timeouts and lost tasks) or a student without a gradable
file (the writer's ``unmatched`` and ``unreadable-file`` rows). Every later step returns a
changed copy (:func:`dataclasses.replace`): the coordinator adds the waiting time
(:mod:`autograder.run.schedule`), the writer the file's origin and lateness
(:mod:`autograder.run.output`), the merge the gradebook's hand-graded scores and the status they
give (:mod:`autograder.exports.merge`). The record's scores are the truth: ``total``,
``max_auto`` and ``max_manual`` are computed from them. A record is frozen, and so is what it
holds; its dicts (``timings``, ``recorded``, ``manual``) are not to be changed in place.

On disk, ``records/<student>.json`` is the JSON object of :meth:`Record.to_json`: one key per
field, named as the field (``lms`` and ``late`` as the dicts of
:class:`~autograder.intake.lms.LmsInfo` and :class:`~autograder.intake.late.Lateness`, each score as
``{grade_id, points, max_points, message, error}``), plus ``total``, ``max_auto`` and
``max_manual``, written for the reader of the file and never read back. Records written before
this type existed (a plain dict built key by key) have the same keys, some of them missing; they load with the
defaults of the fields (no signatures, flags or breaches, no lateness, no hand-graded score).
A record whose ``student_id``, ``problem_set``, ``status`` or ``scores`` is missing, whose
status is not a :class:`~autograder.status.Status`, or which holds a key no field has (one
written by another version of the grader) is refused with a :class:`RecordError` that names the
file and the key.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading.rulebook import Breach
from autograder.grading.scoring import CellScore
from autograder.intake.late import Lateness
from autograder.intake.lms import LmsInfo
from autograder.status import RECORDED, Status

__all__ = [
    "Record",
    "CellScore",
    "RecordError",
    "load_record",
    "save_record",
    "load_records",
    "as_record",
]


class RecordError(ValueError):
    """A record file (or JSON object) that is not a record this grader can read."""


@dataclass(frozen=True)
class Record:
    """One student's graded submission of one problem set; see the module docstring.

    Attributes
    ----------
    student_id, problem_set : str
    status : Status
    scores : tuple of CellScore
        One per graded cell, in notebook order; ``points`` is None for a written answer.
    sha256 : str
        Of the file's bytes (empty where no file was read): a resumed run skips a submission
        whose bytes and grader are unchanged.
    notes : tuple of str
        For the student and the instructor (repairs, timeouts, broken rules, why not graded).
    elapsed_s : float
        Seconds the task took on its worker.
    started_at : float or None
        Wall clock (POSIX seconds) at which the task started; None for a record made without
        one.
    timings : dict
        Seconds per phase: ``wait_s`` (hand-out to start), ``start_s`` (the sandbox's start),
        ``execute_s`` (the cells), ``score_s`` (the trusted checks).
    grader_error : str or None
        The traceback of a fault of the grader; for the instructor, never the student.
    flags : tuple of str
        What a person should read (:func:`autograder.grading.rulebook.judge`); no points depend on it.
    breaches : tuple of Breach
        The graded functions that broke the problem set's rules (their cells scored 0).
    recorded : dict
        ``{grade_id: signature}`` of the values each autograded cell recorded (the report's
        grouping of wrong answers, :mod:`autograder.grading.recorded`).
    fingerprint : str or None
        The grader's (:func:`autograder.run.task.grader_fingerprint`) that wrote it.
    origin : str or None
        Where the file came from, for messages.
    lms : LmsInfo or None
        The LMS ids in the download's file name.
    submitted_at : float or None
        The file's time (POSIX seconds), for the late policy.
    late : Lateness or None
        How late the file is under the course's policy (None where no file was read).
    manual : dict
        ``{grade_id: points}`` given by hand in the gradebook (written answers, overrides).
    variant : dict
        For a problem set with per-student variants, the student's numbers as their notebook
        holds them (:mod:`autograder.checks.personal`); empty for any other.
    expected : dict
        ``{label: number}`` the student's written answers should state for their numbers.
    copies : dict or None
        The formgrader's copies of the notebook (sanitised bytes), carried from the worker to
        the writer and never written to ``records/``.
    code : StudentCode or None
        What the student wrote, fingerprinted on the worker for the similarity page
        (:class:`autograder.grading.similarity.StudentCode`); for the coordinator only, never written.
    """

    student_id: str
    problem_set: str
    status: Status
    scores: tuple[CellScore, ...]
    sha256: str = ""
    notes: tuple[str, ...] = ()
    elapsed_s: float = 0.0
    started_at: float | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    grader_error: str | None = None
    flags: tuple[str, ...] = ()
    breaches: tuple[Breach, ...] = ()
    recorded: Mapping[str, str] = field(default_factory=dict)
    fingerprint: str | None = None
    origin: str | None = None
    lms: LmsInfo | None = None
    submitted_at: float | None = None
    late: Lateness | None = None
    manual: Mapping[str, float] = field(default_factory=dict)
    variant: Mapping[str, object] = field(default_factory=dict)
    expected: Mapping[str, float] = field(default_factory=dict)
    copies: Mapping[str, bytes | None] | None = field(default=None, compare=False, repr=False)
    code: object | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of_scores(
        cls,
        student_id: str,
        problem_set: str,
        status: Status,
        scores: Iterable[CellScore],
        **fields,
    ) -> Record:
        """A new record; ``fields`` are any of the other attributes."""
        notes = tuple(n for n in fields.pop("notes", ()) if n)
        return cls(student_id, problem_set, Status(status), tuple(scores), notes=notes, **fields)

    # --- derived ---------------------------------------------------------------------------

    @property
    def total(self) -> float:
        """The autograded points (a written answer's are not among them)."""
        return round(sum(s.points or 0.0 for s in self.scores), 6)

    @property
    def max_auto(self) -> float:
        """The autograded cells' maximum."""
        return float(sum(s.max_points for s in self.scores if s.points is not None))

    @property
    def max_manual(self) -> float:
        """The hand-graded cells' maximum."""
        return float(sum(s.max_points for s in self.scores if s.points is None))

    @property
    def hand_graded(self) -> tuple[str, ...]:
        """The ``grade_id`` of every cell graded by hand (a written answer)."""
        return tuple(s.grade_id for s in self.scores if s.points is None)

    def points(self, score: CellScore) -> float | None:
        """A cell's points as nbgrader's ``Grade.score`` counts them: the hand-given score when
        there is one (a written answer's, or an instructor's override of a check), else the
        check's."""
        given = self.manual.get(score.grade_id)
        return given if given is not None else score.points

    # --- JSON ------------------------------------------------------------------------------

    def to_json(self) -> dict:
        """The record as ``records/<student>.json`` holds it (``copies`` and ``code`` left
        out; ``variant`` and ``expected`` only for a problem set with variants, so any other's
        record is as before)."""
        personal = {"variant": dict(self.variant), "expected": dict(self.expected)}
        return {
            "student_id": self.student_id,
            "problem_set": self.problem_set,
            "sha256": self.sha256,
            "status": str(self.status),
            "scores": [s.to_dict() for s in self.scores],
            "notes": list(self.notes),
            "total": self.total,
            "max_auto": self.max_auto,
            "max_manual": self.max_manual,
            "elapsed_s": self.elapsed_s,
            "started_at": self.started_at,
            "timings": dict(self.timings),
            "grader_error": self.grader_error,
            "flags": list(self.flags),
            "breaches": [b.to_dict() for b in self.breaches],
            "recorded": dict(self.recorded),
            "fingerprint": self.fingerprint,
            "origin": self.origin,
            "lms": self.lms.to_dict() if self.lms is not None else None,
            "submitted_at": self.submitted_at,
            "late": self.late.to_dict() if self.late is not None else None,
            "manual": dict(self.manual),
            **{k: v for k, v in personal.items() if self.variant},
        }

    @classmethod
    def from_json(cls, data: Mapping, where: str = "record") -> Record:
        """The record of a JSON object (:meth:`to_json`'s, or an older grader's).

        Raises
        ------
        RecordError
            Naming ``where`` and the key, for a missing ``student_id``, ``problem_set``,
            ``status`` or ``scores``, an unknown status, a key no field has, or a value of the
            wrong kind.
        """
        if not isinstance(data, Mapping):
            raise RecordError(f"{where}: not a record (a JSON object), but {type(data).__name__}")
        unknown = sorted(set(data) - _KEYS)
        if unknown:
            raise RecordError(
                f"{where}: unknown key {unknown[0]!r}: a record holds "
                f"{', '.join(sorted(_KEYS))} (was it written by another version "
                f"of the grader?)"
            )
        missing = [k for k in ("student_id", "problem_set", "status", "scores") if k not in data]
        if missing:
            raise RecordError(
                f"{where}: no {missing[0]!r}: every record names its student, "
                f"problem set, status and scores"
            )
        if data["status"] not in RECORDED:
            raise RecordError(
                f"{where}: unknown status {data['status']!r}; a record's status "
                f"is one of {', '.join(RECORDED)}"
            )
        status = Status(data["status"])
        try:
            return cls(
                str(data["student_id"]),
                str(data["problem_set"]),
                status,
                tuple(_score(s) for s in data["scores"]),
                sha256=str(data.get("sha256") or ""),
                notes=tuple(str(n) for n in data.get("notes") or () if n),
                elapsed_s=float(data.get("elapsed_s") or 0.0),
                started_at=_number(data.get("started_at")),
                timings={str(k): float(v) for k, v in (data.get("timings") or {}).items()},
                grader_error=data.get("grader_error"),
                flags=tuple(str(f) for f in data.get("flags") or ()),
                breaches=tuple(
                    Breach(
                        b["function"],
                        b["entry"],
                        b["where"],
                        tuple(b.get("cases") or ()),
                        str(b.get("named") or ""),
                    )
                    for b in data.get("breaches") or ()
                ),
                recorded={str(k): str(v) for k, v in (data.get("recorded") or {}).items()},
                fingerprint=data.get("fingerprint"),
                origin=data.get("origin"),
                lms=LmsInfo(**data["lms"]) if data.get("lms") else None,
                submitted_at=_number(data.get("submitted_at")),
                late=_lateness(data["late"]) if data.get("late") else None,
                manual={
                    str(k): float(v) for k, v in (data.get("manual") or {}).items() if v is not None
                },
                variant={str(k): v for k, v in (data.get("variant") or {}).items()},
                expected={str(k): float(v) for k, v in (data.get("expected") or {}).items()},
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise RecordError(
                f"{where}: a value of the wrong kind ({type(exc).__name__}: {exc})"
            ) from None


#: The keys of a record's JSON object.
_KEYS = frozenset(
    {f.name for f in dataclasses.fields(Record) if f.name not in ("copies", "code")}
    | {"total", "max_auto", "max_manual"}
)
_SCORE_KEYS = frozenset({"grade_id", "points", "max_points", "message", "error", "case"})


def _number(value) -> float | None:
    return None if value is None else float(value)


def _lateness(data: Mapping) -> Lateness:
    unknown = sorted(set(data) - {f.name for f in dataclasses.fields(Lateness)})
    if unknown:
        raise ValueError(f"a lateness holds no {unknown[0]!r}")
    return Lateness(
        int(data.get("days", 0)),
        float(data.get("percent", 0.0)),
        bool(data.get("lms_late", False)),
        data.get("submitted_at"),
        data.get("deadline"),
        str(data.get("reason", "on time")),
    )


def _score(data: Mapping) -> CellScore:
    unknown = sorted(set(data) - _SCORE_KEYS)
    if unknown:
        raise ValueError(f"a score holds {', '.join(sorted(_SCORE_KEYS))}, not {unknown[0]!r}")
    points = data["points"]
    return CellScore(
        str(data["grade_id"]),
        None if points is None else float(points),
        float(data["max_points"]),
        str(data.get("message", "")),
        data.get("error"),
        data.get("case"),
    )


def as_record(record: Record | Mapping) -> Record:
    """``record`` itself, or the record of its JSON object (as ``records/*.json`` hold it)."""
    return record if isinstance(record, Record) else Record.from_json(record)


def load_record(path: str | Path) -> Record:
    """The record in the file ``path``.

    Raises
    ------
    OSError
        The file cannot be read.
    RecordError
        It is not a record (not JSON, or see :meth:`Record.from_json`).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise RecordError(f"{path}: not JSON ({exc})") from None
    return Record.from_json(data, str(path))


def save_record(record: Record, path: str | Path) -> None:
    """Write ``record`` to ``path`` atomically (a reader sees the old file or the new one)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record.to_json(), indent=1), encoding="utf-8")
    os.replace(tmp, path)


def load_records(folder: str | Path, problem_set: str) -> list[Record]:
    """The records of ``problem_set`` in ``folder`` (a run's ``records/``), by file name.

    A file that is not JSON (an editor's backup) or holds another problem set's record is
    passed over; a record of this problem set that cannot be read raises :class:`RecordError`.
    """
    records = []
    for path in sorted(Path(folder).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # not a record (an editor's backup); never fatal
        if isinstance(data, Mapping) and data.get("problem_set") == problem_set:
            records.append(Record.from_json(data, str(path)))
    return records
