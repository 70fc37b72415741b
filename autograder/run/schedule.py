"""The coordinator's loop: hand out tasks, enforce a deadline per task, re-run a dead worker's.

One loop behind every backend (:mod:`autograder.run.pool`, :mod:`autograder.run.cluster`). Each result
goes to ``deliver``, the single writer (:mod:`autograder.run.output`).
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record
from autograder.intake.collect import Submission
from autograder.run.pool import Backend
from autograder.run.task import GradingOptions, TaskFailed, WorkerLost, failed_record
from autograder.status import Status

__all__ = ["run_tasks", "default_deadline"]


@dataclass
class _Flight:
    sub: Submission
    deadline: float  # time.monotonic() by which a result is due
    alone: bool  # handed out with nothing else in flight
    handed_out: float = dataclasses.field(default_factory=time.time)  # wall clock


def _with_wait(record: Record, flight: _Flight) -> Record:
    """The record with its waiting time (hand-out to the task's start) among its timings."""
    if record.started_at is None:
        return record
    wait = round(max(0.0, record.started_at - flight.handed_out), 3)
    return dataclasses.replace(record, timings={"wait_s": wait, **record.timings})


def default_deadline(options: GradingOptions) -> float:
    """Seconds the coordinator waits for one task's result before recording ``timeout``.

    The sandbox already stops a notebook at ``notebook_timeout_s``; this backstop also covers the
    kernel's start, the scoring and a loaded worker, and catches a task that hangs outside the
    notebook (a stuck worker), so that no task blocks a batch forever.
    """
    return options.notebook_timeout_s + max(120.0, options.notebook_timeout_s)


def run_tasks(
    backend: Backend[Any],
    todo: list[Submission],
    deliver: Callable[[Submission, Record], None],
    *,
    problem_set: ProblemSet,
    deadline_s: float,
) -> None:
    """Grade ``todo`` on ``backend``; call ``deliver(sub, record)`` once per submission.

    The one loop behind every backend. At most ``backend.slots()`` tasks are in flight, so a
    task handed out is a task running: its deadline (``deadline_s`` after hand-out) measures its
    own run, the backend holds only a bounded number of notebooks, and a cluster's workers take
    the next task as soon as they finish one. A task past its deadline is recorded ``timeout``
    and abandoned. A task whose worker died is graded again with nothing else in flight, so only
    a submission that kills its own worker is recorded ``crashed``. While the backend has no
    worker, deadlines are paused.
    """
    queue: deque[Submission] = deque(todo)
    alone: deque[Submission] = deque()
    flights: dict[Hashable, _Flight] = {}
    last = time.monotonic()
    while queue or alone or flights:
        slots = backend.slots()
        now = time.monotonic()
        if slots == 0:
            for paused in flights.values():
                paused.deadline += now - last
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
            if isinstance(outcome, WorkerLost):
                if flight.alone:
                    deliver(
                        flight.sub,
                        failed_record(problem_set, flight.sub, "its grading worker died"),
                    )
                else:
                    alone.append(flight.sub)
            elif isinstance(outcome, TaskFailed):
                deliver(
                    flight.sub,
                    failed_record(problem_set, flight.sub, outcome.message, outcome.status),
                )
            else:
                deliver(flight.sub, _with_wait(outcome, flight))
        now = time.monotonic()
        expired = [h for h, f in flights.items() if f.deadline <= now]
        if expired:
            for handle in expired:
                sub = flights.pop(handle).sub
                deliver(
                    sub,
                    failed_record(
                        problem_set,
                        sub,
                        f"no result within {deadline_s:.0f} s, the grader's limit "
                        "for one notebook; its grading was stopped",
                        Status.TIMEOUT,
                    ),
                )
            for handle in backend.abandon(expired):
                flight = flights.pop(handle, None)
                if flight is not None:
                    (alone if flight.alone else queue).appendleft(flight.sub)
