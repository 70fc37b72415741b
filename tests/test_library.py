"""The book's library (``library/``, a wheel of ``solutions/``): what it holds and where it is.

The wheel carries the chapters' code and nothing of the course's grading: no file of
``autograder/``, ``course/`` or the kit's grading inputs (``coursedata/inputs``), and no line of a
problem set's solution or hidden-test region (the same check as the kit's, tests/test_kit.py).
The built site publishes it at ``<site>/library/`` and in its JupyterLite package index and lock,
and every import of every chapter resolves in the browser: to the site's lock (the library, the
kit, Pyodide's packages) or Python's standard library.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.test_kit import secret_lines

ROOT = Path(__file__).resolve().parents[1]
LIBRARY_DIR = ROOT / "_build" / "library"
#: Lines of problem sets' solution regions that the library also holds, each the one standard
#: NumPy call that any code of the chapter's algorithm writes (coercing an input, centring,
#: an eigen- or singular-value decomposition, a tuple return). The rest of every answer is absent,
#: and each line here must still be a solution line (else it is dropped from this list).
SHARED_STANDARD_LINES = {
    "y = np.asarray(y)",
    "u = np.asarray(u, dtype=float)",
    "Z = np.asarray(Z, dtype=float)",
    "n_users, n_items = R.shape",
    "return float(mu), float(sigma)",
    "mean = X.mean(axis=0)",
    "eigvals, eigvecs = np.linalg.eigh(cov)",
    "Q, s, Ut = np.linalg.svd(X, full_matrices=False)",
}
FORBIDDEN_TOPS = ("autograder", "course", "coursedata", "tests", "kit", "chapters")


def library_leaks(wheel: Path, secrets: dict[str, str]) -> list[str]:
    """Files of ``wheel`` outside ``solutions/`` and its metadata, and secret lines in any file."""
    problems = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            top = info.filename.split("/")[0]
            if top in FORBIDDEN_TOPS or not (top == "solutions" or top.endswith(".dist-info")):
                problems.append(f"{info.filename}: not a file of solutions/")
            if "inputs" in info.filename.split("/"):
                problems.append(f"{info.filename}: the kit's grading inputs")
            text = zf.read(info).decode("utf-8", errors="replace")
            problems += [f"{info.filename}: {line!r} (from {where})"
                         for line, where in secrets.items()
                         if line in text and line not in SHARED_STANDARD_LINES]
    return problems


#: Their users are slow (tests/conftest.py): a build of the wheel.
SLOW_FIXTURES = ("fresh_wheel",)


@pytest.fixture(scope="module")
def fresh_wheel(tmp_path_factory) -> Path:
    """The library built now from the working tree (library/build.py, as make does)."""
    out = tmp_path_factory.mktemp("library")
    done = subprocess.run([sys.executable, str(ROOT / "library" / "build.py"), str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return Path(done.stdout.strip().splitlines()[-1])


def test_wheel_holds_every_module_of_solutions_and_nothing_else(fresh_wheel):
    with zipfile.ZipFile(fresh_wheel) as zf:
        names = zf.namelist()
    modules = {n for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert modules == {f"solutions/{p.name}" for p in (ROOT / "solutions").glob("*.py")}
    assert library_leaks(fresh_wheel, {}) == []


def test_wheel_has_no_solution_or_hidden_test_line(fresh_wheel):
    secrets = secret_lines()
    assert len(secrets) > 100, "the source notebooks' solution regions were not found"
    assert SHARED_STANDARD_LINES <= set(secrets), SHARED_STANDARD_LINES - set(secrets)
    assert library_leaks(fresh_wheel, secrets) == []


def test_the_leak_check_finds_a_planted_answer_and_a_grader_file(fresh_wheel, tmp_path):
    secrets = secret_lines()
    answer = next(line for line in secrets if line not in SHARED_STANDARD_LINES and "=" in line)
    planted = tmp_path / fresh_wheel.name
    with zipfile.ZipFile(fresh_wheel) as src, zipfile.ZipFile(planted, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "solutions/pca.py":
                data += f"\n    {answer}\n".encode()
            dst.writestr(info, data)
        dst.writestr("autograder/grade.py", "")
        dst.writestr("coursedata/inputs/ps1.py", "")
    found = "\n".join(library_leaks(planted, secrets))
    assert repr(answer) in found and "autograder/grade.py" in found
    assert "coursedata/inputs/ps1.py" in found


def test_dependencies_admit_the_pinned_versions():
    """The library's ranges admit the tested pins of requirements.txt (so pip, constrained by
    them, installs the tested combination)."""
    pins = dict(line.split("#")[0].strip().split("==")
                for line in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in line.split("#")[0])
    project = tomllib.loads((ROOT / "library" / "pyproject.toml").read_text())["project"]
    names = set()
    for spec in project["dependencies"]:
        req = Requirement(spec)
        names.add(req.name)
        if req.name in pins:
            assert req.specifier.contains(pins[req.name]), (spec, pins[req.name])
    # The chapters' imports: the kit (data), the numerical stack, Numba off the browser.
    assert {"mfpm-kit", "numpy", "scipy", "matplotlib", "scikit-learn", "numba"} <= names


# --- the built site ----------------------------------------------------------------------------

def _library_wheel(html: Path) -> Path:
    wheels = sorted((html / "library").glob("mfpm_book-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_site_publishes_the_library_built_from_these_sources(html, fresh_wheel):
    published = _library_wheel(html)
    assert published.read_bytes() == fresh_wheel.read_bytes()
    assert library_leaks(published, secret_lines()) == []


def test_lite_index_and_lock_hold_the_library(html):
    import hashlib

    published = _library_wheel(html)
    pypi = html / "lite" / "pypi"
    assert "mfpm-book" in json.loads((pypi / "all.json").read_text())
    assert (pypi / published.name).read_bytes() == published.read_bytes()
    core = html / "lite" / "static" / "pyodide"
    entry = json.loads((core / "pyodide-lock.json").read_text())["packages"]["solutions"]
    assert entry["imports"] == ["solutions"]
    assert {"coursedata", "numpy", "scipy", "scikit-learn"} <= set(entry["depends"])
    assert (core / entry["file_name"]).resolve() == (pypi / published.name).resolve()
    assert entry["sha256"] == hashlib.sha256(published.read_bytes()).hexdigest()


def _catches_import(node: ast.Try) -> bool:
    """Whether a ``try`` falls back when its imports fail (``except ImportError``)."""
    names = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
    return bool(names & {"ImportError", "ModuleNotFoundError", "(ImportError, ModuleNotFoundError)"})


def _chapter_imports(chapter: Path) -> set[str]:
    import jupytext

    found = set()
    for cell in jupytext.read(chapter).cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(l for l in cell.source.splitlines() if not l.lstrip().startswith("%"))
        tree = ast.parse(source)
        optional = {id(n) for t in ast.walk(tree) if isinstance(t, ast.Try) and _catches_import(t)
                    for stmt in t.body for n in ast.walk(stmt)}
        for node in ast.walk(tree):
            if id(node) in optional:  # try: import x / except ImportError: a fallback
                continue
            if isinstance(node, ast.Import):
                found |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                found.add(node.module.split(".")[0])
    return found


def test_every_chapter_import_resolves_in_the_browser(html):
    """Every module a chapter imports is in the site's lock (the library, the kit, Pyodide's own
    packages, fetched from its CDN) or in Python's standard library."""
    lock = json.loads((html / "lite/static/pyodide/pyodide-lock.json").read_text())["packages"]
    importable = {name for entry in lock.values() for name in entry["imports"]}
    chapters = sorted((ROOT / "chapters").glob("*.md"))
    assert len(chapters) >= 7
    for chapter in chapters:
        missing = _chapter_imports(chapter) - importable - set(sys.stdlib_module_names)
        assert not missing, f"{chapter.name} imports {sorted(missing)}, which the browser lacks"
    assert "solutions" in importable and "coursedata" in importable


def test_install_cell_installs_both_wheels_only_where_the_library_is_missing(tmp_path):
    """The chapter notebooks' install cell: public, one %pip of the kit and the library, skipped
    in the browser and where `solutions` imports; private, nothing to run."""
    sys.path.insert(0, str(ROOT / "_ext"))
    from course_library import Library, install_cell

    wheel = tmp_path / "mfpm_book-0.1.0-py3-none-any.whl"
    public = install_cell("https://c.org/kit/k.whl",
                          Library("public", wheel, "https://c.org/library/" + wheel.name))
    assert "%pip install --quiet https://c.org/kit/k.whl https://c.org/library/" in public
    assert 'sys.platform != "emscripten"' in public and 'find_spec("solutions") is None' in public
    private = install_cell("https://c.org/kit/k.whl", Library("private"))
    assert "%pip" not in private and "private" in private
