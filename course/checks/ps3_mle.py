"""Trusted checks for problem set 3 (maximum likelihood): none are left in Python.

Every autograded cell of problem set 3 declares its check next to the question, in the source
notebook's cell metadata (``course.check``, see :mod:`autograder.checks.declared`): the
reference in :mod:`solutions.mle`, the seeded inputs, the tolerances (closed forms and
log-likelihoods to ``rtol=1e-8``, since a sum of N terms in double precision in any order agrees
far better; the Gamma MLE, an iterative root, to a relative ``1e-7``, far looser than rounding
error and far tighter than an unconverged Newton iteration) and the weights.

The score (question 5) is declared too, so the student's check gives its visible cell the
grader's verdict: ``rtol=1e-8`` and ``atol=1e-9``. An entry near zero (near the MLE) is a
difference of terms of size up to about ``N (|log b| + |log a| + 1) + sum |log x|`` (∂ℓ/∂a) and
``N a / b + sum x`` (∂ℓ/∂b), between 20 and 40 000 for the declared cases, so rounding moves it
by at most about 1e-11; ``atol=1e-9`` is a hundred times that, and no wider than
``1e-10`` times the smaller of the two sizes in any case.
"""

from __future__ import annotations

PROBLEM_SET = "ps3_mle"

CHECKS: dict = {}
