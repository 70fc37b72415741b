"""The course's grade arithmetic: the one truth that ``grades.csv``, the feedback and every export
state.

- :mod:`.summary`: one student's grade (autograded, hand-graded, late penalty, final) from a
  record;
- :mod:`.merge`: the gradebook's hand-graded scores and the late policy, merged into the records;
- :mod:`.gradestable`: ``grades.csv``, one row per student.

The LMS formats written from these numbers are in :mod:`autograder.exports`.
"""

from autograder.grades.gradestable import write_grades_csv
from autograder.grades.merge import annotate, manual_scores
from autograder.grades.summary import Summary, number, summarize

__all__ = ["Summary", "summarize", "number", "annotate", "manual_scores", "write_grades_csv"]
