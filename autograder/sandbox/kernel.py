"""The Jupyter side of a sandboxed kernel: its manager, the nbclient client with the output
budget and the time limits, a channel that survives garbled messages, and the end of the
sandbox's processes."""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import time
import uuid
from pathlib import Path

import nbformat
from jupyter_client import AsyncKernelManager
from jupyter_client.channels import AsyncZMQSocketChannel, Empty
from jupyter_client.kernelspec import KernelSpec
from nbclient import NotebookClient

log = logging.getLogger("autograder.sandbox")

# How long a timed-out cell's kernel may take to honour the interrupt before it counts as stuck.
_INTERRUPT_GRACE_S = 10


class _SandboxKernelManager(AsyncKernelManager):
    """A kernel manager with an in-memory kernelspec that hands the connection file to the
    sandbox user."""

    def __init__(self, spec: KernelSpec, uid: int, **kwargs):
        super().__init__(**kwargs)
        self._sandbox_spec = spec
        self._sandbox_uid = uid

    @property
    def kernel_spec(self) -> KernelSpec:
        return self._sandbox_spec

    def write_connection_file(self, **kwargs) -> None:
        super().write_connection_file(**kwargs)
        if self._sandbox_uid >= 0:
            os.chown(self.connection_file, self._sandbox_uid, self._sandbox_uid)


class _KernelStuck(Exception):
    """A cell outlived its time limit and the kernel ignored the interrupt."""


class _SandboxClient(NotebookClient):
    """nbclient with an output budget, no widget state, and timed-out cells recorded."""

    def __init__(self, nb, km, *, max_output_bytes: int, **kwargs):
        self._token = uuid.uuid4().hex
        timeout = kwargs["timeout"]
        super().__init__(
            nb,
            km=km,
            interrupt_on_timeout=True,
            error_on_timeout={
                "ename": "CellTimeoutError",
                "traceback": [],
                "evalue": f"the cell did not finish within {timeout:g} s",
                "sandbox_token": self._token,
            },
            # A tag in the student's notebook must not skip a cell.
            skip_cells_with_tag=f"never-skip-{self._token}",
            **kwargs,
        )
        self._budget = max_output_bytes
        self.output_truncated = False
        self.cell_timeouts: list[int] = []
        self.current_cell: int | None = None
        self._idle = False
        self.on_cell_execute = self._note_cell
        self.on_cell_executed = self._note_executed

    def _note_cell(self, cell, cell_index) -> None:
        self.current_cell = cell_index
        self._idle = False

    def process_message(self, msg, cell, cell_index):
        if msg["msg_type"] == "status" and msg["content"].get("execution_state") == "idle":
            self._idle = True
        return super().process_message(msg, cell, cell_index)

    def _note_executed(self, cell, cell_index, execute_reply) -> None:
        content = (execute_reply or {}).get("content", {})
        if content.get("status") == "error" and content.get("sandbox_token") != self._token:
            self._note_silenced_error(cell, content)
        if content.get("sandbox_token") == self._token:
            self.cell_timeouts.append(cell_index)
            cell.outputs.append(
                nbformat.v4.new_output(
                    "error",
                    ename="CellTimeoutError",
                    evalue=content["evalue"],
                    traceback=[
                        f"CellTimeoutError: {content['evalue']}; the kernel was interrupted"
                    ],
                )
            )
            if not self._idle:  # still busy ``iopub_timeout`` seconds after the interrupt
                raise _KernelStuck(cell_index)

    @staticmethod
    def _note_silenced_error(cell, content: dict) -> None:
        """A cell whose reply says it raised but that shows no error: the student's code
        silenced it (``set_custom_exc``, a replaced ``showtraceback``). The error is kept in the
        cell's outputs, as any failed cell's is, so a failed test still fails."""
        if any(o.get("output_type") == "error" for o in cell.get("outputs", [])):
            return
        cell.outputs.append(
            nbformat.v4.new_output(
                "error",
                ename=str(content.get("ename") or "Error")[:200],
                evalue=str(content.get("evalue") or "")[:500]
                + " (the cell raised this, and its code hid the error)",
                traceback=[],
            )
        )

    def _note_dropped(self, outs) -> None:
        if not self.output_truncated:
            self.output_truncated = True
            outs.append(
                nbformat.v4.new_output(
                    "stream",
                    name="stderr",
                    text="\n[sandbox: output limit reached; further output was dropped]\n",
                )
            )

    def output(self, outs, msg, display_id, cell_index):
        content = msg["content"]
        kind = msg["msg_type"]
        if kind == "stream":
            size = len(content.get("text", ""))
        else:
            size = len(json.dumps(content.get("data", content), default=str))
        if size <= self._budget:
            self._budget -= size
            return super().output(outs, msg, display_id, cell_index)
        if kind == "stream" and self._budget > 0:
            text = content.get("text", "")[: self._budget]
            self._budget = 0
            result = super().output(
                outs, {**msg, "content": {**content, "text": text}}, display_id, cell_index
            )
            self._note_dropped(outs)
            return result
        if kind == "error":  # keep the fact that a cell failed, without its traceback
            content = {**content, "evalue": str(content.get("evalue", ""))[:500], "traceback": []}
            return super().output(outs, {**msg, "content": content}, display_id, cell_index)
        self._budget = 0
        self._note_dropped(outs)
        return None

    def handle_comm_msg(self, outs, msg, cell_index) -> None:
        return None  # widget state is useless for grading and unbounded in size


class _TolerantChannel(AsyncZMQSocketChannel):
    """A kernel channel that skips messages that do not deserialize (bad signature or JSON)."""

    # jupyter_client's AsyncZMQSocketChannel makes its synchronous base's get_msg a coroutine
    async def get_msg(self, timeout: float | None = None) -> dict:  # type: ignore[override]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await super().get_msg(remaining)
            except Empty:
                raise
            except Exception as exc:  # noqa: BLE001 - anything the kernel side may send
                log.warning("dropped an invalid kernel message: %s", str(exc)[:200])


async def _wait_for_ready(kc, km, timeout: float) -> None:
    """Wait until the kernel answers on its shell and IOPub channels.

    As jupyter_client's ``wait_for_ready``, without its closing wait of 0.2 s for IOPub to fall
    silent: nbclient skips the IOPub messages of other requests anyway.
    """
    deadline = time.monotonic() + timeout
    while True:
        kc.kernel_info()
        try:
            reply = await kc.shell_channel.get_msg(timeout=1)
        except Empty:
            reply = None
        if reply is not None and reply["msg_type"] == "kernel_info_reply":
            try:
                await kc.iopub_channel.get_msg(timeout=0.2)  # IOPub is connected too
                return
            except Empty:
                pass
        if not await km.is_alive():
            raise RuntimeError("the kernel died before replying to kernel_info")
        if time.monotonic() > deadline:
            raise RuntimeError(f"the kernel did not reply within {timeout:g} s")


def _open_kernel_process(km: AsyncKernelManager) -> int | None:
    """A pidfd of the kernel process ``km`` started itself (the container mode's kernel, which no
    sandbox process wraps); called while the kernel is known to be alive."""
    pid = getattr(km.provisioner, "pid", None)
    if not isinstance(pid, int):
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _open_sandbox_process(info_fd: int) -> int | None:
    """A pidfd of the sandbox's first process (pid 1 of its pid namespace), from bwrap's info.

    Called while the kernel is known to be alive, so the pid cannot have been reused; the pid
    namespace recorded by bwrap is checked too.
    """
    os.set_blocking(info_fd, False)
    try:
        info = json.loads(os.read(info_fd, 65536))
        pidfd = os.pidfd_open(info["child-pid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        same = os.stat(f"/proc/{info['child-pid']}/ns/pid").st_ino == info["pid-namespace"]
    except (OSError, KeyError):
        same = True  # cannot check (no permission): the pid was alive a moment ago
    if not same:
        os.close(pidfd)
        return None
    return pidfd


#: How long the end of a sandbox waits for its processes to be gone before it gives up (a
#: process stuck in the kernel, as in an uninterruptible read, may never go): the killing itself
#: is certain, but on a loaded machine dozens of exiting processes can take many seconds.
PATIENCE_S = 300.0


def _end_sandbox(pidfd: int, timeout: float = 10.0, patience: float = PATIENCE_S) -> None:
    """Kill the sandbox's pid 1 and wait until it has exited.

    When the first process of a pid namespace dies, Linux kills every other process in it and
    only lets the first one finish exiting once they are all gone: afterwards nothing of the
    student's code can still write to the working folder. The wait is not cut at ``timeout``
    (a loaded machine may take longer to end dozens of processes: returning then would let them
    outlive the execution): a warning is logged every ``timeout`` seconds, and the wait gives up
    only after ``patience``, with an error.
    """
    try:
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass
    except OSError:
        log.warning("could not signal the sandbox", exc_info=True)
    start = time.monotonic()
    try:
        while not select.select([pidfd], [], [], timeout)[0]:
            waited = time.monotonic() - start
            if waited >= patience:
                log.error("the sandbox did not exit within %g s of SIGKILL; giving up", waited)
                return
            log.warning("the sandbox did not exit within %g s of SIGKILL; still waiting", waited)
    finally:
        os.close(pidfd)


def _describe_exit(code: int | None) -> str:
    if code is not None and code > 128:  # bwrap reports a signal as 128 + its number
        try:
            name = signal.Signals(code - 128).name
        except ValueError:
            name = f"signal {code - 128}"
        hint = {
            "SIGSEGV": ": a segmentation fault",
            "SIGKILL": ": killed",
            "SIGXCPU": ": CPU-time limit",
            "SIGXFSZ": ": file-size limit",
        }.get(name, "")
        return f"({name}{hint})"
    return f"(exit status {code})"


def _kernel_spec(argv: list[str], resource_dir: Path) -> KernelSpec:
    return KernelSpec(
        argv=argv,
        display_name="Python 3 (sandboxed)",
        language="python",
        interrupt_mode="message",
        resource_dir=str(resource_dir),
    )
