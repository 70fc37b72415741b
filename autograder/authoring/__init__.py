"""Writing, checking and releasing a problem set: what an instructor runs before students do.

- :mod:`~autograder.authoring.scaffold`: ``python -m autograder new NAME``, a problem set with one
  worked question;
- :mod:`~autograder.authoring.validate`: the static checks a release runs first (checks, cases,
  points, marking scheme), each refusal naming what to change and where;
- :mod:`~autograder.authoring.selfcheck` and :mod:`~autograder.authoring.variants`:
  ``python -m autograder check-problem-set NAME``, the reference, the blank release, the inputs,
  generic wrong answers and the declared mistakes, graded on a scratch copy;
- :mod:`~autograder.authoring.release`: nbgrader's student version, validated first, written to a
  scratch folder and swapped in only on success.

The checks themselves (declared or written in Python) are :mod:`autograder.checks`; grading is
:mod:`autograder.grading.pipeline`.
"""
