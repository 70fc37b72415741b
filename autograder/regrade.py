"""Regrade with a diff: per student, the old and new score and the cells that changed.

When a check, the reference or a problem set changes, the grader's fingerprint changes and the
next run grades every submission again (:mod:`autograder.task`). ``python -m autograder grade
... --dry-run`` grades into a scratch copy of the run's records, prints this diff and writes
nothing (not the output folder, not the gradebook); the same command without ``--dry-run``
prints it after writing. Only students whose autograded points, cells or status changed are
listed, so the diff names exactly the students a change affects.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Change", "diff_records", "format_diff"]


@dataclass(frozen=True)
class Change:
    student_id: str
    old_total: float | None  # None: no earlier record, or the grader failed
    new_total: float | None
    old_status: str | None
    new_status: str
    cells: tuple[tuple[str, float | None, float | None], ...]  # (grade_id, old, new)


def _total(record: dict | None) -> float | None:
    if record is None or record.get("status") == "grader-error":
        return None
    return round(sum(s["points"] for s in record["scores"] if s["points"] is not None), 6)


def _kind(status) -> str:
    """A status as the regrade compares it: ``graded`` and ``awaiting-manual-grading`` differ
    only by the hand-grading, which a regrade keeps, so they count as one."""
    return "scored" if status in ("graded", "awaiting-manual-grading") else str(status)


def diff_records(old: dict[str, dict], new: dict[str, dict]) -> list[Change]:
    """The students whose graded cells or status differ between ``old`` and ``new`` (records
    by student id), in student order."""
    changes = []
    for student in sorted(new):
        before, after = old.get(student), new[student]
        was = {s["grade_id"]: s["points"] for s in before["scores"]} if before else {}
        now = {s["grade_id"]: s["points"] for s in after["scores"]}
        cells = tuple((g, was.get(g), now.get(g)) for g in now
                      if was.get(g) != now.get(g) or g not in was)
        status_changed = before is None or _kind(before.get("status")) != _kind(after["status"])
        if cells or status_changed:
            changes.append(Change(student, _total(before), _total(after),
                                  before.get("status") if before else None,
                                  str(after["status"]), cells))
    return changes


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def format_diff(changes: list[Change], unchanged: int) -> str:
    """The diff as lines for the instructor."""
    if not changes:
        return f"regrade: no score changes ({unchanged} students unchanged)"
    lines = [f"regrade: {len(changes)} student(s) change, {unchanged} unchanged"]
    for c in changes:
        status = (f" [{c.old_status} -> {c.new_status}]"
                  if _kind(c.old_status) != _kind(c.new_status) else "")
        cells = ", ".join(f"{g} {_num(a)} -> {_num(b)}" for g, a, b in c.cells)
        lines.append(f"  {c.student_id}: {_num(c.old_total)} -> {_num(c.new_total)}{status}"
                     + (f" ({cells})" if cells else ""))
    return "\n".join(lines)
