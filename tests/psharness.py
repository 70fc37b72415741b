"""Helpers for the problem-set tests: the nbgrader release, and many variants in one kernel.

Grading one notebook in a fresh kernel costs a few seconds, mostly the kernel's start. The mutant
tests grade dozens of variants of each problem set, so they run them in one real kernel, clearing
its namespace (``%reset -f``) and pointing ``GRADER_RESULTS_DIR`` at a fresh folder before each.
The scoring itself is the production code (:func:`autograder.scoring.score_results`).
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

from autograder.problemset import ProblemSet
from autograder.release import strip_declarations
from autograder.settings import COURSE_DIR
from autograder.scoring import CellScore, score_results
from autograder.checks.declared import write_inputs
from coursedata.grading import RESULTS_ENV


def generate_release(names: list[str], root: Path) -> Path:
    """Run ``nbgrader generate_assignment`` for ``names`` in a copy of the course at ``root``, and
    remove the declared checks as :func:`autograder.release.release` does."""
    shutil.copy(COURSE_DIR / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(COURSE_DIR / "source", root / "source")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    for name in names:
        subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", name, "--force",
                        f"--CourseDirectory.root={root}",
                        f"--CourseDirectory.db_url=sqlite:///{root}/gradebook.db"],
                       cwd=root, env=env, check=True, capture_output=True)
        for path in (root / "release" / name).glob("*.ipynb"):
            strip_declarations(path)  # as autograder.release does
    return root / "release"


def run_variants(ps: ProblemSet, notebooks: list[nbformat.NotebookNode],
                 timeout: float = 120) -> list[tuple[list[CellScore], nbformat.NotebookNode]]:
    """Execute each notebook in turn in one kernel and score it; return (scores, executed)."""
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        host = nbformat.v4.new_notebook()
        client = NotebookClient(host, timeout=timeout, allow_errors=True, kernel_name="python3")
        with client.setup_kernel(cwd=tmp):
            for i, nb in enumerate(notebooks):
                results = Path(tmp, f"results-{i}")
                results.mkdir()
                write_inputs(ps.source, results)  # as the grader does before a run
                reset = nbformat.v4.new_code_cell(
                    f"%reset -f\nimport os\nos.environ[{RESULTS_ENV!r}] = {str(results)!r}")
                cells = [reset] + [c for c in nb.cells]
                host.cells = cells
                for index, cell in enumerate(cells):
                    if cell.cell_type == "code":
                        client.execute_cell(cell, index)
                out.append((score_results(ps, results, nb), nb))
    return out


# ============================================================================================
# Generic wrong answers, written straight into a results folder (no kernel needed)
# ============================================================================================

import re as _re  # noqa: E402

import numpy as np  # noqa: E402

from autograder.checks import checks_for  # noqa: E402
from autograder.checks.declared import declared_cases  # noqa: E402
from autograder.checks.answers import Answers  # noqa: E402

_RECORD = _re.compile(r"""record\(\s*["']([a-z][a-z0-9_]*)["']\s*,\s*([A-Za-z_][A-Za-z0-9_]*)""")


def case_functions(ps: ProblemSet) -> dict[str, list[str]]:
    """The recorded cases of each function the hidden cells call: ``{function: [case, ...]}``."""
    out: dict[str, list[str]] = {}
    for cell in ps.source.cells:
        if cell.cell_type == "code":
            for case, func in _RECORD.findall(cell.source):
                out.setdefault(func, []).append(case)
    return out


class _ReadingAnswers(Answers):
    """Answers that note which cases a check reads."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def get(self, case):
        self.read.add(case)
        return super().get(case)


def cases_read(ps: ProblemSet, results_dir) -> dict[str, set[str]]:
    """For each autograded cell, the cases its check reads when given ``results_dir``'s answers."""
    checks = checks_for(ps)
    out = {}
    for gid, check in checks.items():
        answers = _ReadingAnswers(ps.name, results_dir, declared_cases(ps.source))
        check(answers)
        out[gid] = answers.read
    return out


def _const(value):
    return lambda x: np.full(np.shape(x), value, dtype=float)


#: Wrong answers of the right shape: each maps one recorded array to another.
TRANSFORMS = {
    "nan": _const(np.nan),
    "inf": _const(np.inf),
    "zeros": lambda x: np.zeros(np.shape(x), dtype=x.dtype if x.dtype.kind in "iu" else float),
    "mean": lambda x: np.full(np.shape(x), np.mean(x, dtype=float) if x.size else 0.0),
    "scaled": lambda x: x * 1.37,
    "shifted": lambda x: x + 0.41,
    "negated": lambda x: -x.astype(float),
}

#: Answers in another form that must keep full marks (a function of the right answer).
EQUIVALENT = {
    "ints": lambda x: x.astype(np.int64) if x.dtype.kind == "f" and np.all(np.isfinite(x))
    and np.all(x == np.round(x)) and np.all(np.abs(x) < 2**53) else x,
    "rounding": lambda x: x * (1 + 1e-12) if x.dtype.kind == "f" else x,
}


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def write_variant(source, target, cases, transform, output=None) -> tuple[set[str], set[str]]:
    """Copy the results folder ``source`` to ``target``, transforming the arrays of ``cases``.

    ``output`` selects one array of each case's tuple (``None``: every array). Returns the cases
    some of whose arrays changed, and those all of whose arrays changed (a transform can leave a
    right answer as it is: zeros for a zero, the mean of one number).
    """
    target = Path(target)
    shutil.copytree(source, target)
    changed, whole = set(), set()
    for case in cases:
        path = target / f"{case}.npz"
        if not path.is_file():
            continue
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: np.array(z[k]) for k in z.files}
        keys = sorted(arrays, key=lambda k: (len(k), k))
        new = dict(arrays)
        for i, key in enumerate(keys):
            if output is None or i == output or (isinstance(output, tuple) and i in output):
                with np.errstate(all="ignore"):
                    new[key] = np.asarray(transform(arrays[key]))
        differs = [not _same(new[k], arrays[k]) for k in keys]
        if any(differs) or any(new[k].dtype != arrays[k].dtype for k in keys):
            np.savez(path, **new)
        if any(differs):
            changed.add(case)
        if all(differs):
            whole.add(case)
    return changed, whole


def n_outputs(results_dir, case) -> int:
    with np.load(Path(results_dir) / f"{case}.npz", allow_pickle=False) as z:
        return len(z.files)


class Subset:
    """A view of a problem set restricted to some graded cells (to score only what a variant
    can change); :func:`score_results` reads only ``name``, ``source`` and ``grade_cells``."""

    def __init__(self, ps: ProblemSet, grade_ids):
        self.name = ps.name
        self.source = ps.source
        self.grade_cells = [c for c in ps.grade_cells if c.grade_id in set(grade_ids)]


def generic_variants(ps: ProblemSet, reference_results):
    """Every generic wrong answer: ``(function, output, transform)`` with ``output`` ``None`` (all
    of the function's arrays) or the index of one of several, and ``function`` ``"*"`` for every
    function at once."""
    functions = case_functions(ps)
    out = [("*", None, t) for t in TRANSFORMS]
    for func, cases in functions.items():
        present = [c for c in cases if (Path(reference_results) / f"{c}.npz").is_file()]
        outputs = n_outputs(reference_results, present[0]) if present else 1
        for output in [None] + (list(range(outputs)) if outputs > 1 else []):
            out += [(func, output, t) for t in TRANSFORMS]
    return out


def score_generic_variants(ps: ProblemSet, reference_results, workdir, exemptions=()):
    """Score every generic variant; return the problems found (empty when all is well).

    A variant's changed cases must cost every autograded cell that reads them: a visible cell
    (all or nothing: its visible test asserts everything) and a hidden cell all of whose arrays
    changed score zero; a hidden cell that also reads unchanged answers loses
    points. A variant listed in ``exemptions``
    (a genuine symmetry of the answer) must keep full marks everywhere; a transform exempt for
    one array of a tuple only needs the cells reading the whole tuple to lose points. Every visible cell is
    treated as having passed in the kernel: the worst case for the grader.
    """
    functions = case_functions(ps)
    reads = cases_read(ps, reference_results)
    cells = {c.grade_id: c for c in ps.grade_cells if c.autograded}
    problems = []
    for i, (func, output, tname) in enumerate(generic_variants(ps, reference_results)):
        if func == "*":  # every function at once, except those for which tname is a symmetry
            cases = [c for f, cs in functions.items() if (f, None, tname) not in exemptions
                     for c in cs]
        else:
            cases = functions[func]
        folder = Path(workdir) / f"v{i}"
        changed, whole = write_variant(reference_results, folder, cases, TRANSFORMS[tname],
                                       output)
        affected = [g for g in cells if reads[g] & changed]
        if not affected:
            continue
        label = f"{tname} {func}" + ("" if output is None else f"[{output}]")
        scores = {s.grade_id: s for s in score_results(Subset(ps, affected), folder, frozenset())}
        shutil.rmtree(folder)
        exempt = (func, output, tname) in exemptions
        # A transform that is a symmetry of one of the arrays leaves that part of the answer right.
        partly_exempt = output is None and any(
            func in (f, "*") and t == tname for f, o, t in exemptions if o is not None)
        for gid in affected:
            s = scores[gid]
            if s.error:
                problems.append(f"{label}: {gid} had a grader error: {s.error.splitlines()[-1]}")
            elif exempt:
                if s.points != s.max_points:
                    problems.append(f"{label} (an equivalent form): {gid} scored {s.points} "
                                    f"of {s.max_points}: {s.message}")
            elif gid.endswith("_visible") or (reads[gid] <= whole and not partly_exempt):
                if s.points != 0:
                    problems.append(f"{label}: {gid} scored {s.points} of {s.max_points}")
            elif not s.points < s.max_points:
                problems.append(f"{label}: {gid} kept full marks")
    return problems


def score_equivalent_forms(ps: ProblemSet, reference_results, workdir, exemptions=()):
    """Score the reference's answers in equivalent forms (:data:`EQUIVALENT`, and each exempt
    transform of :data:`TRANSFORMS` on its own); return every cell that lost points."""
    functions = case_functions(ps)
    every = [c for cases in functions.values() for c in cases]
    forms = [(label, every, fn, None) for label, fn in EQUIVALENT.items()]
    forms += [(f"{t} {f}" + ("" if o is None else f"[{o}]"), functions[f], TRANSFORMS[t], o)
              for f, o, t in exemptions]
    problems = []
    for i, (label, cases, fn, output) in enumerate(forms):
        folder = Path(workdir) / f"e{i}"
        write_variant(reference_results, folder, cases, fn, output)
        for s in score_results(ps, folder, frozenset()):
            if s.points is not None and s.points != s.max_points:
                problems.append(f"{label}: {s.grade_id} scored {s.points} of {s.max_points}: "
                                f"{s.message}")
        shutil.rmtree(folder)
    return problems


#: Malformed answers a student's function can return (all numeric, so ``record`` saves them).
MALFORMED = {
    "0-d": lambda x: np.asarray(1.5),
    "empty": lambda x: np.zeros((0,)),
    "empty rows": lambda x: np.zeros((0,) + np.shape(x)[1:]),
    "one more entry": lambda x: np.ones(np.size(x) + 1),
    "extra axis": lambda x: np.asarray(x)[..., None] * np.ones(2),
    "3-d": lambda x: np.ones((2, 3, 4)),
    "transposed": lambda x: np.asarray(x).T.copy() if np.ndim(x) >= 2 else np.asarray(x)[None],
    "bool": lambda x: np.asarray(x) > np.median(x) if np.size(x) else np.zeros(np.shape(x), bool),
    "complex": lambda x: np.asarray(x) + 1j,
    "int": lambda x: np.nan_to_num(np.asarray(x, dtype=float)).astype(np.int64),
    "huge": lambda x: np.full(np.shape(x), 1e308),
}


def score_malformed(ps: ProblemSet, reference_results, workdir):
    """Write every malformed answer for every graded function (into all of its recorded cases;
    all of its arrays, and each one alone) and score; return every grader error (a check must
    turn malformed answers into a message for the student)."""
    reads = cases_read(ps, reference_results)
    problems = []
    for i, (func, output, _) in enumerate(v for v in generic_variants(ps, reference_results)
                                          if v[2] == "nan" and v[0] != "*"):
        cases = case_functions(ps)[func]
        for kind, fn in MALFORMED.items():
            folder = Path(workdir) / f"m{i}-{kind}"
            changed, _ = write_variant(reference_results, folder, cases, fn, output)
            affected = [g for g in reads if reads[g] & set(cases)]
            for s in score_results(Subset(ps, affected), folder, frozenset()):
                if s.error:
                    problems.append(f"{kind} {func}" + ("" if output is None else f"[{output}]")
                                    + f": {s.grade_id}: {s.error.strip().splitlines()[-1]}")
            shutil.rmtree(folder)
    return problems


# ============================================================================================
# Equivalent forms in a real kernel: the reference, returning lists, ints or rounded values
# ============================================================================================

_DEF = _re.compile(r"^def ([A-Za-z_][A-Za-z0-9_]*)\(", _re.M)

_FORM_HELPERS = '''
import functools as _functools
import sys as _sys
import numpy as _np


def _form_convert(out, form):
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
    raise ValueError(form)


def _form_wrap(func, form, graded):
    @_functools.wraps(func)
    def wrapped(*args, **kwargs):
        out = func(*args, **kwargs)
        if _sys._getframe(1).f_code.co_name in graded:  # a graded function's own call
            return out
        return _form_convert(out, form)
    return wrapped
'''


def equivalent_form(ps: ProblemSet, form: str) -> nbformat.NotebookNode:
    """The source notebook whose graded functions return their answers in another ``form``:
    ``"list"`` (``.tolist()``), ``"ints"`` (integers where the values are integral) or
    ``"rounding"`` (values times ``1 + 1e-12``). Calls between graded functions are left as they
    are; the tests and the hidden cells see the new form."""
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
