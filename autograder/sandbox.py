"""Run an untrusted notebook in a sandboxed Jupyter kernel.

A student's notebook is executed by :func:`execute_notebook` in an IPython kernel that runs inside
a `bubblewrap <https://github.com/containers/bubblewrap>`_ sandbox (``bwrap``, Debian package
``bubblewrap``). The grader drives the kernel with nbclient from its own, trusted process and
scores the results there; nothing the student's code prints or writes is trusted.

What the kernel sees
--------------------
- The host's file system read-only (``--ro-bind / /``), with an empty read-only tmpfs over every
  *hidden* folder: the project root (so :mod:`solutions`, ``course/source``,
  ``course/gradebook.db`` and the course notebooks are invisible), the course folder, the home folders, ``/run``
  (host sockets such as a Docker socket live there), ``/mnt``, ``/media``, ``/srv``, ``/opt``,
  the folder of any installed :mod:`solutions` or :mod:`autograder` package, and the parent of
  the working folder, so sibling submissions are invisible.
- Bound back read-only at their own paths: the virtual environment (``sys.prefix``), the Python
  installation (``sys.base_prefix``) and the ``coursedata`` package; the project root is on
  ``PYTHONPATH`` so ``import coursedata`` works while ``import solutions`` fails.
- The working folder read-write: the only place on the host it can change (symbolic links, pipes
  and sockets left there are deleted afterwards). A private, size-capped ``/tmp`` and
  ``/dev/shm`` vanish with the kernel; ``HOME`` is ``/tmp``.
- No network (``--unshare-net``; the grader talks to the kernel over Unix sockets in a private
  folder), its own process, IPC and host-name namespaces, a new session (no terminal), a cleared
  environment, and it dies with the grader (``--die-with-parent``).

Limits
------
Set with ``setrlimit`` in a tiny start-up step inside the sandbox, just before the kernel starts:
address space (``memory_mb``: a too-large allocation raises ``MemoryError``), file size
(``max_file_mb``), processes and threads (``max_processes``), no core files, and CPU seconds as a
backstop. Wall time is enforced by the grader: per cell (``cell_timeout_s``: the cell is
interrupted, gets a ``CellTimeoutError`` output, and later cells still run) and per notebook
(``notebook_timeout_s``: the kernel is killed and the status is ``"timeout"``). Captured output is
capped at ``max_output_bytes`` per notebook (the rest is dropped, with a note). A single output
message is bounded only by the kernel's memory limit: the grader holds it briefly before
truncating it.

``RLIMIT_NPROC`` counts all the processes and threads of a *user*, and Linux never enforces it
for the host's root user (not even inside a user namespace mapped to root). So when the grader
runs as root, the kernel drops to a fresh unprivileged user id (unique per execution, so parallel
executions do not share the count) after the sandbox is built; the working folder is handed to
that user for the run and given back afterwards. When the grader is an ordinary user, bwrap
creates a user namespace, in which Linux counts processes per namespace, so again each execution
has its own count.

Statuses
--------
``"ok"``
    Every cell ran. Cells may still have failed: exceptions (including ``SystemExit`` from
    ``sys.exit()``, which IPython catches), ``MemoryError`` and per-cell timeouts are error outputs
    of their cell; :attr:`ExecutionResult.cell_timeouts` lists the cells that were interrupted.
``"timeout"``
    The notebook's wall-time limit was reached, or a cell outlived its own limit and then ignored
    the interrupt for 10 s (a stuck kernel would only burn the rest of the notebook's time); the
    kernel was killed and later cells did not run.
``"crashed"``
    The kernel died (``os._exit``, a segmentation fault, a signal from a resource limit), or it
    sent messages the grader could not process; later cells did not run.

Student misbehaviour never raises. :class:`SandboxError` is raised only when the sandbox cannot be
built or the kernel cannot start, which is the grader's problem, not the student's.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import functools
import itertools
import json
import logging
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import zmq.asyncio
from jupyter_client import AsyncKernelManager
from jupyter_client.channels import AsyncZMQSocketChannel, Empty
from jupyter_client.kernelspec import KernelSpec
from nbclient import NotebookClient
from nbclient.exceptions import DeadKernelError

from autograder import settings

__all__ = ["SandboxConfig", "ExecutionResult", "SandboxError", "sandbox_available",
           "execute_notebook", "kernel_environment", "PROJECT_ROOT"]

log = logging.getLogger(__name__)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
"""The course's root folder, hidden from student code."""

_MiB = 2**20
# Unprivileged user ids for kernels started by a root grader: far above ordinary accounts and the
# usual subordinate-id ranges of containers. 64 ids per grader process (pid_max is at most 2**22).
_UID_BASE = 1_000_000_000
_uid_counter = itertools.count()
# How long a timed-out cell's kernel may take to honour the interrupt before it counts as stuck.
_INTERRUPT_GRACE_S = 10


def _default_hidden_paths() -> tuple[Path, ...]:
    return (PROJECT_ROOT, Path.home(), Path("/root"), Path("/home"), Path("/run"), Path("/mnt"),
            Path("/media"), Path("/srv"), Path("/opt"))


def _default_visible_paths() -> tuple[Path, ...]:
    return (Path(sys.prefix), Path(sys.base_prefix), Path(sys.exec_prefix),
            Path(sys.base_exec_prefix), PROJECT_ROOT / "coursedata")


def kernel_environment() -> dict[str, str]:
    """The environment of a grading kernel besides its results folder (see SandboxConfig.env)."""
    # One thread per BLAS library: parallel grading workers share the cores fairly, and the
    # thread count stays well inside ``max_processes``.
    return {"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}


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
        default is the project root, home folders, ``/run``, ``/mnt``, ``/media``, ``/srv`` and
        ``/opt``; the parent of the working folder is always hidden too unless it is a top-level
        folder.
    hidden_packages : tuple of str, default ("solutions", "autograder")
        Top-level packages whose installed folder is hidden wherever it is.
    visible_paths : tuple of Path
        Folders bound back read-only at their own path, even under a hidden folder: by default
        the virtual environment, the Python installation and the ``coursedata`` package.
    python_path : tuple of Path, default (PROJECT_ROOT,)
        ``PYTHONPATH`` inside the sandbox, so that packages bound back from the project root
        import under their usual name.
    env : Mapping of str to str
        Extra environment of the kernel; everything else from the grader's environment is
        cleared. By default: ``MPLBACKEND=Agg``, one BLAS/OpenMP thread, ``PYTHONHASHSEED=0``.
    python : str, default sys.executable
        The Python interpreter that runs the kernel (it needs ``ipykernel``).
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

    def __post_init__(self) -> None:
        for name in ("cell_timeout_s", "notebook_timeout_s", "startup_timeout_s", "memory_mb",
                     "max_processes", "max_file_mb", "tmp_mb", "max_output_bytes"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise ValueError(f"SandboxConfig.{name} must be a positive number, got {value!r}")


@dataclass
class ExecutionResult:
    """The outcome of :func:`execute_notebook`.

    Attributes
    ----------
    notebook : nbformat.NotebookNode
        The executed copy of the notebook (the caller's notebook is not modified). Cells that did
        not run have no outputs.
    status : {"ok", "timeout", "crashed"}
        See the module docstring.
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
    """

    notebook: nbformat.NotebookNode
    status: str
    message: str
    cell_timeouts: list[int] = field(default_factory=list)
    output_truncated: bool = False
    removed_files: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0


class SandboxError(RuntimeError):
    """The sandbox cannot be built or its kernel cannot start (a grader-side problem)."""


# Runs inside the sandbox before the kernel: drop to the sandbox user (root grader only), set the
# resource limits, then exec the kernel. Written without braces: the kernel command is formatted
# by jupyter_client, which substitutes ``{name}`` fields.
_START_STEP = """\
import os, resource, sys
uid = int(sys.argv[1])
if uid >= 0:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
for item in sys.argv[2].split(','):
    name, value = item.split('=')
    resource.setrlimit(getattr(resource, name), (int(value), int(value)))
os.umask(0o022)
os.execv(sys.argv[3], sys.argv[3:])
"""


def _real(path: str | os.PathLike[str]) -> Path:
    return Path(os.path.realpath(path))


def _package_folders(names: Iterable[str]) -> list[Path]:
    """Folders of installed top-level packages, found without importing them."""
    import importlib.util

    folders = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        locations = list(spec.submodule_search_locations or [])
        if not locations and spec.origin:
            locations = [os.path.dirname(spec.origin)]
        folders += [_real(p) for p in locations]
    return folders


def _sandbox_uid() -> int:
    """A fresh unprivileged user id for a root grader, or -1 (keep the grader's user)."""
    if os.geteuid() != 0:
        return -1
    return _UID_BASE + (os.getpid() % 2**22) * 64 + next(_uid_counter) % 64


def _mount_args(hidden: Iterable[Path], packages: Iterable[Path], visible: Iterable[Path],
                writable: Iterable[Path], tmp_bytes: int, blocker: Path) -> list[str]:
    """bwrap options for the file system: parents are mounted before their children.

    A hidden folder already inside another hidden folder is skipped (an empty folder would be
    importable as a namespace package); a hidden package folder gets ``blocker`` as its
    ``__init__.py``, so that importing it fails.
    """
    precedence = {"hide": 0, "package": 0, "scratch": 1, "ro": 2, "rw": 3}
    kinds: dict[Path, str] = {Path("/tmp"): "scratch"}
    for kind, paths in (("hide", hidden), ("package", packages), ("ro", visible),
                        ("rw", writable)):
        for path in paths:
            path = _real(path)
            if path == Path("/") or not path.exists():
                continue
            if path not in kinds or precedence[kind] > precedence[kinds[path]]:
                kinds[path] = kind
    order = sorted(kinds, key=lambda p: (len(p.parts), precedence[kinds[p]], str(p)))
    args: list[str] = []
    mounted: dict[Path, str] = {Path("/"): "ro"}
    for path in order:
        kind = kinds[path]
        parent = next(a for a in path.parents if a in mounted)
        if kind in ("hide", "package") and mounted[parent] in ("hide", "package", "scratch"):
            kinds[path] = "skip"  # already invisible
            continue
        if mounted[parent] in ("hide", "package", "scratch"):
            # bwrap would create the missing folders between a tmpfs and a mount point with
            # mode 0700, which an unprivileged kernel could not traverse.
            for rel in reversed(path.relative_to(parent).parents[:-1]):
                folder = parent / rel
                if folder not in mounted:
                    args += ["--perms", "0755", "--dir", str(folder)]
                    mounted[folder] = mounted[parent]
        if kind in ("hide", "package"):
            args += ["--perms", "0755", "--size", str(_MiB), "--tmpfs", str(path)]
            if kind == "package":
                args += ["--ro-bind", str(blocker), str(path / "__init__.py")]
        elif kind == "scratch":
            args += ["--perms", "1777", "--size", str(tmp_bytes), "--tmpfs", str(path)]
        elif kind == "ro":
            args += ["--ro-bind", str(path), str(path)]
        else:
            args += ["--bind", str(path), str(path)]
        mounted[path] = kind
    # Hidden folders become read-only once their mount points exist (not recursive).
    for path in order:
        if kinds[path] in ("hide", "package"):
            args += ["--remount-ro", str(path)]
    return args


def _hidden_folders(config: SandboxConfig, workdir: Path) -> tuple[list[Path], list[Path]]:
    """Hidden folders and hidden package folders; raise if ``workdir`` would expose one."""
    hidden = [_real(p) for p in config.hidden_paths]
    if len(workdir.parent.parts) > 2:  # not "/" or a top-level folder such as /srv
        hidden.append(workdir.parent)
    packages = _package_folders(config.hidden_packages)
    for path in hidden + packages:
        if path == workdir or workdir in path.parents:
            raise ValueError(f"the working folder {workdir} contains the hidden folder {path}")
    return hidden, packages


def _sandbox_argv(config: SandboxConfig, workdir: Path, tmp: Path, uid: int,
                  command: list[str]) -> list[str]:
    """The command line that runs ``command`` in the sandbox with the limits applied.

    ``tmp`` is a private folder of the executor; its ``run`` subfolder (for the kernel's
    sockets) is bound read-write into the sandbox.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed")
    hidden, packages = _hidden_folders(config, workdir)
    blocker = tmp / "hidden_package.py"
    blocker.write_text('raise ImportError("this package is not available in the sandbox")\n')
    blocker.chmod(0o644)
    argv = [bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--hostname", "sandbox"]
    if uid >= 0:
        # Privileged bwrap: no user namespace; the start-up step switches to ``uid``.
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += _mount_args(hidden, packages, config.visible_paths, [workdir, tmp / "run"],
                        config.tmp_mb * _MiB, blocker)
    argv += ["--perms", "1777", "--size", str(config.tmp_mb * _MiB), "--tmpfs", "/dev/shm"]
    env = {"HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
           "PATH": f"{Path(config.python).parent}:/usr/local/bin:/usr/bin:/bin",
           "PYTHONPATH": os.pathsep.join(str(p) for p in config.python_path),
           "IPYTHONDIR": "/tmp/.ipython", "MPLCONFIGDIR": "/tmp/.matplotlib",
           **dict(config.env)}
    argv += ["--clearenv"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    argv += ["--chdir", str(workdir)]
    limits = {"RLIMIT_AS": config.memory_mb * _MiB, "RLIMIT_NPROC": config.max_processes,
              "RLIMIT_FSIZE": config.max_file_mb * _MiB, "RLIMIT_CORE": 0,
              "RLIMIT_CPU": int(2 * config.notebook_timeout_s + config.startup_timeout_s) + 10}
    argv += ["--", config.python, "-I", "-S", "-c", _START_STEP, str(uid),
             ",".join(f"{k}={int(v)}" for k, v in limits.items())]
    return argv + command


def _walk(root: Path) -> list[Path]:
    paths = [root]
    for folder, dirs, files in os.walk(root):  # does not follow symbolic links
        paths += [Path(folder, name) for name in dirs + files]
    return paths


def _lend(root: Path, uid: int) -> dict[Path, tuple[int, int]]:
    """Give ``root`` and everything under it to ``uid``; return the previous owners."""
    owners = {}
    for path in _walk(root):
        info = path.lstat()
        owners[path] = (info.st_uid, info.st_gid)
        os.chown(path, uid, uid, follow_symlinks=False)
    return owners


def _remove_special_files(root: Path) -> list[str]:
    """Delete everything under ``root`` that is not a regular file or folder.

    A symbolic link left by the student could point the grader at a host file (the gradebook,
    the reference package), and a named pipe would block the grader reading it.
    """
    removed = []
    for path in _walk(root)[1:]:
        try:
            if not (stat.S_ISREG(path.lstat().st_mode) or stat.S_ISDIR(path.lstat().st_mode)):
                path.unlink()
                removed.append(str(path.relative_to(root)))
        except FileNotFoundError:
            pass
    return removed


def _take_back(root: Path, uid: int, owners: dict[Path, tuple[int, int]]) -> None:
    """Return what ``uid`` owns under ``root`` to its previous owner, new files to root's."""
    for path in _walk(root):
        try:
            if path.lstat().st_uid == uid:  # never touch what the sandbox user does not own
                os.chown(path, *owners.get(path, owners[root]), follow_symlinks=False)
        except OSError:
            pass


@functools.lru_cache(maxsize=None)
def sandbox_available() -> tuple[bool, str]:
    """Whether the sandbox can be built on this machine.

    Runs a trivial Python command in a sandbox built exactly as for a kernel.

    Returns
    -------
    available : bool
    reason : str
        The bwrap version when available, otherwise what is missing or what failed.
    """
    if not sys.platform.startswith("linux"):
        return False, f"the sandbox needs Linux namespaces; this is {sys.platform}"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return False, "bubblewrap is not installed (Debian/Ubuntu: apt-get install -y bubblewrap)"
    uid = _sandbox_uid()
    with tempfile.TemporaryDirectory(prefix="nbsbx-check-") as tmp:
        tmp = _real(tmp)
        for name in ("work", "run"):  # a private sibling of "work" would be hidden
            (tmp / name).mkdir()
            if uid >= 0:
                os.chown(tmp / name, uid, uid)
        probe = "import ipykernel, os; print('sandbox-ok', os.getuid())"
        argv = _sandbox_argv(SandboxConfig(), tmp / "work", tmp, uid,
                             [sys.executable, "-c", probe])
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap could not run: {exc}"
    if proc.returncode != 0 or "sandbox-ok" not in proc.stdout:
        return False, (f"a test sandbox failed (exit status {proc.returncode}): "
                       f"{proc.stderr.strip()[-500:]}")
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
    return True, f"{version} at {bwrap}"


class _SandboxKernelManager(AsyncKernelManager):
    """A kernel manager with an in-memory kernelspec that hands the connection file to the
    sandbox user."""

    def __init__(self, spec: KernelSpec, uid: int, **kwargs):
        super().__init__(**kwargs)
        self._sandbox_spec = spec
        self._sandbox_uid = uid

    @property
    def kernel_spec(self) -> KernelSpec:
        return self._sandbox_spec

    def write_connection_file(self, **kwargs) -> None:
        super().write_connection_file(**kwargs)
        if self._sandbox_uid >= 0:
            os.chown(self.connection_file, self._sandbox_uid, self._sandbox_uid)


class _KernelStuck(Exception):
    """A cell outlived its time limit and the kernel ignored the interrupt."""


class _SandboxClient(NotebookClient):
    """nbclient with an output budget, no widget state, and timed-out cells recorded."""

    def __init__(self, nb, km, *, max_output_bytes: int, **kwargs):
        self._token = uuid.uuid4().hex
        timeout = kwargs["timeout"]
        super().__init__(
            nb, km=km, interrupt_on_timeout=True,
            error_on_timeout={"ename": "CellTimeoutError", "traceback": [],
                              "evalue": f"the cell did not finish within {timeout:g} s",
                              "sandbox_token": self._token},
            # A tag in the student's notebook must not skip a cell.
            skip_cells_with_tag=f"never-skip-{self._token}", **kwargs)
        self._budget = max_output_bytes
        self.output_truncated = False
        self.cell_timeouts: list[int] = []
        self.current_cell: int | None = None
        self._idle = False
        self.on_cell_execute = self._note_cell
        self.on_cell_executed = self._note_executed

    def _note_cell(self, cell, cell_index) -> None:
        self.current_cell = cell_index
        self._idle = False

    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
            self._idle = True
        return super().process_message(msg, cell, cell_index)

    def _note_executed(self, cell, cell_index, execute_reply) -> None:
        content = (execute_reply or {}).get("content", {})
        if content.get("sandbox_token") == self._token:
            self.cell_timeouts.append(cell_index)
            cell.outputs.append(nbformat.v4.new_output(
                "error", ename="CellTimeoutError", evalue=content["evalue"], traceback=[
                    f"CellTimeoutError: {content['evalue']}; the kernel was interrupted"]))
            if not self._idle:  # still busy ``iopub_timeout`` seconds after the interrupt
                raise _KernelStuck(cell_index)

    def _note_dropped(self, outs) -> None:
        if not self.output_truncated:
            self.output_truncated = True
            outs.append(nbformat.v4.new_output(
                "stream", name="stderr",
                text="\n[sandbox: output limit reached; further output was dropped]\n"))

    def output(self, outs, msg, display_id, cell_index):
        content = msg["content"]
        kind = msg["msg_type"]
        if kind == "stream":
            size = len(content.get("text", ""))
        else:
            size = len(json.dumps(content.get("data", content), default=str))
        if size <= self._budget:
            self._budget -= size
            return super().output(outs, msg, display_id, cell_index)
        if kind == "stream" and self._budget > 0:
            text = content.get("text", "")[: self._budget]
            self._budget = 0
            result = super().output(outs, {**msg, "content": {**content, "text": text}},
                                    display_id, cell_index)
            self._note_dropped(outs)
            return result
        if kind == "error":  # keep the fact that a cell failed, without its traceback
            content = {**content, "evalue": str(content.get("evalue", ""))[:500],
                       "traceback": []}
            return super().output(outs, {**msg, "content": content}, display_id, cell_index)
        self._budget = 0
        self._note_dropped(outs)
        return None

    def handle_comm_msg(self, outs, msg, cell_index) -> None:
        return None  # widget state is useless for grading and unbounded in size


class _TolerantChannel(AsyncZMQSocketChannel):
    """A kernel channel that skips messages that do not deserialize (bad signature or JSON)."""

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await super().get_msg(remaining)
            except Empty:
                raise
            except Exception as exc:  # noqa: BLE001 - anything the kernel side may send
                log.warning("dropped an invalid kernel message: %s", str(exc)[:200])


def _open_sandbox_process(info_fd: int) -> int | None:
    """A pidfd of the sandbox's first process (pid 1 of its pid namespace), from bwrap's info.

    Called while the kernel is known to be alive, so the pid cannot have been reused; the pid
    namespace recorded by bwrap is checked too.
    """
    os.set_blocking(info_fd, False)
    try:
        info = json.loads(os.read(info_fd, 65536))
        pidfd = os.pidfd_open(info["child-pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        same = os.stat(f"/proc/{info['child-pid']}/ns/pid").st_ino == info["pid-namespace"]
    except (OSError, KeyError):
        same = True  # cannot check (no permission): the pid was alive a moment ago
    if not same:
        os.close(pidfd)
        return None
    return pidfd


def _end_sandbox(pidfd: int, timeout: float = 10.0) -> None:
    """Kill the sandbox's pid 1 and wait until it has exited.

    When the first process of a pid namespace dies, Linux kills every other process in it and
    only lets the first one finish exiting once they are all gone: afterwards nothing of the
    student's code can still write to the working folder.
    """
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except OSError:
        log.warning("could not signal the sandbox", exc_info=True)
    try:
        if not select.select([pidfd], [], [], timeout)[0]:
            log.warning("the sandbox did not exit within %g s of SIGKILL", timeout)
    finally:
        os.close(pidfd)


def _describe_exit(code: int | None) -> str:
    if code is not None and code > 128:  # bwrap reports a signal as 128 + its number
        try:
            name = signal.Signals(code - 128).name
        except ValueError:
            name = f"signal {code - 128}"
        hint = {"SIGSEGV": ": a segmentation fault", "SIGKILL": ": killed",
                "SIGXCPU": ": CPU-time limit", "SIGXFSZ": ": file-size limit"}.get(name, "")
        return f"({name}{hint})"
    return f"(exit status {code})"


def _kernel_spec(argv: list[str], resource_dir: Path) -> KernelSpec:
    return KernelSpec(argv=argv, display_name="Python 3 (sandboxed)", language="python",
                      interrupt_mode="message", resource_dir=str(resource_dir))


async def _run(nb: nbformat.NotebookNode, workdir: Path, config: SandboxConfig, tmp: Path,
               uid: int) -> ExecutionResult:
    rundir = tmp / "run"
    rundir.mkdir(mode=0o700)
    if uid >= 0:
        os.chown(rundir, uid, uid)
    kernel_cmd = [config.python, "-m", "ipykernel_launcher", "-f", "{connection_file}",
                  "--HistoryManager.hist_file=:memory:"]
    info_read, info_write = os.pipe()  # bwrap reports the sandbox's first process here
    argv = _sandbox_argv(config, workdir, tmp, uid, kernel_cmd)
    argv[1:1] = ["--info-fd", str(info_write)]
    spec = _kernel_spec(argv, tmp)
    km = _SandboxKernelManager(spec, uid, kernel_name="python3-sandboxed", transport="ipc",
                               ip=str(rundir / "k"), connection_file=str(rundir / "kernel.json"))
    client = _SandboxClient(nb, km, max_output_bytes=config.max_output_bytes,
                            timeout=config.cell_timeout_s, allow_errors=True,
                            kernel_name="python3-sandboxed", record_timing=False,
                            iopub_timeout=_INTERRUPT_GRACE_S)
    context = zmq.asyncio.Context()
    log_path = tmp / "kernel.log"
    kc = None
    sandbox = None
    try:
        try:
            with open(log_path, "wb") as kernel_log:
                await km.start_kernel(cwd=str(workdir), stdout=subprocess.DEVNULL,
                                      stderr=kernel_log, stdin=subprocess.DEVNULL,
                                      pass_fds=(info_write,))
        finally:
            os.close(info_write)
        kc = km.client(context=context, shell_channel_class=_TolerantChannel,
                       iopub_channel_class=_TolerantChannel)
        kc.start_channels()
        try:
            await asyncio.wait_for(kc.wait_for_ready(timeout=config.startup_timeout_s),
                                   config.startup_timeout_s + 5)
        except (RuntimeError, asyncio.TimeoutError) as exc:
            log_tail = log_path.read_text(errors="replace")[-2000:]
            raise SandboxError(f"the sandboxed kernel did not start ({exc}): {log_tail}") from None
        sandbox = _open_sandbox_process(info_read)
        client.kc = kc
        task = asyncio.ensure_future(client.async_execute())
        done, _ = await asyncio.wait({task}, timeout=config.notebook_timeout_s)
        where = f"cell {client.current_cell}" if client.current_cell is not None else "start-up"
        if not done:
            await km.shutdown_kernel(now=True)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            status, message = "timeout", (
                f"the notebook did not finish within {config.notebook_timeout_s:g} s; the kernel "
                f"was stopped while running {where}")
        else:
            error = task.exception()
            if error is None:
                status, message = "ok", "every cell ran"
            elif isinstance(error, _KernelStuck):
                status, message = "timeout", (
                    f"{where} exceeded the {config.cell_timeout_s:g} s cell limit and the kernel "
                    f"ignored the interrupt for {_INTERRUPT_GRACE_S} s; it was stopped")
            elif isinstance(error, DeadKernelError) or not await km.is_alive():
                code = await km.provisioner.poll() if km.provisioner else None
                status, message = "crashed", f"the kernel died while running {where} " + (
                    _describe_exit(code))
            else:
                # The kernel sent something nbclient cannot handle (forged or garbled messages,
                # e.g. from a process forked off the kernel): a student's doing, so no exception.
                log.warning("execution stopped by an unexpected error", exc_info=error)
                status, message = "crashed", (
                    f"the kernel was stopped while running {where} after it sent a message the "
                    f"grader could not process ({type(error).__name__}: {str(error)[:200]})")
        if client.cell_timeouts:
            message += f"; cells interrupted by the {config.cell_timeout_s:g} s cell limit: " + \
                ", ".join(map(str, client.cell_timeouts))
        if client.output_truncated:
            message += f"; output beyond {config.max_output_bytes} bytes was dropped"
        return ExecutionResult(client.nb, status, message, client.cell_timeouts,
                               client.output_truncated)
    finally:
        os.close(info_read)
        if sandbox is not None:  # first, so that nothing of the student's code survives
            await asyncio.to_thread(_end_sandbox, sandbox)
        if kc is not None:
            kc.stop_channels()
        try:
            if km.has_kernel:
                await km.shutdown_kernel(now=True)
            else:
                await km.cleanup_resources()
        finally:
            context.destroy(linger=0)


def execute_notebook(nb: nbformat.NotebookNode, workdir: str | os.PathLike[str],
                     config: SandboxConfig | None = None) -> ExecutionResult:
    """Execute every code cell of ``nb`` in a sandboxed kernel whose working folder is ``workdir``.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        The notebook; it is not modified (a copy, with outputs cleared, is executed).
    workdir : path-like
        An existing folder: the kernel's current directory and the only place on the host it
        can write to. Files it writes there stay afterwards. It must not contain a hidden folder;
        give each execution a folder of its own below a folder of its own (for example
        ``<scratch>/<student>/``): its parent is hidden so sibling folders are invisible.
        When the grader runs as root, the kernel runs as another, unprivileged user: folders
        above the working folder that are not hidden must be searchable by others.
    config : SandboxConfig, optional
        Limits and visibility; ``SandboxConfig()`` by default.

    Returns
    -------
    ExecutionResult
        The executed notebook with a status of ``"ok"``, ``"timeout"`` or ``"crashed"``.

    Raises
    ------
    TypeError
        If ``nb`` is not a notebook node.
    ValueError
        If ``workdir`` does not exist, is not a folder, or contains a hidden folder.
    SandboxError
        If the sandbox is unavailable or the kernel cannot start.

    Examples
    --------
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1 + 1)")])
    >>> result = execute_notebook(nb, workdir)  # doctest: +SKIP
    >>> result.status, result.notebook.cells[0].outputs[0].text  # doctest: +SKIP
    ('ok', '2\\n')
    """
    if not isinstance(nb, nbformat.NotebookNode):
        raise TypeError(f"nb must be an nbformat.NotebookNode, got {type(nb).__name__}")
    workdir = _real(workdir)
    if not workdir.is_dir():
        raise ValueError(f"workdir {workdir} is not an existing folder")
    config = config or SandboxConfig()
    _hidden_folders(config, workdir)  # ValueError before anything is touched
    available, reason = sandbox_available()
    if not available:
        raise SandboxError(f"the notebook sandbox is unavailable: {reason}")
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    start = time.monotonic()
    uid = _sandbox_uid()
    owners: dict[Path, tuple[int, int]] = {}
    removed: list[str] = []
    tmp = _real(tempfile.mkdtemp(prefix="nbsbx-"))
    if len(str(tmp)) > 64:  # the kernel's Unix sockets live in tmp/run: paths of 107 bytes at most
        shutil.rmtree(tmp)
        tmp = _real(tempfile.mkdtemp(prefix="nbsbx-", dir="/tmp"))
    try:
        if uid >= 0:
            owners = _lend(workdir, uid)
        coroutine = _run(nb, workdir, config, tmp, uid)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            result = asyncio.run(coroutine)
        else:  # called from a running event loop (e.g. a notebook): use a thread of its own
            with concurrent.futures.ThreadPoolExecutor(1) as pool:
                result = pool.submit(asyncio.run, coroutine).result()
    finally:
        removed = _remove_special_files(workdir)
        if owners:
            _take_back(workdir, uid, owners)
        shutil.rmtree(tmp, ignore_errors=True)
    if removed:
        result.removed_files = removed
        result.message += (f"; removed {len(removed)} symbolic links or special files from the "
                           f"working folder")
    result.elapsed_s = time.monotonic() - start
    return result
