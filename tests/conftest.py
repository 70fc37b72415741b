"""Test-suite settings shared by every test module.

Hypothesis runs derandomised by default (profile ``ci``), so ``make test`` checks the same examples
on every run and CI never turns red on a new random draw; ``HYPOTHESIS_PROFILE=explore`` draws
fresh, more numerous examples to look for new failures (then pin each one as a plain test).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parents[1]

settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("explore", max_examples=1000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def html(tmp_path_factory) -> Path:
    """The whole book built from scratch with warnings as errors, once per test run.

    No execution cache, so every chapter executes as in CI. Under pytest-xdist the workers share
    one build (a file lock in the run's temporary folder): the first to ask builds, the other waits.
    Used by tests/test_book.py (the pages' content) and tests/test_site.py (the student site).
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, shared by its workers
    log = base / "book-build.log"
    with open(base / "book-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not log.exists():
            jb = Path(sys.executable).parent / "jupyter-book"
            done = subprocess.run([str(jb), "build", str(ROOT), "--path-output", str(base / "book"),
                                   "--warningiserror", "--keep-going", "--quiet"],
                                  capture_output=True, text=True)
            log.write_text(f"{done.returncode}\n{(done.stdout + done.stderr)[-5000:]}")
    code, _, output = log.read_text().partition("\n")
    assert code == "0", output
    return base / "book" / "_build" / "html"
