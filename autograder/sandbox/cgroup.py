"""Limits per submission, enforced by the kernel: one control group for all its processes.

``RLIMIT_AS`` and ``RLIMIT_NPROC`` bound each process; a submission that starts many processes
holds many times the memory. Where the host mounts control groups the grader may write (as root,
or in a cgroup v2 subtree delegated to it), each submission's processes are moved into a group of
their own as soon as its kernel is up, before any of its cells runs (what they start later is
born in it), with:

- memory: the configured ``memory_mb`` for all its processes together (and no swap beyond it);
- processes: ``max_processes`` for all of them (``RLIMIT_NPROC`` then stands above it:
  the group's limit binds, and it counts what it refuses, which names the limit);
- CPU: one CPU's worth of time at most (a quota), so that one submission's busy processes cannot
  starve another's kernel.

cgroup v2 (one unified hierarchy: ``memory.max``, ``memory.swap.max``, ``pids.max``, ``cpu.max``,
``memory.events``, ``pids.events``) is used where the cgroup file system at :func:`root` is a
cgroup2 mount, else v1 (one hierarchy per controller: ``memory.limit_in_bytes``,
``memory.failcnt``, ``pids.max``, ``pids.events``, ``cpu.cfs_quota_us``), as the kernel's
``Documentation/admin-guide/cgroup-v2.rst`` and ``cgroup-v1/{memory,pids}.rst`` name them.

On v2 the kernel's rules decide where the groups may go (``cgroup-v2.rst``, section 2-4,
"Controlling Controllers", and 2-5, "Delegation"):

- "Enabling and Disabling": a controller reaches a child only when its parent lists it in
  ``cgroup.subtree_control``; and "Top-down Constraint": a cgroup may enable only what its own
  parent enabled for it (its ``cgroup.controllers``). The submissions' groups sit in a parent
  made under the grader's own group (``/proc/self/cgroup``, line ``0::/path``), and the
  controllers are enabled from the highest writable level down to that parent.
- "No Internal Process Constraint": a non-root cgroup holding processes cannot enable a domain
  controller for its children (the write fails with ``EBUSY``). In a container with its own
  cgroup namespace the grader's own group is such a cgroup: its processes are moved into a leaf
  (``grader-leaf``) first. The root cgroup is exempt.
- "Delegation": a non-root grader may use a subtree whose folder, ``cgroup.procs`` and
  ``cgroup.subtree_control`` it owns (systemd's ``Delegate=yes``, ``systemd-run --user --scope
  -p Delegate=yes``); such a grader is v2 too.

After the run, :meth:`Group.reached` names the limits the submission reached, and the group is
removed (its parent with it once empty). Where neither can be used, :func:`available` says why
and what is then not enforced.
"""

from __future__ import annotations

import errno
import itertools
import logging
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["available", "enable", "Group", "prepare", "release", "root", "unified", "Unified"]
__all__ += ["UNLIMITED", "WANTED"]

log = logging.getLogger("autograder.sandbox")

#: The default cgroup file system (``AUTOGRADER_CGROUP_ROOT`` chooses another).
ROOT = Path("/sys/fs/cgroup")
#: The controllers a submission's group uses.
WANTED = ("memory", "pids", "cpu")
_V1 = WANTED
_PERIOD_US = 100_000
_LEAF = "grader-leaf"
#: What a controller limits for all of a submission's processes together.
_WHAT = {"cpu": "CPU time", "memory": "memory", "pids": "number of processes"}
_counter = itertools.count()
_lock = threading.Lock()
#: The controllers this process enabled, by folder (given back once its last group is gone).
_enabled: dict[Path, set[str]] = {}
#: The folders from the mount down to this process's parent of groups.
_way: set[Path] = set()

#: What is not enforced without control groups.
UNLIMITED = (
    "memory, processes and CPU are limited per process only, not per submission (no control "
    "groups: they need a host that mounts cgroup v2 with a subtree the grader may write, as root "
    "or delegated, or v1's memory, pids and cpu controllers and a root grader)"
)


def root() -> Path:
    """The cgroup file system used: ``$AUTOGRADER_CGROUP_ROOT``, else ``/sys/fs/cgroup``."""
    return Path(os.environ.get("AUTOGRADER_CGROUP_ROOT") or ROOT)


@dataclass(frozen=True)
class Unified:
    """A cgroup v2 hierarchy as the grader sees it.

    Attributes
    ----------
    mount : Path
        Where it is mounted.
    own : Path
        The grader's own cgroup (a folder under ``mount``; ``mount`` itself where the grader's
        cgroup lies outside what is mounted).
    """

    mount: Path
    own: Path

    def offered(self) -> set[str]:
        """The controllers the grader's own group may enable for its children."""
        return set(_words(self.own / "cgroup.controllers"))

    def writable(self) -> bool:
        """Whether the grader may make groups under its own (root, or a delegated subtree)."""
        names = ("cgroup.procs", "cgroup.subtree_control")
        return os.access(self.own, os.W_OK) and all(os.access(self.own / n, os.W_OK) for n in names)


def _words(file: Path) -> list[str]:
    """The words of a control file (``cgroup.controllers``, ``cgroup.procs``); none if unread."""
    try:
        return file.read_text().split()
    except OSError:
        return []


def _words_lines(file: Path) -> list[str]:
    """The lines of a control file that hold anything (``memory.events``, ``pids.events``)."""
    return [line for line in file.read_text().splitlines() if line.strip()]


def _mount_root(mount: Path) -> str | None:
    """The subtree of its hierarchy mounted at ``mount`` (``/proc/self/mountinfo``, field 4)."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, fs = line.partition(" - ")
        parts = fields.split()
        if fs.split()[:1] == ["cgroup2"] and Path(parts[4]) == mount:
            return parts[3]
    return None


def unified(mount: Path) -> Unified | None:
    """The cgroup v2 hierarchy mounted at ``mount``, or None where it is not a cgroup2 mount."""
    if not (mount / "cgroup.controllers").is_file():
        return None
    mounted = _mount_root(mount) or "/"
    own = mount
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            path = line[3:].split(" (deleted)")[0]
            relative = os.path.relpath(path, mounted)
            if not relative.startswith(".."):
                own = mount / relative if relative != "." else mount
    return Unified(mount, own)


def available(at: Path | None = None, need: Iterable[str] = WANTED) -> tuple[str | None, str]:
    """``("v2" or "v1", description)`` where control groups can be used, else ``(None,
    reason)``.

    Parameters
    ----------
    at : Path, optional
        The cgroup file system (default: :func:`root`).
    need : iterable of str
        The controllers a submission's group must have.
    """
    top = at or root()
    need = set(need)
    tree = unified(top)
    if tree is not None:
        where = f"cgroup v2 at {tree.own}"
        if not tree.writable():
            return None, f"{where} is not writable by the grader (neither root nor delegated)"
        lacking = need - tree.offered()
        if lacking:
            what = ", ".join(_WHAT[c] for c in sorted(lacking))
            return (
                None,
                f"{where} lacks {', '.join(sorted(lacking))}: {what} not limited per submission",
            )
        return "v2", where
    if os.geteuid() != 0:
        return None, "the grader is not root and there is no cgroup v2 subtree delegated to it"
    missing = [c for c in _V1 if c in need and not (top / c / "cgroup.procs").is_file()]
    if missing:
        return None, f"no cgroup v2 at {top}, and cgroup v1 lacks {', '.join(missing)}"
    return "v1", f"cgroup v1 ({', '.join(c for c in _V1 if c in need)}) at {top}"


def _move_into_leaf(folder: Path) -> None:
    """Move every process of ``folder`` into its leaf ``grader-leaf`` (no internal processes)."""
    leaf = folder / _LEAF
    leaf.mkdir(exist_ok=True)
    for pid in _words(folder / "cgroup.procs"):
        try:
            (leaf / "cgroup.procs").write_text(pid)
        except ProcessLookupError:  # it exited meanwhile
            continue


def enable(folder: Path, controllers: Iterable[str], into_leaf: bool = False) -> None:
    """Enable ``controllers`` for the children of ``folder`` (those not enabled already).

    Where the kernel refuses with ``EBUSY`` (a non-root cgroup with processes of its own) and
    ``into_leaf`` allows it (``folder`` is the grader's own group), its processes move into a
    leaf and the write is made again. No controller to enable is no write at all.
    """
    missing = set(controllers) - set(_words(folder / "cgroup.subtree_control"))
    if not missing:
        return
    line = " ".join(f"+{c}" for c in sorted(missing))
    try:
        (folder / "cgroup.subtree_control").write_text(line)
    except OSError as exc:
        if exc.errno != errno.EBUSY or not into_leaf:
            raise
        _move_into_leaf(folder)
        (folder / "cgroup.subtree_control").write_text(line)
    _enabled.setdefault(folder, set()).update(missing)


def release() -> None:
    """Disable what this process enabled, lowest level first, where no other group uses it.

    A controller enabled in a v2 ``cgroup.subtree_control`` stays bound to v2: on a host that
    mounts v1 hierarchies too, it could not be mounted as v1 again while it is.
    """
    for folder in sorted(_enabled, key=lambda f: len(f.parts), reverse=True):
        if not folder.is_dir():  # removed with what it enabled
            del _enabled[folder]
            continue
        others = [c for c in folder.iterdir() if c.is_dir() and c.name != _LEAF and c not in _way]
        if others:
            return  # someone else's groups may use them, and so may every level above
        line = " ".join(f"-{c}" for c in sorted(_enabled.pop(folder)))
        try:
            (folder / "cgroup.subtree_control").write_text(line)
        except OSError as exc:
            log.warning("could not disable %s in %s: %s", line, folder, exc)


def prepare(tree: Unified, need: Iterable[str] = WANTED) -> Path:
    """The parent of this process's submission groups, made, with ``need`` enabled down to it.

    The parent is ``grader-PID`` in the grader's own group. Controllers are enabled top-down:
    from the mount's top (where the grader is root of the whole hierarchy) or its own group
    (delegated) down to the parent.
    """
    need = set(need)
    chain = [tree.own]
    if os.geteuid() == 0:  # as root: every level above the grader's group too
        chain = [tree.own, *tree.own.parents]
        chain = [f for f in reversed(chain) if f == tree.mount or tree.mount in f.parents]
    for folder in chain:
        wanted = need & set(_words(folder / "cgroup.controllers"))
        enable(folder, wanted, into_leaf=folder == tree.own)
    parent = tree.own / f"grader-{os.getpid()}"
    _way.update([*chain, parent])
    parent.mkdir(exist_ok=True)
    enable(parent, need)
    return parent


def _pid_of(pidfd: int) -> int | None:
    try:
        for line in Path(f"/proc/self/fdinfo/{pidfd}").read_text().splitlines():
            if line.startswith("Pid:"):
                pid = int(line.split()[1])
                return pid if pid > 0 else None
    except (OSError, ValueError):
        return None
    return None


def _tree(pid: int) -> list[int]:
    """``pid`` and every process below it."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                stack += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def _events(file: Path) -> dict[str, int]:
    """A ``key value`` per line file (``memory.events``, ``pids.events``), as numbers."""
    out = {}
    for line in _words_lines(file):
        key, _, value = line.partition(" ")
        out[key] = int(value)
    return out


@dataclass
class Group:
    """One submission's control group (its folder in each hierarchy it uses)."""

    version: str
    folders: tuple[Path, ...]
    memory_mb: int
    max_processes: int
    controllers: tuple[str, ...] = WANTED

    @classmethod
    def create(
        cls,
        memory_mb: int,
        max_processes: int,
        at: Path | None = None,
        need: Iterable[str] = WANTED,
    ) -> Group | None:
        """A new group with the limits of ``need`` set, or None (logged) where none can be made.

        ``at`` is the cgroup file system (default: :func:`root`).
        """
        top = at or root()
        need = tuple(c for c in WANTED if c in set(need))
        version, why = available(top, need)
        if version is None:
            return None
        name = f"grader-{os.getpid()}-{next(_counter)}"
        try:
            with _lock:
                if version == "v2":
                    tree = unified(top)
                    assert tree is not None  # available() said v2
                    folders: tuple[Path, ...] = (prepare(tree, need) / name,)
                else:
                    folders = tuple(top / c / name for c in need)
                group = cls(version, folders, memory_mb, max_processes, need)
                for folder in folders:
                    folder.mkdir()
        except OSError as exc:
            log.warning("could not make a control group (%s): %s", why, exc)
            return None
        try:
            for file, value in group._settings().items():
                file.write_text(value)
        except OSError as exc:
            log.warning("could not set a control group's limits (%s): %s", why, exc)
            group.remove()
            return None
        return group

    def _settings(self) -> dict[Path, str]:
        """``{file: value}`` setting the group's limits."""
        memory = str(self.memory_mb * 2**20)
        if self.version == "v2":
            (folder,) = self.folders
            files = {
                "memory": {"memory.max": memory, "memory.swap.max": "0"},
                "pids": {"pids.max": str(self.max_processes)},
                "cpu": {"cpu.max": f"{_PERIOD_US} {_PERIOD_US}"},
            }
            return {
                folder / name: value
                for c in self.controllers
                for name, value in files[c].items()
                if name != "memory.swap.max" or (folder / name).exists()  # where swap is
            }
        where = dict(zip(self.controllers, self.folders, strict=True))
        files_v1 = {
            "memory": {"memory.limit_in_bytes": memory},
            "pids": {"pids.max": str(self.max_processes)},
            "cpu": {"cpu.cfs_period_us": str(_PERIOD_US), "cpu.cfs_quota_us": str(_PERIOD_US)},
        }
        return {where[c] / n: v for c in self.controllers for n, v in files_v1[c].items()}

    def add(self, pidfd: int) -> bool:
        """Move the process of ``pidfd`` and every process below it into the group."""
        pid = _pid_of(pidfd)
        if pid is None:
            return False
        try:
            for member in _tree(pid):
                for folder in self.folders:
                    (folder / "cgroup.procs").write_text(str(member))
        except OSError as exc:
            log.warning("could not move a submission into its control group: %s", exc)
            return False
        return True

    def reached(self) -> list[str]:
        """The limits the submission reached, each in words naming it."""
        out = []
        if self._count("memory") > 0:
            out.append(
                f"the submission reached its memory limit of {self.memory_mb:,} MB for all its "
                "processes together"
            )
        if self._count("pids") > 0:
            out.append(
                f"the submission reached its limit of {self.max_processes} processes and "
                "threads at once"
            )
        return out

    def _count(self, controller: str) -> int:
        """How often the group hit its ``controller`` limit (0 where it has no such limit)."""
        if controller not in self.controllers:
            return 0
        try:
            if self.version == "v2":
                folder = self.folders[0]
                if controller == "memory":
                    events = _events(folder / "memory.events")
                    return sum(events.get(k, 0) for k in ("max", "oom", "oom_kill"))
                return _events(folder / "pids.events").get("max", 0)
            folder = self.folders[self.controllers.index(controller)]
            if controller == "memory":
                return int((folder / "memory.failcnt").read_text())
            return _events(folder / "pids.events").get("max", 0)
        except (OSError, ValueError):
            return 0

    def remove(self) -> None:
        """Remove the group, once its processes have exited (waiting a little for them), and
        on v2 its parent once no other group of this grader is in it."""
        for folder in self.folders:
            _rmdir(folder)
        if self.version == "v2":
            with _lock:
                try:
                    self.folders[0].parent.rmdir()
                except OSError:  # another submission's group is still in it
                    return
                release()


def _rmdir(folder: Path) -> None:
    for _ in range(50):
        try:
            if folder.exists():
                folder.rmdir()
            return
        except OSError:
            time.sleep(0.1)
    log.warning("control group %s could not be removed", folder)
