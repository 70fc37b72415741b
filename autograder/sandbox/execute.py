"""Executing a notebook in the sandbox: the availability probe and the orchestration."""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import dataclasses
import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Mapping
from pathlib import Path

import nbformat
import zmq.asyncio
from nbclient.exceptions import DeadKernelError

from autograder.sandbox.cgroup import Group
from autograder.sandbox.config import ExecutionResult, SandboxConfig, SandboxError, _real
from autograder.sandbox.disk import cap_folder
from autograder.sandbox.disk import release as release_folder
from autograder.sandbox.kernel import (
    _INTERRUPT_GRACE_S,
    PATIENCE_S,
    _describe_exit,
    _end_sandbox,
    _kernel_spec,
    _KernelStuck,
    _open_kernel_process,
    _open_sandbox_process,
    _SandboxClient,
    _SandboxKernelManager,
    _TolerantChannel,
    _wait_for_ready,
)
from autograder.sandbox.plan import (
    _container_argv,
    _hidden_folders,
    _kernel_env,
    _sandbox_argv,
    _sandbox_uid,
)
from autograder.sandbox.warm import (
    WarmUnavailable,
    Zygote,
    _WarmKernelManager,
    stop_zygote,
    warm_request,
    warm_zygote,
)
from autograder.sandbox.workdir import (
    MAX_DEPTH,
    _lend,
    _remove_special_files,
    _take_back,
    remove_tree,
)
from autograder.status import Status
from coursedata.guard import KERNEL_ARGUMENT as GUARD_ARGUMENT

__all__ = [
    "sandbox_available",
    "container_available",
    "container_gaps",
    "execute_notebook",
    "CONTAINER_GAPS",
]

log = logging.getLogger("autograder.sandbox")


@functools.cache
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
    with tempfile.TemporaryDirectory(prefix="nbsbx-check-") as scratch:
        tmp = _real(scratch)
        for name in ("work", "run"):  # a private sibling of "work" would be hidden
            (tmp / name).mkdir()
            if uid >= 0:
                os.chown(tmp / name, uid, uid)
        probe = "import ipykernel, os; print('sandbox-ok', os.getuid())"
        argv = _sandbox_argv(SandboxConfig(), tmp / "work", tmp, uid, [sys.executable, "-c", probe])
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return False, f"bwrap could not run: {exc}"
    if proc.returncode != 0 or "sandbox-ok" not in proc.stdout:
        return False, (
            f"a test sandbox failed (exit status {proc.returncode}): {proc.stderr.strip()[-500:]}"
        )
    version = subprocess.run([bwrap, "--version"], capture_output=True, text=True).stdout.strip()
    return True, f"{version} at {bwrap}"


#: What the container mode (``SandboxConfig.container``) does not keep of the bubblewrap sandbox,
#: wherever it runs.
CONTAINER_GAPS = (
    "the kernel shares the machine's network (no network namespace)",
    "it sees the machine's processes (no pid namespace)",
    "folders are hidden from it by their permissions, not by empty mounts: what others may "
    "read, it may read",
)
#: What it does not keep where the grader may not mount (a container without CAP_SYS_ADMIN).
UNMOUNTED_GAPS = (
    "it can write where any user may (/tmp, /var/tmp, /dev/shm), with no size limit there",
    "the total disk it writes is not capped, only each file (RLIMIT_FSIZE): its working "
    "folder has no size limit either",
)
#: What holds, and what not, where it may: the shared folders are read-only to the kernel.
MOUNTED_GAPS = (
    "of the folders any user may write, /tmp, /var/tmp, /run/lock, /var/crash and /dev/mqueue "
    "are read-only to it and /dev/shm is its own, capped; any other folder of the image that "
    "any user may write is not capped",
)


@functools.cache
def container_gaps(python: str = sys.executable) -> tuple[str, ...]:
    """What the container mode does not keep here: :data:`CONTAINER_GAPS`, and what it keeps of
    the shared folders as the kernel's own start-up step found (:func:`container_available`)."""
    ok, reason = container_available(python)
    private = ok and "shared folders read-only" in reason
    return CONTAINER_GAPS + (MOUNTED_GAPS if private else UNMOUNTED_GAPS)


@functools.cache
def container_available(python: str = sys.executable) -> tuple[bool, str]:
    """Whether the container mode can run kernels here with the interpreter ``python``.

    Runs ``python`` as a fresh unprivileged user, with the limits, through the same start-up
    step as a kernel: the grader must be root and the interpreter readable by others.

    Returns
    -------
    available : bool
    reason : str
        What failed, or how the kernel runs.
    """
    if not sys.platform.startswith("linux"):
        return False, f"the container mode needs Linux; this is {sys.platform}"
    uid = _sandbox_uid()
    if uid < 0:
        return False, "the container mode needs a root grader, to run the kernel as another user"
    probe = "import ipykernel, os; print('sandbox-ok', os.getuid(), os.access('/tmp', os.W_OK))"
    config = SandboxConfig(python=python, container=True)
    argv = _container_argv(config, uid, _kernel_env(config), [python, "-c", probe], [])
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, cwd="/"
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, f"the kernel's interpreter could not run: {exc}"
    if proc.returncode != 0 or f"sandbox-ok {uid}" not in proc.stdout:
        return False, (
            f"{python} did not run as an unprivileged user (exit status {proc.returncode}; it "
            f"and its packages must be readable by others): {proc.stderr.strip()[-500:]}"
        )
    shared = "read-only" if f"sandbox-ok {uid} False" in proc.stdout else "writable"
    return True, f"the kernel runs as an unprivileged user with {python}, shared folders {shared}"


def _kill_user(uid: int, python: str) -> None:
    """Kill every process of the user ``uid`` (the container mode's end of a kernel).

    ``kill(-1, SIGKILL)`` sent as that user, by the kernel's interpreter ``python`` (which that
    user can run), reaches every process it owns, whatever it forked.
    """
    try:
        subprocess.run(
            [python, "-I", "-S", "-c", "import os, signal; os.kill(-1, signal.SIGKILL)"],
            user=uid,
            group=uid,
            extra_groups=[],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd="/",
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        log.warning("could not end the processes of the sandbox user %d", uid, exc_info=True)
    _reap(uid)


def _processes_of(uid: int) -> list[tuple[int, int, str]]:
    """``(pid, parent pid, state)`` of every process of the user ``uid``."""
    found = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(
                line.split(":", 1) for line in status.read_text().splitlines() if ":" in line
            )
            if int(fields["Uid"].split()[0]) == uid:
                found.append((int(status.parent.name), int(fields["PPid"]), fields["State"]))
        except (OSError, KeyError, ValueError):
            pass
    return found


def _reap(uid: int, timeout: float = PATIENCE_S) -> None:
    """Wait until the killed processes of ``uid`` are gone, collecting those handed to this
    process (a grader that is a child subreaper, as a test runner may be, inherits them). A
    loaded machine may take many seconds to end dozens of processes: the wait gives up only
    after ``timeout``, with an error."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = _processes_of(uid)
        ours = [pid for pid, parent, _ in left if parent == os.getpid()]
        for pid in ours:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
        if not ours and all(state.strip().startswith("Z") for _, _, state in left):
            return  # nothing of it runs; zombies of other parents are theirs to collect
        time.sleep(0.05)
    log.error("processes of the sandbox user %d still ran %g s after SIGKILL", uid, timeout)


def _home(config: SandboxConfig, tmp: Path, uid: int) -> SandboxConfig:
    """In the container mode, the kernel's home and temporary folder: ``tmp/home``, its own
    (the shared ``/tmp`` is read-only to it where the grader may mount)."""
    home = tmp / "home"
    home.mkdir(mode=0o700)
    if uid >= 0:
        os.chown(home, uid, uid)
    env = {
        "HOME": str(home),
        "TMPDIR": str(home),
        "IPYTHONDIR": str(home / ".ipython"),
        "MPLCONFIGDIR": str(home / ".matplotlib"),
    }
    return dataclasses.replace(config, env={**env, **config.env})


def _library(config: SandboxConfig, tmp: Path) -> SandboxConfig:
    """In the container mode, copy the visible packages that live in a hidden folder (the
    ``coursedata`` package under the project root) to ``tmp/lib``, first on ``PYTHONPATH``."""
    lib = tmp / "lib"
    lib.mkdir(mode=0o755)
    lib.chmod(0o755)
    hidden = [_real(h) for h in config.hidden_paths]
    for path in map(_real, config.visible_paths):
        if (path / "__init__.py").is_file() and any(h == path or h in path.parents for h in hidden):
            copy = lib / path.name
            shutil.copytree(path, copy, ignore=shutil.ignore_patterns("__pycache__"))
            for folder, _, files in os.walk(copy):
                os.chmod(folder, 0o755)
                for name in files:
                    os.chmod(os.path.join(folder, name), 0o644)
    return dataclasses.replace(config, python_path=(lib, *config.python_path))


def _open_way(paths: list[Path]) -> dict[Path, int]:
    """Let others search (not list) every folder above ``paths``; return the modes to restore."""
    changed: dict[Path, int] = {}
    for path in paths:
        for folder in path.parents:
            mode = folder.stat().st_mode
            if folder not in changed and not mode & 0o001:
                changed[folder] = mode
                folder.chmod((mode & 0o7777) | 0o001)
    return changed


def _join_group(group: Group, pidfd: int | None) -> None:
    """Move the process of ``pidfd`` (and those below it) into ``group``, then close ``pidfd``."""
    if pidfd is None:
        log.warning("could not move a submission into its control group: its kernel has ended")
        return
    try:
        group.add(pidfd)
    finally:
        os.close(pidfd)


async def _run(
    nb: nbformat.NotebookNode,
    workdir: Path,
    config: SandboxConfig,
    tmp: Path,
    uid: int,
    env: Mapping[str, str],
    zygote: Zygote | None,
    group: Group | None = None,
) -> ExecutionResult:
    """Start a kernel (cold by bwrap, or forked by ``zygote``), run the cells, end the sandbox."""
    start = time.perf_counter()
    rundir = tmp / "run"
    rundir.mkdir(mode=0o700)
    if uid >= 0:
        os.chown(rundir, uid, uid)
    # The problem set's rules are kept by coursedata.guard when ``env`` configures it.
    kernel_cmd = [
        config.python,
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
        "--HistoryManager.hist_file=:memory:",
        GUARD_ARGUMENT,
    ]
    names = dict(
        kernel_name="python3-sandboxed",
        transport="ipc",
        ip=str(rundir / "k"),
        connection_file=str(rundir / "kernel.json"),
    )
    log_path = tmp / "kernel.log"
    info_read = info_write = -1
    warm: _WarmKernelManager | None = None  # the kernel manager when the zygote forks the kernel
    counted = group is not None and "pids" in group.controllers  # its limit binds: it counts
    if zygote is None:
        cold = dataclasses.replace(config, env={**config.env, **env})
        if config.container:
            cold = _library(_home(cold, tmp, uid), tmp)
            argv = _container_argv(
                cold, uid, _kernel_env(cold), kernel_cmd, [workdir, tmp], counted
            )
        else:
            info_read, info_write = os.pipe()  # bwrap reports the sandbox's first process here
            argv = _sandbox_argv(cold, workdir, tmp, uid, kernel_cmd, counted)
            argv[1:1] = ["--info-fd", str(info_write)]
        km = _SandboxKernelManager(_kernel_spec(argv, tmp), uid, **names)
    else:
        request = warm_request(
            config, workdir, rundir, uid, _kernel_env(config, dict(env)), counted
        )
        km = warm = _WarmKernelManager(
            _kernel_spec(kernel_cmd, tmp),
            uid,
            zygote=zygote,
            request=request,
            mounts=(workdir, rundir),
            log_path=log_path,
            timeout=config.startup_timeout_s,
            **names,
        )
    client = _SandboxClient(
        nb,
        km,
        max_output_bytes=config.max_output_bytes,
        timeout=config.cell_timeout_s,
        allow_errors=True,
        kernel_name="python3-sandboxed",
        record_timing=False,
        iopub_timeout=_INTERRUPT_GRACE_S,
    )
    context = zmq.asyncio.Context()
    kc = None
    sandbox = None
    try:
        try:
            with open(log_path, "wb") as kernel_log:
                await km.start_kernel(
                    cwd=str(workdir),
                    stdout=subprocess.DEVNULL,
                    stderr=kernel_log,
                    stdin=subprocess.DEVNULL,
                    pass_fds=(info_write,) if info_write >= 0 else (),
                )
        finally:
            if info_write >= 0:
                os.close(info_write)
        kc = km.client(
            context=context,
            shell_channel_class=_TolerantChannel,
            iopub_channel_class=_TolerantChannel,
        )
        kc.start_channels()
        try:
            await asyncio.wait_for(
                _wait_for_ready(kc, km, config.startup_timeout_s), config.startup_timeout_s + 5
            )
        except (RuntimeError, asyncio.TimeoutError) as exc:
            log_tail = log_path.read_text(errors="replace")[-2000:]
            raise SandboxError(f"the sandboxed kernel did not start ({exc}): {log_tail}") from None
        if config.container:
            sandbox = None  # its end: every process of its user is killed
            if group is not None:  # before any cell of the student's
                _join_group(group, _open_kernel_process(km))
        elif warm is None:
            sandbox = _open_sandbox_process(info_read)
        else:
            assert warm.warm_process is not None, "its launch forked the kernel"
            sandbox = os.dup(warm.warm_process.pidfd)
        if group is not None and sandbox is not None:  # before any cell of the student's
            group.add(sandbox)
        ready = time.perf_counter()
        client.kc = kc
        task = asyncio.ensure_future(client.async_execute())
        done, _ = await asyncio.wait({task}, timeout=config.notebook_timeout_s)
        timings = {"start_s": ready - start, "execute_s": time.perf_counter() - ready}
        if not done:
            await km.shutdown_kernel(now=True)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        status, message = await _outcome(client, km, config, task if done else None)
        return ExecutionResult(
            client.nb,
            status,
            message,
            client.cell_timeouts,
            client.output_truncated,
            timings=timings,
        )
    finally:
        if info_read >= 0:
            os.close(info_read)
        if sandbox is not None:  # first, so that nothing of the student's code survives
            await asyncio.to_thread(_end_sandbox, sandbox)
        if config.container and uid >= 0:
            await asyncio.to_thread(_kill_user, uid, config.python)
        if kc is not None:
            kc.stop_channels()
        try:
            if km.has_kernel:
                await km.shutdown_kernel(now=True)
            else:
                await km.cleanup_resources()
        finally:
            context.destroy(linger=0)
            if warm is not None and warm.warm_process is not None:
                warm.warm_process.close()


async def _outcome(
    client: _SandboxClient,
    km: _SandboxKernelManager,
    config: SandboxConfig,
    task: asyncio.Future | None,
) -> tuple[Status, str]:
    """The status and message of an execution; ``task`` is None when the notebook timed out."""
    where = f"cell {client.current_cell}" if client.current_cell is not None else "start-up"
    if task is None:
        status, message = (
            Status.TIMEOUT,
            (
                f"the notebook did not finish within {config.notebook_timeout_s:g} s; the kernel "
                f"was stopped while running {where}"
            ),
        )
    elif (error := task.exception()) is None:
        status, message = Status.OK, "every cell ran"
    elif isinstance(error, _KernelStuck):
        status, message = (
            Status.TIMEOUT,
            (
                f"{where} exceeded the {config.cell_timeout_s:g} s cell limit and the kernel "
                f"ignored the interrupt for {_INTERRUPT_GRACE_S} s; it was stopped"
            ),
        )
    elif isinstance(error, DeadKernelError) or not await km.is_alive():
        code = await km.provisioner.poll() if km.provisioner else None
        status, message = (
            Status.CRASHED,
            f"the kernel died while running {where} " + (_describe_exit(code)),
        )
    else:
        # The kernel sent something nbclient cannot handle (forged or garbled messages, e.g.
        # from a process forked off the kernel): a student's doing, so no exception. The
        # error's text is built from that message, which the student's code wrote: it goes to
        # the grader's log only.
        log.warning("execution stopped by an unexpected error", exc_info=error)
        status, message = (
            Status.CRASHED,
            (
                f"the kernel was stopped while running {where} after it sent a message the "
                f"grader could not process ({type(error).__name__})"
            ),
        )
    if client.cell_timeouts:
        message += (
            f"; cells interrupted by the {config.cell_timeout_s:g} s cell limit: "
            + ", ".join(map(str, client.cell_timeouts))
        )
    if client.output_truncated:
        message += f"; output beyond {config.max_output_bytes} bytes was dropped"
    return status, message


_warned: set[str] = set()


def _cold_because(reason: str) -> None:
    """Log, once per reason and process, why an execution falls back to a cold sandbox."""
    if reason not in _warned:
        _warned.add(reason)
        log.warning("warm sandbox unavailable, using a cold one: %s", reason)


def _complete(coroutine: Coroutine[object, object, ExecutionResult]) -> ExecutionResult:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # called from a running event loop (e.g. a notebook): use a thread of its own
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def execute_notebook(
    nb: nbformat.NotebookNode,
    workdir: str | os.PathLike[str],
    config: SandboxConfig | None = None,
    env: Mapping[str, str] | None = None,
) -> ExecutionResult:
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
    env : Mapping of str to str, optional
        Environment of this execution only, on top of ``config.env`` (for example its results
        folder); a warm zygote is shared by executions that differ only here.

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
    env = dict(env or {})
    _hidden_folders(config, workdir)  # ValueError before anything is touched
    if config.container:
        available, reason = container_available(config.python)
        config = dataclasses.replace(config, warm=False)
    else:
        available, reason = sandbox_available()
    if not available:
        raise SandboxError(f"the notebook sandbox is unavailable: {reason}")
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    start = time.monotonic()
    zygote, zygote_s = None, 0.0
    if config.warm:
        try:
            zygote, zygote_s = warm_zygote(config)
        except WarmUnavailable as exc:
            _cold_because(str(exc))
    uid = _sandbox_uid()
    owners: dict[str, tuple[int, int]] = {}
    removed: list[str] = []
    # Under /tmp: the kernel's Unix sockets live in tmp/run (paths of 107 bytes at most), and a
    # warm sandbox's fresh /tmp has room for its way there.
    tmp = _real(tempfile.mkdtemp(prefix="nbsbx-", dir="/tmp"))
    opened: dict[Path, int] = {}
    # The kernel writes its sockets' folder and its log there: capped as /tmp is inside.
    capped = cap_folder(tmp, config.tmp_mb, 4096)
    group = Group.create(config.memory_mb, config.max_processes)
    reached: list[str] = []
    try:
        if config.container:  # the kernel's user must reach its folders (no mounts here)
            tmp.chmod(0o711)
            opened = _open_way([workdir, tmp / "run"])
        if uid >= 0:
            owners = _lend(workdir, uid)
        try:
            result = _complete(_run(nb, workdir, config, tmp, uid, env, zygote, group))
        except WarmUnavailable as exc:  # nothing ran: start again in a cold sandbox
            _cold_because(str(exc))
            stop_zygote()
            remove_tree(tmp / "run")
            zygote_s = 0.0
            result = _complete(_run(nb, workdir, config, tmp, uid, env, None, group))
    finally:
        removed = _remove_special_files(workdir)
        if owners:
            _take_back(workdir, uid, owners)
        for folder, mode in opened.items():
            folder.chmod(mode & 0o7777)
        if group is not None:  # its processes have ended with the sandbox
            reached = group.reached()
            group.remove()
        if capped:
            release_folder(tmp)
        remove_tree(tmp)
    if reached:
        result.limits_reached = reached
        result.message += "; " + "; ".join(reached)
    if removed:
        result.removed_files = removed
        result.message += (
            f"; removed {len(removed)} symbolic links, special files or folders nested deeper "
            f"than {MAX_DEPTH} from the working folder"
        )
    result.timings["start_s"] = result.timings.get("start_s", 0.0) + zygote_s
    result.elapsed_s = time.monotonic() - start
    return result
