"""A pytest plugin: the test run fails if a process it started outlives it.

The run's main process (pytest itself, or pytest-xdist's controller) makes itself a *child
subreaper* (Linux's ``PR_SET_CHILD_SUBREAPER``): a process whose parent exits is then handed to it
instead of to ``init``, so a server or kernel that a test started and forgot, even one whose
parent (a command under test, an xdist worker) has gone, is still its descendant. When the
session ends, every child still alive after :data:`GRACE_S` seconds (time for the workers and
their kernels to exit) is a leftover: the run fails with its process id and command line, and the
leftover is killed so that it does not outlive the run either.

Loaded by ``tests/conftest.py``; ``tests/test_leftovers.py`` checks it on a run that leaves a
process behind.
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

import pytest

__all__ = ["GRACE_S", "live_children"]

#: How long the processes still ending at the session's end may take (``$LEFTOVER_GRACE_S``).
GRACE_S = float(os.environ.get("LEFTOVER_GRACE_S", "20"))
_PR_SET_CHILD_SUBREAPER = 36


def _is_main_process() -> bool:
    return not os.environ.get("PYTEST_XDIST_WORKER")


def pytest_configure(config) -> None:
    if _is_main_process():
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _stat(pid: int) -> tuple[int, str] | None:
    """``(parent pid, state)`` of ``pid``, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), fields[0]


def _command(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:300] or "?"


def live_children(parent: int | None = None) -> dict[int, str]:
    """The children of ``parent`` (default: this process) that are alive, with their command
    lines; dead ones (zombies) are reaped on the way."""
    parent = os.getpid() if parent is None else parent
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(int(entry.name))
        if stat is None or stat[0] != parent:
            continue
        if stat[1] == "Z":
            try:
                os.waitpid(int(entry.name), os.WNOHANG)
            except ChildProcessError:
                pass
            continue
        found[int(entry.name)] = _command(int(entry.name))
    return found


def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 5
    while live_children() and time.monotonic() < deadline:
        time.sleep(0.1)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    if not _is_main_process():
        return
    deadline = time.monotonic() + GRACE_S
    left = live_children()
    while left and time.monotonic() < deadline:
        time.sleep(0.25)
        left = live_children()
    if not left:
        return
    lines = "\n".join(f"  pid {pid}: {command}" for pid, command in sorted(left.items()))
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    message = (f"the test run left {len(left)} process(es) running (killed now); the test that "
               f"started each must stop it:\n{lines}")
    if reporter is not None:
        reporter.write_sep("=", "processes left running", red=True)
        reporter.write_line(message)
    else:
        print(message)
    _kill(left)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
