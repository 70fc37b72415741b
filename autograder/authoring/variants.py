"""Generic wrong answers and equivalent forms, written straight into a results folder.

A problem set's checks must take the points of a wrong answer whatever its form, and keep them for
a right answer in another form. Without a kernel, the reference's recorded answers (a results
folder of :mod:`coursedata.grading`) are copied and transformed (:data:`TRANSFORMS`: NaN, infinite,
zeros, the mean, rescaled, shifted, negated; :data:`EQUIVALENT`: integers, within rounding;
:data:`MALFORMED`: wrong shapes and types), then scored by the production scoring
(:func:`autograder.grading.scoring.score_results`) with every visible test taken as passed (the worst case
for the grader). Used by ``check-problem-set`` (:mod:`autograder.authoring.selfcheck`) and the
tests.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path

import nbformat
import numpy as np

from autograder.checks.answers import Answers
from autograder.checks.declared import declared_cases
from autograder.checks.record_calls import cases_by_function
from autograder.checks.registry import checks_for
from autograder.course import Course
from autograder.grading.problemset import GradeCell, ProblemSet
from autograder.grading.scoring import score_results
from coursedata.naming import VISIBLE, test_kind

__all__ = [
    "TRANSFORMS",
    "EQUIVALENT",
    "MALFORMED",
    "case_functions",
    "cases_read",
    "write_variant",
    "generic_variants",
    "score_generic_variants",
    "score_equivalent_forms",
    "score_malformed",
]


def case_functions(ps: ProblemSet) -> dict[str, list[str]]:
    """The recorded cases of each function the hidden cells call: ``{function: [case, ...]}``
    (:func:`autograder.checks.record_calls.cases_by_function` of the source)."""
    return cases_by_function(ps.source)


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
    "ints": lambda x: (
        x.astype(np.int64)
        if x.dtype.kind == "f"
        and np.all(np.isfinite(x))
        and np.all(x == np.round(x))
        and np.all(np.abs(x) < 2**53)
        else x
    ),
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


def n_outputs(results_dir: str | Path, case: str) -> int:
    with np.load(Path(results_dir) / f"{case}.npz", allow_pickle=False) as z:
        return len(z.files)


class Subset:
    """A view of a problem set restricted to some graded cells (to score only what a variant
    can change): a :class:`~autograder.grading.problemset.GradedSet`, scored with the checks of
    the problem set's own course."""

    def __init__(self, ps: ProblemSet, grade_ids: Iterable[str]):
        wanted = set(grade_ids)
        self.name: str = ps.name
        self.course: Course = ps.course
        self.source: nbformat.NotebookNode = ps.source
        self.grade_cells: list[GradeCell] = [c for c in ps.grade_cells if c.grade_id in wanted]


def generic_variants(ps: ProblemSet, reference_results) -> list[tuple[str, int | None, str]]:
    """Every generic wrong answer: ``(function, output, transform)`` with ``output`` ``None`` (all
    of the function's arrays) or the index of one of several, and ``function`` ``"*"`` for every
    function at once."""
    functions = case_functions(ps)
    out: list[tuple[str, int | None, str]] = [("*", None, t) for t in TRANSFORMS]
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
            cases = [
                c for f, cs in functions.items() if (f, None, tname) not in exemptions for c in cs
            ]
        else:
            cases = functions[func]
        folder = Path(workdir) / f"v{i}"
        changed, whole = write_variant(reference_results, folder, cases, TRANSFORMS[tname], output)
        affected = [g for g in cells if reads[g] & changed]
        if not affected:
            continue
        label = f"{tname} {func}" + ("" if output is None else f"[{output}]")
        scores = {s.grade_id: s for s in score_results(Subset(ps, affected), folder, frozenset())}
        shutil.rmtree(folder)
        exempt = (func, output, tname) in exemptions
        # A transform that is a symmetry of one of the arrays leaves that part of the answer right.
        partly_exempt = output is None and any(
            func in (f, "*") and t == tname for f, o, t in exemptions if o is not None
        )
        for gid in affected:
            s = scores[gid]
            assert s.points is not None, "an autograded cell's score has its points"
            if s.error:
                problems.append(f"{label}: {gid} had a grader error: {s.error.splitlines()[-1]}")
            elif exempt:
                if s.points != s.max_points:
                    problems.append(
                        f"{label} (an equivalent form): {gid} scored {s.points} "
                        f"of {s.max_points}: {s.message}"
                    )
            elif test_kind(gid) == VISIBLE or (reads[gid] <= whole and not partly_exempt):
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
    forms += [
        (f"{t} {f}" + ("" if o is None else f"[{o}]"), functions[f], TRANSFORMS[t], o)
        for f, o, t in exemptions
    ]
    problems = []
    for i, (label, cases, fn, output) in enumerate(forms):
        folder = Path(workdir) / f"e{i}"
        write_variant(reference_results, folder, cases, fn, output)
        for s in score_results(ps, folder, frozenset()):
            if s.points is not None and s.points != s.max_points:
                problems.append(
                    f"{label}: {s.grade_id} scored {s.points} of {s.max_points}: {s.message}"
                )
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
    for i, (func, output, _) in enumerate(
        v for v in generic_variants(ps, reference_results) if v[2] == "nan" and v[0] != "*"
    ):
        cases = case_functions(ps)[func]
        for kind, fn in MALFORMED.items():
            folder = Path(workdir) / f"m{i}-{kind}"
            changed, _ = write_variant(reference_results, folder, cases, fn, output)
            affected = [g for g in reads if reads[g] & set(cases)]
            for s in score_results(Subset(ps, affected), folder, frozenset()):
                if s.error:
                    problems.append(
                        f"{kind} {func}"
                        + ("" if output is None else f"[{output}]")
                        + f": {s.grade_id}: {s.error.strip().splitlines()[-1]}"
                    )
            shutil.rmtree(folder)
    return problems
