"""Helpers for the problem-set tests: the nbgrader release, and many variants in one kernel.

Grading one notebook in a fresh kernel costs a few seconds, mostly the kernel's start. The mutant
tests grade dozens of variants of each problem set, so they run them in one real kernel, clearing
its namespace (``%reset -f``) and pointing ``GRADER_RESULTS_DIR`` at a fresh folder before each.
The scoring itself is the production code (:func:`autograder.grading.scoring.score_results`).
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.authoring.graded import sample_variants
from autograder.authoring.release import give_visible_checks, strip_declarations
from autograder.checks.declared import write_inputs
from autograder.checks.personal import write_parameters
from autograder.grading.problemset import ProblemSet
from autograder.grading.scoring import CellScore, score_results
from autograder.settings import COURSE_DIR
from coursedata.grading import RESULTS_ENV


def generate_release(names: list[str], root: Path) -> Path:
    """Run ``nbgrader generate_assignment`` for ``names`` in a copy of the course at ``root``,
    remove the declared checks and give the visible cells' checks to the student's check, as
    :func:`autograder.authoring.release.release` does."""
    shutil.copy(COURSE_DIR / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(COURSE_DIR / "source", root / "source")
    shutil.copytree(COURSE_DIR / "checks", root / "checks")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for name in names:
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", name, "--force",
                        f"--CourseDirectory.root={root}",
                        f"--CourseDirectory.db_url=sqlite:///{root}/gradebook.db"],
                       cwd=root, env=env, check=True, capture_output=True)
        for path in (root / "release" / name).glob("*.ipynb"):
            strip_declarations(path)  # as autograder.authoring.release does
            # with variants, a sample student's declarations, as release does
            give_visible_checks(path, sample_variants(ProblemSet(name))[0])
    return root / "release"


def run_variants(ps: ProblemSet, notebooks: list[nbformat.NotebookNode], timeout: float = 120,
                 keep: Path | None = None) -> list[tuple[list[CellScore], nbformat.NotebookNode]]:
    """Execute each notebook in turn in one kernel and score it; return (scores, executed).

    The results folder of notebook ``i`` is ``keep / f"results-{i}"`` when ``keep`` is given (kept
    after the run), a temporary folder otherwise.
    """
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        host = nbformat.v4.new_notebook()
        client = NotebookClient(host, timeout=timeout, allow_errors=True, kernel_name="python3")
        with client.setup_kernel(cwd=tmp):
            for i, nb in enumerate(notebooks):
                results = Path(keep if keep is not None else tmp, f"results-{i}")
                results.mkdir(parents=True)
                write_inputs(ps.source, results)  # as the grader does before a run
                if ps.parameters is not None:  # and the student's numbers, for the setup
                    write_parameters(ps.shown_parameters, results)
                reset = nbformat.v4.new_code_cell(
                    f"%reset -f\nimport os\nos.environ[{RESULTS_ENV!r}] = {str(results)!r}")
                cells = [reset, *nb.cells]
                host.cells = cells
                for index, cell in enumerate(cells):
                    if cell.cell_type == "code":
                        client.execute_cell(cell, index)
                out.append((score_results(ps, results, nb), nb))
    return out


# ============================================================================================
# Generic wrong answers, written straight into a results folder (no kernel needed): product
# logic, in autograder.authoring.variants (check-problem-set runs it too)
# ============================================================================================

import re as _re  # noqa: E402

from autograder.authoring.variants import (  # noqa: E402,F401
    EQUIVALENT,
    MALFORMED,
    TRANSFORMS,
    Subset,
    case_functions,
    cases_read,
    generic_variants,
    n_outputs,
    score_equivalent_forms,
    score_generic_variants,
    score_malformed,
    write_variant,
)

# ============================================================================================
# Equivalent forms in a real kernel: the reference, returning lists, ints or rounded values
# ============================================================================================

_DEF = _re.compile(r"^def ([A-Za-z_][A-Za-z0-9_]*)\(", _re.M)

_FORM_HELPERS = '''
import functools as _functools
import sys as _sys
import numpy as _np


def _form_convert(out, form):
    if form == "pairs":  # several values returned as a list, not a tuple
        return list(out) if isinstance(out, tuple) else out
    if isinstance(out, tuple):
        return tuple(_form_convert(o, form) for o in out)
    a = _np.asarray(out)
    if a.dtype.kind not in "biuf":
        return out
    if form == "list":
        return a.tolist()
    if form == "ints":
        if a.dtype.kind == "f" and _np.all(_np.isfinite(a)) and _np.all(a == _np.round(a)):
            return a.astype(_np.int64) if a.ndim else int(a)
        return out
    if form == "rounding":
        return a * (1 + 1e-12) if a.dtype.kind == "f" else out
    if form == "renamed":
        return out
    raise ValueError(form)


def _form_wrap(func, form, graded):
    import inspect as _inspect

    # "renamed": the parameters without a default carry other names (def softmax(z), not Z)
    required = [p.name for p in _inspect.signature(func).parameters.values()
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]

    @_functools.wraps(func)
    def wrapped(*args, **kwargs):
        caller = _sys._getframe(1).f_code.co_name
        renamed = [k for k in kwargs if k in required] if form == "renamed" else []
        if renamed and caller not in graded:
            raise TypeError(f"{func.__name__}() got an unexpected keyword argument {renamed[0]!r}")
        out = func(*args, **kwargs)
        if caller in graded:  # a graded function's own call
            return out
        return _form_convert(out, form)
    return wrapped
'''


def equivalent_form(ps: ProblemSet, form: str) -> nbformat.NotebookNode:
    """The source notebook whose graded functions return their answers in another ``form``:
    ``"list"`` (``.tolist()``), ``"ints"`` (integers where the values are integral),
    ``"rounding"`` (values times ``1 + 1e-12``), ``"pairs"`` (several values as a list, not a
    tuple), or ``"renamed"`` (the parameters without a default renamed, so that a call naming
    them fails as it would for ``def softmax(z)`` called as ``softmax(Z=...)``). Calls between
    graded functions are left as they are; the tests and the hidden cells see the new form."""
    nb = copy.deepcopy(ps.source)
    solution_cells = [c for c in nb.cells if c.cell_type == "code"
                      and c.metadata.get("nbgrader", {}).get("solution")]
    graded = sorted({name for c in solution_cells for name in _DEF.findall(c.source)})
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell in solution_cells:
            names = _DEF.findall(cell.source)
            code = "".join(f"{n} = _form_wrap({n}, {form!r}, {graded!r})\n" for n in names)
            if cell is solution_cells[0]:
                code = _FORM_HELPERS + "\n" + code
            cells.append(nbformat.v4.new_code_cell(code))
    nb.cells = cells
    return nb
