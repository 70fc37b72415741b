"""The course's grading pipeline: nbgrader problem sets and a sandboxed notebook executor.

Student code only ever runs through :func:`autograder.sandbox.execute_notebook`, which keeps it
away from the reference package :mod:`solutions`, the course sources and the gradebook.
"""
