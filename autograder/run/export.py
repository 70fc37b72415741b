"""Export a grading run: merge hand-grading into its output folder, then write the LMS files.

The library behind ``python -m autograder export PS --out DIR`` (:mod:`autograder.commands.
export`). ``DIR`` is a grading run's folder (``python -m autograder grade PS ... --out DIR``).
:func:`export`

1. reads its records and merges the course gradebook's hand-graded scores (the formgrader's
   ``Grade.manual_score``) and the late policy into them (:mod:`autograder.grades.merge`),
   writing the merged records back;
2. rewrites ``DIR/grades.csv`` and every ``DIR/feedback/<student>/<notebook>.html`` from them, so
   the gradebook, ``grades.csv``, the feedback and the exports state the same scores;
3. writes the exports asked for (all of them by default) into ``DIR/exports/``:
   ``canvas.csv``, ``moodle-worksheet.csv`` (students from a Moodle download),
   ``moodle-gradebook.csv``, ``blackboard.csv`` (students from a Blackboard download),
   ``gradescope/<student>/results.json`` and
   ``feedback-canvas.zip`` / ``feedback-moodle.zip`` / ``feedback.zip`` (by where each student's
   file came from), and prints every student whose LMS cell was left empty, and why.

The settings of the last export are kept in ``DIR/exports/export.json``: a later ``grade`` into
the same folder exports again with them (:func:`export_again`), so that the exports never
disagree with ``grades.csv`` and the feedback.

The records, the feedback pages and ``grades.csv`` are rewritten by :func:`autograder.run.output.
rewrite_merged`, the output folder's one writer; this module writes only ``DIR/exports/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from autograder.course import Course
from autograder.exports.archive import SYSTEMS, write_feedback_archive
from autograder.exports.blackboard import write_blackboard_csv
from autograder.exports.canvas import canvas_column, write_canvas_csv
from autograder.exports.gradescope import write_gradescope
from autograder.exports.moodle import write_moodle_gradebook, write_moodle_worksheet
from autograder.grades.merge import annotate
from autograder.grades.summary import summarize
from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record, load_records
from autograder.intake.late import load_policy
from autograder.pages.visibility import load_visibility
from autograder.run.output import rewrite_merged

__all__ = ["FORMATS", "export", "export_again", "read_records"]

FORMATS = ("canvas", "moodle", "blackboard", "gradescope", "feedback-archive")
#: The file, in ``DIR/exports/``, that keeps the last export's settings.
SETTINGS = "export.json"


def read_records(out: Path, problem_set: str) -> list[Record]:
    """The records of ``problem_set`` in a grading run's folder, by student id
    (:func:`autograder.grading.record.load_records`)."""
    return load_records(Path(out) / "records", problem_set)


def _write_json(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(path)


def export(
    problem_set: str,
    out: str | Path,
    course: str | Path | None,
    *,
    formats: tuple[str, ...] = FORMATS,
    canvas_name: str | None = None,
    canvas_id: str | None = None,
    moodle_identifier: str = "username",
    hidden_feedback: str | None = None,
    late_policy: str | Path | None = None,
    log=print,
) -> list[Record]:
    """Merge and export; see the module docstring. Returns the merged records.

    Raises ValueError for a folder without records, an unknown format or a bad setting."""
    unknown = sorted(set(formats) - set(FORMATS))
    if unknown:
        raise ValueError(f"unknown export {unknown[0]!r}; choose from {', '.join(FORMATS)}")
    ps, out = ProblemSet(problem_set, Course.at(course)), Path(out)
    records = read_records(out, ps.name)
    if not records:
        raise ValueError(
            f"{out / 'records'} holds no record of {ps.name}; grade it first "
            f"(python -m autograder grade {ps.name} SUBMISSIONS --out {out})"
        )
    visibility = load_visibility(ps.name, hidden_feedback, course=ps.course)
    policy = load_policy(late_policy, course=ps.course)
    course_has_it = course is not None and (Path(course) / "gradebook.db").is_file()
    if course is not None and not course_has_it:
        log(
            f"note: {course} has no gradebook; no hand-graded score merged (grade with "
            f"--gradebook and grade the written answers in the formgrader first)"
        )
    merged = annotate(records, ps.name, course if course_has_it else None, policy)
    rewrite_merged(ps, out, merged, visibility)
    stem = Path(ps.notebook_name).stem
    target = out / "exports"
    target.mkdir(exist_ok=True)
    skipped: list[str] = []
    if "canvas" in formats:
        skipped += [
            f"canvas.csv: {s}"
            for s in write_canvas_csv(
                merged, target / "canvas.csv", canvas_column(canvas_name or ps.name, canvas_id)
            )
        ]
    if "moodle" in formats:
        if any(_system(r) == "moodle" for r in merged):
            skipped += [
                f"moodle-worksheet.csv: {s}"
                for s in write_moodle_worksheet(merged, target / "moodle-worksheet.csv")
            ]
        skipped += [
            f"moodle-gradebook.csv: {s}"
            for s in write_moodle_gradebook(
                merged, target / "moodle-gradebook.csv", canvas_name or ps.name, moodle_identifier
            )
        ]
    if "blackboard" in formats and any(_system(r, exact=True) == "blackboard" for r in merged):
        skipped += [
            f"blackboard.csv: {s}"
            for s in write_blackboard_csv(merged, target / "blackboard.csv", canvas_name or ps.name)
        ]
    if "gradescope" in formats:
        write_gradescope(merged, target / "gradescope", visibility)
    if "feedback-archive" in formats:
        for system in sorted(set(map(_system, merged))):
            name = "feedback.zip" if system == "plain" else f"feedback-{system}.zip"
            others = [r for r in merged if _system(r) == system]
            skipped += [
                f"{name}: {s}"
                for s in write_feedback_archive(others, out, stem, target / name, system)
            ]
    _write_json(
        target / SETTINGS,
        {
            "formats": list(formats),
            "canvas_name": canvas_name,
            "canvas_id": canvas_id,
            "moodle_identifier": moodle_identifier,
            "hidden_feedback": hidden_feedback,
            "late_policy": str(late_policy) if late_policy is not None else None,
        },
    )
    final = sum(summarize(r).final is not None for r in merged)
    log(
        f"{len(merged)} students of {ps.name}: {final} with a final score, "
        f"{len(merged) - final} without; exports in {target}"
    )
    for line in dict.fromkeys(skipped):
        log(f"note: {line}")
    return merged


def _system(record: Record, exact: bool = False) -> str:
    """The LMS whose bulk feedback upload takes the record's page (``plain``: none, or a
    platform without one); with ``exact``, the platform the record's file came from."""
    system = record.lms.system if record.lms is not None else "plain"
    return system if exact or system in SYSTEMS else "plain"


def export_again(
    problem_set: str, out: str | Path, course: str | Path | None, log=print
) -> list[Record] | None:
    """Export again with the settings of the last export into ``out`` (None if there was none),
    after a grading run changed the records."""
    path = Path(out) / "exports" / SETTINGS
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    log(f"note: exporting again with the settings of the last export ({path})")
    return export(
        problem_set,
        out,
        course,
        formats=tuple(settings["formats"]),
        canvas_name=settings["canvas_name"],
        canvas_id=settings["canvas_id"],
        moodle_identifier=settings["moodle_identifier"],
        hidden_feedback=settings["hidden_feedback"],
        late_policy=settings["late_policy"],
        log=log,
    )
