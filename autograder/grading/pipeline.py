"""Grade one submission: every step it goes through, in order.

A submission is graded by running these steps (:data:`STEPS`) on its :class:`Grading`, the state
each step takes and gives back with its own part filled in:

1. :func:`parse` reads the bytes handed in, once, into a notebook. A file that is no notebook
   stops here: status ``invalid-notebook``, every autograded cell 0.
2. :func:`assemble` rebuilds it on the source notebook's skeleton
   (:meth:`autograder.grading.problemset.ProblemSet.assemble`): only the answer cells and the cells the
   student added are theirs; instructions, tests and hidden checks come from the source.
3. :func:`fingerprint_code` fingerprints the code the student wrote, for the class's similarity
   page (:func:`autograder.grading.similarity.code_of`); no grade depends on it.
4. :func:`execute` writes the declared cases' inputs into a scratch results folder
   (:func:`autograder.checks.declared.write_inputs`) and runs the rebuilt notebook with the
   executor (the sandbox in production, :mod:`autograder.grading.executors`); its hidden cells record
   the answers there.
5. :func:`sign` sums up what each graded cell recorded, for the report's grouping of mistakes
   (:func:`autograder.grading.recorded.signatures`), before any check reads the values; no grade depends
   on it.
6. :func:`judge` applies the problem set's rules to what ran (:func:`autograder.grading.rulebook.judge`).
7. :func:`score` scores the recorded answers with the trusted checks, outside the kernel
   (:func:`autograder.grading.scoring.score_results`).
8. :func:`diagnose` says once why answers are missing (:func:`autograder.grading.diagnose.explain`) and
   decides the status.
9. :func:`conceal` clears what the student reads (messages, notes) of hidden tests' source
   and hidden inputs' values, whatever the student's exception text carried
   (:mod:`autograder.grading.conceal`).
10. :func:`sanitize` makes the formgrader's copies of the submitted and the executed notebook safe
   to open (:func:`autograder.grading.sanitize.formgrader_copies`).

:func:`grade` runs the steps in a scratch folder of its own and never raises for anything a
submission does: once a step has decided the status before :func:`diagnose` (a file that is no
notebook; a step that raised, a fault of the grader), only :func:`conceal` and :func:`sanitize` still run.
:func:`to_record` turns the finished state into the record the coordinator writes
(:mod:`autograder.run.output`).

What each submission costs is paid once: the problem set is loaded once per process and passed
down (the coordinator's, :func:`autograder.run.batch.grade_class`; each worker's,
:func:`autograder.run.task.problem_set_for`), the bytes are parsed once (the similarity page and the
formgrader's copies use this parse), and the recorded answers are read once
(:class:`autograder.checks.Answers` keeps them) for the signatures and the checks. Around this
module, :func:`autograder.run.task.grade_task` is the task a worker runs, and
:func:`autograder.run.batch.grade_class` grades a class (collect, schedule, write).
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TypeVar

import nbformat

from autograder import settings
from autograder.checks import Answers
from autograder.checks.declared import declared_cases, write_inputs
from autograder.checks.personal import identity_problem, write_parameters
from autograder.grading.conceal import secrets_of, without_counts, without_error_messages
from autograder.grading.diagnose import explain, name_cells
from autograder.grading.executors import Executor
from autograder.grading.problemset import Assembly, InvalidNotebook, ProblemSet, read_notebook_bytes
from autograder.grading.record import Record
from autograder.grading.recorded import signatures
from autograder.grading.rulebook import LOG_NAME, Verdict, kernel_env
from autograder.grading.rulebook import judge as judge_rules
from autograder.grading.sanitize import formgrader_copies
from autograder.grading.scoring import CellScore, score_results
from autograder.grading.similarity import StudentCode, code_of
from autograder.sandbox import disk
from autograder.sandbox.config import ExecutionResult
from autograder.sandbox.workdir import remove_tree
from autograder.status import Status
from coursedata.grading import RESULTS_ENV

__all__ = ["Grading", "STEPS", "grade", "to_record", "zero_scores", "GRADER_FAILED"]

#: What a student reads where the grader failed on their submission.
GRADER_FAILED = (
    "not graded yet: the grader failed on this submission; your instructor has been told"
)


@dataclass
class Grading:
    """One submission on its way through :data:`STEPS`; each step fills in its part.

    Attributes
    ----------
    ps : ProblemSet
        The problem set, loaded once per run (per worker process) and passed down.
    data : bytes
        The file handed in, untrusted.
    workdir : Path
        The scratch folder the notebook runs in; its ``results`` folder receives the answers.
    executor : callable
        ``executor(nb, workdir, env) -> ExecutionResult`` (:mod:`autograder.grading.executors`).
    submitted : NotebookNode or None
        The parsed submission (:func:`parse`); None when it is no notebook.
    assembly : Assembly or None
        The submission rebuilt on the source (:func:`assemble`).
    code : StudentCode or None
        What the student wrote, fingerprinted (:func:`fingerprint_code`).
    run : ExecutionResult or None
        How the rebuilt notebook ran (:func:`execute`).
    answers : Answers or None
        The answers its hidden cells recorded, read once, shared by :func:`sign` and :func:`score`.
    signatures : dict
        ``{grade_id: signature}`` of the recorded values (:func:`sign`), for the report.
    verdict : Verdict
        What the problem set's rules cost it (:func:`judge`).
    scores : list of CellScore
        One per graded cell, in notebook order (:func:`score`, reworded by :func:`diagnose`).
    notes : list of str
        For the student and the instructor: repairs, crashes, broken rules, causes.
    status : Status or None
        Decided by :func:`diagnose` (or :data:`Status.INVALID` by :func:`parse`).
    copies : dict or None
        The formgrader's sanitised copies (:func:`sanitize`).
    timings : dict
        Seconds per phase: ``start_s`` and ``execute_s`` (the executor's), ``score_s`` (the
        rules and the checks).
    expected : dict
        For a problem set with variants, the values the student's written answers should state
        for their numbers (:attr:`ProblemSet.expected_values`, made by :func:`judge`).
    fault : str or None
        The traceback of a step that raised: a fault of the grader, for the instructor only.
    capped : bool
        Whether :attr:`workdir` is a size-capped tmpfs (:mod:`autograder.sandbox.disk`).
    """

    ps: ProblemSet
    data: bytes
    workdir: Path
    executor: Executor
    submitted: nbformat.NotebookNode | None = None
    assembly: Assembly | None = None
    code: StudentCode | None = None
    run: ExecutionResult | None = None
    answers: Answers | None = None
    signatures: dict[str, str] = field(default_factory=dict)
    verdict: Verdict = field(default_factory=Verdict)
    scores: list[CellScore] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    status: Status | None = None
    copies: dict | None = None
    timings: dict[str, float] = field(default_factory=dict)
    expected: dict = field(default_factory=dict)
    fault: str | None = None
    capped: bool = False

    @property
    def results(self) -> Path:
        """The folder the hidden cells record into."""
        return self.workdir / "results"

    @property
    def executed(self) -> nbformat.NotebookNode | None:
        """The notebook as it ran (with its hidden checks: for the instructor only)."""
        return self.run.notebook if self.run is not None else None

    @property
    def flags(self) -> list[str]:
        """What a person should look at (:func:`autograder.grading.rulebook.judge`); no points."""
        return self.verdict.flags

    @property
    def breaches(self) -> list:
        """The graded functions that broke the problem set's rules (their cells scored 0)."""
        return self.verdict.breaches

    @property
    def grader_error(self) -> str | None:
        """The grader's faults on this submission (a step's or a check's traceback), or None."""
        return self.fault or "\n".join(s.error for s in self.scores if s.error) or None

    @property
    def total(self) -> float:
        return sum(s.points or 0.0 for s in self.scores)

    @property
    def max_total(self) -> float:
        return sum(s.max_points for s in self.scores)


def zero_scores(ps: ProblemSet, message: str) -> list[CellScore]:
    """Every graded cell of ``ps`` at 0 with ``message`` (a hand-graded cell: no score yet)."""
    return [
        CellScore(
            c.grade_id,
            0.0 if c.autograded else None,
            c.points,
            message if c.autograded else "graded by hand",
        )
        for c in ps.grade_cells
    ]


# The steps, in order. Each takes the state and returns it with its own part filled in.

_Part = TypeVar("_Part")


def _filled(part: _Part | None, by: str) -> _Part:
    """``part`` of the state, which the earlier step ``by`` filled in: :func:`grade` runs a
    step only while no earlier step has decided the status, so every earlier step succeeded."""
    assert part is not None, f"{by} fills this in before any later step runs"
    return part


def parse(g: Grading) -> Grading:
    """Read the submitted bytes into a notebook, once; a file that is no notebook is
    ``invalid-notebook`` and every autograded cell scores 0 with the reason."""
    try:
        g.submitted = read_notebook_bytes(g.data)
    except InvalidNotebook as exc:
        g.status, g.scores, g.notes = Status.INVALID, zero_scores(g.ps, str(exc)), [str(exc)]
    return g


def assemble(g: Grading) -> Grading:
    """Put the student's answer cells (and added cells) into the source's skeleton."""
    g.assembly = g.ps.assemble(_filled(g.submitted, "parse"))
    g.notes += g.assembly.notes
    return g


def fingerprint_code(g: Grading) -> Grading:
    """Fingerprint the code of the answer cells and of the cells the student added, for the
    similarity page (the student is named by the caller); a failure here (never of the grading)
    leaves it to the similarity page to read the submission itself."""
    try:
        g.code = code_of(g.ps, "", _filled(g.assembly, "assemble").notebook)
    except Exception:  # noqa: BLE001 - a page for a person must not fail a grade
        g.code = None
    return g


def _removed(g: Grading, run: ExecutionResult) -> list[str]:
    """The names of the files of the results folder that ``run``'s sandbox removed after it, as
    not regular files (its paths are relative to the working folder)."""
    folder = PurePosixPath(g.results.relative_to(g.workdir))
    return [p.name for p in map(PurePosixPath, run.removed_files) if p.parent == folder]


def execute(g: Grading) -> Grading:
    """Run the rebuilt notebook on the declared cases' inputs (written into
    :attr:`Grading.results` first); its hidden cells record the answers there (the rules' log
    beside them)."""
    g.results.mkdir(parents=True, exist_ok=True)
    nb = _filled(g.assembly, "assemble").notebook
    env = {RESULTS_ENV: str(g.results), **kernel_env(g.ps, nb, g.results / LOG_NAME)}
    write_inputs(g.ps.source, g.results)  # the declared cases' inputs, for the hidden cells
    if g.ps.parameters is not None:  # the student's own numbers, for the notebook's setup
        write_parameters(g.ps.shown_parameters, g.results)
    g.run = run = g.executor(nb, g.workdir, env)
    g.answers = Answers(g.ps.name, g.results, declared_cases(g.ps.source), _removed(g, run))
    g.timings.update(g.run.timings)
    if g.run.message:
        g.notes.append(name_cells(g.run.message, nb, g.ps.solution_ids))
    if g.capped and disk.is_full(g.workdir):
        g.notes.append(
            f"your notebook filled its working folder (the limit is {settings.WORK_MB} MB and "
            f"{settings.WORK_INODES:,} files and folders): writes past it failed"
        )
    return g


def sign(g: Grading) -> Grading:
    """Sum up the recorded values per graded cell for the report; a failure here (never of the
    grading) gives no signatures."""
    try:
        g.signatures = signatures(g.ps, g.answers)
    except Exception:  # noqa: BLE001 - a summary for the report must not fail a grade
        g.signatures = {}
    return g


def judge(g: Grading) -> Grading:
    """Apply the problem set's rules to the notebook that ran (its log in the results folder)."""
    start = time.perf_counter()
    notebook = _filled(g.assembly, "assemble").notebook
    g.verdict = judge_rules(g.ps, notebook, g.results / LOG_NAME)
    if g.ps.student is not None:  # a problem set with variants: whose identity it says
        g.expected = g.ps.expected_values
        problem = identity_problem(notebook, g.ps.student)
        if problem is not None:
            g.verdict.flags.append(problem)
            g.verdict.notes.append(problem)
    g.timings["score_s"] = time.perf_counter() - start
    return g


def score(g: Grading) -> Grading:
    """Score every graded cell from the recorded answers with the trusted checks."""
    start = time.perf_counter()
    executed = _filled(g.run, "execute").notebook
    g.scores = score_results(g.ps, g.answers, executed, g.verdict.tainted)
    g.timings["score_s"] = g.timings.get("score_s", 0.0) + time.perf_counter() - start
    return g


def diagnose(g: Grading) -> Grading:
    """Say once why answers are missing (rewording the checks' messages), and decide the
    status."""
    run = _filled(g.run, "execute")
    forbidden = g.ps.rules.every_forbidden() if g.ps.rules is not None else ()
    causes, g.scores = explain(run.notebook, run.status, g.scores, g.ps.solution_ids, forbidden)
    g.notes += g.verdict.notes + causes
    g.status = _status(g)
    return g


def conceal(g: Grading) -> Grading:
    """Clear what the student reads (every score's message, every note) of hidden tests'
    source and hidden inputs' values, whatever text the student's code put there
    (:mod:`autograder.grading.conceal`)."""
    secrets = secrets_of(g.ps)

    def clear(text: str) -> str:
        # Every cell ran beside the hidden tests (their record lines, every case's inputs): an
        # exception's text, which the student's code writes, may carry them re-encoded.
        return secrets.conceal(without_counts(without_error_messages(text)))

    g.scores = [dataclasses.replace(s, message=clear(s.message)) for s in g.scores]
    g.notes = [clear(n) for n in g.notes]
    return g


def sanitize(g: Grading) -> Grading:
    """The formgrader's copies of the notebook handed in and of the notebook as it ran, made
    safe to open in the instructor's browser."""
    g.copies = formgrader_copies(g.submitted, g.executed)
    return g


#: The steps of :func:`grade`, in order (see the module docstring).
STEPS: tuple[Callable[[Grading], Grading], ...] = (
    parse,
    assemble,
    fingerprint_code,
    execute,
    sign,
    judge,
    score,
    diagnose,
    conceal,
    sanitize,
)


def _status(g: Grading) -> Status:
    if any(s.error for s in g.scores):
        return Status.GRADER_ERROR
    run = _filled(g.run, "execute")
    if run.status != Status.OK:
        return Status(run.status)
    if _filled(g.assembly, "assemble").missing:
        return Status.MISSING_ANSWER
    manual = any(not c.autograded for c in g.ps.grade_cells)
    return Status.AWAITING_MANUAL if manual else Status.GRADED


def grade(
    ps: ProblemSet | str,
    data: bytes,
    executor: Executor,
    *,
    workdir: str | Path | None = None,
    student: str | None = None,
) -> Grading:
    """Run :data:`STEPS` on the notebook ``data``.

    Once a step has decided the status before :func:`diagnose` (a file that is no notebook, a
    fault of the grader), the steps up to :func:`conceal` are skipped.

    Parameters
    ----------
    ps : ProblemSet or str
        The problem set the notebook answers (loaded, or a name of the default course).
    data : bytes
        The submitted file, untrusted.
    executor : callable
        ``executor(nb, workdir, env) -> ExecutionResult``; see :mod:`autograder.grading.executors`.
    workdir : path-like, optional
        Scratch folder for the run (default: a folder of its own below a temporary folder,
        removed afterwards; the sandbox hides the parent).
    student : str, optional
        The student's identity from the LMS: a problem set with per-student variants is graded
        on that student's (:meth:`ProblemSet.for_student`); any other ignores it.

    Returns
    -------
    Grading
        The finished state. Never raises for anything the submission contains; a step that
        raises (a fault of the grader) gives ``grader-error``, every autograded cell 0 with
        :data:`GRADER_FAILED`, and the traceback in :attr:`Grading.fault`.
    """
    ps = ps if isinstance(ps, ProblemSet) else ProblemSet(ps)
    ps.course.use_code()  # the declarations' inputs and references name the course's own Python
    tmp = tempfile.mkdtemp(prefix="grade-")
    capped = False
    try:
        work = Path(workdir) if workdir is not None else Path(tmp) / "submission"
        if workdir is None:  # a folder of its own: capped in size and files (a root grader)
            work.mkdir()
            capped = disk.cap_folder(work, settings.WORK_MB, settings.WORK_INODES)
        g = Grading(ps, data, work, executor, capped=capped)
        try:  # the student's own numbers; a missing course secret is the grader's fault
            g.ps = ps.for_student(student) if student is not None else ps
        except Exception:  # noqa: BLE001 - a grader fault must not lose the batch
            g = _faulted(g, ps)
        for step in STEPS:
            if g.status is not None and step not in (conceal, sanitize):
                continue
            try:
                g = step(g)
            except Exception:  # noqa: BLE001 - a grader fault must not lose the batch
                if step is sanitize:
                    raise
                g = _faulted(g, ps)
    finally:
        if capped:
            disk.release(work)
        remove_tree(tmp)  # whatever the notebook built there (any depth, type or owner)
    return g


def _faulted(g: Grading, ps: ProblemSet) -> Grading:
    """``g`` after a fault of the grader (the exception being handled): ``grader-error``, every
    autograded cell of ``ps`` 0 with :data:`GRADER_FAILED`, the traceback for the instructor."""
    return Grading(
        ps,
        g.data,
        g.workdir,
        g.executor,
        submitted=g.submitted,
        code=g.code,
        status=Status.GRADER_ERROR,
        scores=zero_scores(ps, GRADER_FAILED),
        fault=traceback.format_exc(),
        capped=g.capped,
    )


def to_record(g: Grading, student_id: str, started_at: float, elapsed_s: float) -> Record:
    """The record of a finished :class:`Grading` (see :func:`autograder.run.task.grade_task`)."""
    assert g.status is not None, "a finished grading has a status: parse, diagnose or a fault's"
    return Record.of_scores(
        student_id,
        g.ps.name,
        g.status,
        g.scores,
        sha256=hashlib.sha256(g.data).hexdigest(),
        notes=g.notes,
        elapsed_s=round(elapsed_s, 3),
        started_at=started_at,  # wall clock, for the coordinator's waiting time
        timings={k: round(v, 3) for k, v in g.timings.items()},
        copies=g.copies,  # the formgrader's, sanitised here on the worker; for the instructor
        grader_error=g.grader_error,  # a traceback for the instructor, never the student
        flags=tuple(g.flags),  # for a person to look at (the problem set's rules); no points
        breaches=tuple(g.breaches),  # functions that broke the rules
        recorded=g.signatures,
        variant=g.ps.shown_parameters,  # the student's numbers, and what their answers state
        expected=g.expected,
        code=_code(g, student_id),
    )  # for the similarity page; the coordinator's only


def _code(g: Grading, student_id: str) -> StudentCode | None:
    """What ``student_id`` wrote, for the similarity page: nothing to compare in a file that is
    no notebook; None where it was not fingerprinted (the page reads the submission itself)."""
    if g.code is not None:
        return dataclasses.replace(g.code, student=student_id)
    return StudentCode(student_id) if g.status is Status.INVALID else None
