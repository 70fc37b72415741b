"""Test-suite settings shared by every test module.

Hypothesis runs derandomised by default (profile ``ci``), so ``make test`` checks the same examples
on every run and CI never turns red on a new random draw; ``HYPOTHESIS_PROFILE=explore`` draws
fresh, more numerous examples to look for new failures (then pin each one as a plain test).

The marker ``slow`` names every test that starts a kernel, runs nbgrader, the grader or pytest,
builds the book, a wheel or an environment, or drives a browser; ``make test-fast``
(``-m "not slow"``) leaves them out, ``make test`` runs them all. A test is marked by hand
(``@pytest.mark.slow``, or ``pytestmark`` for a whole module), or because it uses a fixture
named in :data:`SLOW_FIXTURES` or in its module's own ``SLOW_FIXTURES``: whatever reads the book
build or a grading run is slow without having to say so.
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


#: Fixtures of this file whose users are slow: the book build, the graded mutants.
SLOW_FIXTURES = ("html", "mutant_runs")


def pytest_collection_modifyitems(items) -> None:
    """Mark ``slow`` every test using a fixture of :data:`SLOW_FIXTURES` or of its module's."""
    for item in items:
        module = getattr(item, "module", None)
        slow = set(SLOW_FIXTURES) | set(getattr(module, "SLOW_FIXTURES", ()))
        if slow & set(item.fixturenames):
            item.add_marker(pytest.mark.slow)


def shared_tmp(tmp_path_factory) -> Path:
    """The test run's temporary folder, shared by pytest-xdist's workers (each has its own
    below it), for what the whole run computes once."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def mutant_runs(tmp_path_factory):
    """``mutant_runs(name)``: every mutant of problem set ``name`` graded, once per test run
    (:class:`tests.mutantruns.MutantRuns`). Used by tests/course/test_problem_sets.py and
    tests/autograder/pages/test_report.py."""
    from tests.mutantruns import MutantRuns

    return MutantRuns(shared_tmp(tmp_path_factory))


@pytest.fixture(scope="session")
def html(tmp_path_factory) -> Path:
    """The whole book built from scratch with warnings as errors, once per test run.

    No execution cache, so every chapter executes as in CI. Under pytest-xdist the workers share
    one build (a file lock in the run's temporary folder): the first to ask builds, the other waits.
    Used by tests/book/test_book.py (the pages' content) and tests/book/test_site.py (the student site).
    """
    base = shared_tmp(tmp_path_factory)
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


@pytest.fixture(scope="module")
def multiprocessing_servers():
    """Stop, once the module's tests are done, the servers a module's in-process runs of
    ``grade`` (the local pool) start in this process: multiprocessing's forkserver (the pool's context,
    :class:`autograder.run.pool.LocalPool`) and its resource tracker. Each serves the process
    that started it until that process exits (it stops when its "alive" pipe closes: CPython's
    ``Lib/multiprocessing/forkserver.py``), as the command ``grade`` does when a batch ends; a
    test run outlives them, so it stops them as CPython's own tests do (their ``_stop``)."""
    yield
    from multiprocessing import forkserver, resource_tracker

    forkserver._forkserver._stop()
    resource_tracker._resource_tracker._stop()
