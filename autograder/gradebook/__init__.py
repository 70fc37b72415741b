"""nbgrader's side: its gradebook, its formgrader, and the term the gradebook belongs to.

- :mod:`.writer`: the grader's scores written where nbgrader keeps them;
- :mod:`.cells`: the gradebook's cells kept in step with the source notebook, within a term;
- :mod:`.formgrader`: nbgrader's formgrader opened on this course, for hand-grading;
- :mod:`.term`: the term rollover (archive a term, start the next with a clean course).
"""
