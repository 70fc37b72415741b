"""What a sandboxed execution is given and what it returns: the configuration, the result, the
error a grader sees when the sandbox cannot be built, and their defaults."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder import settings
from autograder.status import Status
from coursedata.grading import ONE_THREAD

__all__ = ["SandboxConfig", "ExecutionResult", "SandboxError", "kernel_environment", "PROJECT_ROOT"]

PROJECT_ROOT = settings.ROOT
"""The course's root folder, hidden from student code."""

_MiB = 2**20


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


#: A folder holding one of these is a checkout of a project like this one (the grader, the course
#: and its reference): hidden whole, wherever the interpreter's path names it.
_PROJECT_MARKS = ("autograder", "solutions", "course")


def _project_trees() -> list[Path]:
    """Every folder on this interpreter's path that is a project checkout (an editable install of
    another checkout, a ``PYTHONPATH`` entry), outside the Python installation."""
    prefixes = {_real(p) for p in (sys.prefix, sys.base_prefix)}
    found = []
    for entry in sys.path:
        folder = _real(entry or ".")
        if any(folder == p or p in folder.parents for p in prefixes) or folder == Path("/"):
            continue
        if any((folder / mark).is_dir() for mark in _PROJECT_MARKS):
            found.append(folder)
    return found


def _default_hidden_paths() -> tuple[Path, ...]:
    return (
        PROJECT_ROOT,
        *_project_trees(),
        settings.COURSE_DIR,
        Path.home(),
        Path("/root"),
        Path("/home"),
        Path("/run"),
        Path("/mnt"),
        Path("/media"),
        Path("/srv"),
        Path("/opt"),
    )


#: The names of the folders installed packages live in (a virtual environment's, the system's).
_SITE_FOLDERS = ("site-packages", "dist-packages")


def _site_folders() -> list[Path]:
    """Every folder of installed packages on this interpreter's path, wherever it lives: a
    virtual environment's ``site-packages`` named by a ``.pth`` file or lying under ``/tmp`` or
    a hidden folder (a checkout's own ``.venv`` in a private temporary folder) is bound back, or
    the kernel would not find ipykernel there."""
    return [Path(p) for p in sys.path if p and Path(p).name in _SITE_FOLDERS and Path(p).is_dir()]


def _default_visible_paths() -> tuple[Path, ...]:
    return (
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(sys.base_exec_prefix),
        *_site_folders(),
        PROJECT_ROOT / "coursedata",
    )


#: The grader's settings of its arithmetic that a kernel keeps: the OpenBLAS kernel forced on this
#: processor (some processors need one), NumPy's vector loops, MKL's code path. Student code then
#: rounds as the reference it is compared with does, in the grader's own process.
ARITHMETIC_SETTINGS = (
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "NPY_DISABLE_CPU_FEATURES",
    "NPY_ENABLE_CPU_FEATURES",
    "MKL_CBWR",
    "MKL_ENABLE_INSTRUCTIONS",
)


def kernel_environment() -> dict[str, str]:
    """The environment of a grading kernel besides its results folder (see SandboxConfig.env).

    Returns
    -------
    dict of str to str
        Matplotlib's Agg backend, one BLAS/OpenMP thread (parallel grading workers share the
        cores fairly, and the thread count stays well inside ``max_processes``), a fixed hash
        seed, and those of :data:`ARITHMETIC_SETTINGS` the grader's environment sets.
    """
    return {
        "MPLBACKEND": "Agg",
        **ONE_THREAD,
        "PYTHONHASHSEED": "0",
        **{name: os.environ[name] for name in ARITHMETIC_SETTINGS if name in os.environ},
    }


@dataclass(frozen=True)
class SandboxConfig:
    """Limits and visibility of a sandboxed kernel.

    Parameters
    ----------
    cell_timeout_s : float, default :data:`autograder.settings.CELL_TIMEOUT_S` (30)
        Wall time of one cell; the cell is then interrupted and fails, later cells still run.
    notebook_timeout_s : float, default :data:`autograder.settings.NOTEBOOK_TIMEOUT_S` (300)
        Wall time of all cells together (the kernel's start-up is not counted); the kernel is then
        killed and the status is ``"timeout"``.
    startup_timeout_s : float, default 60
        Time the kernel may take to start; exceeding it raises :class:`SandboxError`.
    memory_mb : int, default :data:`autograder.settings.MEMORY_MB` (2048)
        Address-space limit of each process in the sandbox (``RLIMIT_AS``).
    max_processes : int, default 64
        Processes plus threads the sandbox may hold at once (``RLIMIT_NPROC``); an idle kernel
        uses about 10.
    max_file_mb : int, default 64
        Largest file the kernel may write (``RLIMIT_FSIZE``).
    tmp_mb : int, default 64
        Size of the private ``/tmp`` and of ``/dev/shm`` (each), which live in memory.
    max_output_bytes : int, default 1_000_000
        Output (text, images, tracebacks) kept in the executed notebook, all cells together;
        once it is used up, later output is dropped (errors keep their name, not traceback).
    hidden_paths : tuple of Path
        Folders replaced by an empty read-only folder. Paths that do not exist are ignored. The
        default is the project root, the course folder (:data:`autograder.settings.COURSE_DIR`,
        which may live elsewhere), home folders, ``/run``, ``/mnt``, ``/media``, ``/srv`` and
        ``/opt``; the parent of the working folder is always hidden too unless it is a top-level
        folder.
    hidden_packages : tuple of str, default ("solutions", "autograder")
        Top-level packages whose installed folder is hidden wherever it is.
    visible_paths : tuple of Path
        Folders bound back read-only at their own path, even under a hidden folder: by default
        the virtual environment, the Python installation, every folder of installed packages on
        the interpreter's path (``site-packages``, ``dist-packages``) and the ``coursedata``
        package.
    python_path : tuple of Path, default (PROJECT_ROOT,)
        ``PYTHONPATH`` inside the sandbox, so that packages bound back from the project root
        import under their usual name.
    env : Mapping of str to str
        Extra environment of the kernel; everything else from the grader's environment is
        cleared. By default: ``MPLBACKEND=Agg``, one BLAS/OpenMP thread, ``PYTHONHASHSEED=0``.
    python : str, default sys.executable
        The Python interpreter that runs the kernel (it needs ``ipykernel``).
    warm : bool, default True
        Fork each kernel from this process's warm zygote (:mod:`autograder.sandbox.warm`): a
        fresh sandbox of its own per execution, with the imports already done. Where a warm
        sandbox cannot be built (an unprivileged grader, an old Linux), the execution falls back
        to a cold sandbox (a new bubblewrap and interpreter) and logs why; ``False`` always
        uses a cold one.
    preload : tuple of str, default ()
        Modules the warm zygote imports besides ipykernel's own
        (:data:`autograder.sandbox.warm.KERNEL_PRELOAD`); the grader gives the problem sets'
        (:func:`autograder.run.preload.grading_preload`). Every kernel then starts with them
        imported, which also makes its ``fork()`` as slow as after importing them.
    container : bool, default False
        The *container mode*, for a machine where bubblewrap cannot create namespaces (a Docker
        container under its default seccomp profile, as Gradescope's: containers/bubblewrap
        #505). No bwrap: the kernel runs as a fresh unprivileged user (the grader must be root)
        with the same resource and time limits and a cleared environment; what it must not read
        is kept from it by the file permissions the caller sets (the hidden folders must not be
        readable by others), and every process of its user is killed when it ends. Not kept: the
        read-only view of the file system, the private ``/tmp``, and the network, pid, IPC and
        host-name namespaces (:data:`autograder.sandbox.execute.CONTAINER_GAPS`). ``warm`` is
        ignored.
    """

    cell_timeout_s: float = settings.CELL_TIMEOUT_S
    notebook_timeout_s: float = settings.NOTEBOOK_TIMEOUT_S
    startup_timeout_s: float = 60
    memory_mb: int = settings.MEMORY_MB
    max_processes: int = 64
    max_file_mb: int = 64
    tmp_mb: int = 64
    max_output_bytes: int = 1_000_000
    hidden_paths: tuple[Path, ...] = field(default_factory=_default_hidden_paths)
    hidden_packages: tuple[str, ...] = ("solutions", "autograder")
    visible_paths: tuple[Path, ...] = field(default_factory=_default_visible_paths)
    python_path: tuple[Path, ...] = (PROJECT_ROOT,)
    env: Mapping[str, str] = field(default_factory=kernel_environment)
    python: str = sys.executable
    warm: bool = True
    preload: tuple[str, ...] = ()
    container: bool = False

    def __post_init__(self) -> None:
        for name in (
            "cell_timeout_s",
            "notebook_timeout_s",
            "startup_timeout_s",
            "memory_mb",
            "max_processes",
            "max_file_mb",
            "tmp_mb",
            "max_output_bytes",
        ):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise ValueError(f"SandboxConfig.{name} must be a positive number, got {value!r}")


@dataclass
class ExecutionResult:
    """The outcome of :func:`autograder.sandbox.execute_notebook`.

    Attributes
    ----------
    notebook : nbformat.NotebookNode
        The executed copy of the notebook (the caller's notebook is not modified). Cells that did
        not run have no outputs.
    status : Status
        ``OK``, ``TIMEOUT`` or ``CRASHED``; see :mod:`autograder.sandbox`.
    message : str
        What happened, for a human.
    cell_timeouts : list of int
        Indices of the cells interrupted by the per-cell time limit.
    output_truncated : bool
        Whether output was dropped because of ``max_output_bytes``.
    removed_files : list of str
        Paths, relative to the working folder, of the symbolic links, pipes and sockets the
        kernel left there; they were deleted so the grader only finds regular files and folders.
    elapsed_s : float
        Wall time of the whole execution, kernel start-up included.
    timings : dict of str to float
        ``start_s``, the seconds until the kernel was ready (a zygote's start included, when
        one had to start), and ``execute_s``, the seconds the cells took.
    limits_reached : list of str
        The limits of the whole submission (its control group: :mod:`autograder.sandbox.cgroup`)
        it reached, each in words naming the limit.
    """

    notebook: nbformat.NotebookNode
    status: Status
    message: str
    cell_timeouts: list[int] = field(default_factory=list)
    output_truncated: bool = False
    removed_files: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    limits_reached: list[str] = field(default_factory=list)


class SandboxError(RuntimeError):
    """The sandbox cannot be built or its kernel cannot start (a grader-side problem)."""
