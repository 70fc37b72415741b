"""Grade on a Dask cluster: the backend of ``python -m autograder grade --scheduler ADDRESS``.

The process that runs the command (the coordinator) connects to a Dask scheduler, checks every
worker, and then hands out the same task as the local pool, :func:`autograder.run.task.grade_task`,
through the same loop (:func:`autograder.run.schedule.run_tasks`): the notebook's bytes go out, a record
comes back, streamed with :class:`distributed.as_completed` as tasks finish. Workers never touch a
shared file, so they can be other machines; the coordinator stays the only writer of the output
folder and of the gradebook.

What a worker needs
    The course installed from the same checkout as the coordinator's (the grader fingerprint of
    the problem set, :func:`autograder.run.task.grader_fingerprint`, must be equal: the checks, the
    reference solutions and the source notebook decide a grade), and bubblewrap, so that it can
    build the sandbox. Both are checked on every worker when grading starts
    (:func:`worker_report`, run with ``Client.run``); the batch stops with :class:`ClusterError`,
    naming the worker and the reason, if one fails (the sandbox is not required with ``unsafe``).
    Workers that join later (a worker restarted by its nanny, autoscaling) are checked when the
    coordinator next looks at the cluster, and every task checks its own worker before it grades
    (:func:`grade_on_worker`), so a notebook is never run unsafely or by another grader.

Fault tolerance
    - A worker that dies mid-task (killed, out of memory, machine lost): the scheduler gives its
      task to another worker. A task that was running on ``allowed-failures + 1`` workers as they
      died (the scheduler's ``distributed.scheduler.allowed-failures``, default 3) comes back as
      ``KilledWorker`` and is recorded ``crashed``.
    - A task that raises is retried twice (``retries=2``); ``grade_task`` itself catches
      everything a submission can cause, so this only covers faults of the worker.
    - A task that hangs: the coordinator's deadline (:func:`autograder.run.schedule.default_deadline`)
      records it as ``timeout``, cancels it and stops the worker process running it (its nanny
      starts a fresh one), so a hung thread does not hold the worker for the rest of the batch.
    - A result can only be written once: the coordinator keeps one task per student in flight and
      drops any second record for a student.
"""

from __future__ import annotations

import functools
import os
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING

from autograder.grading.record import Record
from autograder.intake.collect import Submission
from autograder.run.pool import Outcome
from autograder.run.task import (
    GradingOptions,
    TaskFailed,
    grade_task,
    grader_fingerprint,
    problem_set_for,
)
from autograder.status import Status

if TYPE_CHECKING:  # distributed is imported only where a cluster is used
    from distributed import Future

__all__ = [
    "ClusterError",
    "WorkerUnfit",
    "DaskBackend",
    "worker_report",
    "grade_on_worker",
    "parse_scheduler",
]

#: How often (seconds) the coordinator asks the scheduler which workers there are.
REFRESH_S = 2.0


class ClusterError(RuntimeError):
    """The cluster cannot grade: unreachable, no workers, or a worker failed its check."""


class WorkerUnfit(RuntimeError):
    """Raised by a task on a worker that cannot grade (no sandbox, another course version)."""


def parse_scheduler(address: str) -> tuple[str, int | None]:
    """``("local", N)`` for ``local:N``, else ``(address, None)``; ValueError if malformed."""
    if address.startswith("local:"):
        n = address.removeprefix("local:")
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"local:N needs a positive number of workers; got {address!r}")
        return "local", int(n)
    if "://" not in address and ":" not in address:
        raise ValueError(f"a scheduler address looks like tcp://HOST:8786; got {address!r}")
    return address, None


@functools.lru_cache(maxsize=16)
def worker_report(problem_set: str, course: str | None = None) -> dict:
    """What the coordinator checks on a worker (run there; cached per worker process).

    The fingerprint is taken once, before the worker first grades (and imports the checks), so
    it describes the grader the worker runs even if the files change later.

    Returns
    -------
    dict
        ``host``, ``sandbox`` (bool) and ``reason`` from
        :func:`autograder.sandbox.sandbox_available`, and ``fingerprint``, the worker's
        :func:`autograder.run.task.grader_fingerprint` of ``problem_set`` in the course folder
        ``course`` (default: the worker's default course).
    """
    from autograder.sandbox import sandbox_available

    ok, reason = sandbox_available()
    return {
        "host": socket.gethostname(),
        "sandbox": ok,
        "reason": reason,
        "fingerprint": grader_fingerprint(problem_set_for(problem_set, course)),
    }


def _unfit(report: dict, fingerprint: str, unsafe: bool) -> str | None:
    """Why a worker with ``report`` cannot grade, or None."""
    if report["fingerprint"] != fingerprint:
        return (
            f"has another version of the course (grader fingerprint {report['fingerprint']}; "
            f"the coordinator's is {fingerprint}): install the same checkout on every worker, "
            f"and restart the workers after the course changes (a worker keeps the grader "
            f"it started with)"
        )
    if not report["sandbox"] and not unsafe:
        return f"cannot build the sandbox for student code: {report['reason']}"
    return None


def grade_on_worker(
    fingerprint: str, problem_set: str, student_id: str, data: bytes, options: GradingOptions
) -> Record:
    """The Dask task: check this worker (once per process), then :func:`grade_task`."""
    problem = _unfit(worker_report(problem_set, options.course), fingerprint, options.unsafe)
    if problem is not None:
        try:
            from distributed import get_worker

            where = get_worker().address
        except ValueError:
            where = socket.gethostname()
        raise WorkerUnfit(f"worker {where} {problem}")
    return grade_task(problem_set, student_id, data, options)


def _exit_soon() -> str:
    """Run on a worker: end its process just after answering (its nanny starts a fresh one)."""
    threading.Timer(0.2, os._exit, args=(1,)).start()
    return "stopping"


class DaskBackend:
    """Runs :func:`grade_on_worker` on a Dask cluster: a backend of :func:`.schedule.run_tasks`.

    Parameters
    ----------
    scheduler : str
        ``tcp://HOST:PORT`` of a running ``dask scheduler``, or ``local:N`` to start a
        :class:`distributed.LocalCluster` of N single-threaded worker processes here (closed with
        the backend).
    problem_set : str
    options : GradingOptions
    fingerprint : str
        The coordinator's :func:`autograder.run.task.grader_fingerprint`; every worker must match.
    log : callable
        Receives one-line messages.
    connect_timeout_s, wait_for_workers_s : float
        How long to wait for the scheduler, and for a first worker (at the start, and whenever
        the cluster has none left), before :class:`ClusterError`.

    Raises
    ------
    ClusterError
        The scheduler cannot be reached, no worker joins, or a worker fails its check.
    """

    def __init__(
        self,
        scheduler: str,
        problem_set: str,
        options: GradingOptions,
        fingerprint: str,
        *,
        log=print,
        connect_timeout_s: float = 30.0,
        wait_for_workers_s: float = 120.0,
    ):
        import dask
        import distributed

        self.problem_set, self.options, self.fingerprint = problem_set, options, fingerprint
        self.log, self.wait_for_workers_s = log, wait_for_workers_s
        self._cluster, self._config = None, None
        self._empty_since: float | None = None
        self._checked: set[str] = set()
        self._slots, self._refreshed = 0, float("-inf")
        address, n_local = parse_scheduler(scheduler)
        try:
            if n_local is not None:
                # A LocalCluster closes a nanny whose restarted worker is not back within this
                # (default 15 s): too short for a loaded machine, and the cluster would shrink.
                self._config = dask.config.set({"distributed.deploy.lost-worker-timeout": "300s"})
                self._cluster = distributed.LocalCluster(
                    n_workers=n_local, threads_per_worker=1, processes=True, dashboard_address=":0"
                )
                self.client = distributed.Client(self._cluster)
            else:
                self.client = distributed.Client(address, timeout=connect_timeout_s)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
        try:
            try:
                self.client.wait_for_workers(1, timeout=wait_for_workers_s)
            except TimeoutError:
                raise ClusterError(
                    f"no worker joined the Dask scheduler at {self.client.scheduler.address} "
                    f"within {wait_for_workers_s:.0f} s; start some with "
                    f"`dask worker {self.client.scheduler.address} --nthreads 1`"
                ) from None
            workers = self.client.nthreads()
            self._check(list(workers), initial=True)
            self._futures = distributed.as_completed(
                loop=self.client.loop, with_results=True, raise_errors=False
            )
        except BaseException:
            self.close()
            raise
        self.log(
            f"grading on {len(workers)} Dask worker(s) with {sum(workers.values())} "
            f"thread(s) in all, scheduler {self.client.scheduler.address}"
            + (
                f", dashboard {self.client.dashboard_link}"
                if n_local is None and self.client.dashboard_link
                else ""
            )
        )

    def _check(self, addresses: list[str], initial: bool) -> None:
        """Run :func:`worker_report` on ``addresses``; raise ClusterError naming unfit workers."""
        answers = self.client.run(
            worker_report,
            self.problem_set,
            self.options.course,
            workers=addresses,
            on_error="return",
        )
        problems = []
        for address, report in sorted(answers.items()):
            if isinstance(report, BaseException):
                if initial:
                    problems.append(
                        f"worker {address}: the check failed there: "
                        f"{type(report).__name__}: {report}"
                    )
                continue  # a worker gone or still starting: looked at again on the next refresh
            problem = _unfit(report, self.fingerprint, self.options.unsafe)
            if problem is None:
                self._checked.add(address)
            else:
                problems.append(f"worker {address} (host {report['host']}) {problem}")
        if problems:
            hint = (
                "\nEvery worker needs this course installed from the same checkout and "
                'bubblewrap (grading.md: "Grading a large course")'
            )
            if not self.options.unsafe and any("sandbox" in p for p in problems):
                hint += "; --unsafe grades without the sandbox"
            raise ClusterError(
                "cannot grade on this cluster:\n  " + "\n  ".join(problems) + hint + "."
            )

    def slots(self) -> int:
        """Threads of the checked workers now (refreshed every :data:`REFRESH_S` seconds)."""
        now = time.monotonic()
        if now - self._refreshed < REFRESH_S:
            return self._slots
        self._refreshed = now
        try:
            workers = self.client.nthreads()
        except OSError as exc:
            raise ClusterError(f"lost the Dask scheduler: {exc}") from None
        self._checked &= set(workers)
        new = [w for w in workers if w not in self._checked]
        if new:
            self._check(new, initial=False)
        self._slots = sum(n for w, n in workers.items() if w in self._checked)
        if self._slots:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = now
            self.log("the cluster has no worker left; waiting for one")
        elif now - self._empty_since > self.wait_for_workers_s:
            raise ClusterError(f"the cluster has had no worker for {self.wait_for_workers_s:.0f} s")
        return self._slots

    def submit(self, sub: Submission) -> Future:
        future = self.client.submit(
            grade_on_worker,
            self.fingerprint,
            self.problem_set,
            sub.student_id,
            sub.data,
            self.options,
            key=f"grade-{sub.student_id}-{uuid.uuid4().hex[:8]}",
            pure=False,
            retries=2,
        )
        self._futures.add(future)
        return future

    def done(self, timeout: float) -> list[tuple[Future, Outcome]]:
        """Finished tasks within ``timeout`` seconds: ``(future, record or TaskFailed)``."""
        from distributed import KilledWorker

        futures = self._futures
        end = time.monotonic() + timeout
        while not futures.has_ready():
            remaining = end - time.monotonic()
            if remaining <= 0:
                return []
            with futures.thread_condition:  # notified by as_completed as each task finishes
                futures.thread_condition.wait(min(remaining, 0.1))
        out: list[tuple[Future, Outcome]] = []
        for future, result in futures.next_batch(block=False):
            if future.status == "finished":
                out.append((future, result))
                continue
            if future.cancelled():
                continue  # abandoned past its deadline: already recorded
            exc = result[1] if isinstance(result, tuple) else result
            if isinstance(exc, WorkerUnfit):
                raise ClusterError(f"cannot grade on this cluster: {exc}") from None
            if isinstance(exc, KilledWorker):
                out.append(
                    (
                        future,
                        TaskFailed(
                            f"{exc.allowed_failures + 1} grading workers died while running it; the "
                            f"scheduler gave up on it",
                            Status.CRASHED,
                        ),
                    )
                )
            else:
                out.append((future, TaskFailed(f"{type(exc).__name__}: {exc}")))
        return out

    def abandon(self, handles: list[Future]) -> list[Future]:
        """Cancel tasks past their deadline and stop the worker processes running them.

        A cancelled task's thread runs on, so its worker is stopped (the sandboxed kernels die
        with it; a worker under a nanny is started again). ``Client.restart_workers`` is not used:
        it can hang while the worker is busy.
        """
        keys = {f.key for f in handles}
        try:
            busy = [w for w, running in self.client.processing().items() if keys & set(running)]
        except OSError:
            busy = []
        self.client.cancel(list(handles))
        if busy:
            self.client.run(_exit_soon, workers=busy, on_error="return")
            self.log(f"stopped worker(s) {', '.join(busy)}: a task ran past its deadline")
        return []  # other tasks of a stopped worker are re-run by the scheduler itself

    def close(self) -> None:
        client, cluster, config = getattr(self, "client", None), self._cluster, self._config
        vars(self).pop("client", None)  # a closed backend has no client
        self._cluster = self._config = None
        try:
            if client is not None:
                client.close()
        finally:
            try:
                if cluster is not None:
                    cluster.close()
            finally:
                if config is not None:
                    config.__exit__(None, None, None)
