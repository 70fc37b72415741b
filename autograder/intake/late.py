"""The late policy: a small TOML file, and the penalty it gives each submission.

The course's policy lives in ``course/late.toml`` (:data:`POLICY_FILE`); without that file no
work is late. A table per problem set, or ``[default]`` for every problem set without its own::

    [default]
    policy = "none"                       # no penalty (the default)

    [ps3_mle]
    deadline = 2026-11-20T23:59:00+01:00  # a TOML date-time (or a string in ISO 8601)
    time_zone = "Europe/Paris"            # the course's zone (optional; see below)
    percent_per_day = 10                  # of the points earned, per day or part of a day
    cap_percent = 50                      # at most this much in all (default 100)
    grace_minutes = 15                    # lateness within this is forgiven (default 0)
    evidence = "both"                     # "lms", "file-time" or "both" (default)

    [ps3_mle.extensions]                  # per student: a new deadline, or days added
    alice = 2026-11-22T23:59:00+01:00
    bob = { days = 3 }

How lateness is decided (``evidence``):

- ``"file-time"``: days late = ceil((file time − deadline − grace) / 1 day), the file time being
  when the platform says the notebook was handed in (or the file system's time of a plain
  folder);
- ``"lms"``: a file the LMS marked late (Canvas's ``LATE`` in its name) is one day late, unless
  the student has an extension (the LMS does not know it) and the file time is within it;
- ``"both"``: the file time decides when it is known; a file the LMS marked late whose time
  says it is on time counts one day late (the LMS knows when it was handed in).

The file time is the platform's own record when its download has one (Blackboard's receipt,
nbgrader's ``timestamp.txt``, Gradescope's metadata, a clone's last commit); a submission with no
time at all is not counted late, and its reason says there was no evidence. Canvas's and
Moodle's zips give no time: they stamp every file with the moment of the download
(:mod:`autograder.intake.canvas`, :mod:`autograder.intake.moodle`), so on Canvas only its ``LATE``
mark makes a file late, and a Moodle download (no mark either) makes nobody late. A run whose
download lacks the evidence its policy reads (``"lms"`` on a platform that marks nothing late,
``"file-time"`` where no file has a time, ``"both"`` with neither) says so in a note on its output
and in ``collection.txt``: nobody is counted late by it.

The penalty is ``min(cap, days × percent_per_day)`` percent of the points earned (autograded and
hand-graded together), shown as its own column in ``grades.csv``, the exports and the feedback.
``time_zone`` (an IANA name) says in which zone the platform's times that name none are read
(D2L's folders, the downloading user's wall clock): without it they are read at the deadline's
offset, which is an hour off on the other side of a change to or from summer time. The
deadline's offset must be the zone's on its date.

A problem set with a deadline is validated when the file is read: an unknown key, a negative
percentage, a deadline without a time zone or a malformed extension is refused with the file,
the table and the key named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import tomllib

from autograder.course import Course

__all__ = [
    "POLICY_FILE",
    "LateRule",
    "LatePolicy",
    "Lateness",
    "load_policy",
    "penalty_points",
    "NO_PENALTY",
]

#: The course's late policy.
POLICY_FILE = Course.default().late_policy_file
_KEYS = {
    "policy",
    "deadline",
    "time_zone",
    "percent_per_day",
    "cap_percent",
    "grace_minutes",
    "evidence",
    "extensions",
}
_EVIDENCE = ("lms", "file-time", "both")


@dataclass(frozen=True)
class Lateness:
    """How late one submission is, and the penalty in percent of its points."""

    days: int = 0
    percent: float = 0.0
    lms_late: bool = False
    submitted_at: str | None = None  # ISO 8601, or None when unknown
    deadline: str | None = None
    reason: str = "on time"

    def to_dict(self) -> dict:
        return {
            "days": self.days,
            "percent": self.percent,
            "lms_late": self.lms_late,
            "submitted_at": self.submitted_at,
            "deadline": self.deadline,
            "reason": self.reason,
        }


NO_PENALTY = Lateness(reason="no late policy")


@dataclass(frozen=True)
class LateRule:
    """The policy of one problem set (None deadline: no penalty)."""

    deadline: datetime | None = None
    percent_per_day: float = 0.0
    cap_percent: float = 100.0
    grace_minutes: float = 0.0
    evidence: str = "both"
    extensions: dict[str, datetime] = field(default_factory=dict)
    #: The extensions granted as days (``{ days = N }``), by student: they count from the
    #: deadline in force, so a rule given another deadline (Gradescope's due date) moves them.
    extension_days: dict[str, float] = field(default_factory=dict)
    #: The course's zone (``time_zone``), None when the policy names none.
    time_zone: ZoneInfo | None = None

    @property
    def zone(self) -> timedelta | tzinfo | None:
        """The course's zone for the platforms' times that name none: ``time_zone``, else the
        deadline's offset, None without a deadline (:data:`autograder.intake.lms.CourseZone`)."""
        if self.time_zone is not None:
            return self.time_zone
        return self.deadline.utcoffset() if self.deadline is not None else None

    def deadline_for(self, student: str) -> datetime | None:
        return self.extensions.get(student, self.deadline)

    def assess(
        self, student: str, submitted_at: float | datetime | None, lms_late: bool = False
    ) -> Lateness:
        """How late ``student``'s file is.

        Parameters
        ----------
        student : str
        submitted_at : POSIX seconds, an aware datetime, or None
            The file's time (None: unknown).
        lms_late : bool
            Whether the LMS marked the file late.
        """
        deadline = self.deadline_for(student)
        if self.deadline is None or deadline is None:
            return Lateness(lms_late=lms_late, reason="no late policy for this problem set")
        when = (
            datetime.fromtimestamp(submitted_at, timezone.utc)
            if isinstance(submitted_at, (int, float))
            else submitted_at
        )
        stamp = when.isoformat() if when is not None else None
        extended = student in self.extensions
        days, reason = 0, "on time"
        if when is not None and self.evidence in ("file-time", "both"):
            late_by = when - deadline - timedelta(minutes=self.grace_minutes)
            if late_by > timedelta(0):
                days = math.ceil(late_by / timedelta(days=1))
                reason = f"handed in {_span(when - deadline)} after the deadline"
        if days == 0 and lms_late and self.evidence in ("lms", "both"):
            if extended and (when is None or when <= deadline):
                # the LMS does not know the extension the course gave
                reason = "marked late by the LMS, but within the student's extension"
            else:
                days, reason = 1, "marked late by the LMS"
        if when is None and days == 0 and reason == "on time":
            reason = (
                "no evidence of when it was handed in (the download gives no time); "
                "not counted late"
            )
        if extended and days == 0 and reason == "on time":
            reason = "on time (with an extension)"
        percent = min(self.cap_percent, days * self.percent_per_day)
        return Lateness(days, percent, lms_late, stamp, deadline.isoformat(), reason)


def _span(delta: timedelta) -> str:
    hours = delta.total_seconds() / 3600
    return f"{hours:.1f} hours" if hours < 48 else f"{hours / 24:.1f} days"


@dataclass(frozen=True)
class LatePolicy:
    """Every problem set's rule, from a policy file."""

    rules: dict[str, LateRule]
    source: str = "no policy file"

    def for_problem_set(self, name: str) -> LateRule:
        return self.rules.get(name) or self.rules.get("default") or LateRule()


def _error(path: Path, table: str, key: str, message: str) -> ValueError:
    where = f"[{table}]" + (f" {key}" if key else "")
    return ValueError(f"{path}: {where}: {message}")


def _datetime(value: object, path: Path, table: str, key: str) -> datetime:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            raise _error(
                path, table, key, f"{value!r} is not a date-time such as 2026-11-20T23:59:00+01:00"
            ) from None
    if not isinstance(value, datetime):
        raise _error(
            path, table, key, f"{value!r} is not a date-time such as 2026-11-20T23:59:00+01:00"
        )
    if value.tzinfo is None:
        raise _error(
            path,
            table,
            key,
            f"{value.isoformat()} has no time zone; write it with "
            f"one, e.g. {value.isoformat()}+01:00 or Z for UTC",
        )
    return value


def _number(
    table: dict, key: str, default: float, path: Path, name: str, upper: float | None = None
) -> float:
    value = table.get(key, default)
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or value < 0
        or (upper is not None and value > upper)
    ):
        bound = f" and at most {upper}" if upper is not None else ""
        raise _error(path, name, key, f"must be a number, 0 or more{bound}; got {value!r}")
    return float(value)


def _rule(table: object, path: Path, name: str) -> LateRule:
    if not isinstance(table, dict):
        raise _error(path, name, "", "must be a table of settings")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise _error(
            path, name, unknown[0], f"unknown setting; the settings are {', '.join(sorted(_KEYS))}"
        )
    policy = table.get("policy", "percent-per-day" if set(table) - {"policy"} else "none")
    if policy not in ("none", "percent-per-day"):
        raise _error(path, name, "policy", f"must be 'none' or 'percent-per-day'; got {policy!r}")
    if policy == "none":
        extra = sorted(set(table) - {"policy"})
        if extra:
            raise _error(path, name, extra[0], "given with policy = 'none'")
        return LateRule()
    if "deadline" not in table:
        raise _error(path, name, "deadline", "is required (or write policy = 'none')")
    deadline = _datetime(table["deadline"], path, name, "deadline")
    time_zone = _zone(table.get("time_zone"), deadline, path, name)
    evidence = table.get("evidence", "both")
    if evidence not in _EVIDENCE:
        raise _error(
            path, name, "evidence", f"must be one of {', '.join(_EVIDENCE)}; got {evidence!r}"
        )
    extensions, extension_days = {}, {}
    raw = table.get("extensions", {})
    if not isinstance(raw, dict):
        raise _error(
            path, name, "extensions", "must be a table: student = deadline or { days = N }"
        )
    for student, value in raw.items():
        key = f"extensions.{student}"
        if isinstance(value, dict):
            if set(value) != {"days"}:
                raise _error(path, name, key, "write a deadline or { days = N }")
            days = _number(value, "days", 0, path, name, upper=365)
            extensions[student] = deadline + timedelta(days=days)
            extension_days[student] = days
        else:
            extensions[student] = _datetime(value, path, name, key)
    return LateRule(
        deadline,
        _number(table, "percent_per_day", 0, path, name, upper=100),
        _number(table, "cap_percent", 100, path, name, upper=100),
        _number(table, "grace_minutes", 0, path, name),
        evidence,
        extensions,
        extension_days,
        time_zone,
    )


def _zone(value: object, deadline: datetime, path: Path, name: str) -> ZoneInfo | None:
    """The ``time_zone`` of a rule (None when not given), checked against its deadline's
    offset."""
    if value is None:
        return None
    try:
        where = ZoneInfo(value) if isinstance(value, str) else None
    except (ValueError, ZoneInfoNotFoundError):
        where = None
    if where is None:
        raise _error(path, name, "time_zone", f"{value!r} is not a zone name such as Europe/Paris")
    offset = deadline.astimezone(where).utcoffset()
    if offset != deadline.utcoffset():
        there = deadline.astimezone(where).isoformat()
        raise _error(
            path,
            name,
            "deadline",
            f"{deadline.isoformat()} is not at {value}'s offset on that date: write {there}",
        )
    return where


def load_policy(path: str | Path | None = None, *, course: Course | None = None) -> LatePolicy:
    """Read and validate a late-policy file (default: ``course``'s ``late.toml``, or
    :data:`POLICY_FILE` without a course).

    A missing default file means no policy; a missing file named explicitly is an error.

    Raises
    ------
    ValueError
        On a file that is not TOML or a setting that is not valid, naming the file, the table
        and the key.
    """
    explicit = path is not None
    path = (
        Path(path)
        if path is not None
        else (course.late_policy_file if course is not None else POLICY_FILE)
    )
    if not path.is_file():
        if explicit:
            raise ValueError(f"the late policy {str(path)!r} does not exist")
        return LatePolicy({})
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not a valid TOML file: {exc}") from None
    return LatePolicy({name: _rule(table, path, name) for name, table in data.items()}, str(path))


def penalty_points(late: dict | Lateness | None, points: float) -> float:
    """The points a penalty takes from ``points`` earned (rounded to 0.01)."""
    if late is None:
        return 0.0
    percent = late.percent if isinstance(late, Lateness) else float(late.get("percent", 0))
    return round(max(points, 0.0) * percent / 100.0, 2)
