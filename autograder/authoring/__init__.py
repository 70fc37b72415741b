"""Writing, checking and releasing a problem set: what an instructor runs before students do.

- :mod:`~autograder.authoring.scaffold`: ``python -m autograder new NAME``, a problem set with one
  worked question;
- :mod:`~autograder.authoring.validate`: the static checks a release runs first (checks, cases,
  points, marking scheme), each refusal naming what to change and where;
- :mod:`~autograder.authoring.gate`: the rest of what a release checks first, in seconds (markers
  against the solution, the rules against the reference answers, the declared references run on
  every declared case, the marking scheme's points tables);
- :mod:`~autograder.authoring.selfcheck` and :mod:`~autograder.authoring.variants`:
  ``python -m autograder check-problem-set NAME``, the reference, the blank release, the inputs,
  generic wrong answers and the declared mistakes, graded on a scratch copy;
- :mod:`~autograder.authoring.release`: nbgrader's student version, validated and gated first, written to a
  scratch folder and swapped in only on success.

The checks themselves (declared or written in Python) are :mod:`autograder.checks`; grading is
:mod:`autograder.grading.pipeline`.
"""
