"""cgroup v2 for real, on this host's cgroup2 mount (:mod:`autograder.sandbox.cgroup`).

The rules tested are the kernel's, ``Documentation/admin-guide/cgroup-v2.rst``: 2-4-1 "Enabling
and Disabling" (a controller reaches a child through its parent's ``cgroup.subtree_control``),
2-4-2 "Top-down Constraint", 2-4-3 "No Internal Process Constraint" (a non-root cgroup with
processes cannot enable a domain controller: ``EBUSY``; the root cgroup is exempt) and 2-5
"Delegation" (a delegatee owns the folder, its ``cgroup.procs`` and ``cgroup.subtree_control``).
The kernel itself is the oracle: what ``cgroup.controllers`` offers, where ``/proc/PID/cgroup``
says a process is, what a write to ``cgroup.subtree_control`` answers. The mount is found in
``/proc/self/mountinfo`` (format: ``proc(5)``, fields before `` - ``, the file system type after).
Every test leaves no ``grader-*`` group and the mount's ``cgroup.subtree_control`` as it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.sandbox import cgroup
from tests.environment import require


def _cgroup2_mount() -> Path | None:
    """Where a cgroup2 file system is mounted, read from ``/proc/self/mountinfo``."""
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, after = line.partition(" - ")
        if after.split()[0] == "cgroup2" and fields.split()[3] == "/":
            return Path(fields.split()[4])
    return None


MOUNT = _cgroup2_mount()
pytestmark = require(
    MOUNT is not None and os.geteuid() == 0,
    "these tests need a cgroup2 mount of its hierarchy's root and a root user",
)


def _words(file: Path) -> set[str]:
    return set(file.read_text().split())


def _where(pid: int) -> str:
    """The process's v2 cgroup as the kernel says (``/proc/PID/cgroup``, line ``0::``)."""
    lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    return next(line[3:] for line in lines if line.startswith("0::"))


def _left(mount: Path) -> list[Path]:
    return [p for p in mount.rglob("grader-*") if p.is_dir()]


@pytest.fixture
def mount() -> Iterator[Path]:
    """The cgroup2 mount, checked afterwards: no group left, its controllers as they were."""
    assert MOUNT is not None
    before = _words(MOUNT / "cgroup.subtree_control")
    assert _left(MOUNT) == []
    yield MOUNT
    left, enabled = _left(MOUNT), _words(MOUNT / "cgroup.subtree_control") - before
    _restore(MOUNT, left, enabled)  # even after a failure: the host is shared
    assert left == [] and enabled == set()


def _restore(mount: Path, left: list[Path], enabled: set[str]) -> None:
    """Move what ``left`` holds to the root, remove it, and disable ``enabled`` there."""
    for folder in sorted(left, key=lambda f: len(f.parts), reverse=True):
        for pid in _words(folder / "cgroup.procs"):
            with contextlib.suppress(ProcessLookupError):
                (mount / "cgroup.procs").write_text(pid)
        folder.rmdir()
    if enabled:
        (mount / "cgroup.subtree_control").write_text(" ".join(f"-{c}" for c in enabled))


@contextlib.contextmanager
def _sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_the_mount_lacks_exactly_the_controllers_its_cgroup_controllers_does_not_list(mount):
    """``available`` names the controllers missing from the ``cgroup.controllers`` of the group
    the kernel says the grader is in (``/proc/self/cgroup``), no more."""
    own = mount / _where(os.getpid()).lstrip("/")
    offered = _words(own / "cgroup.controllers")
    lacking = sorted(set(cgroup.WANTED) - offered)
    version, why = cgroup.available(mount)
    if lacking:
        assert version is None and f"lacks {', '.join(lacking)}: " in why, why
    else:
        assert version == "v2", why
    for controller in cgroup.WANTED:
        assert (cgroup.available(mount, need=[controller])[0] == "v2") == (controller in offered)


def test_a_group_holds_a_real_process_and_goes_with_its_parent(mount):
    """A group made with what the mount offers holds a process (the kernel places it there),
    and its removal takes the grader's parent folder with it."""
    own = mount / _where(os.getpid()).lstrip("/")
    need = [c for c in cgroup.WANTED if c in _words(own / "cgroup.controllers")]
    group = cgroup.Group.create(64, 10, at=mount, need=need)
    assert group is not None and group.version == "v2"
    (folder,) = group.folders
    with _sleeper() as process:
        pidfd = os.pidfd_open(process.pid)
        try:
            assert group.add(pidfd)
        finally:
            os.close(pidfd)
        assert _where(process.pid) == f"/{folder.relative_to(mount)}"
        assert group.reached() == []
    group.remove()
    assert not folder.exists() and not folder.parent.exists()


def test_a_grader_in_a_group_with_processes_moves_into_a_leaf_to_enable_controllers(mount):
    """The container's case: the grader's own group is not the root and holds processes (here
    a ``sleep`` stands for the grader). With
    any controller the mount offers, the kernel refuses to enable it there (``EBUSY``) until the
    grader moves into a leaf; the submissions' parent then has it (top-down), and all of it is
    given back and removed afterwards (the fixture checks). With none, enabling is no write."""
    offered = _words(mount / "cgroup.controllers")
    own = mount / f"grader-own-{os.getpid()}"
    own.mkdir()
    try:
        with _sleeper() as process:
            (own / "cgroup.procs").write_text(str(process.pid))
            if offered:  # the rule, as the kernel applies it, before the grader's move
                extra = " ".join(
                    f"+{c}" for c in offered - _words(mount / "cgroup.subtree_control")
                )
                if extra:
                    (mount / "cgroup.subtree_control").write_text(extra)
                with pytest.raises(OSError) as refused:
                    (own / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in offered))
                assert refused.value.errno == errno.EBUSY
                if extra:
                    (mount / "cgroup.subtree_control").write_text(extra.replace("+", "-"))
            tree = cgroup.Unified(mount, own)
            parent = cgroup.prepare(tree, offered)
            leaf = own / "grader-leaf"
            assert _where(process.pid) == (
                f"/{leaf.relative_to(mount)}" if offered else f"/{own.relative_to(mount)}"
            )
            assert _words(own / "cgroup.subtree_control") == offered
            assert offered <= _words(parent / "cgroup.controllers")
            group = cgroup.Group("v2", (parent / "grader-0",), 64, 10, ())
            group.folders[0].mkdir()
            group.remove()
            assert not parent.exists()
            assert _words(own / "cgroup.subtree_control") == set()
            (mount / "cgroup.procs").write_text(str(process.pid))
    finally:
        for folder in (own / "grader-leaf", own):
            if folder.exists():
                folder.rmdir()


def _delegated(mount: Path) -> list[str]:
    """What a grader finds and does at ``mount``: ``available``, then a group holding a child."""
    lines = [str(cgroup.available(mount, need=())[0])]
    group = cgroup.Group.create(64, 10, at=mount, need=())
    if group is not None:
        with _sleeper() as process:
            pidfd = os.pidfd_open(process.pid)
            lines.append(f"{group.add(pidfd)} {_where(process.pid)}")
            os.close(pidfd)
        group.remove()
        lines.append(str(group.folders[0].parent.exists()))
    return lines


def _as_nobody(mount: Path, into: Path) -> list[str]:
    """:func:`_delegated` in a child process of user 65534 in the group ``into``: its lines."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (the child)
        try:
            os.close(read)
            (into / "cgroup.procs").write_text(str(os.getpid()))
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            lines = _delegated(mount)
        except BaseException:
            lines = [traceback.format_exc()]
        finally:
            os.write(write, "\n".join(lines).encode())
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        out = pipe.read()
    os.waitpid(pid, 0)
    return out.split("\n")


def test_a_non_root_grader_uses_a_delegated_subtree_and_nothing_else(mount):
    """As user 65534: in a group it does not own, no v2; once the group, its ``cgroup.procs``
    and ``cgroup.subtree_control`` are its own (what ``Delegate=yes`` gives), it makes a group,
    moves its own child into it and removes it."""
    own = mount / f"grader-delegated-{os.getpid()}"
    own.mkdir()
    try:
        assert _as_nobody(mount, own)[0] == "None"
        for path in (own, own / "cgroup.procs", own / "cgroup.subtree_control"):
            os.chown(path, 65534, 65534)
        first, moved, parent_left = _as_nobody(mount, own)
        assert first == "v2"
        assert moved.startswith(f"True /{own.relative_to(mount)}/grader-"), moved
        assert parent_left == "False"
    finally:
        for folder in sorted(own.glob("grader-*"), reverse=True):
            folder.rmdir()
        own.rmdir()


def test_the_cgroup_file_system_is_chosen_by_its_environment_variable(mount, monkeypatch):
    """``AUTOGRADER_CGROUP_ROOT`` points the grader at another cgroup file system."""
    monkeypatch.setenv("AUTOGRADER_CGROUP_ROOT", str(mount))
    assert cgroup.available() == cgroup.available(mount)
    assert cgroup.available(need=())[0] == "v2"
