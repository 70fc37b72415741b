"""Grading on a Dask cluster (``--scheduler``) gives a local run's grades, despite a dead worker.

Twenty ps1_pca submissions, honest and hostile, are graded twice through the CLI, with real
sandboxed kernels: by the local pool (``--workers 2``), and by a real
``distributed.LocalCluster`` of two single-threaded worker processes started here
(``--scheduler tcp://...``), one of whose workers is killed mid-batch, as soon as the first results
are written. The two ``grades.csv`` must be equal row for row, and the cluster's run must hold
every student exactly once. Everything lives under ``/var/tmp`` (the sandbox has a private
``/tmp``) and writes no gradebook.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dask
import pytest
from distributed import Client, LocalCluster

from autograder.run.batch import grade_class
from autograder.run.task import GradingOptions
from autograder.sandbox import sandbox_available
from tests import ROOT
from tests import submissions as sb
from tests.environment import require
from tests.psharness import generate_release

AVAILABLE, REASON = sandbox_available()
pytestmark = [
    pytest.mark.slow,
    require(AVAILABLE, f"no sandbox here: {REASON}"),
    pytest.mark.usefixtures("multiprocessing_servers"),
]

PS, NB = "ps1_pca", "ps1_pca.ipynb"
#: The battery holds an empty file: its student's row is ``unreadable-file`` (an interrupted
#: upload), which needs the instructor's attention, so the command exits 1.
UNREADABLE, ATTENTION = "unreadable-file", 1
FULL = 20.0  # autograded points of ps1_pca
# Seconds per cell: short, so that the uninterruptible loop costs 15 s + 10 s of grace, yet over
# twice the slowest honest cell (importing scikit-learn) on this loaded 2-core machine.
CELL_TIMEOUT = "15"
# A LocalCluster closes the nanny of a worker that is not back within this (default 15 s), which
# a restart on this loaded machine can exceed.
CLUSTER_CONFIG = {"distributed.deploy.lost-worker-timeout": "300s"}


def battery(b: sb.Builder) -> dict[str, bytes]:
    """Twenty submissions: honest (right, blank, wrong, incomplete) and hostile (files that are
    no notebook, an uninterruptible loop, exits, errors, patched assertion helpers)."""
    nbs: dict[str, object] = {
        "correct-a": b.correct(),
        "blank-a": b.blank(), "blank-b": b.blank(),  # the nbgrader release, as handed out
        "wrong-svd": b.wrong(sb.WRONG_SVD), "wrong-eig": b.wrong(sb.WRONG_EIG),
        "wrong-both": sb.replace(b.wrong(sb.WRONG_SVD), *sb.WRONG_EIG),
        "half-done": b.blank_answer("best_rank_k"),
        "answer-deleted": sb.delete(b.correct(), "project"),
        "stripped": sb.strip_nbgrader(b.correct()),
        "monkeypatch": sb.insert_after(b.wrong(sb.WRONG_SVD), "setup", sb.MONKEYPATCH),
        "not-json": b"this is { not a notebook",
        "empty-file": b"",
        "not-a-notebook": b'{"cells": 5, "nbformat": 4}',
        "loop": sb.insert_after(b.correct(), "numerics", sb.STUCK_LOOP),
        "exit-early": sb.insert_after(b.correct(), "setup", "import os\nos._exit(0)"),
        "exit-late": sb.insert_after(b.correct(), "project_hidden", "import os\nos._exit(0)"),
        "sys-exit": sb.insert_after(b.correct(), "center_visible", "import sys\nsys.exit()"),
        "raises": sb.insert_after(b.correct(), "setup", "raise RuntimeError('oops')"),
    }
    data = {s: n if isinstance(n, bytes) else sb.to_bytes(n) for s, n in nbs.items()}
    data["truncated"] = data["correct-a"][: len(data["correct-a"]) // 2]
    data["binary"] = bytes(range(256)) * 64
    assert len(data) == 20
    return data


def cli(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder", "grade", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def grade_rows(out: Path) -> list[list[str]]:
    with open(out / "grades.csv", newline="", encoding="utf-8") as f:
        return list(csv.reader(f))


@pytest.fixture(scope="module")
def base():
    path = Path(tempfile.mkdtemp(prefix="dask-grading-test-", dir="/var/tmp"))
    path.chmod(0o755)  # the kernel runs as another user when the grader is root
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    with dask.config.set(CLUSTER_CONFIG), \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                         dashboard_address=":0") as c, Client(c) as client:
        yield client


@pytest.fixture(scope="module")
def submissions(base):
    course = base / "course"
    course.mkdir()
    release = generate_release([PS], course)
    students = battery(sb.Builder(course / "source" / PS / NB, release / PS / NB))
    subs = base / "submissions"
    for student, data in students.items():
        (subs / student).mkdir(parents=True)
        (subs / student / NB).write_bytes(data)
    return subs, students


@pytest.fixture(scope="module")
def local_run(base, submissions):
    out = base / "local"
    run = cli(PS, str(submissions[0]), "--out", str(out), "--workers", "2",
              "--timeout", CELL_TIMEOUT, "--quiet")
    assert run.returncode == ATTENTION and UNREADABLE in run.stderr, run.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def cluster_run(base, submissions, cluster, local_run):
    """The CLI on the cluster; a worker running a task is killed when the first record lands."""
    out, logs = base / "cluster", base / "cluster-logs"
    logs.mkdir()
    args = [sys.executable, "-m", "autograder", "grade", PS, str(submissions[0]), "--out",
            str(out), "--scheduler", cluster.scheduler.address, "--timeout", CELL_TIMEOUT,
            "--quiet"]
    with open(logs / "stdout", "w") as stdout, open(logs / "stderr", "w") as stderr:
        proc = subprocess.Popen(args, cwd=ROOT, stdout=stdout, stderr=stderr, text=True)
        killed = None
        try:
            while proc.poll() is None:
                if killed is None and any((out / "records").glob("*.json")):
                    busy = {w: keys for w, keys in cluster.processing().items() if keys}
                    if busy:
                        worker, keys = sorted(busy.items())[0]
                        cluster.run(os._exit, 1, workers=[worker], on_error="return")
                        killed = worker, [k.removeprefix("grade-").rsplit("-", 1)[0]
                                          for k in keys]
                time.sleep(0.2)
            proc.wait(timeout=900)
        finally:
            if proc.poll() is None:
                proc.kill()
    return out, killed, proc.returncode, (logs / "stdout").read_text(), \
        (logs / "stderr").read_text()


def test_cluster_grades_equal_the_local_run(local_run, cluster_run, submissions):
    out, _, returncode, stdout, stderr = cluster_run
    assert returncode == ATTENTION and UNREADABLE in stderr, stderr[-3000:]
    assert f"{len(submissions[1])} submissions" in stdout
    local, remote = grade_rows(local_run), grade_rows(out)
    assert remote == local
    # the battery is what it claims: every status, and full and zero marks where expected
    rows = {r[0]: dict(zip(local[0], r)) for r in local[1:]}
    statuses = {r["status"] for r in rows.values()}
    assert statuses == {"awaiting-manual-grading", "missing-answer-cell", "timeout", "crashed",
                        "invalid-notebook", UNREADABLE}
    assert rows["empty-file"]["status"] == UNREADABLE
    assert float(rows["correct-a"]["autograded_total"]) == FULL
    assert float(rows["blank-a"]["autograded_total"]) == 0
    assert rows["loop"]["status"] == "timeout" and rows["exit-late"]["status"] == "crashed"
    assert 0 < float(rows["wrong-svd"]["autograded_total"]) < FULL


def test_killed_worker_loses_no_submission_and_records_none_twice(cluster_run, submissions,
                                                                  local_run, cluster):
    out, killed, returncode, _, stderr = cluster_run
    assert returncode == ATTENTION and UNREADABLE in stderr, stderr[-3000:]
    assert killed is not None, "the batch ended before a worker could be killed"
    worker, students_on_it = killed
    assert worker not in cluster.nthreads(), "the killed worker is still there"
    expected = sorted(submissions[1])
    ids = [row[0] for row in grade_rows(out)[1:]]
    assert ids == expected  # each student once
    assert sorted(p.stem for p in (out / "records").glob("*.json")) == expected
    assert sorted(p.name for p in (out / "feedback").iterdir()) == expected
    # the task that died with its worker was graded again elsewhere, as the local run graded it
    local = {r[0]: r for r in grade_rows(local_run)[1:]}
    remote = {r[0]: r for r in grade_rows(out)[1:]}
    assert students_on_it and all(remote[s] == local[s] for s in students_on_it)


def test_resumed_cluster_run_grades_nothing_again(cluster_run, submissions, cluster):
    out = cluster_run[0]
    before = (out / "grades.csv").read_text()
    run = cli(PS, str(submissions[0]), "--out", str(out), "--scheduler",
              cluster.scheduler.address, "--timeout", CELL_TIMEOUT)
    assert run.returncode == ATTENTION, run.stderr[-3000:]
    assert "19 of 19 submissions unchanged" in run.stderr  # and the empty file's row
    assert (out / "grades.csv").read_text() == before


def test_worker_without_sandbox_stops_the_batch(base, submissions):
    out = base / "no-sandbox"
    # a real worker whose PATH has no bwrap: it cannot build the sandbox
    with dask.config.set(CLUSTER_CONFIG), \
            LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                         dashboard_address=":0", env={"PATH": "/nonexistent"}) as c:
        worker = next(iter(c.scheduler.workers))
        run = cli(PS, str(submissions[0]), "--out", str(out), "--scheduler",
                  c.scheduler.address, "--quiet")
    assert run.returncode == 2
    assert worker in run.stderr and "bubblewrap is not installed" in run.stderr
    # nothing graded: the only row is the empty file's, which collecting alone decides
    records = [json.loads(p.read_text()) for p in (out / "records").glob("*.json")]
    assert [(r["student_id"], r["status"]) for r in records] == [("empty-file", UNREADABLE)]


def test_workers_and_scheduler_together_are_refused(base, submissions):
    from autograder.__main__ import main

    assert main(["grade", PS, str(submissions[0]), "--out", str(base / "x"), "--workers", "2",
                 "--scheduler", "local:2"]) == 2


@pytest.mark.parametrize("scheduler", [None, "local:2"])
def test_task_past_its_deadline_is_recorded_as_timeout(base, submissions, scheduler):
    # every grading takes longer than a 3 s deadline: each is recorded "timeout" and stopped,
    # and the batch ends (a hung task never blocks it)
    import nbformat

    subs = base / f"deadline-subs-{scheduler is None}"
    for student in ("correct-a", "blank-a"):
        (subs / student).mkdir(parents=True)
        # a cell that sleeps 12 s (within the 15 s a cell may take): past the deadline however
        # fast the machine, not merely on a loaded one
        nb = nbformat.reads(submissions[1][student].decode(), as_version=4)
        sb.insert_after(nb, "setup", "import time\ntime.sleep(12)")
        (subs / student / NB).write_bytes(sb.to_bytes(nb))
    start = time.monotonic()
    records = grade_class(PS, subs, base / f"deadline-{scheduler is None}", workers=2,
                          options=GradingOptions(cell_timeout_s=15, notebook_timeout_s=150),
                          scheduler=scheduler, deadline_s=3, quiet=True, log=lambda m: None)
    assert time.monotonic() - start < 120
    assert [(r.student_id, r.status) for r in records] == [("blank-a", "timeout"),
                                                            ("correct-a", "timeout")]
    assert all("no result within 3 s" in r.notes[0] and r.total == 0 for r in records)
