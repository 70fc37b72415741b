"""Grade one submission: a pure task from notebook bytes to a result record.

``grade_submission`` parses the submitted notebook, rebuilds it on the source's skeleton
(:meth:`ProblemSet.assemble`), runs it with an executor (the sandbox in production), and scores the
arrays its hidden cells recorded with the trusted checks (:mod:`autograder.scoring`). It touches
no shared file: the caller owns the gradebook and the output folder, so the same task runs in a
local process pool or on a cluster.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

import nbformat

from autograder.checks.declared import write_inputs
from coursedata.grading import RESULTS_ENV
from autograder.diagnose import explain
from autograder.problemset import InvalidNotebook, ProblemSet, read_notebook_bytes
from autograder.recorded import signatures
from autograder.rulebook import LOG_NAME, judge, kernel_env
from autograder.sandbox.config import ExecutionResult
from autograder.scoring import CellScore, score_results
from autograder.status import Status

__all__ = ["GradeResult", "grade_submission", "grade_and_sign"]


class Executor(Protocol):
    def __call__(self, nb: nbformat.NotebookNode, workdir: Path, env: dict) -> ExecutionResult: ...


@dataclass
class GradeResult:
    """The outcome of grading one submission.

    Attributes
    ----------
    status : Status
        One of :data:`autograder.status.RECORDED`: ``graded`` or ``awaiting-manual-grading``
        when every cell that could be scored was; anything else is a reason the total may not
        be final.
    scores : list of CellScore
        One per graded cell of the problem set, in notebook order.
    notes : list of str
        Messages for the student and the instructor (repairs, crashes, timeouts, broken rules).
    executed : nbformat.NotebookNode or None
        The notebook as it ran (with hidden checks: for the instructor's eyes only).
    flags : list of str
        What a person should look at (:func:`autograder.rulebook.judge`); no points depend on it.
    breaches : list of autograder.rulebook.Breach
        The graded functions that broke the problem set's rules (their cells scored 0).
    """

    problem_set: str
    status: str
    scores: list[CellScore]
    notes: list[str] = field(default_factory=list)
    executed: nbformat.NotebookNode | None = None
    timings: dict = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    breaches: list = field(default_factory=list)

    @property
    def total(self) -> float:
        return sum(s.points or 0.0 for s in self.scores)

    @property
    def max_total(self) -> float:
        return sum(s.max_points for s in self.scores)


def _zero_scores(problem_set: ProblemSet, message: str) -> list[CellScore]:
    return [CellScore(c.grade_id, 0.0 if c.autograded else None, c.points,
                      message if c.autograded else "graded by hand")
            for c in problem_set.grade_cells]


def grade_submission(problem_set: str | ProblemSet, data: bytes, executor: Executor, *,
                     workdir: str | Path | None = None) -> GradeResult:
    """Grade the notebook ``data`` (raw bytes of the submitted ``.ipynb``).

    Parameters
    ----------
    problem_set : str or ProblemSet
        Which problem set the notebook answers.
    data : bytes
        The submitted file, untrusted.
    executor : callable
        ``executor(nb, workdir, env) -> ExecutionResult``; see :mod:`autograder.sandbox`.
    workdir : path-like, optional
        Scratch folder for the run (created and removed here when not given).

    Returns
    -------
    GradeResult
        Never raises for anything the submission contains.
    """
    ps = problem_set if isinstance(problem_set, ProblemSet) else ProblemSet(problem_set)
    try:
        submitted = read_notebook_bytes(data)
    except InvalidNotebook as exc:
        return GradeResult(ps.name, Status.INVALID, _zero_scores(ps, str(exc)), [str(exc)])
    assembly = ps.assemble(submitted)
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        # A folder of its own below a folder of its own: the sandbox hides the parent.
        work = Path(workdir) if workdir is not None else Path(tmp) / "submission"
        results = work / "results"
        results.mkdir(parents=True, exist_ok=True)
        log = results / LOG_NAME
        env = {RESULTS_ENV: str(results), **kernel_env(ps, assembly.notebook, log)}
        write_inputs(ps.source, results)  # the declared cases' inputs, for the hidden cells
        run = executor(assembly.notebook, work, env)
        start = time.perf_counter()
        verdict = judge(ps, assembly.notebook, log)
        scores = score_results(ps, results, run.notebook, verdict.tainted)
        timings = {**run.timings, "score_s": time.perf_counter() - start}
    causes, scores = explain(run.notebook, run.status, scores, ps.solution_ids)
    notes = list(assembly.notes)
    if run.message:
        notes.append(run.message)
    notes += verdict.notes + causes
    return GradeResult(ps.name, _status(ps, run, scores, assembly.missing), scores, notes,
                       run.notebook, timings, verdict.flags, verdict.breaches)


def _status(ps: ProblemSet, run: ExecutionResult, scores: list[CellScore],
            missing: list[str]) -> Status:
    if any(getattr(s, "error", None) for s in scores):
        return Status.GRADER_ERROR
    if run.status != Status.OK:
        return Status(run.status)
    if missing:
        return Status.MISSING_ANSWER
    manual = any(not c.autograded for c in ps.grade_cells)
    return Status.AWAITING_MANUAL if manual else Status.GRADED


def local_executor(timeout: float = 60.0, kernel_name: str = "python3") -> Callable:
    """An executor that runs the notebook in an ordinary, UNSANDBOXED kernel.

    Only for trusted notebooks (the instructor's own source, tests of the checks). Student
    submissions go through :func:`autograder.sandbox.sandboxed_executor`.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    def execute(nb, workdir: Path, env: dict) -> ExecutionResult:
        import os

        from coursedata.guard import KERNEL_ARGUMENT

        client = NotebookClient(nb, timeout=timeout, allow_errors=True, kernel_name=kernel_name,
                                extra_arguments=[KERNEL_ARGUMENT])
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            start = time.perf_counter()
            client.execute(cwd=str(workdir))
            return ExecutionResult(nb, Status.OK, "",
                                   timings={"execute_s": time.perf_counter() - start})
        except DeadKernelError as exc:
            return ExecutionResult(nb, Status.CRASHED, f"the kernel died: {exc}")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    return execute


def sandbox_executor(config=None) -> Callable:
    """An executor that runs the notebook in the bubblewrap sandbox (:mod:`autograder.sandbox`).

    The environment ``env`` given by :func:`grade_submission` (the results folder) is added to the
    sandbox's own, which is otherwise cleared; it is passed apart from the configuration, so every
    submission's kernel is forked from the same warm zygote.
    """
    from autograder.sandbox import SandboxConfig, execute_notebook

    base = config or SandboxConfig()

    def execute(nb, workdir: Path, env: dict) -> ExecutionResult:
        run = execute_notebook(nb, workdir, base, env=env)
        # A cell stopped at its own time limit is named by autograder.diagnose.
        return run if run.status != Status.OK else dataclasses.replace(run, message="")

    return execute


def grade_and_sign(ps: ProblemSet, data: bytes, executor) -> tuple:
    """:func:`grade_submission` in a scratch folder kept until the recorded values are summed up
    (:func:`autograder.recorded.signatures`): ``(GradeResult, signatures)``. A failure of the
    summary (never of the grading) gives no signatures."""
    with tempfile.TemporaryDirectory(prefix="grade-") as tmp:
        work = Path(tmp) / "submission"  # a folder of its own below one: as grade_submission's
        result = grade_submission(ps, data, executor, workdir=work)
        try:
            found = signatures(ps, work / "results")
        except Exception:  # noqa: BLE001 - a summary for the report must not fail a grade
            found = {}
    return result, found
