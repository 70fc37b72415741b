"""A problem set graded as the grader will grade it: its reference answers, and generic wrong ones.

Two steps of the author's self-check (:mod:`autograder.authoring.selfcheck`) that
``release`` runs too (:func:`graded_problems`), since no static reading finds what they find:

- the reference answers (the source notebook as it is) must earn every autograded point: a
  visible test that asserts something false, a declared reference that disagrees with the
  notebook's own solution, a tolerance tighter than an iterative answer settles to, an answer
  renamed after its checks were written, all cost the reference points here; a case on which
  the answer raises or returns NaN while it answers the cell's other cases is named, with its
  inputs as the fix (:func:`_case_faults`), and so is a case on which a trusted Python check
  raises computing its reference (:func:`_check_fault`);
- generic wrong answers (NaN, infinite, constant, rescaled, shifted, negated values of every
  graded function) must lose their points, and the declared equivalent forms keep them: a
  tolerance so loose that a wrong answer passes is found here
  (:mod:`autograder.authoring.variants`).

A problem set with per-student variants (:mod:`autograder.checks.personal`) is graded on
:data:`SAMPLE_STUDENTS` students' variants (:func:`sample_variants`), each problem named with the
variant's numbers (:func:`variant_label`).
"""

from __future__ import annotations

import json
import logging
import re
import secrets
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from autograder.grading.problemset import ProblemSet
from autograder.status import Status

__all__ = [
    "SAMPLE_STUDENTS",
    "sample_variants",
    "variant_label",
    "reference_problems",
    "variant_problems",
    "graded_problems",
]

#: How many students' variants a problem set with variants is graded on.
SAMPLE_STUDENTS = 3


def sample_variants(ps: ProblemSet) -> list[ProblemSet]:
    """The problem set as it is graded here: itself, or for a problem set with variants
    :data:`SAMPLE_STUDENTS` students' variants, drawn with a secret of this run alone (so each
    run tries other numbers, and the course's secret is neither needed nor made)."""
    if ps.variants is None or ps.parameters is not None:  # none, or one student's already
        return [ps]
    secret = secrets.token_bytes(32)
    return [ps.for_student(f"sample-{i + 1}", secret) for i in range(SAMPLE_STUDENTS)]


def variant_label(sample: ProblemSet) -> str:
    """`` (the variant ...)`` naming a sample's parameters, or nothing without variants."""
    if sample.parameters is None:
        return ""
    return f" (the variant {json.dumps(sample.parameters, sort_keys=True)})"


def _once(message: str) -> str:
    """``message`` with each of its ``; ``-separated parts once (a hidden cell's cases that
    fail alike say so once)."""
    return "; ".join(dict.fromkeys(message.split("; ")))


def _answer_fault(case, results: Path) -> str | None:
    """What the notebook's answer recorded for ``case`` in ``results`` that no check can pass:
    an error it raised, or NaN in an output (the gate refuses a reference that returns NaN)."""
    error = results / f"{case.name}.error.json"
    if error.is_file():
        return f"raises {json.loads(error.read_text()).get('type', 'an error')}"
    saved = results / f"{case.name}.npz"
    if not saved.is_file():
        return None
    with np.load(saved) as z:
        values = [z[k] for k in sorted(z.files, key=lambda k: (len(k), k))]
    names = [o.name for o in case.outputs] or ["its value"]
    nan = [
        repr(name)
        for name, value in zip(names, values, strict=False)
        if value.dtype.kind in "fc" and np.isnan(value).any()
    ]
    return f"returns NaN for {', '.join(nan)}" if nan else None


def _case_faults(ps: ProblemSet, gid: str, results: Path, scored: str) -> list[str]:
    """A problem for each case of the cell ``gid`` on which the notebook's answer raised or
    returned NaN while it answered the cell's other cases: the case's inputs are where the
    answer is undefined (an empty class, a component with no responsibility), so they are
    what to change. Empty when no case stands out so (every case failing is the answer's
    fault, named as a whole)."""
    from autograder.checks.declaration import DeclarationError, declarations
    from autograder.checks.record_calls import record_calls

    try:
        found = declarations(ps.source)
    except DeclarationError:
        return []
    cases = {c: case for d in found.values() for c, case in d.cases.items()}
    scored_cases = [cases[c] for c in (found[gid].scored if gid in found else []) if c in cases]
    faults = {c.name: f for c in scored_cases if (f := _answer_fault(c, results))}
    if not faults or len(faults) == len(scored_cases):
        return []
    functions = {r.case: r.function for r in record_calls(ps.source)}
    return [
        f"{ps.notebook_name}, cell `{gid}`, case {name!r}: the notebook's answer "
        f"`{functions.get(name, 'its function')}` {fault} on this case's inputs"
        + (f" (the reference `{cases[name].reference}` does not)" if cases[name].reference else "")
        + f", so the reference scored {scored}. Change the case's inputs in the course.check "
        f"of `{cases[name].cell}` (the answer is undefined on them, as for a class or a component "
        "with no data), or make the solution cell handle them."
        for name, fault in faults.items()
    ]


@contextmanager
def _faults_unlogged() -> Iterator[None]:
    """Grading without the log line of a trusted check's fault (:mod:`autograder.grading.scoring`
    logs one, with its traceback, for the instructor grading a class): here each is a problem of
    its own (:func:`_check_fault`), and the traceback would only bury it."""
    from autograder.grading import scoring

    logger = logging.getLogger(scoring.__name__)
    was, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = was


def _first_sentence(error: str) -> str:
    """``Type: message`` (a traceback's last line) with the message's first sentence alone: what
    follows its first ``;`` or ``.`` outside brackets is the exception's advice to its caller
    ("give sigma explicitly"), not to the author whose case made it raise."""
    kind, colon, message = error.partition(": ")
    if not colon:
        return error
    first = re.split(r"[;.]\s+(?![^(\[]*[)\]])", message, maxsplit=1)[0]
    return f"{kind}: {first}"


def _check_fault(ps: ProblemSet, score) -> list[str]:
    """The case on which a trusted check raised computing its reference (the case it read last,
    :attr:`autograder.grading.scoring.CellScore.case`), named with its inputs as the fix; empty
    when the check did not raise, or raised before it read any case."""
    from autograder.checks.declaration import declared_cases

    if not (score.error and score.case):
        return []
    error = _first_sentence(score.error.strip().splitlines()[-1])
    declared = declared_cases(ps.source).get(score.case)
    cell = declared.cell if declared is not None else score.grade_id
    return [
        f"{ps.notebook_name}, case {score.case} of `{score.grade_id}`: the reference (its check "
        f"in {ps.course.checks_label(ps.name)}) raises {error} on its inputs, so the case can "
        f"never be passed. Change the case's inputs in the course.check of `{cell}` (a seed, a "
        "size, a class that gets no point), or make the check's reference handle them."
    ]


def reference_problems(ps: ProblemSet, work: Path) -> tuple[list[str], str]:
    """Grade the source notebook (the reference answers) in ``work``: a problem for every
    autograded cell that does not earn all its points, and the points earned, in words."""
    from autograder.grading.executors import local_executor
    from autograder.grading.pipeline import grade as grade_submission

    with _faults_unlogged():  # each is named below, with its case
        result = grade_submission(ps, ps.path.read_bytes(), local_executor(), workdir=work)
    auto = [s for s in result.scores if s.points is not None]
    checks = (
        f", the check in {ps.course.checks_label(ps.name)}"
        if ps.course.checks_module(ps.name).is_file()
        else ""
    )
    failed = [
        _check_fault(ps, s)
        or _case_faults(ps, s.grade_id, work / "results", f"{s.points:g} of {s.max_points:g}")
        or [
            f"{ps.notebook_name}, cell `{s.grade_id}`: the reference scored {s.points:g} of "
            f"{s.max_points:g} ({_once(s.error.strip().splitlines()[-1] if s.error else s.message)})"
            f". Fix the reference answer (its solution cell), its course.check{checks}, or the "
            "reference in solutions/."
        ]
        for s in auto
        if s.points != s.max_points
    ]
    problems = [line for lines in failed for line in lines]
    if result.status in (Status.CRASHED, Status.TIMEOUT, Status.INVALID, Status.MISSING_ANSWER):
        problems.append(
            f"the reference notebook ended '{result.status}': "
            f"{'; '.join(result.notes)}. Run it in Jupyter and fix the cell that "
            "fails."
        )
    earned = sum(s.points for s in auto if s.points is not None)
    return problems, f"{earned:g} of {sum(s.max_points for s in auto):g} autograded points"


def variant_problems(ps: ProblemSet, results: Path, scratch: Path) -> list[str]:
    """Grade generic wrong answers and the declared equivalent forms against the reference's
    ``results`` (:func:`reference_problems`' run): a problem for each that scores as it must
    not."""
    from autograder.authoring.variants import score_equivalent_forms, score_generic_variants
    from autograder.checks.registry import equivalent_forms

    exemptions = equivalent_forms(ps)  # declared in the notebook, and the module's
    checks = f"its course.check, or the Python check in {ps.course.checks_label(ps.name)}"
    tighten = (
        f" (tighten the check: a tolerance or a case of {checks}; or state the symmetry the "
        "answer may have: a declared compare such as rows_up_to_sign, or EQUIVALENT_FORMS of a "
        "Python check)"
    )
    loosen = (
        " (a correct answer in an equivalent form must keep its points: loosen the check, a "
        f"tolerance of {checks}, or change the case that makes the forms differ)"
    )
    generic = score_generic_variants(ps, results, scratch / "generic", exemptions)
    forms = score_equivalent_forms(ps, results, scratch / "forms", exemptions)
    return [p + tighten for p in generic] + [p + loosen for p in forms]


def graded_problems(ps: ProblemSet) -> list[str]:
    """Both steps on ``ps`` (on each of :func:`sample_variants`), in a scratch folder: every
    problem, each named with its variant (a problem said in the same words for several
    students, with the first one's), or none."""
    found: list[str] = []
    said: set[str] = set()
    for sample in sample_variants(ps):
        label = variant_label(sample)
        for problem in _sample_problems(sample):
            if problem not in said:  # the same words for another student: said once
                said.add(problem)
                found.append(problem + label)
    return found


def _sample_problems(ps: ProblemSet) -> list[str]:
    """Both steps on one problem set (one student's variant), in a scratch folder."""
    with tempfile.TemporaryDirectory(prefix=f"graded-{ps.name}-") as folder:
        scratch = Path(folder)
        found, _ = reference_problems(ps, scratch / "reference")
        if found:  # the wrong answers are judged against the reference's results
            return found
        return variant_problems(ps, scratch / "reference" / "results", scratch)
