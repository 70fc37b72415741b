"""The suite's leftover-process check (``tests/leftovers.py``) on runs that leave processes
behind: a child never stopped, and an orphan whose parent exited (as a server started by a
command that was killed). That a run which stops what it starts passes is shown by the whole
suite, which runs under the same check."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # each test runs pytest itself, with its plugin
LEAKY = '''
import subprocess

def test_forgets_its_server():
    subprocess.Popen(["sleep", "{child}"])

def test_starts_a_command_whose_server_outlives_it():
    subprocess.run(["sh", "-c", "sleep {orphan} & exit 0"], check=True)
'''

def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), LEFTOVER_GRACE_S="3")
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.leftovers", "-q",
                           "-p", "no:cacheprovider", "--rootdir", str(folder), *args,
                           str(folder)], cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120)


def _running(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if entry.name.isdigit() and command.strip() == f"sleep {marker}":
            pids.append(int(entry.name))
    return pids


def test_a_run_that_leaves_processes_fails_names_them_and_kills_them(tmp_path):
    child, orphan = "301.25", "302.75"  # durations no other process uses
    (tmp_path / "test_leaky.py").write_text(LEAKY.format(child=child, orphan=orphan))
    done = _pytest(tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed" in done.stdout  # the tests pass; the run fails
    assert "left 2 process(es) running" in done.stdout
    assert f"sleep {child}" in done.stdout and f"sleep {orphan}" in done.stdout
    time.sleep(0.5)
    assert _running(child) == [] and _running(orphan) == []


def test_the_check_holds_under_xdist(tmp_path):
    child, orphan = "303.25", "304.75"
    (tmp_path / "test_leaky.py").write_text(LEAKY.format(child=child, orphan=orphan))
    done = _pytest(tmp_path, "-n", "2")
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"sleep {child}" in done.stdout and f"sleep {orphan}" in done.stdout
    time.sleep(0.5)
    assert _running(child) == [] and _running(orphan) == []
