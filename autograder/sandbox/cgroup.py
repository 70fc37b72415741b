"""Limits per submission, enforced by the kernel: one control group for all its processes.

``RLIMIT_AS`` and ``RLIMIT_NPROC`` bound each process; a submission that starts many processes
holds many times the memory. Where the grader is root and the host mounts control groups, each
submission's processes are moved into a group of their own as soon as its kernel is up, before
any of its cells runs (what they start later is born in it), with:

- memory: the configured ``memory_mb`` for all its processes together;
- processes: ``max_processes`` for all of them;
- CPU: one CPU's worth of time at most (a quota), so that one submission's busy processes cannot
  starve another's kernel.

cgroup v2 (a unified hierarchy: ``memory.max``, ``pids.max``, ``cpu.max``, ``memory.events``) is
used where the host has it, else v1 (one hierarchy per controller: ``memory.limit_in_bytes``,
``memory.failcnt``, ``pids.max``, ``pids.events``, ``cpu.cfs_quota_us``), as the kernel's
``Documentation/admin-guide/cgroup-v2.rst`` and ``cgroup-v1/{memory,pids}.rst`` name them. After
the run, :meth:`Group.reached` names the limits the submission reached, and the group is
removed. Where neither can be used, :func:`available` says why and what is then not enforced.
"""

from __future__ import annotations

import itertools
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["available", "Group", "UNLIMITED"]

log = logging.getLogger("autograder.sandbox")

ROOT = Path("/sys/fs/cgroup")
_V1 = ("memory", "pids", "cpu")
_PERIOD_US = 100_000
_counter = itertools.count()

#: What is not enforced without control groups.
UNLIMITED = (
    "memory, processes and CPU are limited per process only, not per submission (no control "
    "groups: they need a root grader on a host that mounts cgroup v2, or v1's memory, pids and "
    "cpu controllers)"
)


def available() -> tuple[str | None, str]:
    """``("v2" or "v1", description)`` where control groups can be used, else ``(None,
    reason)``."""
    if os.geteuid() != 0:
        return None, "the grader is not root"
    if (ROOT / "cgroup.controllers").is_file():
        wanted = {"memory", "pids", "cpu"}
        found = set((ROOT / "cgroup.controllers").read_text().split())
        if wanted <= found:
            return "v2", f"cgroup v2 at {ROOT}"
        return None, f"cgroup v2 lacks {', '.join(sorted(wanted - found))}"
    missing = [c for c in _V1 if not (ROOT / c / "cgroup.procs").is_file()]
    if missing:
        return None, f"no cgroup v2, and cgroup v1 lacks {', '.join(missing)}"
    return "v1", f"cgroup v1 ({', '.join(_V1)}) at {ROOT}"


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


@dataclass
class Group:
    """One submission's control group (its folder in each hierarchy it uses)."""

    version: str
    folders: tuple[Path, ...]
    memory_mb: int
    max_processes: int

    @classmethod
    def create(cls, memory_mb: int, max_processes: int) -> Group | None:
        """A new group with the limits set, or None (logged) where none can be made."""
        version, why = available()
        if version is None:
            return None
        name = f"grader-{os.getpid()}-{next(_counter)}"
        names = ("",) if version == "v2" else _V1
        group = cls(version, tuple(ROOT / c / name for c in names), memory_mb, max_processes)
        try:
            for folder in group.folders:
                folder.mkdir()
            for file, value in group._settings().items():
                file.write_text(value)
        except OSError as exc:
            log.warning("could not make a control group (%s): %s", why, exc)
            group.remove()
            return None
        return group

    def _settings(self) -> dict[Path, str]:
        """``{file: value}`` setting the group's limits."""
        memory = str(self.memory_mb * 2**20)
        if self.version == "v2":
            (folder,) = self.folders
            return {
                folder / "memory.max": memory,
                folder / "pids.max": str(self.max_processes),
                folder / "cpu.max": f"{_PERIOD_US} {_PERIOD_US}",
            }
        memory_folder, pids, cpu = self.folders
        return {
            memory_folder / "memory.limit_in_bytes": memory,
            pids / "pids.max": str(self.max_processes),
            cpu / "cpu.cfs_period_us": str(_PERIOD_US),
            cpu / "cpu.cfs_quota_us": str(_PERIOD_US),
        }

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
        """How often the group hit its ``controller`` limit."""
        try:
            if self.version == "v2":
                name = "memory.events" if controller == "memory" else "pids.events"
                events = dict(
                    line.split()
                    for line in (self.folders[0] / name).read_text().splitlines()
                    if line.strip()
                )
                return int(events.get("max", 0)) + int(events.get("oom_kill", 0))
            folder = self.folders[_V1.index(controller)]
            if controller == "memory":
                return int((folder / "memory.failcnt").read_text())
            events = dict(
                line.split() for line in (folder / "pids.events").read_text().splitlines()
            )
            return int(events.get("max", 0))
        except (OSError, ValueError):
            return 0

    def remove(self) -> None:
        """Remove the group, once its processes have exited (waiting a little for them)."""
        for folder in self.folders:
            for _ in range(50):
                try:
                    if folder.exists():
                        folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
            else:
                log.warning("control group %s could not be removed", folder)
