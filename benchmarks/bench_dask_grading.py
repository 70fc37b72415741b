"""Grading benchmark: a Dask LocalCluster against the local process pool, and a MOOC projection.

Both grade the same ``GRADING_BENCH_N`` ps1_pca submissions (default 200; half the reference
answers, half the blank release) with two single-threaded workers and real sandboxed kernels,
through :func:`autograder.run.batch.grade_class` (no gradebook): the local pool
(``workers=2``) and a ``distributed.LocalCluster(n_workers=2, threads_per_worker=1)``, which is
started before the clock (its start-up is reported in the note). The ratio should be close to 1:
both backends run the same task through the same loop.

A second pair grades ``GRADING_BENCH_OVERHEAD_N`` (default 200) submissions that are not JSON
but as large as a real notebook: the task is then almost free, so its time is the per-task
overhead of each backend (sending the bytes, scheduling, returning the record, writing it).

From these measurements the module prints a projection of the wall time of 60,000 gradings on
N workers, with its assumptions.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _timing import case

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.psharness: the nbgrader release

from autograder.grading.problemset import ProblemSet  # noqa: E402
from autograder.run.batch import grade_class  # noqa: E402
from autograder.run.task import GradingOptions  # noqa: E402

PS, NB = "ps1_pca", "ps1_pca.ipynb"
N = int(os.environ.get("GRADING_BENCH_N", "200"))
OVERHEAD_N = int(os.environ.get("GRADING_BENCH_OVERHEAD_N", "200"))
WORKERS = 2
MOOC = 60_000
PROJECTED_WORKERS = (10, 50, 200)
OPTIONS = GradingOptions(cell_timeout_s=30.0, notebook_timeout_s=300.0)


def _write_class(folder: Path, notebooks: dict[str, bytes]) -> Path:
    for student, data in notebooks.items():
        (folder / student).mkdir(parents=True)
        (folder / student / NB).write_bytes(data)
    return folder


def _timed(fn) -> tuple[float, float, object]:
    """Wall time, this process's CPU time, and the result of ``fn()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _gradebook_write_s(base: Path, correct: bytes, record: dict, n: int = 200) -> float:
    """Seconds the coordinator spends per result on the gradebook: the writer's cost per result
    (feedback, record, nbgrader's notebook copies, batched transactions) with the gradebook,
    minus its cost without."""
    from autograder.gradebook.writer import GradebookWriter
    from autograder.intake.collect import Submission
    from autograder.run.output import OutputWriter

    course = base / "gradebook-course"
    course.mkdir()
    shutil.copy(ROOT / "course" / "nbgrader_config.py", course / "nbgrader_config.py")
    shutil.copytree(ROOT / "course" / "source", course / "source")
    ps = ProblemSet(PS)
    gradebook = GradebookWriter(ps, course)  # nbgrader generate_assignment: not timed
    costs = []
    for tag, gb in (("with", gradebook), ("without", None)):
        writer = OutputWriter(ps, base / f"writes-{tag}", "bench", gb)
        start = time.perf_counter()
        for i in range(n):
            writer.write({**record, "student_id": f"bench{i}"},
                         Submission(f"bench{i}", correct, "bench"))
        writer.flush()
        costs.append((time.perf_counter() - start) / n)
    gradebook.close()
    return costs[0] - costs[1]


def projection(per_notebook_s: float, latency_s: float, coordinator_s: float,
               gradebook_s: float) -> str:
    """The projected wall time of 60,000 gradings, as a table with its assumptions."""
    lines = [
        f"Projection: {MOOC:,} gradings of {PS} on N Dask workers (--nthreads 1, one core each)",
        "Assumptions (measured in this run, on this machine):",
        f"  - a notebook keeps its worker busy {per_notebook_s:.2f} s (mean over {N}: kernel "
        "start, run in the sandbox, scoring); workers are as fast as these cores, one kernel "
        "per core, enough memory (2 GB per kernel)",
        f"  - each task adds {latency_s * 1000:.0f} ms of hand-out and return latency on its "
        "worker (one task per worker thread in flight)",
        f"  - the coordinator (with the scheduler, in one process here) spends "
        f"{coordinator_s * 1000:.1f} ms of CPU per task, writing included, so it can take "
        f"{1 / coordinator_s:.0f} results/s at most",
        f"  - nbgrader's gradebook adds {gradebook_s * 1000:.0f} ms per result on the "
        "coordinator (with --gradebook; batched transactions)",
        "  - wall = max(compute = 60,000 x (notebook + latency) / N, coordinator = 60,000 x "
        "per-result cost); start-up and stragglers ignored",
        "",
        f"{'N':>5} {'compute':>10} {'coord.':>10} {'+gradebook':>11} {'wall':>10} "
        f"{'wall + gradebook':>17}",
    ]

    def hours(s: float) -> str:
        return f"{s / 3600:.2f} h"

    for n in PROJECTED_WORKERS:
        compute = MOOC * (per_notebook_s + latency_s) / n
        coord = MOOC * coordinator_s
        with_gb = MOOC * (coordinator_s + gradebook_s)
        lines.append(f"{n:>5} {hours(compute):>10} {hours(coord):>10} {hours(with_gb):>11} "
                     f"{hours(max(compute, coord)):>10} {hours(max(compute, with_gb)):>17}")
    return "\n".join(lines)


def run() -> list[dict]:
    import dask
    from distributed import LocalCluster

    from tests.psharness import generate_release

    base = Path(tempfile.mkdtemp(prefix="bench-grading-", dir="/var/tmp"))
    base.chmod(0o755)  # the kernel runs as another user when the grader is root
    try:
        (base / "course").mkdir()
        release = generate_release([PS], base / "course")
        correct = (ROOT / "course" / "source" / PS / NB).read_bytes()
        blank = (release / PS / NB).read_bytes()
        real = _write_class(base / "real", {f"s{i:05d}": (correct, blank)[i % 2]
                                            for i in range(N)})
        junk = b"x" * len(correct)  # not JSON, as large as a notebook: an almost free task
        empty = _write_class(base / "overhead", {f"s{i:05d}": junk for i in range(OVERHEAD_N)})
        quiet = {"quiet": True, "log": lambda m: None, "options": OPTIONS}

        local_s, _, records = _timed(lambda: grade_class(PS, real, base / "out-local",
                                                         workers=WORKERS, **quiet))
        local_over_s, _, _ = _timed(lambda: grade_class(PS, empty, base / "over-local",
                                                        workers=WORKERS, **quiet))
        def on_cluster(folder: Path, out: Path):
            """grade_class on a fresh LocalCluster (workers keep the grader they started with)."""
            with dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"}):
                start_s, _, cluster = _timed(lambda: LocalCluster(
                    n_workers=WORKERS, threads_per_worker=1, processes=True,
                    dashboard_address=":0"))
                with cluster:
                    address = cluster.scheduler_address
                    return start_s, *_timed(lambda: grade_class(PS, folder, out,
                                                                 scheduler=address, **quiet))

        start_s, dask_s, _, dask_records = on_cluster(real, base / "out-dask")
        _, dask_over_s, coord_cpu_s, _ = on_cluster(empty, base / "over-dask")
        statuses = sorted({r.status for r in records + dask_records})
        per_notebook = sum(r.elapsed_s for r in dask_records) / len(dask_records)
        latency = dask_over_s * WORKERS / OVERHEAD_N
        coordinator = coord_cpu_s / OVERHEAD_N
        gradebook = _gradebook_write_s(base, correct, dask_records[0])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    table = projection(per_notebook, latency, coordinator, gradebook)
    print(table)
    return [
        case(f"grade {N} notebooks, 2 workers: Dask vs pool", dask_s, local_s,
             "local ProcessPoolExecutor (2 workers)", "~1.0x",
             note=f"statuses {statuses}; LocalCluster start {start_s:.1f} s not included; "
                  f"{per_notebook:.2f} s per notebook on a worker"),
        case(f"per-task overhead ({OVERHEAD_N} non-JSON files)", dask_over_s / OVERHEAD_N,
             local_over_s / OVERHEAD_N, "local ProcessPoolExecutor (2 workers)", "info",
             note=f"coordinator+scheduler CPU {coordinator * 1000:.1f} ms/task; gradebook "
                  f"write {gradebook * 1000:.0f} ms/result"),
    ]


if __name__ == "__main__":
    for row in run():
        print(row)
