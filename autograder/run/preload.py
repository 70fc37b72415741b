"""What a course's grading kernels import before the first submission: the sandbox's preload list.

The grader's sandbox keeps a warm zygote per grading process (:mod:`autograder.sandbox.warm`) and
imports in it the modules of ``SandboxConfig.preload``; it knows nothing of the course. This
module makes that list from the course: the problem sets' scientific stack
(:data:`SCIENTIFIC_PRELOAD`) and every module the course's source notebooks import outside their
solution cells (:func:`course_imports`, read with :mod:`ast`; no notebook code runs).
"""

from __future__ import annotations

import ast
import functools
import json
from collections.abc import Iterable
from pathlib import Path

from autograder import settings
from coursedata.rules import covers

__all__ = ["SCIENTIFIC_PRELOAD", "course_imports", "grading_preload"]

#: The problem sets' scientific stack, imported by the grader's zygotes besides the course's own
#: imports (:func:`grading_preload`); ``coursedata`` loads its data sets with scikit-learn.
SCIENTIFIC_PRELOAD = (
    "numpy",
    "numpy.linalg",
    "scipy",
    "scipy.linalg",
    "scipy.optimize",
    "scipy.special",
    "scipy.stats",
    "matplotlib",
    "matplotlib.pyplot",
    "matplotlib_inline.backend_inline",
    "pandas",
    "sklearn",
    "sklearn.datasets",
    "sklearn.utils",
    "coursedata",
)


@functools.cache
def course_imports(course: Path = settings.COURSE_DIR) -> tuple[str, ...]:
    """Modules imported by the course's source notebooks outside their solution cells.

    Parameters
    ----------
    course : Path, default :data:`autograder.settings.COURSE_DIR`
        The nbgrader course; its notebooks are ``source/<problem set>/*.ipynb``.

    Returns
    -------
    tuple of str
        Absolute module names, sorted; lines starting with ``%`` or ``!`` (IPython magics) are
        ignored, and so are cells that do not parse.
    """
    names: set[str] = set()
    for path in sorted(course.glob("source/*/*.ipynb")):
        try:
            cells = json.loads(path.read_text())["cells"]
        except (OSError, ValueError, KeyError):
            continue
        for cell in cells:
            if cell.get("cell_type") != "code" or cell.get("metadata", {}).get("nbgrader", {}).get(
                "solution"
            ):
                continue
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module)
    return tuple(sorted(names))


def grading_preload(
    course: Path = settings.COURSE_DIR, forbid: Iterable[str] = ()
) -> tuple[str, ...]:
    """What a grading process's zygote imports: :data:`SCIENTIFIC_PRELOAD` and
    :func:`course_imports` of the course folder ``course`` (for ``SandboxConfig.preload``),
    without any module that ``forbid`` covers.

    Every kernel forked from it carries these modules, so a ``fork()`` in student code costs what
    it costs in a kernel that imported them (tens of milliseconds): much more than in a bare
    kernel, the same as in any notebook of the course.

    Parameters
    ----------
    course : Path
        The nbgrader course folder.
    forbid : iterable of str
        The modules the problem set's rules forbid somewhere
        (:meth:`coursedata.rules.Rules.every_forbidden`). A module loaded in the kernel is
        reachable without an import (``object.__subclasses__()``, a function's
        ``__globals__``), whatever the guard takes out of ``sys.modules``; so a zygote for a
        problem set that forbids a module does not load it (the problem set's own code may
        still import it when it runs, as a cold kernel would).
    """
    names = SCIENTIFIC_PRELOAD + course_imports(Path(course).resolve())
    forbid = tuple(forbid)
    return tuple(dict.fromkeys(n for n in names if not any(covers(f, n) for f in forbid)))
