"""Tests of the sandboxed notebook executor, with real kernels in real bubblewrap sandboxes.

Each hostile behaviour is a cell of a small notebook; cells print one JSON line so the test can
read what happened inside. Notebooks are shared by module-scoped fixtures to keep kernel start-ups
(about 1.5 s each) few.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.sandbox import ExecutionResult, SandboxConfig, execute_notebook, sandbox_available
from tests import ROOT
from tests.environment import require

AVAILABLE, REASON = sandbox_available()
pytestmark = [require(AVAILABLE, f"no sandbox here: {REASON}"),
              pytest.mark.slow]  # real kernels: 1.5-6 s each, about 40 s for the file

FAST = dict(cell_timeout_s=2, notebook_timeout_s=40)


def notebook(*sources: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])


def text(result: ExecutionResult, index: int) -> str:
    return "".join(o.get("text", "") for o in result.notebook.cells[index].outputs
                   if o.output_type == "stream" and o.name == "stdout")


def probe(result: ExecutionResult, index: int) -> dict:
    """The JSON line printed by cell ``index``."""
    return json.loads(text(result, index).strip().splitlines()[-1])


def errors(result: ExecutionResult, index: int) -> list[str]:
    return [o.ename for o in result.notebook.cells[index].outputs if o.output_type == "error"]


def total_output(result: ExecutionResult) -> int:
    return sum(len(json.dumps(o)) for c in result.notebook.cells for o in c.get("outputs", []))


# --- isolation ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def area():
    """Folders outside /tmp (the sandbox's /tmp is private anyway, which would prove nothing):
    a grading area holding the student's workdir and a sibling, a folder passed as hidden, a
    control folder left visible, and a package installed outside the project."""
    base = Path(tempfile.mkdtemp(prefix="nbsbx-test-", dir="/var/tmp"))
    base.chmod(0o755)  # a root grader's kernel runs as another user: it must be able to look in
    paths = {"work": base / "grading" / "alice", "sibling": base / "grading" / "bob",
             "secret": base / "secret", "control": base / "control", "libs": base / "libs"}
    for path in paths.values():
        path.mkdir(parents=True)
    (paths["work"] / "results").mkdir()
    (paths["sibling"] / "answers.txt").write_text("bob's answers")
    (paths["secret"] / "key.txt").write_text("secret")
    (paths["control"] / "open.txt").write_text("visible")
    package = paths["libs"] / "sbx_reference_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("ANSWER = 42\n")
    yield paths
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def listener():
    """A TCP listener on the host's loopback; the sandbox must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    yield server
    server.close()


@pytest.fixture(scope="module")
def isolated(area, listener):
    sys.path.insert(0, str(area["libs"]))  # so that the grader can locate the package
    try:
        defaults = SandboxConfig()
        config = SandboxConfig(
            **FAST, hidden_paths=defaults.hidden_paths + (area["secret"],),
            hidden_packages=defaults.hidden_packages + ("sbx_reference_pkg",),
            visible_paths=defaults.visible_paths + (area["libs"],),
            python_path=defaults.python_path + (area["libs"],))
        marker = f"nbsbx-{uuid.uuid4().hex}.txt"
        port = listener.getsockname()[1]
        targets = [ROOT / marker, ROOT / "autograder" / marker, area["secret"] / marker,
                   area["control"] / marker, area["sibling"] / marker,
                   area["work"].parent / marker, Path(sys.prefix) / marker, Path.home() / marker,
                   Path("/etc") / marker, Path("/var/tmp") / marker]
        result = execute_notebook(notebook(
            # 0: an honest computation writing into results/
            "import numpy as np\nx = np.linspace(0.0, 1.0, 11)\n"
            "np.save('results/squares.npy', x ** 2)\nprint(float((x ** 2).sum()))",
            # 1, 2: the reference package is out of reach, the data package is not
            "import solutions",
            "import coursedata, json\nprint(json.dumps({'file': coursedata.__file__}))",
            # 3: what can be seen of the host
            "import json, os\n"
            f"root, secret, control = {str(ROOT)!r}, {str(area['secret'])!r}, "
            f"{str(area['control'])!r}\n"
            "ls = lambda p: sorted(os.listdir(p)) if os.path.isdir(p) else None\n"
            "print(json.dumps({'root': ls(root), 'autograder': ls(root + '/autograder'),\n"
            "    'gradebook': os.path.exists(root + '/course/gradebook.db'),\n"
            "    'secret': ls(secret), 'control': ls(control),\n"
            f"    'parent': ls('..'), 'home': ls({str(Path.home())!r}),\n"
            "    'uid': os.getuid(), 'cwd': os.getcwd()}))",
            # 4: writes outside the working folder
            "import json, os\nwritten = []\n"
            f"for target in {[str(t) for t in targets]!r}:\n"
            "    try:\n"
            "        with open(target, 'w') as f:\n"
            "            f.write('pwned')\n"
            "        written.append(target)\n"
            "    except OSError:\n"
            "        pass\n"
            f"open('/tmp/{marker}', 'w').write('private scratch')\n"
            "print(json.dumps({'written': written}))",
            # 5: no network, not even the host's loopback
            "import json, socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
            "    outcome = 'connected'\n"
            "except OSError as e:\n    outcome = type(e).__name__\n"
            "print(json.dumps({'outcome': outcome}))",
            # 6: a package hidden wherever it is installed
            "import sbx_reference_pkg",
        ), area["work"], config)
    finally:
        sys.path.remove(str(area["libs"]))
    return result, targets, marker


def test_honest_notebook_writes_results_that_stay_on_the_host(isolated, area):
    result, _, _ = isolated
    assert result.status == "ok", result.message
    assert float(text(result, 0)) == pytest.approx(3.85)
    saved = np.load(area["work"] / "results" / "squares.npy")
    np.testing.assert_allclose(saved, np.linspace(0.0, 1.0, 11) ** 2)
    # handed back to the folder's owner after the run
    assert (area["work"] / "results" / "squares.npy").stat().st_uid == area["work"].stat().st_uid


def test_reference_package_is_unreachable_and_coursedata_is_importable(isolated):
    result, _, _ = isolated
    assert errors(result, 1) == ["ModuleNotFoundError"]
    assert probe(result, 2)["file"] == str(ROOT / "coursedata" / "__init__.py")
    assert errors(result, 6) == ["ImportError"]  # installed outside the project, still hidden


def test_project_root_hidden_folders_and_siblings_are_invisible(isolated, area):
    result, _, _ = isolated
    seen = probe(result, 3)
    # only the way to the folders bound back (the virtual environment, coursedata) remains:
    # no solutions, autograder, chapters or gradebook
    assert set(seen["root"]) <= bound_children(ROOT) and "coursedata" in seen["root"]
    assert "solutions" not in seen["root"]
    assert seen["autograder"] is None and seen["gradebook"] is False
    assert set(seen["home"]) <= bound_children(Path.home())
    assert seen["secret"] == []
    assert seen["control"] == ["open.txt"]  # the same kind of folder, not hidden: readable
    assert seen["parent"] == ["alice"]  # bob's folder next door is invisible
    assert seen["cwd"] == str(area["work"])
    if os.geteuid() == 0:
        assert seen["uid"] != 0  # the kernel does not run as root


def bound_children(folder: Path) -> set[str]:
    """Names in ``folder`` that lead to a folder bound back into the sandbox."""
    folder = folder.resolve()
    return {p.resolve().relative_to(folder).parts[0] for p in SandboxConfig().visible_paths
            if folder in p.resolve().parents}


def test_writes_outside_the_working_folder_fail_and_leave_nothing(isolated):
    result, targets, marker = isolated
    assert probe(result, 4) == {"written": []}
    assert not [t for t in targets if t.exists()]
    assert not (Path("/tmp") / marker).exists()  # the sandbox's /tmp was private


def test_no_network_to_the_host(isolated, listener):
    result, _, _ = isolated
    assert probe(result, 5)["outcome"] != "connected"
    with pytest.raises(socket.timeout):
        listener.accept()


# --- limits and misbehaviour ----------------------------------------------------------------

#: A bounded fork loop (its children would live a second); prints how many it forked.
FORK_LOOP = (
    "import json, os, time\nforked, error = 0, None\ntry:\n"
    "    for _ in range(200):\n"
    "        if os.fork() == 0:\n"
    "            time.sleep(1)\n"
    "            os._exit(0)\n"
    "        forked += 1\n"
    "except OSError as e:\n    error = type(e).__name__\n"
    "print(json.dumps({'forked': forked, 'error': error}))"
)


@pytest.fixture(scope="module")
def before_hostile() -> set[str]:
    """The sandbox processes of this process's earlier executions: a container-mode execution
    leaves the zombies of its orphans to the process that inherits them (init, or the test
    run's subreaper, which collects them only when the run ends: ``tests/leftovers.py``)."""
    return {pid for pid, _ in _sandbox_processes()}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory, before_hostile):
    work = tmp_path_factory.mktemp("hostile") / "work"
    work.mkdir()
    return execute_notebook(notebook(
        "import numpy as np\nbig = np.ones(3 * 2**30, dtype=np.uint8)",  # 0: 3 GB
        "while True:\n    pass",  # 1: infinite loop
        "import sys\nsys.exit()",  # 2
        FORK_LOOP,  # 3
        "print('still running')",  # 4
    ), work, SandboxConfig(**FAST))


def test_memory_limit_raises_memory_error_and_the_notebook_goes_on(hostile):
    assert hostile.status == "ok", hostile.message
    assert errors(hostile, 0) == ["MemoryError"]
    assert text(hostile, 4) == "still running\n"


def test_cell_timeout_interrupts_the_cell_and_later_cells_run(hostile):
    assert hostile.cell_timeouts == [1]
    assert "CellTimeoutError" in errors(hostile, 1)
    assert "cell limit" in hostile.message


def test_sys_exit_is_an_error_of_its_cell_only(hostile):
    assert errors(hostile, 2) == ["SystemExit"]


def test_process_limit_stops_a_fork_loop(hostile):
    outcome = probe(hostile, 3)
    assert outcome["error"] == "BlockingIOError"
    assert outcome["forked"] < SandboxConfig().max_processes


def _sandbox_processes() -> list[tuple[str, str]]:
    """``(pid, state)`` of every process of this process's sandbox users (a zombie's state is
    ``Z``). Only this process's executions: each grader process draws its 64 sandbox user ids
    from a block of its own (see autograder.sandbox.plan._sandbox_uid), and other suites or
    workers may be grading on the same machine at the same time."""
    if os.geteuid() != 0:
        require(False, "sandbox users are only distinct from the grader's when it runs as root")
        pytest.skip("sandbox users are only distinct from the grader's when it runs as root")
    first = 1_000_000_000 + (os.getpid() % 2**22) * 64
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and first <= proc.stat().st_uid < first + 64:
                found.append((proc.name, (proc / "stat").read_text().rpartition(")")[2].split()[0]))
        except OSError:  # gone meanwhile
            pass
    return found


def test_no_sandbox_process_outlives_its_execution(hostile, before_hostile):
    """Nothing of the execution, not even a zombie: its pid namespace's init reaps every
    process of it before it exits. (Earlier executions of this test process count apart: see
    :func:`before_hostile`.)"""
    assert [p for p in _sandbox_processes() if p[0] not in before_hostile] == []


def test_the_end_of_a_sandbox_waits_for_its_processes_however_slow(tmp_path, monkeypatch):
    """Once a fork loop's fifty processes had been sent SIGKILL, the sandbox's end waited 10 s
    for them and then returned all the same; on a loaded machine ending them took longer, so the
    test above once found about 40 of them left. A wait that gives up after 1 ms stands here
    for that slow machine: the end still returns only once no process of the sandbox runs
    (pid 1's own zombie is its parent's to collect, in the clean-up that follows)."""

    from autograder.sandbox import execute, kernel

    _sandbox_processes()
    running = []

    def ending(pidfd: int) -> None:
        kernel._end_sandbox(pidfd, timeout=0.001)
        running.append([p for p in _sandbox_processes() if p[1] != "Z"])

    monkeypatch.setattr(execute, "_end_sandbox", ending)
    result = execute_notebook(notebook(FORK_LOOP, "print('still running')"),
                              _workdir(tmp_path), SandboxConfig(**FAST))
    assert probe(result, 0)["forked"] > 10, result.notebook.cells[0].outputs
    assert running == [[]]


def test_huge_output_is_truncated(tmp_path):
    result = execute_notebook(notebook("print('x' * 50_000_000)", "print('later')"),
                              _workdir(tmp_path), SandboxConfig(cell_timeout_s=30))
    assert result.status == "ok", result.message
    assert result.output_truncated
    assert total_output(result) < SandboxConfig().max_output_bytes + 2000
    assert "output limit" in result.notebook.cells[0].outputs[-1].text


@pytest.mark.parametrize("source, expected", [
    ("import os\nos._exit(0)", "exit status 0"),
    ("import ctypes\nctypes.string_at(0)", "SIGSEGV"),
])
def test_a_dying_kernel_is_reported_as_crashed(tmp_path, source, expected):
    result = execute_notebook(notebook("print('before')", source, "print('never')"),
                              _workdir(tmp_path), SandboxConfig(**FAST))
    assert result.status == "crashed"
    assert "cell 1" in result.message and expected in result.message
    assert text(result, 0) == "before\n"
    assert result.notebook.cells[2].outputs == []


def test_notebook_time_limit_stops_the_kernel(tmp_path):
    limit = 3
    start = time.monotonic()
    result = execute_notebook(notebook("while True:\n    pass", "print('never')"),
                              _workdir(tmp_path),
                              SandboxConfig(cell_timeout_s=30, notebook_timeout_s=limit))
    assert result.status == "timeout"
    assert "cell 0" in result.message
    assert time.monotonic() - start < limit + 8  # the limit, plus start-up and clean-up
    assert result.notebook.cells[1].outputs == []


def test_links_left_in_the_working_folder_are_removed(tmp_path):
    work = _workdir(tmp_path)
    result = execute_notebook(notebook(
        "import os\nos.symlink('/etc/passwd', 'answer.npy')\nos.mkfifo('pipe')\n"
        "open('kept.txt', 'w').write('ok')"), work, SandboxConfig(**FAST))
    assert sorted(result.removed_files) == ["answer.npy", "pipe"]
    assert sorted(p.name for p in work.iterdir()) == ["kept.txt"]


def test_two_executions_in_parallel(tmp_path):
    works = [_workdir(tmp_path / name) for name in ("a", "b")]
    nb = notebook("import numpy as np, os\n"
                  "np.save('mine.npy', np.full(3, len(os.getcwd())))\nprint(os.getcwd())")
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda w: execute_notebook(nb, w, SandboxConfig(**FAST)),
                                works))
    for work, result in zip(works, results):
        assert result.status == "ok", result.message
        assert text(result, 0) == f"{work}\n"
        assert (np.load(work / "mine.npy") == len(str(work))).all()


def _workdir(base: Path) -> Path:
    work = base / "student"
    work.mkdir(parents=True)
    return work


# --- the grader's mistakes --------------------------------------------------------------------

def test_grader_misconfiguration_raises(tmp_path):
    with pytest.raises(TypeError, match="NotebookNode"):
        execute_notebook({"cells": []}, tmp_path)
    with pytest.raises(ValueError, match="not an existing folder"):
        execute_notebook(notebook("1"), tmp_path / "missing")
    with pytest.raises(ValueError, match="contains the hidden folder"):
        execute_notebook(notebook("1"), ROOT.parent)
    with pytest.raises(ValueError, match="memory_mb"):
        SandboxConfig(memory_mb=0)


def test_student_code_computes_with_the_graders_openblas_kernel(tmp_path, monkeypatch, request):
    """A kernel forced in the grader's environment (a processor that needs one, or a test of
    another machine's arithmetic, CONTRIBUTING.md) is the kernel student code runs under, so
    that it rounds as the reference it is compared with; the default kernel otherwise."""
    from autograder.sandbox import warm
    from tests import blas

    request.addfinalizer(warm.stop_zygote)  # the zygote holds NumPy as loaded under its kernel
    kernel = blas.other_kernels()[0]
    monkeypatch.setenv("OPENBLAS_CORETYPE", kernel.kernel)
    source = ("import json, numpy, threadpoolctl\nprint(json.dumps(sorted({i['architecture'] "
              "for i in threadpoolctl.threadpool_info() if i['internal_api'] == 'openblas'})))")
    forced = execute_notebook(notebook(source), _workdir(tmp_path / "forced"), SandboxConfig(**FAST))
    assert forced.status == "ok", forced.message
    assert tuple(probe(forced, 0)) == kernel.reports
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    default = execute_notebook(notebook(source), _workdir(tmp_path / "default"),
                               SandboxConfig(**FAST))
    assert probe(default, 0) == blas.reported(None)["openblas"] != list(kernel.reports)


def test_packages_installed_in_a_private_temporary_folder_reach_the_kernel(tmp_path):
    """A checkout cloned into ``mktemp -d`` (mode 0700, under ``/tmp``) keeps its virtual
    environment there: the interpreter finds its packages through a ``.pth`` file naming that
    ``site-packages`` folder, which the sandbox's own private ``/tmp`` would otherwise hide, so that
    the kernel could not import ipykernel and the sandbox looked unavailable. Every folder of
    installed packages on the interpreter's path is bound back read-only, wherever it lives."""
    private = Path(tempfile.mkdtemp(prefix="private-checkout-"))  # as mktemp -d: mode 0700
    try:
        site = private / "project" / ".venv" / "lib" / "site-packages"
        site.mkdir(parents=True)
        site.chmod(0o755)
        (site / "privately_installed.py").write_text("VALUE = 'found'\n")
        python = _interpreter_reading(tmp_path / "venv", [site])
        script = (
            "import json, tempfile\nfrom pathlib import Path\n"
            "from autograder.sandbox import SandboxConfig, execute_notebook\n"
            "import nbformat\n"
            "work = Path(tempfile.mkdtemp()) / 'student'\nwork.mkdir()\n"
            "nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("
            "'import privately_installed\\nprint(privately_installed.VALUE)')])\n"
            "result = execute_notebook(nb, work, SandboxConfig(cell_timeout_s=20, warm=False))\n"
            "print(json.dumps([result.status, [o.get('text', o.get('ename')) "
            "for o in result.notebook.cells[0].outputs]]))\n"
        )
        done = subprocess.run([str(python), "-c", script], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        status, outputs = json.loads(done.stdout.strip().splitlines()[-1])
        assert (status, outputs) == ("ok", ["found\n"]), outputs
    finally:
        shutil.rmtree(private)


def _interpreter_reading(venv: Path, extra: list[Path]) -> Path:
    """A virtual environment of the system's Python whose ``.pth`` names this environment's
    folders of packages and then ``extra``."""
    base = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    require(base.is_file(), f"no {base} to build a virtual environment from")
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python*/site-packages")
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "environment.pth").write_text("".join(f"{p}\n" for p in [*ours, *map(str, extra)]))
    return venv / "bin" / "python"
