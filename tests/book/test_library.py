"""The book's library (``library/``, a wheel of ``solutions/``): what it holds and where it is.

The wheel carries the chapters' code and nothing of the course's grading: no file of
``autograder/``, ``course/`` or the kit's grading inputs (``coursedata/inputs``), and no line of a
problem set's solution or hidden-test region (the kit's check, tests/book/test_kit.py, also comparing
lines as code), but the few standard lines of :data:`SHARED_ANSWER_LINES`, each with its reason.
The built site publishes it at ``<site>/library/`` and in its JupyterLite package index and lock,
and every import of every chapter resolves in the browser: to the site's lock (the library, the
kit, Pyodide's packages) or Python's standard library.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

from tests import ROOT
from tests.book.test_kit import secret_lines

LIBRARY_DIR = ROOT / "_build" / "library"
#: The lines of problem sets' answers that the library also holds, each with why it may. The check
#: compares lines as code (:func:`_as_code`: the same statement with other spacing, parentheses or
#: ``1`` for ``1.0`` is the same line), so this list is every answer line the library shares, and
#: must stay so: a shared line not listed here fails, and so does a listed one the library no
#: longer holds or that is no longer an answer line. Every one is a single standard NumPy
#: statement that any implementation of the chapter's algorithm writes, or the formula the
#: chapter's page itself states; the rest of each answer is absent.
SHARED_ANSWER_LINES: dict[str, str] = {
    "y = np.asarray(y)":
        "ps4 naive Bayes fits, first line: the labels as an array, which every estimator's input "
        "check writes (library: _classifier.score, the classifiers' _validate_Xy)",
    "u = np.asarray(u, dtype=float)":
        "ps5 kernels, first line of each: the scaled distances as floats, as every kernel of "
        "solutions/kde.py starts",
    "Z = np.asarray(Z, dtype=float)":
        "ps6 softmax, first line: the logits as floats (library: softmax._check_logits)",
    "n_users, n_items = R.shape":
        "ps2 ALS with biases, first line: the rating matrix's shape, named as the chapter names "
        "it (library: matrix_completion.objective and ALS.fit)",
    "return float(mu), float(sigma)":
        "ps3 gaussian_mle, last line: the documented return of two Python floats, the same "
        "signature as the chapter's solutions.mle.gaussian_mle",
    "mean = X.mean(axis=0)":
        "ps1 center: the column means (library: PCA._fit, PPCA.fit); the answer's other line, "
        "the centred data, is not in the library",
    "eigvals, eigvecs = np.linalg.eigh(cov)":
        "ps1 pca_eig: NumPy's symmetric eigendecomposition of the covariance (library: "
        "PCA._fit, solver 'eigh'); the covariance, the ordering and the return are not shared",
    "Q, s, Ut = np.linalg.svd(X, full_matrices=False)":
        "ps1 best_rank_k: NumPy's thin SVD in the chapter's notation X = Q S U^T (library: "
        "pca._svd_top); the truncation, the answer, is not shared",
    "means = onehot.T @ X / counts[:, None]":
        "ps6 shared_variance_weights: the class means mu_c as one product of the one-hot labels, "
        "the formula chapter 7 states (library: discriminant_analysis._fit_moments, with "
        "parentheses); the pooled covariance and the weights, the answer, are not shared",
    "return np.where(np.abs(u) <= 1, 0.5, 0.0)":
        "ps5 uniform_kernel: the definition K(u) = 1/2 on [-1, 1], which chapter 5 states and any "
        "correct answer writes (library: kde.uniform_kernel, with 1.0)",
}
FORBIDDEN_TOPS = ("autograder", "course", "coursedata", "tests", "kit", "chapters")


def _as_code(line: str) -> str | None:
    """A stripped line as code: its syntax tree with every number a float (so ``1`` and ``1.0``,
    spacing and redundant parentheses compare equal); ``None`` for a comment, text or fragment."""
    import ast

    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return None
    if not tree.body:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            node.value = float(node.value)
    return ast.dump(tree)


def shared_lines(wheel: Path, secrets: dict[str, str]) -> dict[str, list[str]]:
    """The lines of ``secrets`` that a file of ``wheel`` holds, as text or as code
    (:func:`_as_code`), each with the files that hold it."""
    by_code: dict[str, list[str]] = {}
    for line in secrets:
        if (code := _as_code(line)) is not None:
            by_code.setdefault(code, []).append(line)
    found: dict[str, list[str]] = {}
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            text = zf.read(info).decode("utf-8", errors="replace")
            hits = {line for line in secrets if line in text}
            if info.filename.endswith(".py"):
                for own in text.splitlines():
                    hits.update(by_code.get(_as_code(own) or "", []))
            for line in hits:
                found.setdefault(line, []).append(info.filename)
    return found


def library_leaks(wheel: Path, secrets: dict[str, str]) -> list[str]:
    """Files of ``wheel`` outside ``solutions/`` and its metadata, and the lines of ``secrets``
    (as text or as code) in any file but those of :data:`SHARED_ANSWER_LINES`."""
    problems = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            top = info.filename.split("/")[0]
            if top in FORBIDDEN_TOPS or not (top == "solutions" or top.endswith(".dist-info")):
                problems.append(f"{info.filename}: not a file of solutions/")
            if "inputs" in info.filename.split("/"):
                problems.append(f"{info.filename}: the kit's grading inputs")
    problems += [f"{', '.join(files)}: {line!r} (from {secrets[line]})"
                 for line, files in sorted(shared_lines(wheel, secrets).items())
                 if line not in SHARED_ANSWER_LINES]
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
    assert library_leaks(fresh_wheel, secrets) == []


def test_the_shared_answer_lines_are_exactly_those_the_library_holds(fresh_wheel):
    """No stale entry: each listed line is still an answer line, and the library still holds it
    (else it leaves the list), so the list says what a student can find in the library."""
    secrets = secret_lines()
    assert set(SHARED_ANSWER_LINES) - set(secrets) == set(), "no longer answer lines"
    shared = shared_lines(fresh_wheel, secrets)
    assert set(shared) == set(SHARED_ANSWER_LINES), (
        sorted(set(shared) ^ set(SHARED_ANSWER_LINES)))
    assert all(reason.strip() for reason in SHARED_ANSWER_LINES.values())


def test_the_leak_check_finds_a_planted_answer_and_a_grader_file(fresh_wheel, tmp_path):
    secrets = secret_lines()
    candidates = [line for line in secrets
                  if line not in SHARED_ANSWER_LINES and " = " in line and _as_code(line)]
    answer, reformatted = candidates[0], candidates[1]
    # the same statement written otherwise: no spaces around "=", the value in parentheses
    target, value = reformatted.split(" = ", 1)
    disguised = f"{target}=({value})"
    assert disguised not in reformatted and _as_code(disguised) == _as_code(reformatted)
    planted = tmp_path / fresh_wheel.name
    with zipfile.ZipFile(fresh_wheel) as src, zipfile.ZipFile(planted, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "solutions/pca.py":
                data += f"\n    {answer}\n    {disguised}\n".encode()
            dst.writestr(info, data)
        dst.writestr("autograder/grade.py", "")
        dst.writestr("coursedata/inputs/ps1.py", "")
    found = "\n".join(library_leaks(planted, secrets))
    assert repr(answer) in found and repr(reformatted) in found, found
    assert "autograder/grade.py" in found and "coursedata/inputs/ps1.py" in found


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
        source = "\n".join(ln for ln in cell.source.splitlines() if not ln.lstrip().startswith("%"))
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
