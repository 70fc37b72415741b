"""The zygote: a warmed interpreter inside the sandbox that forks a fresh sandbox per submission.

This file is not imported by the grader: :mod:`autograder.sandbox.warm` runs its text with
``python -c`` inside a bubblewrap sandbox (where the :mod:`autograder` package is hidden), so it
needs nothing but the standard library until it imports the problem set's modules. It never runs
notebook code: it imports installed modules named by the grader, then serves requests.

Protocol
--------
The zygote listens on a ``SOCK_SEQPACKET`` Unix socket in its private folder (under the host's
``/tmp``, which every submission replaces by a fresh one), accepts connections from its own user
only, and announces itself with one JSON line on stdout. A request is one JSON message with three
file descriptors (``SCM_RIGHTS``): the working folder and the kernel's run folder as detached
mounts (``open_tree``, made by the grader on the host) and the kernel's log file. For each
request the zygote forks:

1. *the keeper* (root, capabilities of the zygote): new mount, pid, IPC, UTS and network
   namespaces; a fresh size-capped ``/tmp`` and ``/dev/shm``; the run folder and the working
   folder attached at their host paths (the working folder's parent replaced by an empty
   read-only folder, so siblings stay invisible); then it forks
2. *the init* (pid 1 of the new pid namespace): mounts its ``/proc``, sets the host name and the
   loopback, the limits (``setrlimit``), drops to the submission's user (``setgroups``,
   ``setresgid``, ``setresuid``), clears every capability, sets ``PR_SET_NO_NEW_PRIVS``, and forks
3. *the kernel*: standard streams to ``/dev/null`` and the log, every other descriptor closed,
   the submission's working folder, environment and arguments, NumPy's global random state
   reseeded, then ipykernel's ``IPKernelApp`` in this warmed interpreter.

The init reaps orphans and exits with the kernel's status (128 + the signal for a signal, as
bubblewrap reports it); its death ends every process of the submission. The keeper sends the
grader a pidfd of the init (``{"pid": ...}``), then its exit status (``{"exit": ...}``), or
``{"error": ...}`` if the sandbox could not be built.
"""

import ctypes
import importlib
import json
import os
import resource
import signal
import socket
import struct
import sys
import time

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
SYS_MOVE_MOUNT, MOVE_MOUNT_F_EMPTY_PATH, AT_FDCWD = 429, 4, -100
SYS_OPEN_TREE, OPEN_TREE_CLONE, AT_RECURSIVE = 428, 1, 0x8000
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 1, 4, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 1
SYS_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine)
KEYCTL_JOIN_SESSION_KEYRING = 1

libc = ctypes.CDLL(None, use_errno=True)
OWN = "/nonexistent"  # the zygote's own folder (its socket's), set by main()
libc.mount.argtypes = [
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
]
libc.syscall.restype = ctypes.c_long


def _check(result, what):
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(source, target, fstype, flags, data=None):
    def enc(s):
        return None if s is None else s.encode()

    _check(
        libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)),
        f"mount {fstype or ''} {target}",
    )


def _tmpfs(target, size, mode):
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")


def _attach(fd, path, hide_parent):
    """Attach the detached mount ``fd`` at ``path``, making the way to it."""
    parent = os.path.dirname(path)
    hidden = None
    if path.startswith("/tmp/"):  # the fresh /tmp: nothing else is there
        os.makedirs(path, 0o755, exist_ok=True)
    elif hide_parent and len(parent.strip("/").split("/")) > 1:
        _tmpfs(parent, 2**20, "0755")  # siblings become invisible
        os.mkdir(path, 0o755)
        hidden = parent
    elif not os.path.isdir(path):
        raise OSError(f"{path} does not exist in the sandbox")
    _check(
        libc.syscall(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, path.encode(), MOVE_MOUNT_F_EMPTY_PATH),
        f"move_mount {path}",
    )
    if hidden:
        _mount(None, hidden, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


#: The source name of the grader's size-capped folders (autograder.sandbox.disk.SOURCE): the
#: working and run folders of submissions, never carried into another sandbox's /tmp.
CAPPED_SOURCE = "grader-capped"


def _mounts_below_tmp(own):
    """The sandbox's mounts below ``/tmp`` (a hidden project root with the folders bound back
    into it, the environment, when the checkout lives under ``/tmp``), top-level ones only, but
    not the zygote's own folder ``own``: the fresh ``/tmp`` of a submission must hold them too."""
    points = set()
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if CAPPED_SOURCE in fields[fields.index("-") + 1 :]:
                continue  # a submission's size-capped folder (another's, or its own run's)
            point = fields[4]
            for escaped, char in (
                ("\\040", " "),
                ("\\011", "\t"),
                ("\\012", "\n"),
                ("\\134", "\\"),
            ):
                point = point.replace(escaped, char)
            if point.startswith("/tmp/") and point != own and not point.startswith(own + "/"):
                points.add(point)
    return sorted(p for p in points if not any(p.startswith(q + "/") for q in points))


def _detached(path):
    """A detached copy of the mount tree at ``path`` (``open_tree``), kept read-only if it was."""
    fd = libc.syscall(
        SYS_OPEN_TREE, AT_FDCWD, path.encode(), OPEN_TREE_CLONE | AT_RECURSIVE | os.O_CLOEXEC
    )
    _check(fd, f"open_tree {path}")
    return fd


def _loopback_up():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        import fcntl

        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))


def _drop_privileges(uid, limits):
    """Limits, then the submission's user, then no capability and no way to gain one."""
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # _LINUX_CAPABILITY_VERSION_3 for this process; two empty effective/permitted/inheritable sets
    header = ctypes.create_string_buffer(struct.pack("Ii", 0x20080522, 0), 8)
    _check(libc.capset(header, ctypes.create_string_buffer(24)), "capset")
    _check(libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "ambient capabilities")
    _check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    with open("/proc/self/status") as status:
        caps = [line.split()[1] for line in status if line.startswith(("CapEff", "CapPrm"))]
    if os.getuid() != uid or any(int(c, 16) for c in caps):
        raise OSError(f"privileges not dropped: uid {os.getuid()}, capabilities {caps}")
    if SYS_KEYCTL is not None:  # a session keyring of its own, not the one all children share
        _check(libc.syscall(SYS_KEYCTL, KEYCTL_JOIN_SESSION_KEYRING, None), "session keyring")


def _kernel(request, log_fd):
    """The kernel process: runs ipykernel in this interpreter; never returns."""
    code = 1
    try:
        null = os.open("/dev/null", os.O_RDWR)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(log_fd, 2)
        os.closerange(3, 1 << 16)
        libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)  # as after exec: its own processes may inspect it
        os.chdir(request["workdir"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = request["workdir"]  # as for ``python -m ipykernel_launcher`` started there
        sys.argv = ["ipykernel_launcher", *request["argv"]]
        if "numpy" in sys.modules:  # the zygote's global random state is every child's
            sys.modules["numpy"].random.seed()
        from ipykernel.kernelapp import IPKernelApp

        IPKernelApp.launch_instance(argv=request["argv"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except BaseException:  # noqa: BLE001 - reported in the kernel's log
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001
                pass
        os._exit(code)


def _init(request, log_fd, ready_fd):
    """Pid 1 of the submission's pid namespace; never returns."""
    try:
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        socket.sethostname("sandbox")
        _loopback_up()
        os.setsid()
        _drop_privileges(request["uid"], request["limits"])
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the keeper dies: all die
        kernel = os.fork()
    except BaseException as exc:  # noqa: BLE001 - reported to the keeper
        os.write(ready_fd, f"{type(exc).__name__}: {exc}".encode()[:4000] or b"?")
        os._exit(1)
    if kernel == 0:
        os.close(ready_fd)
        _kernel(request, log_fd)
    os.write(ready_fd, b"ok")
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.closerange(3, 1 << 16)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == kernel:
            code = os.waitstatus_to_exitcode(status)
            os._exit(128 - code if code < 0 else code)


def _keeper(conn, request, fds):
    """Build the submission's sandbox, start its init, report to the grader; never returns."""
    code = 1
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        work_fd, run_fd, log_fd = fds
        _check(
            libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET),
            "unshare",
        )
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        kept = [(path, _detached(path)) for path in _mounts_below_tmp(OWN)]
        _tmpfs("/tmp", request["tmp_bytes"], "1777")
        _tmpfs("/dev/shm", request["tmp_bytes"], "1777")
        for path, fd in kept:
            os.makedirs(path, 0o755, exist_ok=True)
            _check(
                libc.syscall(
                    SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, path.encode(), MOVE_MOUNT_F_EMPTY_PATH
                ),
                f"move_mount {path}",
            )
            os.close(fd)
        _attach(run_fd, request["run"], hide_parent=False)
        _attach(work_fd, request["workdir"], hide_parent=True)
        ready_read, ready_write = os.pipe()
        init = os.fork()
        if init == 0:
            conn.close()
            os.close(ready_read)
            _init(request, log_fd, ready_write)
        for fd in (ready_write, work_fd, run_fd, log_fd):
            os.close(fd)
        answer = os.read(ready_read, 4096)
        if answer != b"ok":
            os.waitpid(init, 0)
            raise OSError(answer.decode(errors="replace") or "the sandbox's init died")
        pidfd = os.pidfd_open(init)
        socket.send_fds(conn, [json.dumps({"pid": init}).encode()], [pidfd])
        os.close(pidfd)
        _, status = os.waitpid(init, 0)
        code = os.waitstatus_to_exitcode(status)
        conn.send(json.dumps({"exit": 128 - code if code < 0 else code}).encode())
        code = 0
    except BaseException as exc:  # noqa: BLE001 - the grader falls back to a cold sandbox
        try:
            conn.send(json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
        except OSError:
            pass
    finally:
        os._exit(code)


def _serve(server):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    while True:
        conn, _ = server.accept()
        try:
            _, peer_uid, _ = struct.unpack(
                "3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            )
            if peer_uid != os.getuid():
                raise PermissionError(peer_uid)
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            request = json.loads(message)
        except (OSError, ValueError):
            conn.close()
            continue
        if len(os.listdir("/proc/self/task")) != 1:  # never fork a threaded process
            conn.send(json.dumps({"error": "the zygote has threads"}).encode())
            raise SystemExit(3)
        if os.fork() == 0:
            server.close()
            _keeper(conn, request, fds)
        for fd in fds:
            os.close(fd)
        conn.close()


def main():
    global OWN
    config = json.loads(sys.argv[1])
    OWN = os.path.dirname(config["socket"])
    os.umask(0o022)
    start = time.perf_counter()
    failed = []
    for name in config["preload"]:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - a module the sandbox cannot import
            failed.append(f"{name} ({type(exc).__name__})")
    import gc

    gc.collect()
    gc.freeze()  # fewer pages copied by every fork
    server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    server.bind(config["socket"])
    server.listen(64)
    threads = len(os.listdir("/proc/self/task"))
    print(
        json.dumps(
            {
                "ready": threads == 1,
                "threads": threads,
                "failed": failed,
                "import_s": round(time.perf_counter() - start, 3),
            }
        ),
        flush=True,
    )
    if threads == 1:
        _serve(server)


if __name__ == "__main__":
    main()
