"""Grade a whole class: parallel workers, one writer, resumable.

Each submission is graded by :func:`grade_task`, a pure function from the notebook's bytes to a
result record (a JSON-serialisable dict) that runs in a worker process. The coordinating process
is the only writer of the output folder and of the gradebook. It writes each record as soon as it
arrives (atomically), so a batch killed half-way keeps every grade already recorded, and a re-run
skips submissions whose bytes and grader are unchanged.

Where the tasks run is a *backend*: :class:`LocalPool` (processes on this machine) or
:class:`autograder.cluster.DaskBackend` (the workers of a Dask cluster). Both sit behind one loop,
:func:`run_tasks`, which hands out tasks, enforces a deadline per task, re-runs the tasks of a
dead worker, and passes each result to the single writer.

Output folder layout::

    DIR/grades.csv                      one row per student
    DIR/report.html                     score distribution, failures per check
    DIR/feedback/<student>/<notebook>.html
    DIR/records/<student>.json          the full record (resume state)
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import dataclasses
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from autograder.collect import Submission, Unmatched, collect_submissions
from autograder.feedback import feedback_html, marking_scheme_html
from autograder.report import report_html
from autograder.problemset import ProblemSet
from autograder.settings import COURSE_DIR
from autograder.task import (WORKER_LOST, GradingOptions, TaskFailed, failed_record, grade_task,
                             grader_fingerprint)

__all__ = ["grade_class", "run_tasks", "LocalPool", "Backend", "default_deadline",
           "instructor_folders"]


def instructor_folders(*paths) -> tuple[str, ...]:
    """The folders to hide from student code so it cannot read what these paths hold.

    A file (a zip of submissions) is hidden through its folder. The root folder and any folder
    holding the system's temporary folder (where each submission's scratch folder lives, itself
    private inside the sandbox) cannot be hidden and are skipped.
    """
    scratch = Path(tempfile.gettempdir()).resolve()
    found = []
    for p in paths:
        if p is None:
            continue
        folder = Path(p).resolve()
        folder = folder if folder.is_dir() else folder.parent
        if folder != Path(folder.anchor) and not scratch.is_relative_to(folder):
            found.append(str(folder))
    return tuple(dict.fromkeys(found))


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class _Writer:
    """The single writer of the output folder (and, optionally, of the gradebook)."""

    def __init__(self, ps: ProblemSet, out: Path, fingerprint: str, gradebook):
        self.ps, self.out, self.fingerprint, self.gradebook = ps, out, fingerprint, gradebook

    def record_path(self, student: str) -> Path:
        return self.out / "records" / f"{student}.json"

    def is_current(self, sub: Submission) -> bool:
        path = self.record_path(sub.student_id)
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            return False
        return (old.get("sha256") == sub.sha256 and old.get("fingerprint") == self.fingerprint
                and old.get("status") != "grader-error")  # a grader's fault is tried again

    def write(self, record: dict, sub: Submission) -> None:
        record = {**record, "fingerprint": self.fingerprint, "origin": sub.origin}
        executed = record.pop("executed", None)
        stem = Path(self.ps.notebook_name).stem
        _write_atomic(self.out / "feedback" / sub.student_id / f"{stem}.html",
                      feedback_html(record))
        if self.gradebook is not None and record["status"] != "grader-error":
            self.gradebook.record(record, sub.data, executed)
        # Last: the record marks the submission as done for a resumed run.
        _write_atomic(self.record_path(sub.student_id), json.dumps(record, indent=1))

    def write_unmatched(self, missing: Unmatched) -> None:
        """Record a student whose files hold no gradable notebook (a row that names them).

        A grade recorded earlier for that student is kept: a run on another archive never
        replaces a real submission's grade with "unmatched".
        """
        try:
            if json.loads(self.record_path(missing.student_id).read_text())["status"] != "unmatched":
                return
        except (OSError, ValueError, KeyError):
            pass
        why = f"{missing.reason}: {', '.join(missing.files)}"
        record = failed_record(self.ps, Submission(missing.student_id, b"", ""),
                                f"not graded, {why}", "unmatched")
        record = {**record, "fingerprint": self.fingerprint, "origin": ", ".join(missing.files)}
        record.pop("executed")
        stem = Path(self.ps.notebook_name).stem
        _write_atomic(self.out / "feedback" / missing.student_id / f"{stem}.html",
                      feedback_html(record))
        _write_atomic(self.record_path(missing.student_id), json.dumps(record, indent=1))

    def finish(self) -> list[dict]:
        records = []
        for path in sorted((self.out / "records").glob("*.json")):
            rec = json.loads(path.read_text())
            if rec.get("problem_set") == self.ps.name:
                records.append(rec)
        cells = [c.grade_id for c in self.ps.grade_cells]
        lines = [["student_id", "status", *cells, "autograded_total", "autograded_max",
                  "manual_max", "notes"]]
        for rec in records:
            # No score is shown where the grader failed: it is not the student's zero.
            final = rec["status"] != "grader-error"
            pts = {s["grade_id"]: s["points"] if final else None for s in rec["scores"]}
            lines.append([rec["student_id"], rec["status"],
                          *["" if pts.get(c) is None else f"{pts[c]:g}" for c in cells],
                          f"{rec['total']:g}" if final else "", f"{rec['max_auto']:g}",
                          f"{rec['max_manual']:g}", _inert(" | ".join(rec["notes"])[:500])])
        tmp = self.out / ".grades.csv.tmp"
        with tmp.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(lines)
        os.replace(tmp, self.out / "grades.csv")
        rubric = COURSE_DIR / "rubrics" / f"{self.ps.name}.md"
        if rubric.is_file():
            _write_atomic(self.out / "marking-scheme.html",
                          marking_scheme_html(self.ps.name, rubric.read_text(encoding="utf-8")))
        _write_atomic(self.out / "report.html", report_html(self.ps.name, records,
                                                            rubric.is_file()))
        return records


def _inert(text: str) -> str:
    """A CSV field a spreadsheet shows as text: one that starts like a formula gets a quote."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _progress(total: int, quiet: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="notebook", desc="grading", file=sys.stderr,
                disable=quiet or not sys.stderr.isatty(), smoothing=0.1)


# --- where the tasks run: backends behind one loop -------------------------------------------

class Backend(Protocol):
    """Where :func:`grade_task` runs: :class:`LocalPool` or :class:`.cluster.DaskBackend`.

    A backend only runs tasks; :func:`run_tasks` decides what runs when, and the coordinator
    writes every result.
    """

    def slots(self) -> int:
        """How many tasks may run at once now (0 while there is no worker)."""

    def submit(self, sub: Submission) -> Hashable:
        """Start grading ``sub``; return a handle for :meth:`done` and :meth:`abandon`."""

    def done(self, timeout: float) -> list[tuple[Hashable, dict | TaskFailed | str]]:
        """Wait at most ``timeout`` seconds; return ``(handle, outcome)`` for finished tasks,
        the outcome being a record, a :class:`TaskFailed` or :data:`WORKER_LOST`."""

    def abandon(self, handles: list[Hashable]) -> list[Hashable]:
        """Stop tasks past their deadline; return the handles of other tasks stopped with them
        (they are handed out again)."""

    def close(self) -> None: ...


class LocalPool:
    """Backend: ``workers`` processes on this machine (``concurrent.futures``, forkserver)."""

    def __init__(self, problem_set: str, options: GradingOptions, workers: int):
        self.problem_set, self.options, self.workers = problem_set, options, workers
        self._pool: cf.ProcessPoolExecutor | None = None
        self._running: dict[cf.Future, cf.ProcessPoolExecutor] = {}  # future -> its pool

    def slots(self) -> int:
        return self.workers

    def submit(self, sub: Submission) -> cf.Future:
        for attempt in (1, 2):
            if self._pool is None:
                self._pool = cf.ProcessPoolExecutor(
                    self.workers, mp_context=multiprocessing.get_context("forkserver"))
            try:
                future = self._pool.submit(grade_task, self.problem_set, sub.student_id,
                                           sub.data, self.options)
                break
            except cf.process.BrokenProcessPool:  # broke since the last look: a new pool
                if attempt == 2:
                    raise
                self._drop_pool(kill=False)
        self._running[future] = self._pool
        return future

    def done(self, timeout: float) -> list[tuple[cf.Future, object]]:
        if not self._running:
            time.sleep(timeout)
            return []
        finished, _ = cf.wait(self._running, timeout, return_when=cf.FIRST_COMPLETED)
        out = []
        for future in finished:
            pool = self._running.pop(future)
            try:
                out.append((future, future.result()))
            except cf.process.BrokenProcessPool:
                # A worker died; the pool is gone with every task it was running.
                out.append((future, WORKER_LOST))
                if pool is self._pool:
                    self._drop_pool(kill=False)
            except Exception as exc:  # noqa: BLE001 - one failure never stops the batch
                out.append((future, TaskFailed(f"{type(exc).__name__}: {exc}")))
        return out

    def abandon(self, handles: list[cf.Future]) -> list[cf.Future]:
        # A process pool cannot stop one task: its processes are killed (the sandboxed kernels
        # die with them), and the other tasks it was running are handed out again.
        others = [f for f in self._running if f not in set(handles)]
        self._drop_pool(kill=True)
        self._running.clear()
        return others

    def _drop_pool(self, kill: bool) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if kill:  # no public API for the worker processes of a ProcessPoolExecutor
            for process in (getattr(pool, "_processes", None) or {}).values():
                process.kill()
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


@dataclass
class _Flight:
    sub: Submission
    deadline: float  # time.monotonic() by which a result is due
    alone: bool  # handed out with nothing else in flight


def default_deadline(options: GradingOptions) -> float:
    """Seconds the coordinator waits for one task's result before recording ``timeout``.

    The sandbox already stops a notebook at ``notebook_timeout_s``; this backstop also covers the
    kernel's start, the scoring and a loaded worker, and catches a task that hangs outside the
    notebook (a stuck worker), so that no task blocks a batch forever.
    """
    return options.notebook_timeout_s + max(120.0, options.notebook_timeout_s)


def run_tasks(backend: Backend, todo: list[Submission], deliver, *, problem_set: ProblemSet,
              deadline_s: float) -> None:
    """Grade ``todo`` on ``backend``; call ``deliver(sub, record)`` once per submission.

    The one loop behind every backend. At most ``backend.slots()`` tasks are in flight, so a
    task handed out is a task running: its deadline (``deadline_s`` after hand-out) measures its
    own run, the backend holds only a bounded number of notebooks, and a cluster's workers take
    the next task as soon as they finish one. A task past its deadline is recorded ``timeout``
    and abandoned. A task whose worker died is graded again with nothing else in flight, so only
    a submission that kills its own worker is recorded ``crashed``. While the backend has no
    worker, deadlines are paused.
    """
    queue, alone = deque(todo), deque()
    flights: dict[Hashable, _Flight] = {}
    last = time.monotonic()
    while queue or alone or flights:
        slots = backend.slots()
        now = time.monotonic()
        if slots == 0:
            for flight in flights.values():
                flight.deadline += now - last
        last = now
        if alone:
            if not flights and slots:
                sub = alone.popleft()
                flights[backend.submit(sub)] = _Flight(sub, now + deadline_s, True)
        else:
            while queue and len(flights) < slots:
                sub = queue.popleft()
                flights[backend.submit(sub)] = _Flight(sub, now + deadline_s, False)
        wait = min((f.deadline for f in flights.values()), default=now + 1.0) - now
        for handle, outcome in backend.done(min(max(wait, 0.0), 1.0)):
            flight = flights.pop(handle, None)
            if flight is None:
                continue  # abandoned earlier and already recorded
            if outcome == WORKER_LOST:
                if flight.alone:
                    deliver(flight.sub, failed_record(problem_set, flight.sub,
                                                       "its grading worker died"))
                else:
                    alone.append(flight.sub)
            elif isinstance(outcome, TaskFailed):
                deliver(flight.sub, failed_record(problem_set, flight.sub, outcome.message,
                                                   outcome.status))
            else:
                deliver(flight.sub, outcome)
        now = time.monotonic()
        expired = [h for h, f in flights.items() if f.deadline <= now]
        if expired:
            for handle in expired:
                sub = flights.pop(handle).sub
                deliver(sub, failed_record(
                    problem_set, sub, f"no result within {deadline_s:.0f} s, the grader's limit "
                    "for one notebook; its grading was stopped", "timeout"))
            for handle in backend.abandon(expired):
                flight = flights.pop(handle, None)
                if flight is not None:
                    (alone if flight.alone else queue).appendleft(flight.sub)


def grade_class(problem_set: str, submissions: str | Path, out: str | Path, *,
                workers: int | None = None, options: GradingOptions = GradingOptions(),
                gradebook=None, quiet: bool = False, log=print, scheduler: str | None = None,
                deadline_s: float | None = None) -> list[dict]:
    """Grade every submission under ``submissions`` into the folder ``out``.

    Parameters
    ----------
    problem_set : str
        Name of the problem set.
    submissions : path-like
        A folder or zip (see :mod:`autograder.collect`).
    out : path-like
        Output folder (created); see the module docstring.
    workers : int, optional
        Worker processes of the local pool; default: the number of CPUs.
    options : GradingOptions
        Limits and sandboxing.
    gradebook : autograder.gradebook.GradebookWriter, optional
        Where scores are also recorded for nbgrader's formgrader and export.
    quiet : bool
        No progress bar.
    log : callable
        Receives one-line messages.
    scheduler : str, optional
        Grade on a Dask cluster instead of the local pool: a scheduler address
        (``tcp://HOST:8786``) or ``local:N`` (see :mod:`autograder.cluster`).
    deadline_s : float, optional
        Seconds after which a task without result is recorded ``timeout`` and stopped; default
        :func:`default_deadline`.

    Returns
    -------
    list of dict
        Every record in ``out`` for this problem set (graded now or before).

    Raises
    ------
    autograder.cluster.ClusterError
        If the cluster cannot be reached or a worker cannot grade (records written until then
        are kept).
    """
    ps = ProblemSet(problem_set)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    options = dataclasses.replace(options, hidden_paths=options.hidden_paths + instructor_folders(
        submissions, out, getattr(gradebook, "course", None)))
    found = collect_submissions(submissions, ps.notebook_name)
    for note in found.notes:
        log(f"note: {note}")
    _write_atomic(out / "collection.txt", "".join(f"{n}\n" for n in found.notes))
    subs = found.submissions
    writer = _Writer(ps, out, grader_fingerprint(ps), gradebook)
    for missing in found.unmatched:
        log(f"note: {missing.student_id}: not graded, {missing.reason}: {', '.join(missing.files)}")
        writer.write_unmatched(missing)
    todo = [s for s in subs if not writer.is_current(s)]
    if len(todo) < len(subs):
        log(f"{len(subs) - len(todo)} of {len(subs)} submissions unchanged since the last run; "
            f"skipping them")
    written: set[str] = set()
    if todo:
        if scheduler is None:
            backend = LocalPool(ps.name, options,
                                max(1, min(workers or os.cpu_count() or 1, len(todo))))
        else:
            from autograder.cluster import DaskBackend

            backend = DaskBackend(scheduler, ps.name, options, writer.fingerprint, log=log)
        bar = _progress(len(todo), quiet)

        def deliver(sub: Submission, record: dict) -> None:
            if sub.student_id in written:  # a second result for a student is never written
                return
            written.add(sub.student_id)
            if record.get("grader_error"):
                log(f"grader error on {sub.student_id} ({sub.origin}); not scored, and tried "
                    f"again on the next run:\n{record['grader_error']}")
            writer.write(record, sub)
            bar.update(1)

        try:
            run_tasks(backend, todo, deliver, problem_set=ps,
                      deadline_s=deadline_s or default_deadline(options))
        finally:
            bar.close()
            backend.close()
    return writer.finish()
