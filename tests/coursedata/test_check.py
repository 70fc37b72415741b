"""The student's check command (``python -m coursedata.check``) under a student's real mistakes.

Every notebook here is problem set 3 as a student receives it (nbgrader's real release, with its
checksums), with the reference answers typed in and then broken the way students break them: a
Newton loop that never ends, a missing parenthesis, a renamed function, a deleted or edited test
cell, a written answer not yet written, code that swallows the interrupt. The command runs as a
student runs it, in a subprocess; the tests watch its kernel processes and fail if one outlives it.
"""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import psutil
import pytest

from autograder.grading.problemset import ProblemSet
from coursedata.cells import findings, nbgrader_checksum, read_cells
from coursedata.runner import GRACE
from tests import ROOT
from tests.psharness import generate_release

PS = "ps3_mle"
SOURCE = ROOT / "course" / "source" / PS / f"{PS}.ipynb"
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
#: A cell named by its position (``cell 27``), which Jupyter does not show.
_BY_INDEX = re.compile(r"\bcell \d+\b")


#: Their users are slow (tests/conftest.py): an nbgrader release.
SLOW_FIXTURES = ("released",)


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> nbformat.NotebookNode:
    """Problem set 3 as nbgrader releases it to students."""
    root = generate_release([PS], tmp_path_factory.mktemp("course"))
    return nbformat.read(root / PS / f"{PS}.ipynb", as_version=4)


def _cell(nb, grade_id):
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def answered(released) -> nbformat.NotebookNode:
    """The release with the reference answers typed into its code answer cells."""
    source = nbformat.read(SOURCE, as_version=4)
    nb = copy.deepcopy(released)
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            _cell(nb, meta["grade_id"]).source = _MARKER.sub("", cell.source)
    return nb


def _edit(nb, grade_id, find, replace):
    cell = _cell(nb, grade_id)
    assert cell.source.count(find) == 1, (grade_id, find)
    cell.source = cell.source.replace(find, replace)


def _never_ending(nb):
    """A Newton loop with the step's sign wrong and no cap: it diverges to nan and never stops."""
    _edit(nb, "gamma_mle", "for _ in range(max_iter):", "while True:")
    _edit(nb, "gamma_mle", "a = a - step", "a = a + step")
    return nb


class Run:
    """``python -m coursedata.check`` in a subprocess, its output read line by line as it comes,
    and every process it starts (its kernel) recorded so that none outlives the test."""

    def __init__(self, path: Path, *args: str):
        self.start = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "coursedata.check", *args, path.name], cwd=path.parent,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: list[str] = []
        self.children: dict[int, psutil.Process] = {}

    def note_children(self):
        try:
            for child in psutil.Process(self.proc.pid).children(recursive=True):
                self.children.setdefault(child.pid, child)
        except psutil.NoSuchProcess:
            pass

    def wait_for_kernel(self, limit: float = 60):
        """Note the processes the check started, once its kernel is up."""
        deadline = time.monotonic() + limit
        while not self.children and time.monotonic() < deadline and self.proc.poll() is None:
            self.note_children()
            time.sleep(0.1)
        assert self.children, "the check started no kernel"

    def read_until(self, pattern: str, limit: float = 120) -> str:
        while time.monotonic() - self.start < limit:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.lines.append(line.rstrip("\n"))
            self.note_children()
            if re.search(pattern, line):
                return line
        raise AssertionError(f"{pattern!r} never printed: {self.lines}")

    def finish(self, limit: float = 120) -> tuple[int, str]:
        out, err = self.proc.communicate(timeout=limit)
        self.lines += out.splitlines()
        self.seconds = time.monotonic() - self.start
        return self.proc.returncode, "\n".join(self.lines) + err

    def assert_no_process_left(self):
        gone, alive = psutil.wait_procs(list(self.children.values()), timeout=10)
        for proc in alive:
            proc.kill()
        assert not alive, f"processes left behind: {[p.pid for p in alive]}"

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for child in self.children.values():
            try:
                child.kill()
            except psutil.NoSuchProcess:
                pass


@pytest.fixture
def run():
    runs = []

    def start(path, *args):
        runs.append(Run(path, *args))
        return runs[-1]

    yield start
    for r in runs:
        r.close()


def _write(nb, tmp_path, name=f"{PS}.ipynb") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


# --- without running anything ----------------------------------------------------------------

def test_checksums_are_nbgraders(released):
    """The kit's checksum is nbgrader's (the independent oracle), cell for cell."""
    from nbgrader.utils import compute_checksum

    stored = [c for c in released.cells if c.metadata.get("nbgrader", {}).get("checksum")]
    assert len(stored) > 20
    for cell in stored:
        assert nbgrader_checksum(cell) == compute_checksum(cell) == cell.metadata.nbgrader.checksum
    edited = copy.deepcopy(stored[5])
    edited.source += "\n"
    assert nbgrader_checksum(edited) == compute_checksum(edited) != stored[5].metadata.nbgrader.checksum


def test_the_release_as_received_has_only_its_blanks(released):
    """A fresh release: every answer still to write, nothing missing or changed."""
    found = findings(released)
    assert {f.kind for f in found} == {"unanswered"}, [f.message for f in found]
    code_answers = [c for c in read_cells(released) if c.kind == "answer"]
    assert len(found) == len(code_answers) + 2  # and the two written answers
    assert not findings(answered(released)) or {f.kind for f in findings(answered(released))} \
        == {"unanswered"}


def test_cells_are_named_by_question_and_function(released):
    cells = {c.grade_id: c for c in read_cells(answered(released)) if c.grade_id}
    assert cells["gaussian_mle"].label == "Question 2, your gaussian_mle"
    assert cells["gamma_mle_visible"].label == "Question 6, test gamma_mle_visible"
    assert cells["lagrange_derivation"].label == \
        "Question 7, your written answer (lagrange_derivation)"
    plot = next(c for c in read_cells(released) if c.kind == "code" and c.question == "Question 1")
    assert plot.label.startswith("Question 1, the code cell after "
                                 "bernoulli_log_likelihood_visible (starting '# Not graded")


def test_missing_changed_and_unanswered_cells_are_listed(released):
    nb = answered(released)
    nb.cells.remove(_cell(nb, "gaussian_mle_visible"))
    nb.cells.remove(_cell(nb, "categorical_mle"))
    _cell(nb, "gamma_score_visible").source = "assert True"
    _cell(nb, "bias_derivation").source = "The plug-in estimate is biased because..."
    found = {f.message: f for f in findings(nb)}
    text = "\n".join(found)
    assert "Question 2: the visible test cell gaussian_mle_visible is missing" in text
    assert "Question 3: the answer cell of categorical_mle is missing" in text
    cells = ProblemSet(PS).grade_cells
    auto = sum(c.points for c in cells if c.autograded)
    [removed] = [c.points for c in cells if c.grade_id == "gaussian_mle_visible"]
    assert f"test cells carry {auto - removed:g} of the {auto:g} autograded points" in text
    assert "Question 5, test gamma_score_visible was changed: the grader runs the original" in text
    assert "Question 7, your written answer (lagrange_derivation) still reads YOUR ANSWER HERE" \
        in text
    assert "bias_derivation" not in text
    assert not _BY_INDEX.search(text), text


def test_a_notebook_stripped_of_its_metadata_is_named_as_such(released):
    nb = answered(released)
    for cell in nb.cells:
        cell.metadata.pop("nbgrader", None)
    [finding] = findings(nb)
    assert finding.message.startswith("the notebook carries no grading metadata"), finding


def test_a_syntax_error_names_its_line_and_the_tests_it_breaks(released):
    nb = answered(released)
    _edit(nb, "gamma_log_likelihood", "- rate * np.sum(x)", "- rate * np.sum(x")
    [finding] = [f for f in findings(nb) if f.kind == "syntax"]
    assert finding.message.startswith("Question 4, your gamma_log_likelihood: SyntaxError: "
                                      "'(' was never closed, at line ")
    # Its own test and the score's test, which calls it.
    assert finding.affects == ("gamma_log_likelihood_visible", "gamma_score_visible")


def test_magics_are_not_syntax_errors(released):
    nb = answered(released)
    _cell(nb, "gaussian_mle").source = "%timeit 1 + 1\n!ls\n" + _cell(nb, "gaussian_mle").source
    assert not [f for f in findings(nb) if f.kind == "syntax"]


def test_help_reads_as_plain_text():
    done = subprocess.run([sys.executable, "-m", "coursedata.check", "--help"],
                          capture_output=True, text=True, check=True)
    assert "``" not in done.stdout and ":func:" not in done.stdout
    assert "python -m coursedata.check NOTEBOOK" in done.stdout
    assert "--timeout" in done.stdout and "Ctrl-C" in done.stdout


# --- running ---------------------------------------------------------------------------------

@pytest.mark.slow
def test_student_mistakes_are_reported_in_plain_words(released, tmp_path, run):
    """A syntax error shows as itself (not as the later NameError), first; a renamed function
    and an error in a plain cell are named by question; a deleted test is counted missing."""
    nb = answered(released)
    _edit(nb, "gaussian_mle", "mu = x.mean()", "mu = np.mean(x")
    _edit(nb, "categorical_mle", "def categorical_mle(", "def categorical_MLE(")
    plot = next(c for c in nb.cells if c.source.startswith("# Not graded: the log-likelihood"))
    plot.source = plot.source.replace("ylim=(-150, -60)", "ylim=(-150, -60), colour='red'")
    nb.cells.remove(_cell(nb, "gamma_score_visible"))
    r = run(_write(nb, tmp_path))
    status, out = r.finish()
    assert status == 1, out
    lines = out.splitlines()
    assert lines[0].startswith(f"Checking {tmp_path / (PS + '.ipynb')}, saved ")
    syntax = next(i for i, line in enumerate(lines) if "SyntaxError" in line)
    running = next(i for i, line in enumerate(lines) if line.startswith("Running"))
    assert syntax < running
    assert "Question 2, your gaussian_mle: SyntaxError: '(' was never closed, at line 16:" \
        in lines[syntax]
    assert lines[syntax + 1].strip() == "mu = np.mean(x"
    assert "FAIL  gaussian_mle_visible (1 pt, Question 2): gaussian_mle is not defined, because " \
           "your gaussian_mle (Question 2) has an error (see above)" in out
    assert "NameError" not in out
    assert ("FAIL  categorical_mle_visible (1 pt, Question 3): categorical_mle is not defined: "
            "your answer cell (Question 3) defines categorical_MLE; keep the function's name") in out
    assert ("ERROR Question 1, the code cell after bernoulli_log_likelihood_visible (starting "
            "'# Not graded: the log-likelihood of the lecture...'): AttributeError") in out
    assert "Question 5: the visible test cell gamma_score_visible is missing" in out
    assert lines[-1] == "3 passed, 2 failed, 1 missing", out
    assert not _BY_INDEX.search(out), out


@pytest.mark.slow
def test_an_endless_loop_is_stopped_at_the_timeout(released, tmp_path, run):
    """The issue's case: the check used to hang forever. Now each looping cell is interrupted at
    the limit, the line that was running is named, the rest of the notebook still runs, and no
    kernel is left behind."""
    # 8 s: room for the slowest honest cell (the set-up's imports) on a loaded machine.
    r = run(_write(_never_ending(answered(released)), tmp_path), "--timeout", "8")
    r.read_until(r"^ok    bernoulli_log_likelihood_visible")
    assert r.proc.poll() is None  # results come as they are known, long before the end
    status, out = r.finish(limit=90)
    assert status == 1, out
    assert re.search(r"FAIL  gamma_mle_visible \(1 pt, Question 6\): still running after 8 s "
                     r"\(in Question 6, your gamma_mle, line \d+: .+\), so it was interrupted: "
                     r"does a loop never end\?", out), out
    # The plot cell after it calls gamma_mle again: it is stopped too, and named by question.
    assert "ERROR Question 6, the code cell after gamma_mle_visible" in out
    assert out.splitlines()[-1] == "5 passed, 1 failed", out
    # Two cells stopped at 8 s each (and at most GRACE later), a kernel start and the other
    # cells: well under two minutes, where it used to run forever.
    assert r.seconds < 2 * (8 + GRACE) + 60, r.seconds
    assert r.children, "the kernel was not seen"
    r.assert_no_process_left()


def test_a_loop_that_never_ends_in_the_questions_own_function_blames_no_other(released, tmp_path,
                                                                              run):
    """Issue 36: gamma_mle that evaluates question 5's (right) gamma_score, then loops forever.
    The check stops it and names the looping line in gamma_mle; its FAIL line used to add "this
    calls your gamma_score, whose visible test passes here ...: the mistake may be there",
    sending the student to a correct function."""
    nb = _never_ending(answered(released))
    _edit(nb, "gamma_mle", "    a = 0.5 / s\n", "    a = 0.5 / s\n    gamma_score(x, a, a / xbar)\n")
    r = run(_write(nb, tmp_path), "--timeout", "8")
    status, out = r.finish(limit=120)
    assert status == 1, out
    line = next(x for x in out.splitlines() if x.startswith("FAIL  gamma_mle_visible"))
    assert re.search(r"your gamma_mle, line \d+: .+\), so it was interrupted: does a loop never "
                     r"end\?$", line), line
    assert "gamma_score" not in line, line
    r.assert_no_process_left()


@pytest.mark.slow
@pytest.mark.parametrize("signum, name, status", [(signal.SIGINT, "Ctrl-C", 130),
                                                  (signal.SIGTERM, "SIGTERM", 143)])
def test_a_signal_stops_the_check_with_what_it_has(released, tmp_path, run, signum, name, status):
    r = run(_write(_never_ending(answered(released)), tmp_path), "--timeout", "600")
    r.read_until(r"^ok    gamma_score_visible")
    time.sleep(1)  # now in the endless gamma_mle
    r.wait_for_kernel()
    sent = time.monotonic()
    r.proc.send_signal(signum)
    code, out = r.finish(limit=30)
    assert time.monotonic() - sent < 15
    assert code == status, out
    assert out.count("ok    ") == 5, out
    assert f"stopped by {name} while running Question 6, test gamma_mle_visible" in out
    assert out.splitlines()[-1] == "5 passed, 0 failed, 1 not run", out
    assert "Traceback" not in out, out
    r.assert_no_process_left()


@pytest.mark.slow
def test_a_cell_that_swallows_the_interrupt_is_killed(tmp_path, run):
    """Code that catches KeyboardInterrupt cannot hold the check: its kernel is killed after the
    grace period, and the tests after it are reported as not run."""
    nb = nbformat.v4.new_notebook()
    test = {"grade": True, "grade_id": "stubborn_visible", "points": 1, "solution": False,
            "locked": True, "schema_version": 3}
    nb.cells = [nbformat.v4.new_markdown_cell("## Question 1 — Stubborn"),
                nbformat.v4.new_code_cell(
                    "import time\nwhile True:\n    try:\n        time.sleep(0.1)\n"
                    "    except KeyboardInterrupt:\n        pass\n",
                    metadata={"nbgrader": test}),
                nbformat.v4.new_code_cell("assert True", metadata={"nbgrader": dict(
                    test, grade_id="after_visible")})]
    r = run(_write(nb, tmp_path, "stubborn.ipynb"), "--timeout", "2")
    r.read_until(r"^Running")
    r.wait_for_kernel()
    status, out = r.finish(limit=60)
    assert status == 1, out
    assert "FAIL  stubborn_visible (1 pt, Question 1): still running after 2 s" in out
    assert "killed (it ignored the interrupt)" in out and "No later cell ran." in out
    assert out.splitlines()[-1] == "0 passed, 1 failed, 1 not run", out
    r.assert_no_process_left()


@pytest.mark.slow
def test_a_cell_stopped_while_printing_says_it_printed_too_much(tmp_path, run):
    """A function that prints every value is slow because of its printing: the line says how much
    it printed and that printing is the cause, not "does a loop never end?"."""
    nb = nbformat.v4.new_notebook()
    test = {"grade": True, "grade_id": "chatty_visible", "points": 1, "solution": False,
            "locked": True, "schema_version": 3}
    nb.cells = [nbformat.v4.new_markdown_cell("## Question 1 — Chatty"),
                nbformat.v4.new_code_cell("import time\nwhile True:\n    print('0.1234 ' * 200)\n"
                                          "    time.sleep(0.001)\n",
                                          metadata={"nbgrader": test})]
    r = run(_write(nb, tmp_path, "chatty.ipynb"), "--timeout", "3")
    status, out = r.finish(limit=60)
    assert status == 1, out
    said = re.search(r"FAIL  chatty_visible \(1 pt, Question 1\): still running after 3 s.*, so "
                     r"it was interrupted: it had printed ([\d,]+) characters, and printing that "
                     r"much takes time", out)
    assert said and int(said.group(1).replace(",", "")) > 100_000, out
    assert "loop never end" not in out, out
    r.assert_no_process_left()


# --- which file -------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_checkpoint_copy_is_named_as_such(released, tmp_path, run):
    nb = answered(released)
    _write(nb, tmp_path)
    copy_path = _write(nb, tmp_path / ".ipynb_checkpoints", f"{PS}-checkpoint.ipynb")
    status, out = run(copy_path, "--timeout", "60").finish()
    assert ("Warning: this file is Jupyter's checkpoint copy (your notebook as of your last "
            f"Ctrl-S), not your notebook: check {tmp_path / (PS + '.ipynb')} instead.") in out
    assert status == 0, out


@pytest.mark.slow
def test_a_notebook_run_after_its_last_save_is_flagged(released, tmp_path, run):
    """A real Jupyter server has the notebook open and its kernel ran after the file was saved:
    the check says so (and says nothing once the file is saved again)."""
    import urllib.request

    path = _write(answered(released), tmp_path)
    runtime = tmp_path / "runtime"
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime))
    kernels = []
    with socket_port() as port:
        pass
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}",
         "--ServerApp.token=secret", f"--ServerApp.root_dir={tmp_path}",
         "--ServerApp.port_retries=0", "--allow-root"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}/api/sessions"
        deadline = time.monotonic() + 60
        while not list(runtime.glob("jpserver-*.json")):
            assert time.monotonic() < deadline and server.poll() is None, "no Jupyter server"
            time.sleep(0.2)
        body = json.dumps({"path": path.name, "type": "notebook",
                           "kernel": {"name": "python3"}}).encode()
        request = urllib.request.Request(url, data=body, method="POST", headers={
            "Authorization": "token secret", "Content-Type": "application/json"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for _ in range(100):
            try:
                opener.open(request, timeout=10).read()
                break
            except OSError:
                time.sleep(0.2)
        old = time.time() - 3600
        os.utime(path, (old, old))  # saved an hour ago; the kernel ran since
        env_check = dict(os.environ, JUPYTER_RUNTIME_DIR=str(runtime))
        done = subprocess.run([sys.executable, "-m", "coursedata.check", "--timeout", "60",
                               path.name], cwd=tmp_path, env=env_check, capture_output=True,
                              text=True, timeout=300)
        assert re.search(rf"Warning: Jupyter \(http://[^)]*:{port}/\) has this notebook open, "
                         r"and its kernel was active at \d\d:\d\d:\d\d, after the file was saved",
                         done.stdout), done.stdout
        os.utime(path)  # saved now
        done = subprocess.run([sys.executable, "-m", "coursedata.check", "--timeout", "60",
                               path.name], cwd=tmp_path, env=env_check, capture_output=True,
                              text=True, timeout=300)
        assert "Warning" not in done.stdout, done.stdout
        kernels = psutil.Process(server.pid).children(recursive=True)
        assert kernels, "the server started no kernel"
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    gone, alive = psutil.wait_procs(kernels, timeout=10)
    for proc in alive:
        proc.kill()
    assert not alive, "the server's kernel outlived it"


class socket_port:
    """A free TCP port on the loopback interface."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc):
        self.sock.close()


def test_the_check_runs_under_the_graders_memory_limit(tmp_path, run):
    """A cell that needs more memory than the grader gives one process fails in the check too,
    with MemoryError; the next cell runs, with one thread for the numerical libraries as at
    grading."""
    from coursedata.grading import MEMORY_MB

    too_much = int(MEMORY_MB * 2**20 / 8) + 2**20  # float64 entries: just over the limit
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(f"import numpy as np\nx = np.ones({too_much})"),
        nbformat.v4.new_code_cell("import os\nassert os.environ['OPENBLAS_NUM_THREADS'] == '1'")])
    r = run(_write(nb, tmp_path, "memory.ipynb"))
    status, out = r.finish()
    assert "MemoryError" in out, out
    assert f"each process may use {MEMORY_MB} MB" in out, out
    assert out.count("ERROR") == 1, out


@pytest.mark.slow
def test_an_output_flood_from_a_function_names_the_function(released, tmp_path, run):
    """A function that prints a lot on every call, called from later cells: the note names the
    student's function that printed (the cells that call it are not the student's to change)."""
    nb = answered(released)
    _edit(nb, "gamma_log_likelihood", "    x = np.asarray(x, dtype=float)\n",
          "    x = np.asarray(x, dtype=float)\n    print('.' * 400_000)\n")
    r = run(_write(nb, tmp_path), "--timeout", "120")
    status, out = r.finish(limit=300)
    notes = [line for line in out.splitlines() if line.startswith("NOTE")]
    assert len(notes) == 1, out
    assert notes[0].startswith("NOTE  your gamma_log_likelihood (Question "), notes
    assert ", called by " in notes[0] and "printed past the limit" in notes[0], notes
    assert status == 0, out
    r.assert_no_process_left()


@pytest.mark.slow
def test_an_output_flood_is_cut_and_said(released, tmp_path, run):
    """Issue 37: a notebook that printed millions of lines passed the check after half a minute
    and 600 MB, and nothing said so. Now the output past the limit is dropped, the check says
    so once, naming the cell, and the visible tests are still run and pass."""
    from coursedata.runner import MAX_OUTPUT

    nb = answered(released)
    nb.cells.append(nbformat.v4.new_code_cell("for i in range(3_000_000):\n    print(i)"))
    r = run(_write(nb, tmp_path), "--timeout", "120")
    status, out = r.finish(limit=300)
    notes = [line for line in out.splitlines() if line.startswith("NOTE")]
    assert len(notes) == 1 and f"{MAX_OUTPUT:,} characters" in notes[0], out
    assert "the code cell after" in notes[0], notes
    assert status == 0 and re.fullmatch(r"\d+ passed, 0 failed", out.splitlines()[-1]), out
    r.assert_no_process_left()


def test_the_identity_cell_of_a_problem_set_with_variants_has_no_tests_to_miss():
    """The student's identity (``STUDENT_ID``, problem set 4) is an answer cell without tests;
    an answer cell whose tests were deleted is still said to miss them."""
    from coursedata.variants import IDENTITY_CELL

    def cell(grade_id, source, solution):
        new = nbformat.v4.new_code_cell(source)
        new.metadata["nbgrader"] = {"grade": False, "grade_id": grade_id, "locked": not solution,
                                    "schema_version": 3, "solution": solution, "task": False}
        return new

    nb = nbformat.v4.new_notebook(cells=[
        cell("setup", "import numpy as np", False),
        cell(IDENTITY_CELL, 'STUDENT_ID = "practice"', True),
        cell("mean", "def mean(x):\n    return np.mean(x)", True)])
    text = "\n".join(f.message for f in findings(nb))
    assert "mean_visible is missing" in text and "mean_hidden is missing" in text, text
    assert IDENTITY_CELL not in text, text


def test_a_renamed_keyword_parameter_is_named_with_the_functions_parameters(released, tmp_path,
                                                                            run):
    """gamma_mle's parameters renamed (``data, eps, n_iter``): the visible test passes
    ``max_iter=1`` by name, which used to be a bare "TypeError: gamma_mle() got an unexpected
    keyword argument 'max_iter'" (issue 36: the line says the student's parameters and the name
    the test passed)."""
    nb = answered(released)
    _edit(nb, "gamma_mle", "def gamma_mle(x, tol=1e-10, max_iter=100):",
          "def gamma_mle(data, eps=1e-10, n_iter=100):\n    x, tol, max_iter = data, eps, n_iter")
    status, out = run(_write(nb, tmp_path)).finish()
    assert status == 1, out
    line = next(line for line in out.splitlines() if line.startswith("FAIL  gamma_mle_visible"))
    assert ("TypeError: gamma_mle() got an unexpected keyword argument 'max_iter': your "
            "gamma_mle's parameters are (data, eps, n_iter); the test passes max_iter=... by the "
            "name the problem set gives it: keep the function's signature") in line, line
