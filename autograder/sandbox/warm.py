"""Warm sandboxes: a zygote per grading process, forking a fresh sandbox per submission.

A grading process keeps one zygote (:mod:`autograder.sandbox.zygote`): an interpreter in a
bubblewrap sandbox with ipykernel's imports done and the modules of its configuration's
``preload`` (for grading, the problem sets' imports: :func:`autograder.run.preload.grading_preload`;
no notebook code runs there). For each submission the
grader lends the working folder and the kernel's run folder to the zygote as detached mounts
(``open_tree``), and the zygote forks a sandbox of its own for the submission, in which
ipykernel starts in the already warm interpreter. The grader drives that kernel exactly as a cold
one (:func:`autograder.sandbox.execute._run`).

The zygote is restarted when it has died or the configuration it was built for changes. Warm
sandboxes need a root grader (detached mounts and a privileged bubblewrap) on Linux 5.2 or later;
elsewhere, or when the zygote cannot start or fork, :func:`warm_zygote` or the launch raises
:class:`WarmUnavailable` and the execution falls back to a cold sandbox, with the reason logged.
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import json
import logging
import multiprocessing.util
import os
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Protocol, cast

from jupyter_client.connect import KernelConnectionInfo

from autograder.sandbox.config import SandboxConfig, SandboxError, _MiB, _real
from autograder.sandbox.kernel import _SandboxKernelManager
from autograder.sandbox.plan import _limits, _zygote_argv
from autograder.sandbox.workdir import remove_tree

__all__ = [
    "KERNEL_PRELOAD",
    "WarmUnavailable",
    "Zygote",
    "warm_zygote",
    "stop_zygote",
    "detached_mount",
]

log = logging.getLogger("autograder.sandbox")

#: Imported by every zygote: what ipykernel imports to start (so a cold kernel has them too).
KERNEL_PRELOAD = (
    "ipykernel.kernelapp",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.debugger",
    "debugpy.server",
    "IPython.core.interactiveshell",
    "IPython.core.completer",
    "IPython.extensions",
    "sqlite3",
    "pdb",
    "tornado.platform.asyncio",
)

_SYS_OPEN_TREE = 428
_OPEN_TREE_CLONE, _AT_RECURSIVE = 1, 0x8000
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class WarmUnavailable(Exception):
    """A warm sandbox cannot be used for this execution; the reason is the message."""


def _preload(config: SandboxConfig) -> tuple[str, ...]:
    hidden = set(config.hidden_packages)
    names = KERNEL_PRELOAD + tuple(config.preload)
    return tuple(dict.fromkeys(n for n in names if n.split(".")[0] not in hidden))


def _key(config: SandboxConfig) -> tuple:
    """What a zygote is built from: a change of any of these needs a new zygote."""
    return (
        config.python,
        tuple(map(str, config.hidden_paths)),
        config.hidden_packages,
        tuple(map(str, config.visible_paths)),
        tuple(map(str, config.python_path)),
        tuple(sorted(dict(config.env).items())),
        _preload(config),
    )


def detached_mount(path: Path) -> int:
    """A detached copy of the mount tree at ``path`` (``open_tree``), as a file descriptor."""
    fd = _libc.syscall(
        _SYS_OPEN_TREE, -100, os.fsencode(path), _OPEN_TREE_CLONE | os.O_CLOEXEC | _AT_RECURSIVE
    )
    if fd < 0:
        errno = ctypes.get_errno()
        raise WarmUnavailable(f"open_tree({path}) failed: {os.strerror(errno)}")
    return fd


class Zygote:
    """A running zygote: its bubblewrap process and its socket.

    Parameters
    ----------
    config : SandboxConfig
        Visibility, environment and interpreter of the sandboxes it forks (limits are sent
        with each request).

    Raises
    ------
    WarmUnavailable
        If it does not start within ``config.startup_timeout_s`` or cannot fork safely.
    """

    def __init__(self, config: SandboxConfig):
        self.key = _key(config)
        self.owner = os.getpid()  # a forked grading process starts a zygote of its own
        _sweep_stale()
        # Under /tmp, which every forked sandbox replaces by a fresh one; named by its owner.
        self.dir = _real(tempfile.mkdtemp(prefix=f"nbzyg-{os.getpid()}-", dir="/tmp"))
        self.socket = self.dir / "zygote.sock"
        source = (Path(__file__).with_name("zygote.py")).read_text()
        command = [
            config.python,
            "-c",
            source,
            json.dumps({"preload": list(_preload(config)), "socket": str(self.socket)}),
        ]
        start = time.perf_counter()
        self._log = open(self.dir.parent / f"{self.dir.name}.log", "wb")
        self.proc: subprocess.Popen[bytes] | None = None
        try:
            self.proc = subprocess.Popen(
                _zygote_argv(config, self.dir, command),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=self._log,
            )
        except (OSError, SandboxError) as exc:
            self.close()
            raise WarmUnavailable(f"the zygote could not start: {exc}") from None
        answers = self.proc.stdout
        assert answers is not None, "started with stdout=PIPE"
        ready, _, _ = select.select([answers], [], [], config.startup_timeout_s)
        line = answers.readline() if ready else b""
        try:
            info = json.loads(line)
        except ValueError:
            info = {}
        if not info.get("ready"):
            tail = Path(self._log.name).read_bytes()[-1500:].decode(errors="replace")
            self.close()
            raise WarmUnavailable(f"the zygote did not start ({info or 'no answer'}): {tail}")
        self.started_s = time.perf_counter() - start
        if info.get("failed"):
            log.info("the zygote could not import: %s", ", ".join(info["failed"]))
        log.debug("zygote ready in %.2f s (imports %.2f s)", self.started_s, info["import_s"])

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def fork(self, request: dict, fds: list[int], timeout: float) -> tuple[socket.socket, int, int]:
        """Ask for a sandbox; return the connection (for its exit status), a pidfd of its
        pid 1 and that pid."""
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            conn.settimeout(timeout)
            conn.connect(str(self.socket))
            socket.send_fds(conn, [json.dumps(request).encode()], fds)
            message, got, _, _ = socket.recv_fds(conn, 1 << 16, 1)
            answer = json.loads(message) if message else {"error": "the zygote hung up"}
        except (OSError, ValueError) as exc:
            conn.close()
            raise WarmUnavailable(f"the zygote did not answer: {exc}") from None
        if "pid" not in answer or len(got) != 1:
            for fd in got:
                os.close(fd)
            conn.close()
            raise WarmUnavailable(f"the zygote could not build the sandbox: {answer.get('error')}")
        return conn, got[0], int(answer["pid"])

    def close(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc is not None and proc.stdout:
            proc.stdout.close()
        self._log.close()
        os.unlink(self._log.name)
        remove_tree(self.dir)
        self.proc = None


def _sweep_stale() -> None:
    """Remove the private folders and logs of zygotes whose grading process is gone (killed)."""
    for path in Path("/tmp").glob("nbzyg-*-*"):
        try:
            pid = int(path.name.split("-")[1])
            if (
                pid == os.getpid()
                or Path(f"/proc/{pid}").exists()
                or path.lstat().st_uid != os.geteuid()
            ):
                continue
            if path.is_dir() and not path.is_symlink():
                remove_tree(path)
            else:
                path.unlink()
        except (ValueError, OSError):
            continue


_lock = threading.Lock()
_zygote: Zygote | None = None


def warm_zygote(config: SandboxConfig) -> tuple[Zygote, float]:
    """This process's zygote for ``config``, started or restarted if needed.

    Returns
    -------
    zygote : Zygote
    started_s : float
        Seconds spent starting it now (0 when it was already running).

    Raises
    ------
    WarmUnavailable
        Why no warm sandbox can be used here.
    """
    global _zygote
    if os.geteuid() != 0:
        raise WarmUnavailable("warm sandboxes need a root grader (detached mounts)")
    with _lock:
        if _zygote is not None and _zygote.owner != os.getpid():
            _zygote = None  # inherited from the parent process, which keeps it
        if _zygote is not None and (_zygote.key != _key(config) or not _zygote.alive()):
            log.info(
                "restarting the zygote (%s)",
                "its configuration changed" if _zygote.alive() else "it died",
            )
            _zygote.close()
            _zygote = None
        if _zygote is None:
            _stop_at_exit()
            _zygote = Zygote(config)
            return _zygote, _zygote.started_s
        return _zygote, 0.0


def stop_zygote() -> None:
    """Stop this process's zygote, if any (also done at exit)."""
    global _zygote
    with _lock:
        if _zygote is not None and _zygote.owner == os.getpid():
            _zygote.close()
        _zygote = None


atexit.register(stop_zygote)
_finalizer_pid: int | None = None


def _stop_at_exit() -> None:
    """Also stop the zygote when this process is a multiprocessing worker, which ends without
    running atexit (its finalizers, registered in the process itself, run instead)."""
    global _finalizer_pid
    if _finalizer_pid != os.getpid():
        _finalizer_pid = os.getpid()
        multiprocessing.util.Finalize(None, stop_zygote, exitpriority=10)


class _WarmProcess:
    """A :class:`subprocess.Popen` look-alike for the pid 1 of a warm sandbox, watched through a
    pidfd; its exit status (128 + the signal for a signal) is reported by the zygote's child."""

    stdin = stdout = stderr = None

    def __init__(self, conn: socket.socket, pidfd: int, pid: int):
        self._conn, self.pidfd, self.pid = conn, pidfd, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if (
            self.returncode is None
            and self.pidfd >= 0
            and select.select([self.pidfd], [], [], 0)[0]
        ):
            try:
                self._conn.settimeout(5)
                self.returncode = int(json.loads(self._conn.recv(4096))["exit"])
            except (OSError, ValueError, KeyError, TypeError):
                self.returncode = -1  # the zygote's child died too: no status
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.pidfd >= 0:
            select.select([self.pidfd], [], [], timeout)
        return self.poll()

    def send_signal(self, signum: int) -> None:
        try:
            signal.pidfd_send_signal(self.pidfd, signum)
        except (ProcessLookupError, OSError):
            pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)  # pid 1 of its namespace: only SIGKILL reaches it

    terminate = kill

    def close(self) -> None:
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        self._conn.close()


class _Launched(Protocol):
    """What :class:`_WarmKernelManager` fills in of its provisioner (jupyter_client's
    ``LocalProvisioner``) in place of the launch it skips."""

    process: _WarmProcess | subprocess.Popen | None
    pid: int | None
    pgid: int | None
    cwd: str | None
    connection_info: KernelConnectionInfo


class _WarmKernelManager(_SandboxKernelManager):
    """A kernel manager whose kernel is forked by the zygote instead of started by bwrap."""

    def __init__(
        self,
        spec,
        uid: int,
        *,
        zygote: Zygote,
        request: dict,
        mounts: tuple[Path, Path],
        log_path: Path,
        timeout: float,
        **kwargs,
    ):
        super().__init__(spec, uid, **kwargs)
        self._zygote, self._request, self._mounts = zygote, request, mounts
        self._log_path, self._timeout = log_path, timeout
        self.warm_process: _WarmProcess | None = None

    async def _async_launch_kernel(self, kernel_cmd: list[str], **kw) -> None:
        # ``python -m ipykernel_launcher`` is this interpreter already: its arguments only
        request = {**self._request, "argv": kernel_cmd[kernel_cmd.index("-m") + 2 :]}
        fds: list[int] = []
        try:
            fds = [detached_mount(p) for p in self._mounts]
            fds.append(os.open(self._log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
            conn, pidfd, pid = await asyncio.to_thread(
                self._zygote.fork, request, fds, self._timeout
            )
        finally:
            for fd in fds:
                os.close(fd)
        # jupyter_client's LocalProvisioner types these attributes as None (it sets them itself)
        provisioner = cast(_Launched, self.provisioner)
        self.warm_process = provisioner.process = _WarmProcess(conn, pidfd, pid)
        provisioner.pid, provisioner.pgid = pid, None
        provisioner.cwd = self._request["workdir"]
        self._reconcile_connection_info(provisioner.connection_info)


def warm_request(
    config: SandboxConfig,
    workdir: Path,
    rundir: Path,
    uid: int,
    env: dict[str, str],
    counted: bool = False,
) -> dict:
    """The zygote's request for one submission (the kernel's arguments are added at launch);
    ``counted``: a control group limits its processes (:func:`~autograder.sandbox.plan._limits`)."""
    return {
        "workdir": str(workdir),
        "run": str(rundir),
        "uid": uid,
        "env": env,
        "limits": _limits(config, counted),
        "tmp_bytes": config.tmp_mb * _MiB,
    }
