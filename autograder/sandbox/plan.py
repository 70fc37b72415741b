"""The sandbox's plan: the bubblewrap command line, its mounts and the sandbox user.

Everything here is pure (no process is started), so it is unit-tested on every machine
(``tests/autograder/sandbox/test_sandbox_plan.py``) whether bubblewrap is installed or not.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from autograder.sandbox.config import SandboxConfig, SandboxError, _MiB, _real

# Unprivileged user ids for kernels started by a root grader: far above ordinary accounts and the
# usual subordinate-id ranges of containers. 64 ids per grader process (pid_max is at most 2**22).
_UID_BASE = 1_000_000_000
_uid_counter = itertools.count()

# Runs inside the sandbox before the kernel: drop to the sandbox user (root grader only), set the
# resource limits, then exec the kernel. Written without braces: the kernel command is formatted
# by jupyter_client, which substitutes ``{name}`` fields.
_START_STEP = """\
import json, os, resource, sys
uid = int(sys.argv[1])
shared = json.loads(sys.argv[3])
if shared:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def mount(source, target, kind, flags, data=None):
        return libc.mount(source.encode(), target.encode(), kind and kind.encode(), flags,
                          data and data.encode()) == 0
    if libc.unshare(0x20000) == 0 and mount('none', '/', None, 0x4000 | 0x40000):
        for path in shared['ro']:
            kept = os.statvfs(path).f_flag & 0x0e
            if mount(path, path, None, 0x1000 | 0x4000):
                for folder in shared['rw']:
                    if folder.startswith(path.rstrip('/') + '/'):
                        mount(folder, folder, None, 0x1000 | 0x4000)
                mount('none', path, None, 0x20 | 0x1000 | 0x1 | kept)
        for path, size in shared['private'].items():
            mount('grader-private', path, 'tmpfs', 0x2 | 0x4, f'size={size},mode=1777')
if uid >= 0:
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
for item in sys.argv[2].split(','):
    name, value = item.split('=')
    resource.setrlimit(getattr(resource, name), (int(value), int(value)))
os.umask(0o022)
os.execv(sys.argv[4], sys.argv[4:])
"""


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


def _mount_args(
    hidden: Iterable[Path],
    packages: Iterable[Path],
    visible: Iterable[Path],
    writable: Iterable[Path],
    tmp_bytes: int,
    blocker: Path,
) -> list[str]:
    """bwrap options for the file system: parents are mounted before their children.

    A hidden folder already inside another hidden folder is skipped (an empty folder would be
    importable as a namespace package); a hidden package folder gets ``blocker`` as its
    ``__init__.py``, so that importing it fails.
    """
    precedence = {"hide": 0, "package": 0, "scratch": 1, "ro": 2, "rw": 3}
    kinds: dict[Path, str] = {Path("/tmp"): "scratch"}
    for kind, paths in (("hide", hidden), ("package", packages), ("ro", visible), ("rw", writable)):
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


def _kernel_env(config: SandboxConfig, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a sandboxed kernel (the grader's own is cleared)."""
    return {
        "HOME": "/tmp",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "PATH": f"{Path(config.python).parent}:/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": os.pathsep.join(str(p) for p in config.python_path),
        "IPYTHONDIR": "/tmp/.ipython",
        "MPLCONFIGDIR": "/tmp/.matplotlib",
        **dict(config.env),
        **(extra or {}),
    }


#: How far ``RLIMIT_NPROC`` stands above ``max_processes`` where a control group limits the
#: processes (its ``pids.max``): the group's limit binds, and the group counts what it refuses
#: (``pids.events``), which ``RLIMIT_NPROC``'s refusals leave at 0.
NPROC_ABOVE_GROUP = 16


def _limits(config: SandboxConfig, counted: bool = False) -> dict[str, int]:
    """The resource limits of every process of a kernel, by ``resource`` constant name;
    ``counted``: a control group limits the processes to ``max_processes`` (and counts)."""
    return {
        "RLIMIT_AS": config.memory_mb * _MiB,
        "RLIMIT_NPROC": config.max_processes + (NPROC_ABOVE_GROUP if counted else 0),
        "RLIMIT_FSIZE": config.max_file_mb * _MiB,
        "RLIMIT_CORE": 0,
        "RLIMIT_CPU": int(2 * config.notebook_timeout_s + config.startup_timeout_s) + 10,
    }


#: The folders any user may write on a Linux image, which the container mode takes from the
#: kernel (read-only in its own mount namespace); ``/dev/shm`` it gets private and capped.
SHARED_WRITABLE = ("/tmp", "/var/tmp", "/run/lock", "/var/crash", "/dev/mqueue")


def _start_step(
    config: SandboxConfig, uid: int, writable: Iterable[Path] | None = None, counted: bool = False
) -> list[str]:
    """The start-up step's command line (:data:`_START_STEP`), to which the kernel's is added.

    With ``writable`` (the container mode), the step first gives the kernel a mount namespace of
    its own where the shared folders of :data:`SHARED_WRITABLE` are read-only but for
    ``writable`` (its working folder and its private folder), and ``/dev/shm`` is an empty tmpfs
    of ``config.tmp_mb``: without ``CAP_SYS_ADMIN`` (unshare and mount refused) it goes on
    without them, and :func:`~autograder.sandbox.execute.container_gaps` says so."""
    limits = ",".join(f"{k}={int(v)}" for k, v in _limits(config, counted).items())
    shared = {}
    if writable is not None:
        shared = {
            "ro": [p for p in SHARED_WRITABLE if os.path.isdir(p)],
            "rw": [str(p) for p in writable],
            "private": {"/dev/shm": f"{int(config.tmp_mb)}m"} if os.path.isdir("/dev/shm") else {},
        }
    return [config.python, "-I", "-S", "-c", _START_STEP, str(uid), limits, json.dumps(shared)]


def _bwrap_argv(
    config: SandboxConfig,
    hidden: list[Path],
    packages: list[Path],
    writable: list[Path],
    blocker: Path,
    uid: int,
    caps: Iterable[str],
    env: dict[str, str],
    cwd: Path,
) -> list[str]:
    """bwrap and its options up to the command: namespaces, mounts, environment."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxError("bubblewrap (bwrap) is not installed")
    blocker.write_text('raise ImportError("this package is not available in the sandbox")\n')
    blocker.chmod(0o644)
    argv = [
        bwrap,
        "--die-with-parent",
        "--new-session",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--hostname",
        "sandbox",
    ]
    if uid >= 0:
        # Privileged bwrap: no user namespace; the start-up step switches to ``uid``.
        for cap in caps:
            argv += ["--cap-add", cap]
    else:
        argv += ["--unshare-user", "--disable-userns"]
    argv += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    argv += _mount_args(
        hidden, packages, config.visible_paths, writable, config.tmp_mb * _MiB, blocker
    )
    argv += ["--perms", "1777", "--size", str(config.tmp_mb * _MiB), "--tmpfs", "/dev/shm"]
    argv += ["--clearenv"]
    for name, value in env.items():
        argv += ["--setenv", name, value]
    return argv + ["--chdir", str(cwd)]


def _sandbox_argv(
    config: SandboxConfig,
    workdir: Path,
    tmp: Path,
    uid: int,
    command: list[str],
    counted: bool = False,
) -> list[str]:
    """The command line that runs ``command`` in the sandbox with the limits applied.

    ``tmp`` is a private folder of the executor; its ``run`` subfolder (for the kernel's
    sockets) is bound read-write into the sandbox.
    """
    if shutil.which("bwrap") is None:
        raise SandboxError("bubblewrap (bwrap) is not installed")
    hidden, packages = _hidden_folders(config, workdir)
    argv = _bwrap_argv(
        config,
        hidden,
        packages,
        [workdir, tmp / "run"],
        tmp / "hidden_package.py",
        uid,
        ("CAP_SETUID", "CAP_SETGID"),
        _kernel_env(config),
        workdir,
    )
    return argv + ["--", *_start_step(config, uid, counted=counted), *command]


#: Capabilities the zygote of a root grader keeps: to build each submission's namespaces, mounts
#: and loopback, and to drop to its user. A submission's processes have none of them.
_ZYGOTE_CAPS = ("CAP_SYS_ADMIN", "CAP_NET_ADMIN", "CAP_SETUID", "CAP_SETGID")


def _zygote_argv(config: SandboxConfig, zdir: Path, command: list[str]) -> list[str]:
    """The command line of a warm sandbox's zygote (a root grader only).

    The zygote sees what a kernel sees (the same hidden and visible folders and environment)
    except a working folder: it gets its private folder ``zdir`` read-write instead, and keeps
    :data:`_ZYGOTE_CAPS`. It never runs student code.
    """
    if shutil.which("bwrap") is None:
        raise SandboxError("bubblewrap (bwrap) is not installed")
    hidden = [_real(p) for p in config.hidden_paths]
    packages = _package_folders(config.hidden_packages)
    argv = _bwrap_argv(
        config,
        hidden,
        packages,
        [zdir],
        zdir / "hidden_package.py",
        0,
        _ZYGOTE_CAPS,
        _kernel_env(config),
        zdir,
    )
    return argv + ["--", *command]


def _container_argv(
    config: SandboxConfig,
    uid: int,
    env: dict[str, str],
    command: list[str],
    writable: Iterable[Path] = (),
    counted: bool = False,
) -> list[str]:
    """The command line that runs ``command`` in the container mode (no bubblewrap): a cleared
    environment (``env`` only), then the start-up step that takes the shared folders but
    ``writable`` from it, drops to ``uid`` and sets the limits.
    """
    if uid < 0:
        raise SandboxError(
            "the container mode needs a root grader (to run the kernel as another user)"
        )
    cleared = [shutil.which("env") or "/usr/bin/env", "-i", *(f"{k}={v}" for k, v in env.items())]
    return [*cleared, *_start_step(config, uid, writable, counted), *command]
