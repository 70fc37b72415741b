"""Warm sandboxes: submissions forked from one zygote see nothing of one another.

Submission A patches NumPy, sets globals and builtins, writes files into its working folder,
``/tmp`` and ``/dev/shm``, creates a System V shared-memory segment, and leaves a background
process, a double-forked daemon and a thread behind. Submission B, executed next by the same
zygote (same grading process, same configuration), must see none of it; from the host, nothing of
A's sandbox may be left. The limits hold per submission in the warm path too; the rest of the
hostile battery (``tests/autograder/sandbox/test_sandbox.py``,
``tests/autograder/commands/test_autograder.py``) runs warm by default.
Here every zygote has the problem sets' imports done, as the grader's have.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import nbformat
import pytest

from autograder.run.preload import course_imports, grading_preload
from autograder.sandbox import SandboxConfig, execute_notebook, sandbox_available, warm
from tests.environment import require

AVAILABLE, REASON = sandbox_available()
ROOT_GRADER = os.geteuid() == 0
pytestmark = [require(AVAILABLE, f"no sandbox here: {REASON}"),
              require(ROOT_GRADER, "warm sandboxes need a root grader"),
              pytest.mark.slow]

# As the grader's zygotes: the problem sets' imports done (NumPy, SciPy, scikit-learn, ...).
FAST = dict(cell_timeout_s=3, notebook_timeout_s=40, preload=grading_preload())
SLEEP = f"300.{uuid.uuid4().int % 10**6}"  # a command line found nowhere else on the host


@pytest.fixture(scope="module", autouse=True)
def stop_the_zygote():
    """The zygote these tests started ends with them (not only when pytest's process exits)."""
    yield
    warm.stop_zygote()


def notebook(*sources: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def probe(result, index: int) -> dict:
    text = "".join(o.get("text", "") for o in result.notebook.cells[index].outputs
                   if o.output_type == "stream" and o.name == "stdout")
    return json.loads(text.strip().splitlines()[-1])


def errors(result, index: int) -> list[str]:
    return [o.ename for o in result.notebook.cells[index].outputs if o.output_type == "error"]


def probe_list(result, index: int) -> list[str]:
    import ast

    text = "".join(o.get("text", "") for o in result.notebook.cells[index].outputs
                   if o.output_type == "stream")
    return ast.literal_eval(text.strip().splitlines()[-1])


SHM = ("import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
       "def shm(flags):\n    return libc.shmget(0x5A5A17, 4096, flags)\n")

A = notebook(
    # 0: patch numpy and the interpreter
    "import builtins, numpy as np, numpy.linalg\n"
    "np.linalg.svd = lambda *args, **kwargs: 'patched'\n"
    "np.mean = lambda *args, **kwargs: 42\n"
    "builtins.LEFT_BY_A = True\nLEFT_BY_A = True\nimport sys\nsys.modules['leftover_a'] = np\n"
    "print('{}')",
    # 1: files everywhere it may write
    "import json, os\n"
    "for path in ('scratch_a.txt', '/tmp/a.txt', '/dev/shm/a.txt'):\n"
    "    open(path, 'w').write('A was here')\n"
    "os.mkdir('/tmp/a_dir')\n"
    "print(json.dumps({'tmp': sorted(os.listdir('/tmp')), 'shm': os.listdir('/dev/shm')}))",
    # 2: processes, a daemon, a thread and an IPC segment that outlive the cell
    SHM + "import json, os, subprocess, threading, time\n"
    f"sleeper = subprocess.Popen(['sleep', '{SLEEP}'])\n"
    "child = os.fork()\n"
    "if child == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    f"        os.execvp('sleep', ['sleep', '{SLEEP}'])\n"
    "    os._exit(0)\n"
    "os.waitpid(child, 0)\n"
    "threading.Thread(target=time.sleep, args=(300,), daemon=True).start()\n"
    "segment = shm(0o1666)  # IPC_CREAT | 0o666\n"
    "time.sleep(0.5)\n"
    "print(json.dumps({'ns': os.readlink('/proc/self/ns/pid'), 'segment': segment,\n"
    "    'sleeping': sum(1 for p in os.listdir('/proc') if p.isdigit() and\n"
    "                    open(f'/proc/{p}/cmdline').read().startswith('sleep')),\n"
    "    'threads': threading.active_count(), 'work': os.getcwd()}))",
)

B = notebook(
    # 0: numpy and the interpreter as new
    "import builtins, json, sys, numpy as np\n"
    "u, s, vt = np.linalg.svd(np.diag([3.0, 2.0]))\n"
    "print(json.dumps({'svd': s.tolist(), 'mean': float(np.mean([1.0, 2.0])),\n"
    "    'builtin': hasattr(builtins, 'LEFT_BY_A'), 'global': 'LEFT_BY_A' in globals(),\n"
    "    'module': 'leftover_a' in sys.modules}))",
    # 1: no file of A's
    "import json, os\n"
    "print(json.dumps({'tmp': sorted(os.listdir('/tmp')), 'shm': os.listdir('/dev/shm'),\n"
    "    'cwd': sorted(os.listdir('.')), 'parent': sorted(os.listdir('..'))}))",
    # 2: no process, thread or IPC segment of A's
    SHM + "import json, os, threading\n"
    "procs = {p: open(f'/proc/{p}/cmdline').read().split('\\0')[0]\n"
    "         for p in os.listdir('/proc') if p.isdigit()}\n"
    "print(json.dumps({'ns': os.readlink('/proc/self/ns/pid'), 'procs': procs,\n"
    "    'segment': shm(0), 'threads': [t.name for t in threading.enumerate()]}))",
)


def _area() -> Path:
    base = Path(tempfile.mkdtemp(prefix="nbsbx-warm-", dir="/var/tmp"))
    base.chmod(0o755)
    return base


def _host_processes(ns: str) -> list[str]:
    """Host processes in the pid namespace ``ns`` or running the test's sleep command."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if not proc.name.isdigit():
                continue
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            if os.readlink(proc / "ns" / "pid") == ns or SLEEP.encode() in cmdline:
                found.append(f"{proc.name}: {cmdline}")
        except OSError:
            continue
    return found


@pytest.fixture(scope="module")
def pair():
    """A, then B, in the same grading area (siblings) and through the same zygote."""
    base = _area()
    work_a, work_b = base / "grading" / "a", base / "grading" / "b"
    work_a.mkdir(parents=True)
    work_b.mkdir(parents=True)
    config = SandboxConfig(**FAST)
    handler = _Collect()
    logging.getLogger("autograder.sandbox").addHandler(handler)
    try:
        result_a = execute_notebook(A, work_a, config)
        zygote = warm._zygote
        leftovers = _host_processes(probe(result_a, 2)["ns"])
        result_b = execute_notebook(B, work_b, config)
        same = warm._zygote is zygote and zygote is not None and zygote.alive()
    finally:
        logging.getLogger("autograder.sandbox").removeHandler(handler)
    yield result_a, result_b, leftovers, same, handler.messages, work_a
    shutil.rmtree(base, ignore_errors=True)


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_both_ran_warm_through_the_same_zygote(pair):
    result_a, result_b, _, same, messages, _ = pair
    assert result_a.status == "ok" and result_b.status == "ok", (result_a.message,
                                                                 result_b.message)
    assert same, "B was not forked by A's zygote"
    assert not [m for m in messages if "warm sandbox unavailable" in m], messages
    assert set(result_b.timings) == {"start_s", "execute_s"}


def test_a_really_did_leave_things_behind(pair):
    result_a, _, _, _, _, work_a = pair
    wrote = probe(result_a, 1)
    assert {"a.txt", "a_dir"} <= set(wrote["tmp"]) and wrote["shm"] == ["a.txt"]
    seen = probe(result_a, 2)
    assert seen["sleeping"] == 2 and seen["threads"] >= 2 and seen["segment"] >= 0
    assert (work_a / "scratch_a.txt").read_text() == "A was here"  # kept for the grader


def test_b_imports_an_unpatched_numpy_and_a_clean_interpreter(pair):
    _, result_b, _, _, _, _ = pair
    assert probe(result_b, 0) == {"svd": [3.0, 2.0], "mean": 1.5, "builtin": False,
                                  "global": False, "module": False}


def test_b_sees_none_of_the_files_of_a(pair):
    _, result_b, _, _, _, work_a = pair
    seen = probe(result_b, 1)
    assert seen["shm"] == []
    assert "a.txt" not in seen["tmp"] and "a_dir" not in seen["tmp"]
    assert seen["cwd"] == [] and seen["parent"] == ["b"]  # A's folder next door is invisible


def test_no_process_of_a_survives_and_b_has_its_own(pair):
    result_a, result_b, leftovers, _, _, _ = pair
    assert leftovers == []  # seen from the host, right after A's execution
    seen = probe(result_b, 2)
    assert not [c for c in seen["procs"].values() if c == "sleep"], seen["procs"]
    assert len(seen["procs"]) <= 3, seen["procs"]  # init, the kernel, maybe a helper
    assert seen["segment"] == -1  # A's shared memory lived in A's IPC namespace only
    assert seen["threads"] == ["MainThread"] or "Thread-1 (sleep)" not in seen["threads"]


def test_a_daemon_left_by_a_is_gone_from_the_host():
    deadline = time.monotonic() + 5
    while _host_processes("none") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _host_processes("none") == []


# --- limits, per submission, in the warm path ---------------------------------------------

@pytest.fixture(scope="module")
def limited():
    base = _area()
    work = base / "grading" / "limits"
    work.mkdir(parents=True)
    # A generous cell limit: every fork() of a kernel carrying the scientific stack takes tens
    # of milliseconds on a busy machine; the children live until the sandbox ends.
    config = SandboxConfig(**{**FAST, "cell_timeout_s": 15}, max_file_mb=1, max_processes=32)
    result = execute_notebook(notebook(
        "import numpy as np\nbig = np.ones(3 * 2**30, dtype=np.uint8)",  # 0: memory
        "import json, os, time\nforked, error = 0, None\ntry:\n"  # 1: processes
        "    for _ in range(100):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        forked += 1\n"
        "except OSError as e:\n    error = type(e).__name__\n"
        "print(json.dumps({'forked': forked, 'error': error}))",
        "open('big.bin', 'wb').write(b'x' * 2 * 2**20)",  # 2: file size
        "import json, os\nprint(json.dumps({'uid': os.getuid(),\n"  # 3: who am I
        "    'caps': dict(l.split()[:2] for l in open('/proc/self/status')\n"
        "                 if l.startswith(('CapInh', 'CapPrm', 'CapEff', 'CapAmb'))),\n"
        "    'nnp': [l.split()[1] for l in open('/proc/self/status')\n"
        "            if l.startswith('NoNewPrivs')]}))",
    ), work, config)
    yield result, config
    shutil.rmtree(base, ignore_errors=True)


def test_memory_processes_and_file_size_are_limited(limited):
    result, config = limited
    assert result.status == "ok", result.message
    assert errors(result, 0) == ["MemoryError"]
    forked = probe(result, 1)
    assert forked["error"] == "BlockingIOError" and forked["forked"] < config.max_processes
    assert errors(result, 2) == ["OSError"]  # EFBIG


def test_the_kernel_has_no_privilege(limited):
    result, _ = limited
    seen = probe(result, 3)
    assert seen["uid"] >= 1_000_000_000
    assert len(seen["caps"]) == 4 and not any(int(c, 16) for c in seen["caps"].values())
    assert seen["nnp"] == ["1"]


def test_time_limits_and_crashes_in_the_warm_path(tmp_path):
    work = tmp_path / "c" / "student"
    work.mkdir(parents=True)
    result = execute_notebook(notebook("while True:\n    pass", "print('later')"), work,
                              SandboxConfig(**FAST))
    assert result.status == "ok" and result.cell_timeouts == [0], result.message
    start = time.monotonic()
    work = tmp_path / "a" / "student"
    work.mkdir(parents=True)
    result = execute_notebook(notebook("while True:\n    pass", "print('never')"), work,
                              SandboxConfig(**{**FAST, "cell_timeout_s": 30,
                                               "notebook_timeout_s": 3}))
    assert result.status == "timeout" and time.monotonic() - start < 15
    work = tmp_path / "b" / "student"
    work.mkdir(parents=True)
    result = execute_notebook(notebook("import os\nos._exit(3)"), work, SandboxConfig(**FAST))
    assert result.status == "crashed" and "exit status 3" in result.message


def test_folders_bound_back_under_tmp_stay_visible_in_the_fresh_tmp(tmp_path):
    """A checkout (and its environment) under ``/tmp``, as in a fresh clone there: the folders
    bound back into the sandbox must survive each submission's fresh ``/tmp``, or the kernel
    cannot import what the zygote did not import already."""
    lib = Path(tempfile.mkdtemp(prefix="warm-lib-", dir="/tmp"))
    try:
        lib.chmod(0o755)
        (lib / "late_import_probe.py").write_text("VALUE = 'seen'\n")
        (lib / "late_import_probe.py").chmod(0o644)
        base = SandboxConfig(**FAST)
        config = SandboxConfig(**FAST, visible_paths=base.visible_paths + (lib,),
                               python_path=base.python_path + (lib,))
        work = tmp_path / "student"
        work.mkdir()
        result = execute_notebook(notebook(
            "import late_import_probe, os\nprint(late_import_probe.VALUE)",
            "import os\nprint(sorted(os.listdir('/tmp')))"), work, config)
        assert result.status == "ok", result.message
        assert result.notebook.cells[0].outputs[0].text.strip() == "seen", \
            result.notebook.cells[0].outputs
        assert warm._zygote is not None and warm._zygote.alive(), "it ran warm"
        assert not any(n.startswith("nbzyg") for n in probe_list(result, 1)), \
            "the zygote's own folder (its socket) stays out of the submission's /tmp"
    finally:
        shutil.rmtree(lib, ignore_errors=True)


def test_the_cold_sandbox_remains_an_option(tmp_path):
    work = tmp_path / "student"
    work.mkdir()
    result = execute_notebook(notebook("import os\nprint(open('/proc/1/cmdline').read()[:40])"),
                              work, SandboxConfig(**FAST, warm=False))
    assert result.status == "ok", result.message
    assert "bwrap" in result.notebook.cells[0].outputs[0].text  # bubblewrap's own init


def test_the_zygote_is_restarted_after_it_dies(tmp_path):
    config = SandboxConfig(**FAST)
    zygote, _ = warm.warm_zygote(config)
    zygote.proc.kill()
    zygote.proc.wait()
    work = tmp_path / "student"
    work.mkdir()
    result = execute_notebook(notebook("print(1)"), work, config)
    assert result.status == "ok"
    assert warm._zygote is not zygote and warm._zygote.alive()


def test_course_imports_are_read_from_non_solution_cells_only(tmp_path):
    source = tmp_path / "source" / "ps"
    source.mkdir(parents=True)
    cells = [nbformat.v4.new_code_cell("%matplotlib inline\nimport numpy as np\n"
                                       "from scipy import linalg"),
             nbformat.v4.new_code_cell("import secret_solution_module",
                                       metadata={"nbgrader": {"solution": True}}),
             nbformat.v4.new_code_cell("this is not python")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), source / "ps.ipynb")
    assert course_imports(tmp_path) == ("numpy", "scipy")
