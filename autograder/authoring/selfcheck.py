"""``python -m autograder check-problem-set NAME``: is a problem set's source sound?

The author's self-check, in a minute or two, on a scratch copy (nothing of the course changes):

1. the source is consistent (:mod:`autograder.authoring.validate`: every autograded cell has a
   check, every recorded case is defined and read, the points the text states are the metadata's,
   every written answer has its marking-scheme section; and the release gate
   :mod:`autograder.authoring.gate`: markers, rules, the declared references on their cases, the
   marking scheme's tables); when the checks or the cases disagree,
   the steps that grade would only repeat that fault, cell by cell, so the self-check stops here;
2. the reference answers (the source notebook as it is) earn every autograded point;
3. the student version nbgrader releases holds no solution, no hidden-test line and nothing but
   the notebook;
4. that blank release earns zero on every autograded cell;
5. the kernel and the grader see the same inputs: every declared case's inputs, written as the
   grader writes them before a run and read back by the kit's ``coursedata.grading.inputs``, are
   the grader's own, value, dtype and type (the kit holds no generator, so a changed seed needs
   no new kit);
6. generic wrong answers (NaN, infinite, constant, rescaled, shifted, negated values of every
   graded function) score zero on every visible cell and every hidden cell all of whose answers
   they replace, and lose points on the others; the symmetries a check declares
   (``EQUIVALENT_FORMS``) and answers as integers or within rounding keep full marks
   (:mod:`autograder.authoring.variants`);
7. the realistic mistakes declared next to the answers (:mod:`autograder.checks.mutants`) can be
   made; with ``mutants=True`` (``--mutants``, a minute or more: one graded run each) each is
   graded and must lose points on the cells it names, and one its visible test must catch must
   fail that test in the kernel.

A problem set with per-student variants (:mod:`autograder.checks.personal`) is checked on
:data:`autograder.authoring.graded.SAMPLE_STUDENTS` students' variants, drawn with a secret of
the run alone: steps 2, 5 and 6 run once per variant, each named with its numbers, the others on
the first.

Each failure names what to change and where. The notebooks run in local kernels (the source is
the instructor's, not a student's).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from unittest.mock import patch

import numpy as np

from autograder.authoring.gate import LEAKS, gate_problems
from autograder.authoring.graded import (
    reference_problems,
    sample_variants,
    variant_label,
    variant_problems,
)
from autograder.grading.problemset import ProblemSet

__all__ = ["Step", "LEAKS", "self_check"]


@dataclass
class Step:
    """One step of the self-check: what it checks, its problems (none: passed), its time."""

    what: str
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems


#: The consistency step's detail when its problems would make the grading steps fail too: they
#: are not run, so the author reads the cause alone.
GRADING_FAULT = "the checks that grade run once the checks and cases agree"


def _timed(what: str, run: Callable[[], tuple[list[str], str] | list[str]]) -> Step:
    start = time.perf_counter()
    try:
        out = run()
    except Exception as exc:  # noqa: BLE001 - a step that cannot run is a problem, shown
        out = [f"the step could not run: {type(exc).__name__}: {exc}"]
    problems, detail = out if isinstance(out, tuple) else (out, "")
    return Step(what, list(problems), time.perf_counter() - start, detail)


def _consistency(ps: ProblemSet) -> tuple[list[str], str]:
    from autograder.authoring.validate import grading_problems, points_problems, rubric_problems

    grading = grading_problems(ps)  # made once: it draws every declared input
    found = [
        str(p) for p in (*grading, *points_problems(ps), *rubric_problems(ps), *gate_problems(ps))
    ]
    return found, GRADING_FAULT if grading else ""


def _release(
    ps: ProblemSet, scratch: Path, roster: tuple[str, ...] = ()
) -> tuple[list[str], Path | None]:
    from autograder.authoring.release import kit_url, release

    course = scratch / "course"
    course.mkdir()
    config = ps.course.root / "nbgrader_config.py"
    if config.is_file():
        shutil.copy(config, course)
    shutil.copytree(ps.path.parent, course / "source" / ps.name)
    if (ps.course.root / "checks").is_dir():  # the references the declarations name
        shutil.copytree(ps.course.root / "checks", course / "checks")
    folder = release(
        ps.name,
        course,
        db_url=f"sqlite:///{scratch / 'gradebook.db'}",
        url=kit_url(),
        validate=False,
        roster=roster or None,
    )
    notebook = folder / ps.notebook_name
    problems = [
        f"the release ships {p.name} beside the notebook: remove it from source/{ps.name}/"
        for p in sorted(folder.iterdir())
        if p != notebook
    ]
    released = json.loads(notebook.read_text())
    for cell in released["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        leak = LEAKS.search(text)
        if leak:
            gid = (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id", "a cell")
            problems.append(
                f"{ps.notebook_name}, cell `{gid}`: the student version keeps "
                f"{leak.group(0)!r}. Put it between ### BEGIN/END SOLUTION or "
                "### BEGIN/END HIDDEN TESTS, in a cell marked as a solution or test "
                "in the nbgrader metadata."
            )
    return problems, notebook


def _blank(ps: ProblemSet, notebook: Path, work: Path) -> list[str]:
    from autograder.grading.executors import local_executor
    from autograder.grading.pipeline import grade as grade_submission

    result = grade_submission(ps, notebook.read_bytes(), local_executor(), workdir=work)
    return [
        f"{ps.notebook_name}, cell `{s.grade_id}`: the blank release scored {s.points:g} of "
        f"{s.max_points:g}. Its check must give nothing for a function that raises "
        f"NotImplementedError ({ps.course.checks_label(ps.name)})."
        for s in result.scores
        if s.points
    ]


def _same_inputs(read: dict, made: dict) -> bool:
    """Whether the kernel's inputs ``read`` are the grader's ``made``: the same arguments, each
    with the same values (NaN where NaN), dtype and shape, and numbers of the same Python type."""
    if read.keys() != made.keys():
        return False
    for key, value in made.items():
        a, b = np.asarray(read[key]), np.asarray(value)
        same_type = isinstance(value, np.ndarray) or type(read[key]) is type(value)
        if not (
            same_type
            and a.dtype == b.dtype
            and a.shape == b.shape
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        ):
            return False
    return True


def _kit_inputs(ps: ProblemSet, scratch: Path):
    """Write every declared case's inputs as the grader does before a run, read them back as the
    student's kernel does (``coursedata.grading.inputs``, the kit's reader) and compare them with
    the grader's own; return the problems and what was compared."""
    from autograder.checks.declaration import case_inputs, declared_cases, write_inputs
    from coursedata.grading import RESULTS_ENV

    cases = declared_cases(ps.source)
    folder = scratch / "kit-inputs"
    write_inputs(ps.source, folder)
    with patch.dict(os.environ, {RESULTS_ENV: str(folder)}):  # as in the kernel; then restored
        found = [p for c in sorted(cases) if (p := _read_back(ps.name, c, case_inputs(cases, c)))]
    return found, f"{len(cases)} declared cases, written and read back; the kit holds no generator"


def _read_back(name: str, case: str, made: dict) -> str | None:
    """What is wrong with the kernel's reading of ``case`` (whose grader inputs are ``made``),
    or ``None``."""
    from coursedata.grading import inputs

    try:
        read = inputs(name, case)
    except Exception as exc:  # noqa: BLE001 - every student's run would fail here
        return (
            f"case {case!r}: the kernel cannot read its inputs ({type(exc).__name__}: "
            f"{exc}); declare numbers or numeric arrays"
        )
    if not _same_inputs(read, made):
        return (
            f"case {case!r}: the kernel reads other inputs than the grader makes (a value, "
            "dtype or type changes on the way through the input files); declare numbers or "
            "numeric arrays"
        )
    return None


def _mutants(ps: ProblemSet, work: Path | None = None):
    """Read the declared mutants; with ``work``, grade each there and return the problems of
    those that keep their points (or pass the visible test that must catch them)."""
    from autograder.checks.declaration import DeclarationError
    from autograder.checks.mutants import mutants, mutated

    try:
        declared = mutants(ps.source, ps.notebook_name)
    except DeclarationError as exc:
        return [str(exc)], "cannot be made"
    if work is None:
        return [], f"{len(declared)} declared; --mutants grades them"
    problems = []
    for i, mutant in enumerate(declared):
        problems += _mutant_problems(ps, mutant, mutated(ps.source, mutant), work / f"m{i}")
    return problems, f"{len(declared)} graded"


def _mutant_problems(ps: ProblemSet, mutant, notebook, work: Path) -> list[str]:
    """What is wrong with the tests of ``mutant``'s question: empty when the mutated
    ``notebook``, graded, loses points on ``mutant.loses`` (and fails ``mutant.seen_by``)."""
    import nbformat

    from autograder.grading.executors import local_executor
    from autograder.grading.pipeline import grade as grade_submission
    from autograder.grading.scoring import failed_visible_cells

    result = grade_submission(
        ps, nbformat.writes(notebook).encode(), local_executor(), workdir=work
    )
    scores = {s.grade_id: s for s in result.scores}

    def kept(cells) -> bool:
        return sum(scores[c].points or 0 for c in cells) >= sum(scores[c].max_points for c in cells)

    where = (
        f"{ps.notebook_name}, cell `{mutant.cell}`, mutant {mutant.name!r} "
        f"({mutant.find!r} -> {mutant.replace!r})"
    )
    problems = []
    if kept(mutant.loses):
        problems.append(
            f"{where}: kept every point of {', '.join(mutant.loses)}. Add a case "
            f"this mistake gets wrong to the declaration of {mutant.loses[-1]} (or "
            "tighten its check), or correct the mutant in the metadata of "
            f"`{mutant.cell}`."
        )
    seen_by = mutant.seen_by
    if seen_by and (kept([seen_by]) or seen_by not in failed_visible_cells(result.executed or {})):
        problems.append(
            f"{where}: the visible test `{seen_by}` lets it pass. Add an assert "
            "that this mistake fails to that cell (a rule the question states), or "
            'drop "visible": true from the mutant.'
        )
    return problems


def self_check(
    ps: ProblemSet, log: Callable[[Step], None] = lambda step: None, *, mutants: bool = False
) -> list[Step]:
    """Run every step (see the module docstring) on ``ps``; ``log`` sees each as it ends;
    ``mutants`` also grades the declared mutants. A problem set with per-student variants
    (:mod:`autograder.checks.personal`) is checked on several students' variants: the steps that
    grade or read inputs run once per variant, each named with its numbers."""
    steps = []
    ps.course.use_code()
    samples = sample_variants(ps)
    roster = tuple(s.student for s in samples if s.student is not None)

    def run(what, fn):
        step = _timed(what, fn)
        steps.append(step)
        log(step)
        return step

    with tempfile.TemporaryDirectory(prefix=f"check-{ps.name}-") as tmp:
        scratch = Path(tmp)
        if (
            run(
                "the source is consistent (checks, cases, points, marking scheme)"
                + variant_label(samples[0]),
                lambda: _consistency(samples[0]),
            ).detail
            == GRADING_FAULT
        ):
            return steps
        for i, sample in enumerate(samples):
            _graded(sample, scratch / f"sample{i}", run)
        released: dict = {}

        def release_step():
            problems, released["notebook"] = _release(ps, scratch, roster)
            return problems

        run(
            "the release holds no solution or hidden-test line, and only the notebook", release_step
        )
        if released.get("notebook"):
            run(
                "the blank release earns zero" + variant_label(samples[0]),
                lambda: _blank(samples[0], released["notebook"], scratch / "blank"),
            )
        if mutants:
            run(
                "every declared mutant loses points where it says" + variant_label(samples[0]),
                lambda: _mutants(samples[0], scratch / "mutants"),
            )
        else:
            run("the declared mutants can be made", lambda: _mutants(samples[0]))
    return steps


def _graded(ps: ProblemSet, scratch: Path, run) -> None:
    """The steps that grade ``ps`` (one variant, for a problem set with variants) in
    ``scratch``: the reference, the kit's inputs, the generic wrong answers."""
    of = variant_label(ps)
    run(
        "the reference answers earn full marks" + of,
        lambda: reference_problems(ps, scratch / "reference"),
    )
    run("the kit and the grader see the same inputs" + of, lambda: _kit_inputs(ps, scratch))
    results = scratch / "reference" / "results"
    if results.is_dir():
        run(
            "generic wrong answers lose their points; equivalent forms keep them" + of,
            lambda: variant_problems(ps, results, scratch),
        )
