"""Run an untrusted notebook in a sandboxed Jupyter kernel.

A student's notebook is executed by :func:`execute_notebook` in an IPython kernel that runs inside
a `bubblewrap <https://github.com/containers/bubblewrap>`_ sandbox (``bwrap``, Debian package
``bubblewrap``). The grader drives the kernel with nbclient from its own, trusted process and
scores the results there; nothing the student's code prints or writes is trusted.

What the kernel sees
--------------------
- The host's file system read-only (``--ro-bind / /``), with an empty read-only tmpfs over every
  *hidden* folder: the project root (so :mod:`solutions`, ``course/source``,
  ``course/gradebook.db`` and the course notebooks are invisible), the course folder
  (:data:`autograder.settings.COURSE_DIR`, wherever it lives), the home folders, ``/run``
  (host sockets such as a Docker socket live there), ``/mnt``, ``/media``, ``/srv``, ``/opt``,
  the folder of any installed :mod:`solutions` or :mod:`autograder` package, and the parent of
  the working folder, so sibling submissions are invisible.
- Bound back read-only at their own paths: the virtual environment (``sys.prefix``), the Python
  installation (``sys.base_prefix``) and the ``coursedata`` package; the project root is on
  ``PYTHONPATH`` so ``import coursedata`` works while ``import solutions`` fails.
- The working folder read-write: the only place on the host it can change (symbolic links, pipes
  and sockets left there are deleted afterwards). A private, size-capped ``/tmp`` and
  ``/dev/shm`` vanish with the kernel; ``HOME`` is ``/tmp``.
- No network (``--unshare-net``; the grader talks to the kernel over Unix sockets in a private
  folder), its own process, IPC and host-name namespaces, a new session (no terminal), a cleared
  environment, and it dies with the grader (``--die-with-parent``).

Limits
------
Set with ``setrlimit`` in a tiny start-up step inside the sandbox, just before the kernel starts:
address space (``memory_mb``: a too-large allocation raises ``MemoryError``), file size
(``max_file_mb``), processes and threads (``max_processes``), no core files, and CPU seconds as a
backstop. Wall time is enforced by the grader: per cell (``cell_timeout_s``: the cell is
interrupted, gets a ``CellTimeoutError`` output, and later cells still run) and per notebook
(``notebook_timeout_s``: the kernel is killed and the status is ``"timeout"``). Captured output is
capped at ``max_output_bytes`` per notebook (the rest is dropped, with a note). A single output
message is bounded only by the kernel's memory limit: the grader holds it briefly before
truncating it.

``RLIMIT_NPROC`` counts all the processes and threads of a *user*, and Linux never enforces it
for the host's root user (not even inside a user namespace mapped to root). So when the grader
runs as root, the kernel drops to a fresh unprivileged user id (unique per execution, so parallel
executions do not share the count) after the sandbox is built; the working folder is handed to
that user for the run and given back afterwards. When the grader is an ordinary user, bwrap
creates a user namespace, in which Linux counts processes per namespace, so again each execution
has its own count.

Statuses
--------
``"ok"``
    Every cell ran. Cells may still have failed: exceptions (including ``SystemExit`` from
    ``sys.exit()``, which IPython catches), ``MemoryError`` and per-cell timeouts are error outputs
    of their cell; :attr:`ExecutionResult.cell_timeouts` lists the cells that were interrupted.
``"timeout"``
    The notebook's wall-time limit was reached, or a cell outlived its own limit and then ignored
    the interrupt for 10 s (a stuck kernel would only burn the rest of the notebook's time); the
    kernel was killed and later cells did not run.
``"crashed"``
    The kernel died (``os._exit``, a segmentation fault, a signal from a resource limit), or it
    sent messages the grader could not process; later cells did not run.

Student misbehaviour never raises. :class:`SandboxError` is raised only when the sandbox cannot be
built or the kernel cannot start, which is the grader's problem, not the student's.

Warm sandboxes
--------------
By default (``SandboxConfig.warm``) a root grader does not start a new bubblewrap and interpreter
per notebook: each grading process keeps a *zygote* (:mod:`~autograder.sandbox.warm`), an
interpreter in a sandbox built as above with the problem sets' imports done, and forks it once per
notebook into a fresh sandbox of its own (:mod:`~autograder.sandbox.zygote`): new mount, pid, IPC,
UTS and network namespaces, a fresh ``/tmp`` and ``/dev/shm``, only that notebook's working folder
bound read-write (its parent hidden), the same limits, its own unprivileged user, no capabilities
and ``no_new_privs``; its pid 1 dies with the kernel and takes every process of the notebook with
it. The zygote never runs notebook code. Where this cannot be built (an unprivileged grader, an
old Linux), the execution falls back to the cold sandbox above and logs why.

Containers without namespaces
-----------------------------
Where bubblewrap cannot create namespaces (a Docker container under its default seccomp profile,
as Gradescope's: containers/bubblewrap #505), ``SandboxConfig(container=True)`` runs the kernel
without bwrap, as a fresh unprivileged user of a root grader, with the same limits, time limits
and cleared environment; the caller keeps the trusted files from it by their permissions, and
every process of that user is killed at the end. Where the grader may mount (``CAP_SYS_ADMIN``),
the kernel's start-up step gives it a mount namespace of its own in which the folders any user
may write (``/tmp``, ``/var/tmp``, ``/run/lock``, ``/var/crash``, ``/dev/mqueue``) are read-only
but for its working folder and its private folder (its ``HOME`` and ``TMPDIR``), and
``/dev/shm`` is an empty tmpfs of ``tmp_mb``. :func:`container_gaps` names what it does not keep
here (:data:`CONTAINER_GAPS` everywhere); :func:`container_available` says whether it can run.

The package, read in order: :mod:`~autograder.sandbox.config` (what an execution is given and
returns), :mod:`~autograder.sandbox.plan` (the pure bubblewrap command and mount plan),
:mod:`~autograder.sandbox.workdir` (lending the working folder), :mod:`~autograder.sandbox.kernel`
(the Jupyter side), :mod:`~autograder.sandbox.warm` and :mod:`~autograder.sandbox.zygote` (warm
sandboxes) and :mod:`~autograder.sandbox.execute` (the orchestration).
"""

from autograder.sandbox.config import (
    PROJECT_ROOT,
    ExecutionResult,
    SandboxConfig,
    SandboxError,
    kernel_environment,
)
from autograder.sandbox.execute import (
    CONTAINER_GAPS,
    container_available,
    container_gaps,
    execute_notebook,
    sandbox_available,
)

__all__ = [
    "SandboxConfig",
    "ExecutionResult",
    "SandboxError",
    "sandbox_available",
    "container_available",
    "container_gaps",
    "CONTAINER_GAPS",
    "execute_notebook",
    "kernel_environment",
    "PROJECT_ROOT",
]
