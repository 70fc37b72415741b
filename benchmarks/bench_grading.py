"""Grading a class: our parallel sandboxed grader against plain ``nbgrader autograde``.

Builds N submissions of problem set 1 (correct, blank and wrong in turn; ``GRADING_BENCH_N``,
default 40) and, in the same run, times:

- ours with the default number of workers (all CPUs), sandboxed, gradebook written;
- ``nbgrader autograde`` on the same notebooks (serial; nbgrader has no parallel mode);
- ours with one worker, and the bare execution of the same notebooks with nbclient (no sandbox,
  no scoring, no gradebook), whose ratio is the per-submission overhead of grading.

All three run their kernels with the same environment as our sandboxed kernels (one BLAS thread,
matplotlib's Agg backend), so the ratios measure the grading, not a difference in what the
notebooks compute or render. Ours forks each sandbox from a warm zygote (the default); the
one-worker run's records give the mean time per phase (sandbox start, cells, scoring).

Targets (issue 13): ours <= 0.20x nbgrader's time on 2 cores; ours with one worker <= 0.45x the
bare execution, i.e. grading a notebook costs less than half of merely running it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import case

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.gradebook.writer import GradebookWriter  # noqa: E402
from autograder.grading.problemset import ProblemSet  # noqa: E402
from autograder.grading.record import load_record  # noqa: E402
from autograder.run.batch import grade_class  # noqa: E402
from autograder.sandbox import kernel_environment  # noqa: E402
from autograder.settings import COURSE_DIR  # noqa: E402
from tests.psharness import generate_release  # noqa: E402
from tests.submissions import Builder, to_bytes  # noqa: E402

PS = "ps1_pca"


def _course(root: Path) -> Path:
    course = root / "course"
    course.mkdir(parents=True)
    shutil.copy(COURSE_DIR / "nbgrader_config.py", course)
    shutil.copytree(COURSE_DIR / "source", course / "source")
    return course


def _submissions(root: Path, n: int) -> list[tuple[str, bytes]]:
    (root / "release-course").mkdir()
    release = generate_release([PS], root / "release-course")
    builder = Builder(ProblemSet(PS).path, release / PS / f"{PS}.ipynb")
    makers = [builder.correct, builder.blank, builder.wrong]
    return [(f"s{i:03d}", to_bytes(makers[i % 3]())) for i in range(n)]


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def run() -> list[dict]:
    n = int(os.environ.get("GRADING_BENCH_N", "40"))
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        root = Path(tmp)
        subs = _submissions(root, n)
        folder = root / "subs"
        for sid, data in subs:
            (folder / sid).mkdir(parents=True)
            (folder / sid / f"{PS}.ipynb").write_bytes(data)

        def ours(workers: int | None, tag: str) -> float:
            # The gradebook is set up (nbgrader generate_assignment) outside the timing, as
            # it is for nbgrader below.
            gradebook = GradebookWriter(ProblemSet(PS), _course(root / tag))
            return _timed(lambda: grade_class(PS, folder, root / tag / "out", workers=workers,
                                              gradebook=gradebook, quiet=True,
                                              log=lambda *a: None))

        t_ours = ours(None, "par")
        t_one = ours(1, "one")
        phases = _mean_phases(root / "one" / "out" / "records")

        nb_course = _course(root / "nbg")
        for sid, data in subs:
            target = nb_course / "submitted" / sid / PS / f"{PS}.ipynb"
            target.parent.mkdir(parents=True)
            target.write_bytes(data)
        kernel_env = kernel_environment()
        env = dict(os.environ, **kernel_env,
                   PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
        base = [sys.executable, "-m", "nbgrader"]
        subprocess.run(base + ["generate_assignment", PS, "--force"], cwd=nb_course, env=env,
                       check=True, capture_output=True)
        t_nbgrader = _timed(lambda: subprocess.run(
            base + ["autograde", PS, "--force"], cwd=nb_course, env=env, capture_output=True))

        import nbformat
        from nbclient import NotebookClient

        ps = ProblemSet(PS)

        def bare():
            saved = dict(os.environ)
            os.environ.update(kernel_env)  # inherited by each kernel, as in the sandbox
            try:
                for _, data in subs:
                    nb = ps.assemble(nbformat.reads(data.decode(), as_version=4)).notebook
                    with tempfile.TemporaryDirectory() as work:
                        NotebookClient(nb, timeout=60, allow_errors=True,
                                       kernel_name="python3").execute(cwd=work)
            finally:
                os.environ.clear()
                os.environ.update(saved)

        t_bare = _timed(bare)
    workers = os.cpu_count()
    return [
        case(f"grade {n} notebooks, {workers} workers, sandboxed", t_ours, t_nbgrader,
             "nbgrader autograde (serial)", "<= 0.20x",
             f"{t_ours / n:.2f} s vs {t_nbgrader / n:.2f} s per notebook"),
        case(f"grade {n} notebooks, 1 worker", t_one, t_bare,
             "nbclient execution alone", "<= 0.45x",
             f"{t_one / n:.2f} s vs {t_bare / n:.2f} s per notebook; mean per phase: {phases}"),
    ]


def _mean_phases(records: Path) -> str:
    """Mean seconds per phase over the records' ``timings`` (where the grader records them)."""
    totals: dict[str, list[float]] = {}
    for path in records.glob("*.json"):
        for phase, seconds in load_record(path).timings.items():
            totals.setdefault(phase, []).append(seconds)
    return ", ".join(f"{k} {sum(v) / len(v):.2f} s" for k, v in sorted(totals.items())) or "n/a"
