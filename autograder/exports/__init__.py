"""Grades and feedback back into the LMS, from a grading run's records.

One module per format, each writing from the same per-student :class:`~autograder.grades.
summary.Summary` (autograded points, hand-graded points from the gradebook, late penalty, final
score), so that ``grades.csv``, the gradebook and every export agree:

- :mod:`.canvas`: Canvas's gradebook import CSV;
- :mod:`.moodle`: Moodle's assignment grading worksheet and its gradebook import CSV;
- :mod:`.gradescope`: Gradescope's autograder ``results.json``;
- :mod:`.blackboard`: Blackboard Learn's Grade Center upload CSV;
- :mod:`.archive`: the feedback pages, named for the LMS's bulk feedback upload.

Each reads :class:`autograder.grading.record.Record` objects (or their JSON objects, as
``records/*.json`` hold them): the scores with ``points`` None for a hand-graded cell, and, merged
by :mod:`.merge`, ``manual`` (the hand-graded scores, from the gradebook), ``late`` (a
:class:`autograder.intake.late.Lateness`) and ``lms`` (a :class:`autograder.intake.lms.LmsInfo`, or None).
"""

from autograder.exports.archive import write_feedback_archive
from autograder.exports.blackboard import write_blackboard_csv
from autograder.exports.canvas import canvas_column, write_canvas_csv
from autograder.exports.gradescope import results_json, write_gradescope
from autograder.exports.moodle import write_moodle_gradebook, write_moodle_worksheet

__all__ = [
    "canvas_column",
    "write_canvas_csv",
    "write_moodle_worksheet",
    "write_moodle_gradebook",
    "results_json",
    "write_gradescope",
    "write_feedback_archive",
    "write_blackboard_csv",
]
