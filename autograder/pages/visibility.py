"""What students see of the hidden checks: full messages, pass/fail only, or nothing until a date.

The visible checks (grade ids ending in ``_visible``: the tests students ran themselves) are
always shown in full. The hidden checks (``_hidden``) say what the trusted comparison found:
expected values, tolerances, one line per hidden case. How much of that a student sees is the
instructor's choice, as Gradescope offers for its tests (``visible``, ``after_due_date``,
``after_published``, ``hidden``):

- ``full``: the message as the check wrote it;
- ``pass-fail``: "passed", "partly passed" or "failed", with the points;
- ``none``: the points only (the message is withheld), until ``release_at`` if one is given,
  then in full.

The setting is per run (``--hidden-feedback``), else per problem set in ``course/feedback.toml``
(``[ps3_mle] hidden = "pass-fail"``, ``release_at = 2026-12-01T09:00:00+01:00``; ``[default]``
for the others), else ``full``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import tomllib

from autograder.course import Course
from coursedata.naming import HIDDEN, test_kind

if TYPE_CHECKING:
    from autograder.grading.scoring import CellScore

__all__ = ["MODES", "Visibility", "is_hidden", "load_visibility", "SETTINGS_FILE"]

MODES = ("full", "pass-fail", "none")
#: The default course's settings file.
SETTINGS_FILE = Course.default().feedback_file
_WITHHELD = "The details of this hidden check are not shown yet."


def is_hidden(grade_id: str) -> bool:
    """Whether a graded cell is a hidden check (the course names them ``*_hidden``)."""
    return test_kind(grade_id) == HIDDEN


@dataclass(frozen=True)
class Visibility:
    """How hidden checks are shown; see the module docstring."""

    hidden: str = "full"
    release_at: datetime | None = None

    def __post_init__(self):
        if self.hidden not in MODES:
            raise ValueError(
                f"hidden-check feedback must be one of {', '.join(MODES)}; got {self.hidden!r}"
            )
        if self.release_at is not None and self.release_at.tzinfo is None:
            raise ValueError(f"the release date {self.release_at.isoformat()} needs a time zone")

    def mode(self, now: datetime | None = None) -> str:
        """The mode in force at ``now``: ``none`` becomes ``full`` once ``release_at`` passed."""
        now = now or datetime.now(timezone.utc)
        if self.hidden == "none" and self.release_at is not None and now >= self.release_at:
            return "full"
        return self.hidden

    def message(self, score: CellScore | Mapping, now: datetime | None = None) -> str:
        """What the student reads for one graded cell (a record's score, or its JSON object)."""
        if isinstance(score, Mapping):  # a score's JSON object
            from autograder.grading.scoring import CellScore

            score = CellScore(**score)
        if not is_hidden(score.grade_id) or score.points is None:
            return score.message
        mode = self.mode(now)
        if mode == "full":
            return score.message
        if mode == "none":
            when = f" They are shown from {self.release_at.isoformat()}." if self.release_at else ""
            return _WITHHELD + when
        points, top = score.points, score.max_points
        word = "passed" if points >= top else ("partly passed" if points > 0 else "failed")
        return f"Hidden check {word}."


def load_visibility(
    problem_set: str,
    override: str | None = None,
    path: str | Path | None = None,
    *,
    course: Course | None = None,
) -> Visibility:
    """The setting for ``problem_set``: ``override`` (a run's choice), else the settings file
    (``path``, default ``course``'s ``feedback.toml``), else ``full``. Raises ValueError naming
    the file and key for a bad setting."""
    if override is not None:
        return Visibility(override)
    path = (
        Path(path)
        if path is not None
        else (course.feedback_file if course is not None else SETTINGS_FILE)
    )
    if not path.is_file():
        return Visibility()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not a valid TOML file: {exc}") from None
    table = data.get(problem_set, data.get("default", {}))
    name = problem_set if problem_set in data else "default"
    unknown = sorted(set(table) - {"hidden", "release_at"})
    if unknown:
        raise ValueError(
            f"{path}: [{name}] {unknown[0]}: unknown setting; the settings are "
            f"hidden and release_at"
        )
    release = table.get("release_at")
    if isinstance(release, str):
        try:
            release = datetime.fromisoformat(release)
        except ValueError:
            raise ValueError(
                f"{path}: [{name}] release_at: {release!r} is not a date-time"
            ) from None
    if release is not None and not isinstance(release, datetime):
        raise ValueError(f"{path}: [{name}] release_at: {release!r} is not a date-time")
    try:
        return Visibility(table.get("hidden", "full"), release)
    except ValueError as exc:
        raise ValueError(f"{path}: [{name}]: {exc}") from None
