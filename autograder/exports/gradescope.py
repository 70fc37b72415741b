"""Gradescope's autograder output, ``results.json``, one per submission.

Written as Gradescope's autograder specification describes it (gradescope/autograder_samples
``docs/specs.md``, and https://gradescope-autograders.readthedocs.io/en/latest/specs/ for the
formatting keys): a top-level ``score`` (it overrides the sum of the tests), ``execution_time``
(seconds), ``output``, ``output_format``, ``visibility``, ``stdout_visibility`` and ``tests``, a
list of ``{score, max_score, name, number, output, output_format, status, visibility}``, where a
visibility is one of ``visible``, ``hidden``, ``after_due_date``, ``after_published`` and a format
one of ``text``, ``html``, ``simple_format``, ``md``, ``ansi``.

One test per graded cell, in notebook order. Visible checks are ``visible`` with their message in
full. Hidden checks follow the :class:`autograder.pages.visibility.Visibility` setting: ``full`` →
``visible`` in full, ``pass-fail`` → ``visible`` with passed/failed only, ``none`` →
``after_published`` in full (Gradescope shows them once the instructor publishes the grades).
A written answer is a test only once it has its hand-graded score (Gradescope's own rubric
grades it otherwise). The late penalty is taken off the top-level score and named in the
output as a percentage only (its points would tell the hidden tests' total before publication).
The grader's own log stays with the instructor (``stdout_visibility: hidden``).

Gradescope counts a ``results.json`` only when its own container writes it: inside Gradescope,
``run_autograder`` writes it with :func:`results_json` (:mod:`autograder.run.gradescope`). The
files :func:`write_gradescope` writes after an offline run cannot be imported; they show what
that autograder reports for the same notebooks.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from autograder.grades.summary import number, summarize
from autograder.grading.record import Record, as_record
from autograder.pages.style import cell_title
from autograder.pages.visibility import Visibility, is_hidden

__all__ = ["results_json", "write_gradescope", "VISIBILITIES"]

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def results_json(
    record: Record | dict, visibility: Visibility = Visibility(), now: datetime | None = None
) -> dict:
    """The ``results.json`` object of one record (or of its JSON object)."""
    record = as_record(record)
    summary = summarize(record)
    if summary.auto is None:  # the grader failed: no test result is the student's
        return {
            "score": 0.0,
            "execution_time": int(round(record.elapsed_s)),
            "output": "The grader failed on this submission (not a fault of your work); "
            "this score is not final and it will be graded again.",
            "output_format": "text",
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "tests": [],
        }
    mode = visibility.mode(now)
    tests, given = [], 0.0
    for number_, score in enumerate(record.scores, 1):
        points = score.points if score.points is not None else record.manual.get(score.grade_id)
        if points is None:
            continue
        given += points
        hidden = is_hidden(score.grade_id)
        if hidden and mode == "none":
            shown, message = "after_published", score.message
        else:
            shown, message = "visible", visibility.message(score, now)
        tests.append(
            {
                "name": cell_title(score.grade_id, written=" (written answer)"),
                "number": str(number_),
                "score": float(points),
                "max_score": float(score.max_points),
                "status": "passed" if points >= score.max_points else "failed",
                "output": message,
                "output_format": "text",
                "visibility": shown,
            }
        )
    penalty = round(given * summary.late_percent / 100.0, 2)
    output = [f"Status: {summary.status}."]
    if summary.pending:
        output.append(f"Written answers graded by hand: {', '.join(summary.pending)}.")
    if penalty:
        output.append(  # the percentage only: points would tell the hidden tests' total
            f"Late penalty: {number(summary.late_percent)}% of the score "
            f"({summary.late_days} day(s) late)."
        )
    output += [n for n in record.notes if n]
    return {
        "score": round(given - penalty, 2),
        "execution_time": int(round(record.elapsed_s)),
        "output": "\n".join(output),
        "output_format": "text",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": tests,
    }


def write_gradescope(
    records: Sequence[Record | dict],
    folder: str | Path,
    visibility: Visibility = Visibility(),
    now: datetime | None = None,
) -> list[Path]:
    """Write ``folder/<student>/results.json`` for every record; return the paths."""
    paths = []
    for record in map(as_record, records):
        path = Path(folder) / record.student_id / "results.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            json.dumps(results_json(record, visibility, now), indent=1), encoding="utf-8"
        )
        paths.append(path)
    return paths
