"""Seeded inputs for the problem sets whose checks are hand-written: ``coursedata/inputs/<name>.py``.

Each module defines ``CASES``, a dict from a check's name to a function of no arguments returning
the keyword arguments of the student's function. See :mod:`coursedata.grading`. A problem set
whose cases are declared in its source notebook (:mod:`autograder.checks.declared`) needs no
module here: the grader writes those inputs for each run.
"""
