"""Regrade with a diff: per student, the old and new score and the cells that changed.

When a check, the reference or a problem set changes, the grader's fingerprint changes and the
next run grades every submission again (:mod:`autograder.run.task`). ``python -m autograder grade
... --dry-run`` grades into a scratch copy of the run's records, prints this diff and writes
nothing (not the output folder, not the gradebook); the same command without ``--dry-run``
prints it after writing. Only students whose autograded points, cells or status changed are
listed, so the diff names exactly the students a change affects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from autograder.grading.record import Record, as_record
from autograder.status import Status

__all__ = ["Change", "diff_records", "format_diff"]


@dataclass(frozen=True)
class Change:
    student_id: str
    old_total: float | None  # None: no earlier record, or the grader failed
    new_total: float | None
    old_status: Status | None
    new_status: Status
    cells: tuple[tuple[str, float | None, float | None], ...]  # (grade_id, old, new)


def _total(record: Record | None) -> float | None:
    if record is None or not record.status.scored:
        return None
    return record.total


def _kind(status: Status | None) -> str | None:
    """A status as the regrade compares it: ``graded`` and ``awaiting-manual-grading`` differ
    only by the hand-grading, which a regrade keeps, so they count as one."""
    return "complete" if status is not None and status.complete else status


def diff_records(
    old: Mapping[str, Record | dict], new: Mapping[str, Record | dict]
) -> list[Change]:
    """The students whose graded cells or status differ between ``old`` and ``new`` (records,
    or their JSON objects, by student id), in student order."""
    changes = []
    for student in sorted(new):
        before = as_record(old[student]) if student in old else None
        after = as_record(new[student])
        was = {s.grade_id: s.points for s in before.scores} if before else {}
        now = {s.grade_id: s.points for s in after.scores}
        cells = tuple(
            (g, was.get(g), now.get(g)) for g in now if was.get(g) != now.get(g) or g not in was
        )
        was_status = before.status if before else None
        if cells or before is None or _kind(was_status) != _kind(after.status):
            changes.append(
                Change(student, _total(before), _total(after), was_status, after.status, cells)
            )
    return changes


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def format_diff(changes: list[Change], unchanged: int) -> str:
    """The diff as lines for the instructor."""
    if not changes:
        return f"regrade: no score changes ({unchanged} students unchanged)"
    lines = [f"regrade: {len(changes)} student(s) change, {unchanged} unchanged"]
    for c in changes:
        status = (
            f" [{c.old_status} -> {c.new_status}]"
            if _kind(c.old_status) != _kind(c.new_status)
            else ""
        )
        cells = ", ".join(f"{g} {_num(a)} -> {_num(b)}" for g, a, b in c.cells)
        lines.append(
            f"  {c.student_id}: {_num(c.old_total)} -> {_num(c.new_total)}{status}"
            + (f" ({cells})" if cells else "")
        )
    return "\n".join(lines)
