"""The grader inside Gradescope: ``python -m autograder gradescope PS`` and its ``autograder.zip``, run.

Gradescope's autograder specification (gradescope/autograder_samples ``docs/specs.md``, published
at https://gradescope-autograders.readthedocs.io/en/latest/specs/): a zip with ``setup.sh`` and
``run_autograder`` at its root, unpacked into ``/autograder/source``; ``run_autograder`` runs in
``/autograder`` with the submission in ``/autograder/submission/`` and
``/autograder/submission_metadata.json`` (``docs/submission_metadata.md``: ``created_at``,
``assignment.due_date``, ``assignment.late_due_date``, ``users``), and writes
``/autograder/results/results.json`` (top-level ``score``, ``output``, ``visibility``,
``stdout_visibility``, ``tests[]`` of ``name``, ``score``, ``max_score``, ``output``,
``visibility``). otter-grader's ``otter generate`` (ucbds-infra/otter-grader ``otter/generate/``)
builds the same layout.

The zip is built for a real problem set from a course copy with its nbgrader release, unpacked
into a folder laid out as ``/autograder`` (``AUTOGRADER_ROOT`` points ``run_autograder`` there),
and ``run_autograder`` runs for real on the reference answers, the blank release, a wrong
answer, a late submission and a hostile notebook, in the sandbox's container mode (the mode
Gradescope's Docker container needs: bubblewrap cannot create namespaces under Docker's default
seccomp profile, containers/bubblewrap #505), and once with the bubblewrap sandbox this machine
has. Each ``results.json`` is validated against the specification's fields and compared with
``grades.csv`` of ``python -m autograder grade`` on the same notebooks (the oracle: the same
pipeline, run on its own as an instructor runs it).
"""

from __future__ import annotations

import csv
import hashlib
import importlib.metadata
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import jsonschema
import nbformat
import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from autograder.course import Course
from autograder.grading.problemset import ProblemSet
from autograder.pages.visibility import is_hidden
from autograder.run.gradescope import GRADING_PACKAGES, resolved
from autograder.sandbox import (
    SandboxConfig,
    container_available,
    execute_notebook,
    sandbox_available,
)
from tests import ROOT
from tests import submissions as sb
from tests.autograder.intake.test_lms import GRADESCOPE_SCHEMA
from tests.environment import require
from tests.psharness import generate_release

PS = "ps1_pca"
NB = f"{PS}.ipynb"
DUE = datetime(2026, 11, 20, 23, 0, tzinfo=timezone.utc)
ON_TIME = DUE - timedelta(hours=5)
LATE = DUE + timedelta(hours=30)  # two days late, begun
PERCENT_PER_DAY = 10
#: A course copy's late policy: its deadline is not Gradescope's, which must win.
LATE_TOML = f"""
[{PS}]
deadline = 2026-01-01T00:00:00+00:00
percent_per_day = {PERCENT_PER_DAY}
"""
FEEDBACK_TOML = f'[{PS}]\nhidden = "none"\n'
#: The folders a hostile notebook tries to read, list or write, relative to the /autograder root.
SECRETS = ("source/solutions/pca.py", f"source/course/source/{PS}/{NB}",
           f"source/course/checks/{PS}.py", "source/autograder/__init__.py")
#: This test process's folders: a parallel worker's, whose source folder is readable until its
#: ``run_autograder`` starts, are no part of one Gradescope container.
TOP = f"gradescope-test-{os.getpid()}"
#: The sleep a hostile notebook leaves running: its length names this test process, so that a
#: parallel worker's hostile run, still in progress, is never taken for a process left behind.
MARK = f"317.{os.getpid()}"

SLOW_FIXTURES = ("built", "oracle", "gradescope")


def _python_for_others(folder: Path) -> Path:
    """An interpreter every user may run, with this environment's packages (as setup.sh's
    /autograder/venv is): a virtual environment of the system's Python whose ``.pth`` names this
    environment's site-packages. This checkout's own interpreter lives under /root (mode 0700)."""
    base = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    require(base.is_file(), f"no {base} to build an interpreter others may run")
    venv = folder / "venv"
    subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    ours = [p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir()]
    (site / "environment.pth").write_text("".join(f"{p}\n" for p in ours))
    return venv / "bin" / "python"


def _open_ancestors(paths) -> dict[Path, int]:
    """Let others pass through (``o+x``) every folder above ``paths`` that does not let them, as
    a checkout in a private folder (``mktemp -d``, mode 0700) does not; return the folders
    changed and their modes, for :func:`_restore`."""
    changed = {}
    for path in paths:
        for folder in Path(path).resolve().parents:
            mode = folder.stat().st_mode
            if not mode & 0o001 and folder not in changed:
                changed[folder] = mode
                folder.chmod((mode | 0o001) & 0o7777)
    return changed


def _restore(changed: dict[Path, int]) -> None:
    for folder, mode in changed.items():
        folder.chmod(mode & 0o7777)


@pytest.fixture(scope="module")
def built():
    """The zip of a course copy (its release, a late policy, hidden checks withheld), the
    submissions, and a folder others may enter, for the /autograder layouts."""
    base = Path(tempfile.mkdtemp(prefix=f"{TOP}-"))
    # The packages the interpreter for others reads (this environment's) must be reachable.
    opened = _open_ancestors(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    try:
        base.chmod(0o755)  # as /autograder: the kernel's user must reach the interpreter
        course = base / "course"
        course.mkdir()
        release = generate_release([PS], course)
        (course / "late.toml").write_text(LATE_TOML)
        (course / "feedback.toml").write_text(FEEDBACK_TOML)
        builder = sb.Builder(ProblemSet(PS).path, release / PS / NB)
        hostile = sb.insert_after(builder.correct(), "center", _hostile_cell())
        notebooks = {
            "correct": builder.correct(),
            "blank": builder.blank(),
            "wrong": sb.replace(builder.correct(), *sb.WRONG_SVD),
            "late": builder.correct(),
            "hostile": hostile,
        }
        done = subprocess.run(
            [sys.executable, "-m", "autograder", "gradescope", PS, "--out", str(base / "zip"),
             "--course", str(course)],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        python = _python_for_others(base)
        for private in (course, base / "zip"):  # the instructor's, as they are outside the test
            private.chmod(0o700)
        yield {"base": base, "course": course, "zip": base / "zip" / "autograder.zip",
               "python": python,
               "notebooks": {k: sb.to_bytes(nb) for k, nb in notebooks.items()}}
    finally:
        shutil.rmtree(base, ignore_errors=True)
        _restore(opened)


def _hostile_cell() -> str:
    """Reads, imports and writes what a student must not, in /autograder and in every folder of
    this test; on any success it kills its kernel (the score then falls below the reference's);
    leaves a process running."""
    return (
        "import glob, importlib, os, subprocess\n"
        "leaks = []\n"
        f"for top in ['/autograder', *glob.glob('{tempfile.gettempdir()}/{TOP}-*/*')]:\n"
        f"    for rel in {SECRETS!r}:\n"
        "        try:\n"
        "            with open(os.path.join(top, rel), 'rb') as f:\n"
        "                leaks.append(('read', top, rel, f.read(8)))\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        "        leaks.append(('listed', top, os.listdir(os.path.join(top, 'source'))))\n"
        "    except OSError:\n"
        "        pass\n"
        "    for rel in ('results/leak.json', 'source/leak.py'):\n"
        "        try:\n"
        "            with open(os.path.join(top, rel), 'w') as f:\n"
        "                f.write('{}')\n"
        "            leaks.append(('wrote', top, rel))\n"
        "        except OSError:\n"
        "            pass\n"
        f"for module in ('solutions', 'autograder', 'course.checks.{PS}'):\n"
        "    try:\n"
        "        importlib.import_module(module)\n"
        "        leaks.append(('import', module))\n"
        "    except ImportError:\n"
        "        pass\n"
        f"subprocess.Popen(['sleep', '{MARK}'], start_new_session=True)\n"
        "if leaks:\n"
        "    print(leaks)\n"
        "    os._exit(3)\n"
    )


def _layout(built, kind: str, created_at: datetime) -> Path:
    """A folder laid out as Gradescope's /autograder with the zip unpacked and one submission."""
    root = Path(tempfile.mkdtemp(prefix=f"{kind}-", dir=built["base"]))
    root.chmod(0o755)
    with zipfile.ZipFile(built["zip"]) as z:
        z.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):  # zipfile drops the modes; Gradescope keeps them
        (root / "source" / name).chmod(0o755)
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    (root / "submission").mkdir()
    (root / "submission" / NB).write_bytes(built["notebooks"][kind])
    # As Gradescope writes it (docs/submission_metadata.md).
    metadata = {
        "id": 123456,
        "created_at": created_at.isoformat(),
        "assignment": {"due_date": DUE.isoformat(), "group_size": None,
                       "group_submission": False, "id": 25828, "course_id": 1234,
                       "late_due_date": (DUE + timedelta(days=3)).isoformat(),
                       "release_date": (DUE - timedelta(days=14)).isoformat(),
                       "title": "Problem set 1", "total_points": "40.0"},
        "submission_method": "upload",
        "users": [{"email": "student@example.com", "id": 1234, "name": "Student User"}],
        "previous_submissions": [],
    }
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def _run_autograder(built, root: Path, sandbox: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AUTOGRADER_COURSE")}
    env.update(AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=str(built["python"]),
               AUTOGRADER_SANDBOX=sandbox)
    return subprocess.run([str(root / "run_autograder")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=600)


def _sleepers() -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if MARK in (proc / "cmdline").read_bytes().decode(errors="replace"):
                found.append(proc.name)
        except OSError:
            pass
    return found


CASES = {"correct": ON_TIME, "blank": ON_TIME, "wrong": ON_TIME, "late": LATE,
         "hostile": ON_TIME}


@pytest.fixture(scope="module")
def gradescope(built):
    """Every case through run_autograder in the container mode: ``{case: (results, process,
    root)}``."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    runs = {}
    for kind, when in CASES.items():
        root = _layout(built, kind, when)
        done = _run_autograder(built, root, "container")
        results = json.loads((root / "results" / "results.json").read_text())
        runs[kind] = (results, done, root)
    return runs


@pytest.fixture(scope="module")
def oracle(built):
    """``grade``'s grades.csv rows for the same notebooks, each file dated as Gradescope says it
    was handed in, with the course's late rule at Gradescope's due date."""
    ok, reason = sandbox_available()
    require(ok, f"no sandbox for the oracle's grade run: {reason}")
    base = built["base"] / "oracle"
    course = base / "course"
    shutil.copytree(built["course"], course)
    (course / "late.toml").write_text(
        LATE_TOML.replace("2026-01-01T00:00:00+00:00", DUE.isoformat()))
    for kind, when in CASES.items():
        path = base / "class" / kind / NB
        path.parent.mkdir(parents=True)
        path.write_bytes(built["notebooks"][kind])
        os.utime(path, (when.timestamp(), when.timestamp()))
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", PS, str(base / "class"), "--out",
         str(base / "out"), "--workers", "2", "--quiet", "--course", str(course)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    with (base / "out" / "grades.csv").open(newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    return header, {r[0]: dict(zip(header, r)) for r in rows[1:]}


# ------------------------------------------------------------------------------------------------
# The zip


def test_the_zip_has_gradescope_layout(built):
    """setup.sh and run_autograder at the root, executable (docs/specs.md); the grader, the
    course's files for this problem set, no gradebook; the pins of requirements.txt."""
    with zipfile.ZipFile(built["zip"]) as z:
        infos = {i.filename: i for i in z.infolist()}
        names = set(infos)
        for script in ("setup.sh", "run_autograder"):
            assert script in names
            mode = infos[script].external_attr >> 16
            assert stat.S_ISREG(mode) and mode & 0o111 == 0o111, script
            assert z.read(script).startswith(b"#!/usr/bin/env bash\n")
        assert f"course/source/{PS}/{NB}" in names
        assert f"course/release/{PS}/{NB}" in names
        assert {"course/late.toml", "course/feedback.toml", "autograder/__main__.py",
                "coursedata/__init__.py", "solutions/__init__.py"} <= names
        assert not [n for n in names if n.endswith((".db", ".pyc"))]
        other = [n for n in names if n.startswith("course/source/") and f"/{PS}/" not in n]
        assert other == []
        # this problem set's checks only, though the course holds every set's
        assert len(list((built["course"] / "checks").glob("*.py"))) > 1
        assert sorted(n for n in names if n.startswith("course/checks/")) == [
            f"course/checks/{PS}.py"
        ]
        for script in ("setup.sh", "run_autograder"):  # bash can parse them
            parsed = subprocess.run(["bash", "-n"], input=z.read(script), capture_output=True)
            assert parsed.returncode == 0, parsed.stderr
        run = z.read("run_autograder").decode()
        assert f"gradescope {PS} --run" in run
        pins = z.read("requirements-grading.txt").decode().split()
        setup = z.read("setup.sh").decode()
        assert "requirements-grading.txt" in setup and "/autograder/venv" in setup
    # every package pinned (setup.sh may not resolve one itself): the top-level ones as
    # requirements.txt pins them, and every package each of them requires, at its version here
    listed = (ROOT / "requirements.txt").read_text().split()
    pinned = dict(p.split("==") for p in pins)
    assert set(GRADING_PACKAGES) <= set(pinned)
    assert {f"{n}=={pinned[n]}" for n in GRADING_PACKAGES} <= set(listed)
    # with the extras a pinned package asks of another (nbconvert's bleach[css]): pip installs
    # their requirements too, and finds none it was not given (--no-index)
    asked = {(name, "") for name in pinned}
    for name in pinned:
        for line in importlib.metadata.requires(name) or []:
            needed = Requirement(line)
            if needed.marker is None or needed.marker.evaluate({"extra": ""}):
                asked |= {(canonicalize_name(needed.name), e) for e in needed.extras}
    for name, extra in sorted(asked):
        for line in importlib.metadata.requires(name) or []:
            needed = Requirement(line)
            if needed.marker is None or needed.marker.evaluate({"extra": extra}):
                assert canonicalize_name(needed.name) in pinned, (name, extra, line)
        assert importlib.metadata.version(name) == pinned[name]


def test_an_unknown_problem_set_is_refused(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "ps99_none",
                           "--out", str(tmp_path)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "unknown problem set 'ps99_none'" in done.stderr
    assert not (tmp_path / "autograder.zip").exists()


# ------------------------------------------------------------------------------------------------
# run_autograder in the emulated /autograder


def _cells(built) -> list:
    return ProblemSet(PS, Course(built["course"])).grade_cells


@pytest.mark.parametrize("kind", list(CASES))
def test_results_follow_the_specification_and_equal_grade(gradescope, oracle, built, kind):
    results, done, _ = gradescope[kind]
    assert done.returncode == 0, done.stdout + done.stderr
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    _, rows = oracle
    # The hostile notebook is the reference plus a probe that reaches nothing: it scores as the
    # reference does. (Its own row is no oracle where the grading machine's environment has this
    # project installed in editable mode from another checkout: that copy is importable in
    # ``grade``'s bubblewrap kernel, which hides the packages of the running checkout.)
    row = rows["correct" if kind == "hostile" else kind]
    cells = _cells(built)
    # the written answers are still to be graded by hand: no final grade yet, the points so far
    # less the late penalty
    expected = float(row["final"] or float(row["autograded_total"]) - float(row["late_penalty"]))
    assert results["score"] == pytest.approx(expected)
    assert f"Status: {row['status']}." in results["output"]
    auto = [(n, c) for n, c in enumerate(cells, 1) if c.autograded]
    assert [int(t["number"]) for t in results["tests"]] == [n for n, _ in auto]
    for test, (_, cell) in zip(results["tests"], auto):
        assert test["score"] == pytest.approx(float(row[cell.grade_id])), cell.grade_id
        assert test["max_score"] == cell.points
        # course/feedback.toml withholds hidden checks: shown once the grades are published
        assert test["visibility"] == ("after_published" if is_hidden(cell.grade_id) else "visible")
    written = [c.grade_id for c in cells if not c.autograded]
    assert all(w in results["output"] for w in written)
    assert results["stdout_visibility"] == "hidden"
    # the container mode says so, and what it does not keep
    assert "container mode" in results["output"] and "network" in results["output"]
    # what the container mode does not keep here is said, each gap as it is here: where the
    # grader may not mount, the disk is said to be uncapped; where it may, the shared folders
    from autograder.sandbox import container_gaps

    gaps = container_gaps(str(built["python"]))
    assert all(gap in results["output"] for gap in gaps), results["output"]
    mounted = "shared folders read-only" in container_available(str(built["python"]))[1]
    said = "read-only to it" if mounted else "the total disk it writes is not capped"
    assert said in results["output"]


def test_the_cases_score_as_a_student_expects(gradescope, built):
    scores = {k: r["score"] for k, (r, _, _) in gradescope.items()}
    full = sum(c.points for c in _cells(built) if c.autograded)
    assert scores["correct"] == pytest.approx(full)
    assert scores["blank"] == 0
    assert 0 < scores["wrong"] < full
    assert scores["late"] == pytest.approx(round(full * (1 - 2 * PERCENT_PER_DAY / 100), 2))
    assert "Late penalty" in gradescope["late"][0]["output"]
    assert "Late penalty" not in gradescope["correct"][0]["output"]


def test_the_late_penalty_line_tells_no_hidden_points(gradescope, built):
    """The visible top-level ``output`` (gradescope/autograder_samples ``docs/specs.md``) names
    the late penalty as its percentage, never as points: the points taken off would tell the
    total of the hidden tests, whose own lines stay ``after_published``."""
    late = gradescope["late"][0]
    line = next(x for x in late["output"].splitlines() if x.startswith("Late penalty"))
    assert f"{2 * PERCENT_PER_DAY}%" in line
    given = sum(t["score"] for t in late["tests"])
    assert given > 0
    taken = round(given * 2 * PERCENT_PER_DAY / 100, 2)
    assert "point" not in line and f"{taken:g}" not in line, line
    hidden = [t["visibility"] for t in late["tests"] if "(hidden test)" in t["name"]]
    assert hidden and set(hidden) == {"after_published"}


def test_a_hostile_notebook_reaches_nothing_and_leaves_nothing(gradescope):
    results, done, root = gradescope["hostile"]
    correct = gradescope["correct"][0]
    # any leak kills its kernel: the score would fall
    assert results["score"] == correct["score"], results["output"]
    assert not (root / "results" / "leak.json").exists()
    assert not (root / "source" / "leak.py").exists()
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700
    assert _sleepers() == []


def test_bubblewrap_is_used_where_it_can_be_built(built, gradescope):
    ok, reason = sandbox_available()
    require(ok, f"no bubblewrap sandbox here: {reason}")
    root = _layout(built, "wrong", ON_TIME)
    done = _run_autograder(built, root, "auto")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    assert "bubblewrap sandbox" in results["output"] and "container mode" not in results["output"]
    assert results["tests"] == gradescope["wrong"][0]["tests"]
    assert results["score"] == gradescope["wrong"][0]["score"]


def test_a_submission_without_the_notebook_says_what_was_received(built):
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    root = _layout(built, "correct", ON_TIME)
    (root / "submission" / NB).rename(root / "submission" / "answers.txt")
    done = _run_autograder(built, root, "container")
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    assert results["score"] == 0
    assert "Files received: answers.txt." in results["output"], results["output"]
    assert done.returncode == 0, done.stdout + done.stderr


# ------------------------------------------------------------------------------------------------
# The sandbox's container mode itself

KEPT = "318.5"  # the sleep a notebook leaves running in the container mode


def test_the_container_mode_keeps_the_limits_and_the_trusted_files(built, monkeypatch):
    """The kernel runs as another, unprivileged user with a cleared environment, cannot read a
    folder others may not, hits the memory and process limits, and leaves no process behind."""
    python = str(built["python"])
    ok, reason = container_available(python)
    require(ok, f"the container mode cannot run here: {reason}")
    monkeypatch.setenv("GRADER_SECRET", "not for students")
    secret = built["course"] / "late.toml"  # in a folder of mode 0700, as /autograder/source
    work = Path(tempfile.mkdtemp(dir=built["base"])) / "work"
    work.mkdir()
    cells = [
        "import json, os\nprint(json.dumps({'uid': os.getuid(), 'env': sorted(os.environ)}))",
        f"try:\n    open({str(secret)!r}).read()\n    print('read')\n"
        "except OSError as exc:\n    print(type(exc).__name__)",
        "import numpy as np\nbig = np.ones(3 * 2**30, dtype=np.uint8)",
        "import os, time\nforked, error = 0, None\ntry:\n"
        "    for _ in range(200):\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(1)\n"
        "            os._exit(0)\n"
        "        forked += 1\n"
        "except OSError as e:\n    error = type(e).__name__\nprint(forked, error)",
        f"import subprocess\nsubprocess.Popen(['sleep', '{KEPT}'], start_new_session=True)",
        "print('still running')",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    config = SandboxConfig(container=True, python=python, cell_timeout_s=20,
                           notebook_timeout_s=120)
    result = execute_notebook(nb, work, config)
    assert result.status == "ok", result.message

    def out(i: int) -> str:
        return "".join(o.get("text", "") for o in result.notebook.cells[i].outputs
                       if o.output_type == "stream")

    first = json.loads(out(0))
    assert first["uid"] not in (0, os.getuid())
    assert "GRADER_SECRET" not in first["env"]
    assert out(1).strip() == "PermissionError"
    assert [o.ename for o in result.notebook.cells[2].outputs
            if o.output_type == "error"] == ["MemoryError"]
    forked, error = out(3).split()
    assert error == "BlockingIOError" and int(forked) < config.max_processes
    assert out(5) == "still running\n"
    leftovers = []
    for proc in Path("/proc").iterdir():
        try:
            if KEPT in (proc / "cmdline").read_bytes().decode(errors="replace"):
                leftovers.append(proc.name)
        except OSError:
            pass
    assert leftovers == []
    assert stat.S_IMODE(work.parent.stat().st_mode) & 0o001 == 0  # its way there is closed again


def _fake_wheels(folder: Path, pins: dict[str, str], tag: str = "py3-none-any") -> list[Path]:
    """A distinct empty zip named as a wheel of each pinned package (``tag``: its tags)."""
    made = []
    for i, (name, version) in enumerate(pins.items()):
        wheel = folder / f"{name.replace('-', '_')}-{version}-{tag}.whl"
        wheel.write_bytes(b"PK\x05\x06" + bytes(16) + i.to_bytes(2, "little"))
        made.append(wheel)
    return made


def test_wheels_go_into_the_zip_for_setup_to_install(tmp_path):
    """``--wheels``: setup.sh installs from the zip's wheels/ (``--find-links``); an empty folder
    is refused."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    command = [sys.executable, "-m", "autograder", "gradescope", PS, "--out", str(tmp_path / "z"),
               "--wheels", str(wheels)]
    refused = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and "no *.whl file" in refused.stderr
    assert not (tmp_path / "z").exists()  # nothing written
    pins = resolved(ROOT)
    made = _fake_wheels(wheels, pins)
    last = made.pop()
    kept = last.read_bytes()
    last.unlink()  # one package without its wheel: refused, and named
    refused = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert refused.returncode == 2 and f"no wheel for {last.name.split('-')[0]}" in (
        refused.stderr.replace("-", "_")
    ), refused.stderr
    last.write_bytes(kept)
    made.append(last)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "z" / "autograder.zip") as z:
        for wheel in made:
            assert z.read(f"wheels/{wheel.name}") == wheel.read_bytes()
        setup = z.read("setup.sh").decode()
        assert "--no-index --find-links wheels --require-hashes" in setup
        lines = z.read("requirements-grading.txt").decode().splitlines()
    # every package pinned with the sha256 of its wheel (pip's hash-checking mode)
    digests = {w.name.split("-")[0]: hashlib.sha256(w.read_bytes()).hexdigest() for w in made}
    assert len(lines) == len(pins)
    for line in lines:
        pin, digest = line.split(" --hash=sha256:")
        assert digests[pin.split("==")[0].replace("-", "_")] == digest


@pytest.mark.parametrize("tag", ["cp311-cp311-macosx_11_0_arm64", "cp313-cp313-manylinux_2_28_x86_64",
                                 "cp311-cp311-manylinux_2_39_x86_64"])
def test_wheels_the_image_cannot_install_are_refused_by_name(tmp_path, tag):
    """A wheel pip would refuse on Gradescope's default image (Ubuntu 22.04 on x86-64, glibc 2.35:
    gradescope/autograder_samples ``docs/base_images.md``) with this Python (a macOS wheel from
    an instructor's laptop, another Python's, a newer glibc's) is refused when the zip is built,
    named, and nothing is written: setup.sh would fail only on Gradescope."""
    require(sys.version_info[:2] != (3, 13) or "cp313" not in tag, "that tag is this Python's")
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    pins = resolved(ROOT)
    made = _fake_wheels(wheels, pins)
    name, version = next(iter(pins.items()))
    unfit = wheels / f"{name.replace('-', '_')}-{version}-{tag}.whl"
    made[0].rename(unfit)
    done = subprocess.run([sys.executable, "-m", "autograder", "gradescope", PS, "--out",
                           str(tmp_path / "z"), "--wheels", str(wheels)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot install" in done.stderr and unfit.name in done.stderr, done.stderr
    assert not (tmp_path / "z" / "autograder.zip").exists()


def _stub(folder: Path, name: str, body: str) -> None:
    (folder / name).write_text(f"#!/bin/sh\n{body}\n")
    (folder / name).chmod(0o755)


def test_setup_refuses_a_python_older_than_a_pin_admits_and_names_the_pin(built, tmp_path):
    """Gradescope's default image is Ubuntu 22.04 (gradescope/autograder_samples
    ``docs/base_images.md``), whose own ``python3.11`` is 3.11.0~rc1 (packages.ubuntu.com,
    jammy-updates); pip refuses a pin whose ``Requires-Python`` excludes the interpreter. setup.sh
    (``docs/specs.md``) runs with ``apt-get`` and ``add-apt-repository`` stubbed (no network
    here) and this machine's own ``/usr/bin/python3.X``: where a pin excludes it, setup tries the
    deadsnakes PPA, then stops with an error naming that pin, before any install; it never takes
    another minor version (the wheels are built for this one)."""
    minor = "{}.{}".format(*sys.version_info[:2])
    system = Path(f"/usr/bin/python{minor}")
    require(system.is_file(), f"no {system}")
    version = subprocess.run([str(system), "-c", "import platform; print(platform.python_version())"],
                             capture_output=True, text=True, check=True).stdout.strip()
    pins = resolved(ROOT)
    refusing = sorted(  # the oracle: each pinned distribution's own Requires-Python
        name for name in pins
        if not SpecifierSet(importlib.metadata.distribution(name).metadata.get("Requires-Python")
                            or "").contains(version))
    require(refusing, f"every pin admits {system} ({version}): setup would install from PyPI")
    root = tmp_path / "autograder"
    with zipfile.ZipFile(built["zip"]) as z:
        z.extractall(root / "source")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    log = tmp_path / "calls.log"
    for name in ("apt-get", "add-apt-repository"):
        _stub(stubs, name, f'echo "{name} $*" >> {log}')
    _stub(stubs, f"python{minor}", f'exec {system} "$@"')
    newer = f"python{sys.version_info.major}.{sys.version_info.minor + 1}"
    _stub(stubs, newer, f'echo "{newer} $*" >> {log}; exit 1')
    env = {"PATH": f"{stubs}:/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "HOME": str(tmp_path)}
    done = subprocess.run(["bash", str(root / "source" / "setup.sh")], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert f"no Python {minor} of at least" in done.stderr, done.stderr
    assert all(f"{name} {pins[name]}" in done.stderr for name in refusing), done.stderr
    calls = log.read_text()
    assert "add-apt-repository -y ppa:deadsnakes/ppa" in calls
    assert newer not in calls
    assert not (root / "venv").exists()


def test_an_empty_submission_scores_zero_as_grade_scores_it(built):
    """A submission with no file at all (Gradescope's ``/autograder/submission/`` is empty,
    gradescope/autograder_samples ``docs/specs.md``) is graded as ``grade`` grades a student who
    handed in nothing: a 0 that is final, the files received named (none), exit status 0; and
    ``submission_metadata.json`` (it holds earlier submissions' results) is left unreadable to
    the kernel's user."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    root = _layout(built, "correct", ON_TIME)
    (root / "submission" / NB).unlink()
    assert not any((root / "submission").iterdir())
    done = _run_autograder(built, root, "container")
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    assert results["score"] == 0
    assert "Files received: none." in results["output"], results["output"]
    assert "not final" not in results["output"], results["output"]
    assert done.returncode == 0, done.stdout + done.stderr
    assert (root / "submission_metadata.json").stat().st_mode & 0o077 == 0


def test_two_notebooks_say_which_was_graded_and_why_truthfully(built):
    """Gradescope gives every file of a submission the one ``created_at``
    (gradescope/autograder_samples ``docs/submission_metadata.md``): with two copies of the
    notebook, the output names the one graded and says why, and never calls it a newer copy."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    root = _layout(built, "wrong", ON_TIME)
    other = f"{Path(NB).stem} (1).ipynb"
    (root / "submission" / other).write_bytes(built["notebooks"]["correct"])
    done = _run_autograder(built, root, "container")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    output = results["output"]
    assert "newer copy" not in output, output
    assert f"Files received: {', '.join(sorted([NB, other]))}." in output, output
    lines = [x for x in output.splitlines() if other in x and "not graded" in x]
    assert lines and NB in lines[0].replace(other, "") and "same time" in lines[0], output
    full = sum(c.points for c in _cells(built) if c.autograded)
    assert results["score"] < full  # the wrong notebook, the one named NB, was graded


def _zip_of(name: str, data: bytes, when: datetime) -> bytes:
    """A zip holding one file whose member date is ``when`` (as the student's machine set it)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr(zipfile.ZipInfo(name, when.timetuple()[:6]), data)
    return buffer.getvalue()


EARLY = DUE - timedelta(days=10)
#: Files a student hands in beside (or around) the notebook that claim a time of their own: a
#: Gradescope export's ``submission_metadata.yml`` (:mod:`autograder.intake.gradescope`), an
#: nbgrader ``timestamp.txt`` (nbgrader ``exchange/default/submit.py``) in a folder, a zip whose
#: member is dated before the deadline. ``{case: (created_at, files)}``.
CLAIMS = {
    "export-metadata": (LATE, lambda nb: {
        NB: nb,
        "submission_metadata.yml": (
            "submission:\n  :submitters:\n  - :name: S\n    :sid: 'submission'\n"
            f"  :created_at: {EARLY.strftime('%Y-%m-%d %H:%M:%S.%f000 +00:00')}\n").encode()}),
    "nbgrader-timestamp": (LATE, lambda nb: {
        f"{PS}/{NB}": nb,
        f"{PS}/timestamp.txt": f"{EARLY.strftime('%Y-%m-%d %H:%M:%S.%f')} UTC".encode()}),
    "zip-dated-early": (LATE, lambda nb: {"answers.zip": _zip_of(NB, nb, EARLY)}),
    "zip-dated-late": (ON_TIME, lambda nb: {"answers.zip": _zip_of(NB, nb, LATE + timedelta(days=5))}),
}


@pytest.mark.parametrize("case", list(CLAIMS))
def test_only_gradescopes_created_at_dates_a_submission(built, case):
    """Gradescope records when a submission was handed in as ``created_at``
    (gradescope/autograder_samples ``docs/submission_metadata.md``); anything in the student's
    files that names a time (an export's metadata, a ``timestamp.txt``, a zip member's date) is
    the student's own text. The same notebook is late by Gradescope's time, or on time, whatever
    its files claim."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    when, files = CLAIMS[case]
    root = _layout(built, "correct", when)
    (root / "submission" / NB).unlink()
    for name, data in files(built["notebooks"]["correct"]).items():
        path = root / "submission" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    done = _run_autograder(built, root, "container")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    full = sum(c.points for c in _cells(built) if c.autograded)
    if when == LATE:  # two days late, begun, by created_at
        assert "Late penalty" in results["output"], results["output"]
        assert results["score"] == pytest.approx(round(full * (1 - 2 * PERCENT_PER_DAY / 100), 2))
    else:
        assert "Late penalty" not in results["output"], results["output"]
        assert results["score"] == pytest.approx(full)


def test_a_late_toml_extension_is_honoured_by_gradescope_email(built):
    """A ``late.toml`` extension granted under the student's Gradescope email holds inside
    Gradescope: the metadata names each submitter by ``email``, ``id`` and ``name``
    (gradescope/autograder_samples ``docs/submission_metadata.md``). Work handed in before the
    extension is on time; the same work without it is late."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    outputs = {}
    for extended in (False, True):
        root = _layout(built, "late", LATE)
        source = root / "source" / "course" / "late.toml"
        email = json.loads((root / "submission_metadata.json").read_text())["users"][0]["email"]
        if extended:
            until = (LATE + timedelta(hours=1)).isoformat()
            source.write_text(f'{source.read_text()}\n[{PS}.extensions]\n"{email}" = {until}\n')
        done = _run_autograder(built, root, "container")
        assert done.returncode == 0, done.stdout + done.stderr
        outputs[extended] = json.loads((root / "results" / "results.json").read_text())
    full = sum(c.points for c in _cells(built) if c.autograded)
    assert "Late penalty" in outputs[False]["output"]
    assert "Late penalty" not in outputs[True]["output"], outputs[True]["output"]
    assert outputs[True]["score"] == pytest.approx(full)


def test_an_extension_in_days_counts_from_gradescopes_due_date_for_a_group(built):
    """``late.toml``'s ``{ days = N }`` extension (:mod:`autograder.intake.late`) adds N days to
    the deadline in force, which inside Gradescope is the assignment's ``due_date``
    (gradescope/autograder_samples ``docs/submission_metadata.md``), not the course copy's own
    older deadline (:data:`LATE_TOML`: 2026-01-01). A group's submission (``users`` lists every
    member) keeps the extension of the member who holds one: 30 hours late with 3 days granted is
    on time."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    root = _layout(built, "late", LATE)
    source = root / "source" / "course" / "late.toml"
    member = {"email": "partner@example.com", "id": 5678, "name": "Partner User"}
    source.write_text(f'{source.read_text()}\n[{PS}.extensions]\n"{member["email"]}" = {{ days = 3 }}\n')
    metadata = json.loads((root / "submission_metadata.json").read_text())
    metadata["assignment"].update(group_submission=True, group_size=2)
    metadata["users"].append(member)
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    done = _run_autograder(built, root, "container")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    jsonschema.validate(results, GRADESCOPE_SCHEMA)
    full = sum(c.points for c in _cells(built) if c.autograded)
    assert "Late penalty" not in results["output"], results["output"]
    assert results["score"] == pytest.approx(full)


def test_an_extension_granted_in_gradescope_holds(built):
    """An extension granted in Gradescope gives the student a due date of their own: the user's
    ``assignment`` (``release_date``, ``due_date``, ``late_due_date``) in
    ``submission_metadata.json``, beside the assignment's (``docs/submission_metadata.md`` lists
    the assignment's; readers of the file model the user's as ``GradescopeUser.assignment``).
    Work handed in 30 hours after the assignment's due date but before the student's own is on
    time."""
    ok, reason = container_available(str(built["python"]))
    require(ok, f"the container mode cannot run here: {reason}")
    root = _layout(built, "late", LATE)
    metadata = json.loads((root / "submission_metadata.json").read_text())
    metadata["users"][0]["assignment"] = {
        "release_date": metadata["assignment"]["release_date"],
        "due_date": (LATE + timedelta(hours=1)).isoformat(),
        "late_due_date": metadata["assignment"]["late_due_date"]}
    (root / "submission_metadata.json").write_text(json.dumps(metadata))
    done = _run_autograder(built, root, "container")
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((root / "results" / "results.json").read_text())
    full = sum(c.points for c in _cells(built) if c.autograded)
    assert "Late penalty" not in results["output"], results["output"]
    assert results["score"] == pytest.approx(full)


# ------------------------------------------------------------------------------------------------
# The fields of results.json the specification defines


def _record_of_two_checks():
    """A record of one visible and one hidden check (names as the course writes them), failed."""
    from autograder.grading.record import Record
    from autograder.grading.scoring import CellScore
    from autograder.status import Status

    hidden = next(c for c in ProblemSet(PS).grade_cells if is_hidden(c.grade_id))
    visible = next(c for c in ProblemSet(PS).grade_cells
                   if c.autograded and not is_hidden(c.grade_id))
    return Record("s1", PS, Status.GRADED, (
        CellScore(visible.grade_id, visible.points, visible.points, "<b>all passed</b>"),
        CellScore(hidden.grade_id, 0.0, hidden.points, "expected 1.5, got <i>2</i>"),
    ))


def test_results_fields_are_those_the_specification_defines():
    """gradescope/autograder_samples ``docs/specs.md`` (commit ed9a351): a test's ``status`` is
    ``passed`` or ``failed`` ("By default, test cases where the student was awarded the
    max_score points are marked as passing"); ``output_format``, ``test_output_format``,
    ``test_name_format`` and a test's ``output_format``/``name_format`` are one of ``text``,
    ``html``, ``simple_format``, ``md``, ``ansi``, and the top-level default ``simple_format``
    renders HTML: every text here is ``text``, so a message's markup stays text; ``extra_data``
    is an object ("extra data to be stored": the specification says not who reads it, so it
    holds nothing the output does not say)."""
    from autograder.exports.gradescope import results_json
    from autograder.pages.visibility import Visibility

    data = results_json(_record_of_two_checks(), Visibility("full"))
    jsonschema.validate(data, GRADESCOPE_SCHEMA)
    assert [t["status"] for t in data["tests"]] == ["passed", "failed"]
    assert {data["output_format"], data["test_output_format"], data["test_name_format"]} == {"text"}
    assert {t["output_format"] for t in data["tests"]} == {t["name_format"] for t in data["tests"]} \
        == {"text"}
    assert data["tests"][0]["output"] == "<b>all passed</b>"  # as text, not rendered
    assert data["extra_data"] == {"status": "graded", "late_percent": 0}
    assert "Status: graded." in data["output"]


def test_withheld_hidden_checks_are_after_due_date_only_where_that_keeps_the_release_date():
    """``after_due_date``: "test case will be shown after the assignment's due date has passed.
    If late submission is allowed, then test will be shown only after the late due date"
    (gradescope/autograder_samples ``docs/specs.md``, commit ed9a351). A hidden check withheld
    until ``release_at`` (``course/feedback.toml``) is ``after_due_date`` when Gradescope shows it
    no earlier than that (the late due date where there is one, else the due date), else
    ``after_published``; a visible check stays ``visible``."""
    from autograder.exports.gradescope import results_json
    from autograder.pages.visibility import Visibility

    record = _record_of_two_checks()
    release = DUE + timedelta(days=2)
    withheld = Visibility("none", release)
    before = DUE - timedelta(days=1)  # graded before the release: the message is withheld

    def shown(visibility, shown_from):
        data = results_json(record, visibility, now=before, shown_from=shown_from)
        jsonschema.validate(data, GRADESCOPE_SCHEMA)
        return [t["visibility"] for t in data["tests"]]

    late_due = DUE + timedelta(days=3)
    assert shown(withheld, late_due) == ["visible", "after_due_date"]  # shown 3 days after DUE
    assert shown(withheld, DUE) == ["visible", "after_published"]  # too early: 2 days before
    assert shown(withheld, release) == ["visible", "after_due_date"]  # exactly then
    assert shown(withheld, None) == ["visible", "after_published"]  # no due date known
    assert shown(Visibility("none"), late_due) == ["visible", "after_published"]  # no date
    hidden_test = results_json(record, withheld, now=before, shown_from=late_due)["tests"][1]
    assert hidden_test["output"] == record.scores[1].message  # Gradescope withholds it


def test_the_container_mode_keeps_the_shared_folders_from_the_kernel(built):
    """Where the root grader may mount, a kernel in the container mode cannot fill the shared
    /tmp, /var/tmp or /dev/shm of the machine (Gradescope's container: a student's files there
    would fill its disk, with no per-kernel cap): the shared folders are read-only to it
    (``EROFS``), ``/dev/shm`` is its own tmpfs of ``tmp_mb`` (``ENOSPC`` past it, nothing on the
    machine's), its ``TMPDIR`` and working folder stay writable, and the gaps said are those."""
    from autograder.sandbox import container_gaps
    from autograder.sandbox.disk import cap_folder, release

    python = str(built["python"])
    ok, reason = container_available(python)
    require(ok, f"the container mode cannot run here: {reason}")
    probe = Path(tempfile.mkdtemp(dir=built["base"]))
    require(cap_folder(probe, 1, 16), "the grader may not mount here (no CAP_SYS_ADMIN)")
    release(probe)
    assert "shared folders read-only" in reason, reason
    mark = f"shared-{os.getpid()}"
    work = Path(tempfile.mkdtemp(dir=built["base"])) / "work"
    work.mkdir()
    cells = [
        "import errno, os\nfor top in ('/tmp', '/var/tmp'):\n    try:\n"
        f"        open(os.path.join(top, {mark!r}), 'wb').write(b'x')\n        print('wrote')\n"
        "    except OSError as e:\n        print(errno.errorcode[e.errno])",
        "import errno\nwritten = 0\ntry:\n    for i in range(4):\n"
        f"        with open('/dev/shm/{mark}-%d' % i, 'wb') as f:\n"
        "            for _ in range(10):\n                f.write(b'x' * 2**20)\n"
        "                written += 1\nexcept OSError as e:\n"
        "    print(errno.errorcode[e.errno], written)",
        "import tempfile\nwith tempfile.NamedTemporaryFile() as f:\n    f.write(b'ok')\n"
        "open('mine.txt', 'w').write('ok')\nprint('own folders ok')",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    config = SandboxConfig(container=True, python=python, cell_timeout_s=20,
                           notebook_timeout_s=120, tmp_mb=16)
    result = execute_notebook(nb, work, config)
    assert result.status == "ok", result.message

    def out(i: int) -> str:
        return "".join(o.get("text", "") for o in result.notebook.cells[i].outputs
                       if o.output_type == "stream")

    assert out(0).split() == ["EROFS", "EROFS"]
    full, written = out(1).split()
    assert full == "ENOSPC" and 10 <= int(written) <= 16, out(1)
    assert out(2) == "own folders ok\n"
    assert (work / "mine.txt").read_text() == "ok"
    left = [p for top in ("/tmp", "/var/tmp", "/dev/shm") for p in Path(top).glob(f"{mark}*")]
    assert left == []
    gaps = " ".join(container_gaps(python))
    assert "read-only to it" in gaps and "/tmp, /var/tmp, /dev/shm), with no size" not in gaps


def test_the_container_mode_locks_a_writable_autograder_folder(tmp_path):
    """Were Gradescope's ``/autograder`` writable by others (its docs/specs.md does not give its
    mode), the kernel's user could rename ``results/`` and put a folder of its own, with a link
    where the grader writes, in its place: the container mode's lock leaves it writable by its
    owner alone, ``results/`` the grader's, ``source`` and the metadata closed to others."""
    from autograder.run.gradescope import _lock

    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "submission_metadata.json").write_text("{}")
    root.chmod(0o777)
    _lock(root)
    assert stat.S_IMODE(root.stat().st_mode) & 0o022 == 0
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "submission_metadata.json").stat().st_mode) == 0o600
    results = (root / "results").stat()
    assert stat.S_IMODE(results.st_mode) == 0o755 and results.st_uid == os.geteuid()


def test_an_extension_holds_whatever_the_case_of_the_email(tmp_path):
    """An instructor writes the extension under the e-mail as the roster spells it
    (``Ada.Lovelace@Uni.example``) and Gradescope's metadata gives it in another case: the
    domain of an address is case-insensitive (RFC 5321 section 2.4) and no two students are told
    apart by case, so the extension holds."""
    from autograder.run.gradescope import STUDENT, Metadata, _late_policy

    (tmp_path / "late.toml").write_text(
        f'{LATE_TOML}\n[{PS}.extensions]\n"Ada.Lovelace@Uni.example" = {{ days = 3 }}\n')
    meta = Metadata(created_at=LATE, due_date=DUE, users=("ada.lovelace@uni.example", "4242"))
    rule = _late_policy(Course(tmp_path), PS, meta).for_problem_set(PS)
    assert rule.deadline == DUE
    assert rule.extensions == {STUDENT: DUE + timedelta(days=3)}
