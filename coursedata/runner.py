"""Run a notebook's code cells one at a time in a fresh kernel, each within a time limit.

The kernel is a kernel of this Python (the one the kit is installed in), whatever kernels Jupyter
knows, under the grader's memory limit (:mod:`coursedata.kernel`), driven by nbclient's
asynchronous client. Each cell runs as a task: past ``timeout``
seconds the kernel is interrupted, which raises ``KeyboardInterrupt`` in the cell (its traceback
shows the line that was running). As at grading (nbclient's own time limit, which the grader
uses), the limit is on the kernel's run of the cell: a cell the kernel finished in time is not
stopped while its output is still being read. A kernel that does not come back within
:data:`GRACE` seconds (code that catches the interrupt, or is stuck outside Python) is killed and
the run ends there.
Each result is handed to the caller as soon as it is known, and the kernel is shut down however
the run ends, also when the task running it is cancelled (Ctrl-C, SIGTERM). The kernel runs in a
session of its own and is told this process's id, so it also exits if this process is killed.

The output kept is capped at :data:`MAX_OUTPUT` characters per notebook, as the grader caps it
(its sandbox's ``max_output_bytes``): past it, output is dropped (a cell's error is kept, without
its traceback) and the cell that reached the limit says so (:attr:`CellRun.dropped`), so a
notebook that prints millions of lines neither fills this process's memory nor passes unnoticed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CellRun", "run_cells", "GRACE", "SLOW", "MAX_OUTPUT"]

#: Seconds an interrupted kernel has to come back before it is killed.
GRACE = 5.0
#: Seconds after which a still-running cell is reported as such.
SLOW = 10.0
#: Characters of output kept per notebook (the grader's limit too).
MAX_OUTPUT = 1_000_000


@dataclass(frozen=True)
class CellRun:
    """The result of one code cell.

    Attributes
    ----------
    index : int
        The cell's position in the notebook.
    seconds : float
        How long it ran.
    error : dict or None
        Its error output (``ename``, ``evalue``, ``traceback``), if it raised.
    timed_out : bool
        It ran past the time limit and was interrupted.
    killed : bool
        The interrupted kernel did not come back and was killed: no later cell ran.
    died : bool
        The kernel died while running the cell (the cell's code ended the process or crashed
        it): no later cell ran.
    dropped : bool
        The notebook's output reached :data:`MAX_OUTPUT` in this cell: the rest was dropped.
    printed : int
        Characters of output the cell sent (kept or dropped).
    """

    index: int
    seconds: float
    error: dict | None = None
    timed_out: bool = False
    killed: bool = False
    died: bool = False
    dropped: bool = False
    printed: int = 0

    @property
    def ended_run(self) -> bool:
        """No later cell could run after this one."""
        return self.killed or self.died


def _kernel_manager(kernel_dir: Path):
    """An asynchronous manager for a kernel of this interpreter, on local sockets."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager

    spec = kernel_dir / "this-python"
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "coursedata.kernel", "-f", "{connection_file}"],
        "display_name": "Python (this environment)", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(kernel_dir)], ensure_native_kernel=False)
    # Local sockets where there are any (no TCP port, no warning about unencrypted TCP).
    transport = {"transport": "ipc", "ip": str(kernel_dir / "kernel")} if os.name == "posix" else {}
    return AsyncKernelManager(kernel_name="this-python", kernel_spec_manager=specs, **transport)


def _capped_client(nb, km, limit: int):
    """nbclient's client keeping at most ``limit`` characters of output over the notebook."""
    from nbclient import NotebookClient

    class Capped(NotebookClient):
        budget = limit
        dropped_at: int | None = None

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.printed: dict[int, int] = {}  # characters each cell printed, by cell index

        def output(self, outs, msg, display_id, cell_index):
            content, kind = msg["content"], msg["msg_type"]
            if kind == "stream":
                self.printed[cell_index] = self.printed.get(cell_index, 0) + len(
                    content.get("text", ""))
            if kind == "error":  # a failure is always kept, its traceback only within the limit
                size = len(json.dumps(content, default=str))
                if size > self.budget:
                    content = {**content, "evalue": str(content.get("evalue", ""))[:500],
                               "traceback": []}
                    msg = {**msg, "content": content}
                    self._drop(outs, cell_index)
                self.budget = max(0, self.budget - size)
                return super().output(outs, msg, display_id, cell_index)
            text = content.get("text", "") if kind == "stream" else None
            size = len(text) if text is not None else len(
                json.dumps(content.get("data", content), default=str))
            if size <= self.budget:
                self.budget -= size
                return super().output(outs, msg, display_id, cell_index)
            kept = None
            if text is not None and self.budget > 0:
                cut = {**msg, "content": {**content, "text": text[:self.budget]}}
                kept = super().output(outs, cut, display_id, cell_index)
            self.budget = 0
            self._drop(outs, cell_index)
            return kept

        def _drop(self, outs, cell_index) -> None:
            if self.dropped_at is None:
                self.dropped_at = cell_index
                outs.append({"output_type": "stream", "name": "stderr",
                             "text": f"\n[output limit of {limit:,} characters reached: the rest "
                                     "was dropped]\n"})

    return Capped(nb, km=km, timeout=None, allow_errors=True)


def _error(cell) -> dict | None:
    return next((dict(o) for o in cell.get("outputs", []) if o.get("output_type") == "error"),
                None)


async def run_cells(nb, cwd: Path, timeout: float,
                    on_start: Callable[[int], None] = lambda index: None,
                    on_result: Callable[[CellRun], None] = lambda run: None,
                    on_slow: Callable[[int, float], None] = lambda index, seconds: None,
                    kernel_args: Sequence[str] = (), env: dict | None = None) -> list[CellRun]:
    """Run the code cells of ``nb`` (in place: outputs are filled in) and return their results.

    ``on_start(index)`` is called before a cell runs, ``on_result(run)`` as soon as it is done,
    and ``on_slow(index, seconds)`` once when it has run :data:`SLOW` seconds. Cells after one
    whose kernel had to be killed are not run. ``kernel_args`` are added to the kernel's command
    line and ``env`` (if given) is its environment (the problem set's rules:
    :mod:`coursedata.rulecheck`).
    """
    results: list[CellRun] = []
    with tempfile.TemporaryDirectory(prefix="coursedata-check-") as kernel_dir:
        km = _kernel_manager(Path(kernel_dir))
        client = _capped_client(nb, km, MAX_OUTPUT)
        kc = None
        try:
            # The kernel's own log (start-up and shut-down notes) is not for students: errors of
            # the notebook's code come back in the cells' outputs.
            await km.start_kernel(cwd=str(cwd), stderr=subprocess.DEVNULL,
                                  extra_arguments=list(kernel_args),
                                  **({"env": env} if env is not None else {}))
            kc = km.client()
            kc.start_channels()
            await kc.wait_for_ready(timeout=120)
            kc.allow_stdin = False
            client.kc = kc
            for index, cell in enumerate(nb.cells):
                if cell.cell_type != "code" or not cell.source.strip():
                    continue
                on_start(index)
                run = await _run_one(client, km, cell, index, timeout, on_slow)
                run = dataclasses.replace(run, dropped=client.dropped_at == index,
                                          printed=client.printed.get(index, 0))
                results.append(run)
                on_result(run)
                if run.ended_run:
                    break
        finally:
            if kc is not None:
                kc.stop_channels()
            if km.has_kernel:
                await km.shutdown_kernel(now=True)
    return results


async def _run_one(client, km, cell, index: int, timeout: float, on_slow) -> CellRun:
    task = asyncio.ensure_future(client.async_execute_cell(cell, index))
    try:
        return await _watch(task, km, cell, index, timeout, on_slow)
    finally:  # also when cancelled: the cell's task never outlives its watch
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


def _replied(cell) -> bool:
    """The kernel has answered the cell's request: its code ran to the end (nbclient notes the
    reply's time before it reads the last of the cell's output)."""
    return "shell.execute_reply" in cell.get("metadata", {}).get("execution", {})


async def _watch(task, km, cell, index: int, timeout: float, on_slow) -> CellRun:
    from nbclient.exceptions import DeadKernelError

    start = time.monotonic()
    done, _ = await asyncio.wait({task}, timeout=min(SLOW, timeout))
    if not done and timeout > SLOW:
        on_slow(index, time.monotonic() - start)
        done, _ = await asyncio.wait({task}, timeout=timeout - SLOW)
    timed_out = not done and not _replied(cell)
    if not done and not timed_out:  # run in time: nbclient reads its output a few seconds more
        done, _ = await asyncio.wait({task}, timeout=GRACE)
    if timed_out:
        await km.interrupt_kernel()
        done, _ = await asyncio.wait({task}, timeout=GRACE)
    if not done:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        await km.shutdown_kernel(now=True)
        return CellRun(index, time.monotonic() - start, _error(cell), True, killed=True)
    try:
        task.result()
    except DeadKernelError:
        return CellRun(index, time.monotonic() - start, _error(cell), timed_out, died=True)
    return CellRun(index, time.monotonic() - start, _error(cell), timed_out)
