"""Where a rebuilt notebook runs: the sandbox, or a plain kernel for trusted notebooks.

An *executor* is ``executor(nb, workdir, env) -> ExecutionResult``: it runs the notebook ``nb`` in
the folder ``workdir`` with the variables ``env`` added to its kernel's environment (the results
folder, the rules' log: see :func:`autograder.grading.pipeline.execute`), and returns the executed copy
with how the run ended. :func:`sandbox_executor` runs student code (:mod:`autograder.sandbox`);
:func:`local_executor` runs only the instructor's own notebooks (the source, tests of the checks).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import nbformat

from autograder.sandbox.config import ExecutionResult
from autograder.status import Status

__all__ = ["Executor", "local_executor", "sandbox_executor"]


class Executor(Protocol):
    """Runs a notebook: ``executor(nb, workdir, env) -> ExecutionResult``."""

    def __call__(self, nb: nbformat.NotebookNode, workdir: Path, env: dict) -> ExecutionResult: ...


def local_executor(timeout: float = 60.0, kernel_name: str = "python3") -> Callable:
    """An executor that runs the notebook in an ordinary, UNSANDBOXED kernel.

    Only for trusted notebooks (the instructor's own source, tests of the checks). Student
    submissions go through :func:`sandbox_executor`.
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import DeadKernelError

    def execute(nb, workdir: Path, env: dict) -> ExecutionResult:
        import os

        from coursedata.guard import KERNEL_ARGUMENT

        client = NotebookClient(
            nb,
            timeout=timeout,
            allow_errors=True,
            kernel_name=kernel_name,
            extra_arguments=[KERNEL_ARGUMENT],
        )
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        try:
            start = time.perf_counter()
            client.execute(cwd=str(workdir))
            return ExecutionResult(
                nb, Status.OK, "", timings={"execute_s": time.perf_counter() - start}
            )
        except DeadKernelError as exc:
            return ExecutionResult(nb, Status.CRASHED, f"the kernel died: {exc}")
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v

    return execute


def sandbox_executor(config=None) -> Callable:
    """An executor that runs the notebook in the bubblewrap sandbox (:mod:`autograder.sandbox`).

    The environment ``env`` given by :func:`autograder.grading.pipeline.execute` (the results
    folder) is added to the sandbox's own, which is otherwise cleared; it is passed apart from the
    configuration, so every submission's kernel is forked from the same warm zygote.
    """
    from autograder.sandbox import SandboxConfig, execute_notebook

    base = config or SandboxConfig()

    def execute(nb, workdir: Path, env: dict) -> ExecutionResult:
        run = execute_notebook(nb, workdir, base, env=env)
        if run.status != Status.OK:
            return run
        # A cell stopped at its own time limit is named by autograder.grading.diagnose; output
        # past the limit and the submission's limits it reached are said here.
        notes = [_dropped(run, base.max_output_bytes), *run.limits_reached]
        return dataclasses.replace(run, message="; ".join(n for n in notes if n))

    return execute


def _dropped(run: ExecutionResult, limit: int) -> str:
    """The note of a run whose output passed ``limit``, or ``""``."""
    if not run.output_truncated:
        return ""
    return (
        f"your notebook printed more than {limit:,} characters: the rest of its output was "
        "dropped (the limit per notebook); grading went on"
    )
