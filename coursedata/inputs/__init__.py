"""Seeded inputs for each problem set's checks: ``coursedata/inputs/<problem_set>.py``.

Each module defines ``CASES``, a dict from a check's name to a function of no arguments returning
the keyword arguments of the student's function. See :mod:`coursedata.grading`.
"""
