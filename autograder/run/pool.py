"""Where grading tasks run: the backend protocol and the local process pool.

A *backend* only runs :func:`autograder.run.task.grade_task`; :func:`autograder.run.schedule.run_tasks`
decides what runs when, and the coordinator (:mod:`autograder.run.batch`) writes every result. The
two backends are :class:`LocalPool` (processes on this machine) and
:class:`autograder.run.cluster.DaskBackend` (the workers of a Dask cluster).
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import time
from collections.abc import Hashable
from typing import Protocol, TypeVar

from autograder.grading.record import Record
from autograder.intake.collect import Submission
from autograder.run.task import WORKER_LOST, GradingOptions, TaskFailed, WorkerLost, grade_task

__all__ = ["Backend", "LocalPool", "Outcome"]

#: What a finished task gives: its record, why it gave none, or that its worker died.
Outcome = Record | TaskFailed | WorkerLost


#: A backend's handle on one running task.
Handle = TypeVar("Handle", bound=Hashable)


class Backend(Protocol[Handle]):
    """Where :func:`grade_task` runs: :class:`LocalPool` or :class:`.cluster.DaskBackend`.

    A backend only runs tasks; :func:`autograder.run.schedule.run_tasks` decides what runs when,
    and the coordinator writes every result.
    """

    def slots(self) -> int:
        """How many tasks may run at once now (0 while there is no worker)."""

    def submit(self, sub: Submission) -> Handle:
        """Start grading ``sub``; return a handle for :meth:`done` and :meth:`abandon`."""

    def done(self, timeout: float) -> list[tuple[Handle, Outcome]]:
        """Wait at most ``timeout`` seconds; return ``(handle, outcome)`` for finished tasks,
        the outcome being a record, a :class:`TaskFailed` or :data:`WORKER_LOST`."""

    def abandon(self, handles: list[Handle]) -> list[Handle]:
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
                    self.workers, mp_context=multiprocessing.get_context("forkserver")
                )
            pool = self._pool
            try:
                future = pool.submit(
                    grade_task, self.problem_set, sub.student_id, sub.data, self.options
                )
                break
            except cf.process.BrokenProcessPool:  # broke since the last look: a new pool
                if attempt == 2:
                    raise
                self._drop_pool(kill=False)
        self._running[future] = pool
        return future

    def done(self, timeout: float) -> list[tuple[cf.Future, Outcome]]:
        if not self._running:
            time.sleep(timeout)
            return []
        finished, _ = cf.wait(self._running, timeout, return_when=cf.FIRST_COMPLETED)
        out: list[tuple[cf.Future, Outcome]] = []
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
