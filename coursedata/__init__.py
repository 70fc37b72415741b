"""Real data sets for the course, loaded offline from packages that ship them.

This package holds data loading (and :func:`show_figure`, which shows a figure with its
description) and no reference implementation, so a student notebook may
import it at grading time (the sandbox exposes it while hiding :mod:`solutions`).

Every loader returns numpy arrays. Sources and terms of use are in each loader's docstring and in
its ``source`` field; chapters print them where the data are used.

Students get this package as the course's student kit (``kit/``, built by ``make`` into
``_build/kit/``); ``__version__`` is the kit's version: raise it whenever the kit changes during a
term, so the released notebooks name a new wheel.
"""

__version__ = "0.4.0"

from coursedata.dependencies import explain as _explain
from coursedata.figures import show_figure

try:
    from coursedata.lecture_ratings import LectureRatings, load_lecture_ratings
    from coursedata.loaders import (
        Dataset,
        MovieLens,
        load_breast_cancer,
        load_digits,
        load_faithful,
        load_movielens,
        load_reviews,
        load_spam_email,
        load_titanic,
        load_wine,
    )
    from coursedata.variants import variant
except ModuleNotFoundError as _error:  # numpy or scipy: say so, not "no kit" (dependencies.py)
    raise _explain(_error) from None

__all__ = [
    "Dataset",
    "LectureRatings",
    "MovieLens",
    "load_breast_cancer",
    "load_digits",
    "load_faithful",
    "load_lecture_ratings",
    "load_movielens",
    "load_reviews",
    "load_spam_email",
    "load_titanic",
    "load_wine",
    "show_figure",
    "variant",
]
