"""The course's real data sets, re-exported from :mod:`coursedata` for the chapters' convenience.

The loaders live in :mod:`coursedata`, which holds no reference implementation, so that student
notebooks can load the same data at grading time without being able to reach :mod:`solutions`.
"""

from coursedata import *  # noqa: F401,F403
from coursedata import __all__  # noqa: F401
