"""The layout's import rules, read from the source with :mod:`ast` (nothing is imported).

- The grader is one folder per stage a submission goes through (``autograder/__init__.py`` draws
  them), and :data:`MAY_IMPORT` says which folders each folder may import: a stage imports the
  stages before it and the shared modules (``course``, ``settings``, ``status``), never one after
  it. Only those shared modules, the package and its ``__main__`` sit at the top level, so a new
  module goes into the folder of its stage.
- No import cycle between the grader's modules, counting the imports inside functions (an import
  deferred to call time is still a dependency) and not the ones under ``if TYPE_CHECKING:``.
- No import that runs back up: with each subpackage of ``autograder`` taken as one unit
  (``autograder.sandbox``, ``autograder.exports``, ...) beside the top-level modules, the units
  import each other without a cycle either; so a subpackage never imports a parent-level module
  that imports it (as ``exports.command`` imported ``feedback``, which imported
  ``exports.summary``).
- The layers within the stages: ``exports`` (the LMS formats) never imports the feedback page; the
  grade arithmetic (``grades``) imports neither the exports nor the pages; the pages' style
  imports no grade; no library module imports the command lines (``commands``, ``__main__``); the
  sandbox imports nothing of the grader but its own modules and ``settings`` and ``status`` (it
  knows nothing of the course: it receives its preload list).
- The course's own Python (``course/checks/``, ``course/honest/``) imports of the grader only its
  check engine (``autograder.checks``), and every ``"package.module:function"`` a problem set's
  notebook names is a function defined in a file of this repository (``course.checks.NAME`` is
  ``course/checks/NAME.py``), so an editor and this test follow the name.
- The book does not import the grader: nothing in ``_ext/`` imports ``autograder``, and
  ``coursesite`` (the settings both read) imports neither the grader nor the book.
- The tests mirror the packages: ``tests/autograder/intake/`` tests ``autograder/intake/``, and so
  on; ``tests/book/`` tests the web book (:data:`TESTS_OF_THE_BOOK`); only the project-wide rules
  (this file, the conventions, the leftovers check) sit in ``tests/`` itself.

The checker is tested on small made-up packages too, so that a rule that could never fail
would show.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------------
# The checker


def _modules(root: Path, package: str) -> dict[str, Path]:
    """Every module of ``package`` (the folder ``root/package``), by dotted name; a package is
    named by its ``__init__.py``."""
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """The ids of the import nodes under ``if TYPE_CHECKING:`` (never run)."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return skipped


def imported_names(path: Path, module: str, is_package: bool) -> list[tuple[str, int]]:
    """The absolute names ``path`` imports (``from a import b`` gives ``a.b``; the caller
    resolves it to a module), with their line numbers."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    skipped = _type_checking_only(tree)
    here = module if is_package else module.rpartition(".")[0]
    names = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            names += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")[:len(here.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            names += [(f"{base}.{alias.name}" if alias.name != "*" else base, node.lineno)
                      for alias in node.names]
    return names


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module of ``modules`` that importing ``name`` runs: the longest prefix that is one."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def import_graph(root: Path, package: str) -> dict[str, dict[str, int]]:
    """``{module: {imported module of the package: line}}`` for every module of ``package``."""
    modules = _modules(root, package)
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        edges = graph.setdefault(name, {})
        for target, line in imported_names(path, name, path.name == "__init__.py"):
            resolved = _resolve(target, modules)
            if resolved is not None and resolved != name:
                edges.setdefault(resolved, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan), each as one cycle
    through its nodes (``a -> b -> ... -> a``), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.add(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(_one_cycle(graph, c) for c in components)


def _one_cycle(graph: dict[str, dict[str, int]], component: set[str]) -> list[str]:
    """A cycle through the component's first node (breadth-first: a shortest one)."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph.get(node, {})):
            if nxt == start:
                return paths[node] + [start]
            if nxt in component and nxt not in paths:
                paths[nxt] = paths[node] + [nxt]
                queue.append(nxt)
    raise AssertionError(f"no cycle through {start} in {sorted(component)}")


def unit(module: str, package: str) -> str:
    """The unit a module belongs to: its subpackage of ``package``, or itself at the top level
    (``autograder.sandbox.warm`` -> ``autograder.sandbox``; ``autograder.course`` stays)."""
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def unit_graph(graph: dict[str, dict[str, int]], package: str) -> dict[str, dict[str, int]]:
    """The import graph with each subpackage taken as one node; an import within a unit is
    dropped, and so is one of the package itself (``autograder/__init__.py``)."""
    units: dict[str, dict[str, int]] = {}
    for module, edges in graph.items():
        source = unit(module, package)
        if source == package:
            continue
        mine = units.setdefault(source, {})
        for target, line in edges.items():
            destination = unit(target, package)
            if destination not in (source, package):
                mine.setdefault(destination, line)
    return units


def _describe(cycle: list[str], graph: dict[str, dict[str, int]]) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + \
        f" -> {cycle[-1]}"


def forbidden(graph: dict[str, dict[str, int]], importer: str, imported: str) -> list[str]:
    """The imports of a module in (or equal to) ``importer`` from one in ``imported``."""
    def within(module: str, prefix: str) -> bool:
        return module == prefix or module.startswith(prefix + ".")

    return [f"{source} line {line} imports {target}"
            for source, edges in sorted(graph.items()) if within(source, importer)
            for target, line in sorted(edges.items()) if within(target, imported)]


def foreign_imports(folder: Path, top_names: set[str]) -> list[str]:
    """Imports of any of ``top_names`` (top-level packages) in the Python files of ``folder``."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        for name, line in imported_names(path, path.stem, False):
            if name.split(".")[0] in top_names:
                found.append(f"{path.relative_to(folder.parent)} line {line} imports {name}")
    return found


#: The shared modules every stage may import, and the only modules beside the package's own
#: ``__init__`` and ``__main__`` at the top level of ``autograder/``: the course folder, the
#: settings and the status words. (How a course names its graded cells is the kit's
#: :mod:`coursedata.naming`: the student's check reads those names too.)
SHARED = ("course", "settings", "status")

#: Which folders (stages) each folder may import, besides :data:`SHARED` and itself. The order of
#: a submission: authoring, intake, run, grading (with sandbox and checks below it), then what is
#: made of its record (pages, grades, exports, gradebook); the commands sit on top of them all.
MAY_IMPORT = {
    "checks": set(),
    "sandbox": set(),
    "intake": set(),
    "grading": {"checks", "sandbox", "intake"},
    "authoring": {"checks", "grading"},
    "grades": {"grading", "intake"},
    "pages": {"grading", "grades", "intake", "checks"},
    "exports": {"grades", "pages", "grading", "intake"},
    "gradebook": {"grading", "authoring"},
    "run": {"grading", "intake", "pages", "grades", "exports", "sandbox", "checks"},
    "commands": {"authoring", "exports", "gradebook", "grades", "grading", "intake", "pages",
                 "run", "sandbox", "checks"},
}


def folder_violations(graph: dict[str, dict[str, int]], package: str,
                      may_import: dict[str, set[str]], shared: tuple[str, ...]) -> list[str]:
    """The imports of one folder of ``package`` from another that ``may_import`` does not allow,
    the folders it does not know, and the top-level modules that are not ``shared``."""
    def name(module: str) -> str:
        return module[len(package) + 1:].split(".")[0] if module != package else ""

    found = []
    for module, edges in sorted(graph.items()):
        source = name(module)
        folder = module.count(".") > 1 or module + ".__init__" in graph or \
            any(m.startswith(module + ".") for m in graph)
        if source in ("", "__main__") or (source in shared and not folder):
            continue
        if source not in may_import:
            found.append(f"{module}: not in a known folder (a new stage goes into MAY_IMPORT)")
            continue
        allowed = may_import[source] | set(shared) | {source}
        for target, line in sorted(edges.items()):
            destination = name(target)
            if destination and destination not in allowed:
                found.append(f"{module} line {line} imports {target} "
                             f"({source}/ may import {', '.join(sorted(allowed - {source}))})")
    return found


#: What the course's own Python may import of the grader: the check engine.
COURSE_MAY_IMPORT = ("autograder.checks",)
_REFERENCE = re.compile(r"^(?:coursedata|solutions|course)(?:\.\w+)+:\w+$")


def notebook_references(notebook: Path) -> set[str]:
    """Every ``"package.module:function"`` string in ``notebook``'s cell metadata."""
    found: set[str] = set()

    def walk(value) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(key)
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, str) and _REFERENCE.match(value):
            found.add(value)

    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        walk(cell.get("metadata", {}))
    return found


def unresolved(reference: str, root: Path) -> str | None:
    """Why ``reference`` names no function defined in a file under ``root``, or None."""
    module, _, name = reference.partition(":")
    path = root.joinpath(*module.split("."))
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    if not path.is_file():
        return f"{reference}: no file {path.relative_to(root)}"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
                if isinstance(t, ast.Name)}
    defined |= {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom)
                for a in n.names}
    return None if name in defined else f"{reference}: {path.relative_to(root)} defines no {name}"


# ------------------------------------------------------------------------------------------------
# The rules, on the project


@pytest.fixture(scope="module")
def graph():
    return import_graph(ROOT, "autograder")


def test_the_checker_sees_the_grader(graph):
    """The graph is the grader's: its modules and edges every reader knows are there."""
    assert {"autograder.__main__", "autograder.run.batch", "autograder.sandbox.warm",
            "autograder.grades.summary", "autograder.exports.canvas",
            "autograder.commands.grade", "autograder.pages.style"} <= set(graph)
    assert "autograder.grades.summary" in graph["autograder.exports.canvas"]
    assert "autograder.run.batch" in graph["autograder.commands.grade"]  # an import in a function


def test_no_import_cycle_between_modules(graph):
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(_describe(c, graph) for c in found)


def test_no_import_runs_back_up(graph):
    units = unit_graph(graph, "autograder")
    found = cycles(units)
    assert not found, ("imports that run back up (each subpackage as one unit):\n"
                       + "\n".join(_describe(c, units) for c in found))


def test_each_stage_imports_only_the_stages_before_it(graph):
    found = folder_violations(graph, "autograder", MAY_IMPORT, SHARED)
    assert not found, "imports across the stages that MAY_IMPORT does not allow:\n" + \
        "\n".join(found)


def test_the_stages_in_the_rules_are_the_folders_on_disk():
    folders = {p.parent.name for p in (ROOT / "autograder").glob("*/__init__.py")}
    assert folders == set(MAY_IMPORT)
    top = {p.stem for p in (ROOT / "autograder").glob("*.py")}
    assert top == {"__init__", "__main__", *SHARED}, "a module at the top level of autograder/"


@pytest.mark.parametrize("importer, imported", [
    ("autograder.exports", "autograder.pages.feedback"),
    ("autograder.exports", "autograder.commands"),
    ("autograder.grades", "autograder.exports"),
    ("autograder.grades", "autograder.pages"),
    ("autograder.pages.style", "autograder.grades"),
])
def test_layers(graph, importer, imported):
    assert not forbidden(graph, importer, imported)


def test_no_library_module_imports_the_command_lines(graph):
    library = {m: e for m, e in graph.items()
               if not (m == "autograder.__main__" or m.startswith("autograder.commands"))}
    assert not forbidden(library, "autograder", "autograder.commands")
    assert not forbidden(library, "autograder", "autograder.__main__")


#: What the sandbox may import besides itself: the grader's defaults and the status words (a
#: leaf module: an execution's outcome is a Status), nothing of the course or the grading.
SANDBOX_MAY_IMPORT = ("autograder.settings", "autograder.status")


def test_the_sandbox_knows_nothing_of_the_course(graph):
    sandbox = {m: e for m, e in graph.items() if m.startswith("autograder.sandbox")}
    outside = [f"{m} imports {t}" for m, edges in sorted(sandbox.items()) for t in edges
               if not t.startswith("autograder.sandbox") and t not in SANDBOX_MAY_IMPORT]
    assert not outside


def test_the_status_words_import_nothing_of_the_grader(graph):
    assert not graph["autograder.status"]
    assert not import_graph(ROOT, "coursedata")["coursedata.naming"]


def test_one_module_reads_the_test_cells_names():
    """``<question>_visible`` / ``<question>_hidden`` is read by :mod:`coursedata.naming` alone:
    no other module of the grader or of the student's kit spells the suffixes in its code
    (docstrings and messages may)."""
    found = []
    for path in sorted([*(ROOT / "autograder").rglob("*.py"), *(ROOT / "coursedata").rglob("*.py")]):
        if path.name == "naming.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("endswith", "removesuffix", "rpartition") and \
                    any(isinstance(a, ast.Constant) and a.value in ("_visible", "_hidden", "_")
                        for a in node.args):
                found.append(f"{path.relative_to(ROOT)} line {node.lineno}")
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and \
                    "(visible|hidden)" in node.value:
                found.append(f"{path.relative_to(ROOT)} line {node.lineno}")
    assert not found


def test_the_course_code_imports_only_the_check_engine():
    course = [p for sub in ("checks", "honest") for p in sorted((ROOT / "course" / sub).glob("*.py"))]
    found = [f"{p.relative_to(ROOT)} line {line} imports {name}"
             for p in course for name, line in imported_names(p, p.stem, False)
             if name.split(".")[0] == "autograder" and not name.startswith(COURSE_MAY_IMPORT)]
    assert not found


def test_every_reference_of_a_problem_set_names_a_function_in_a_file():
    notebooks = sorted((ROOT / "course" / "source").glob("*/*.ipynb"))
    references = {r: nb for nb in notebooks for r in notebook_references(nb)}
    assert any(r.startswith("course.checks.") for r in references)  # the check sees them
    found = [f"{nb.name}: {why}" for r, nb in sorted(references.items())
             if (why := unresolved(r, ROOT))]
    assert not found


def test_the_book_does_not_import_the_grader():
    assert not foreign_imports(ROOT / "_ext", {"autograder"})


def test_the_site_settings_import_neither_the_grader_nor_the_book():
    book = {p.stem for p in (ROOT / "_ext").rglob("*.py")}
    assert not foreign_imports(ROOT / "coursesite", {"autograder", "sphinx", *book})


# ------------------------------------------------------------------------------------------------
# The checker, on made-up packages


def _package(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


#: The test folder of the web book, which is no package: what its tests read.
TESTS_OF_THE_BOOK = {"book": ("chapters", "_ext", "lite", "kit", "library")}
#: The project-wide tests at the top of ``tests/``.
PROJECT_WIDE = {"test_conventions.py", "test_layout.py", "test_leftovers.py"}


def misplaced_tests(tests: Path, root: Path) -> list[str]:
    """Test modules of ``tests`` outside a folder that mirrors one of ``root``'s folders."""
    found = []
    for module in sorted(tests.rglob("test_*.py")):
        folder = module.parent.relative_to(tests)
        if folder == Path("."):
            if module.name not in PROJECT_WIDE:
                found.append(f"{module.name}: in tests/ itself; put it in the folder it tests")
        elif folder.parts[0] in TESTS_OF_THE_BOOK:
            continue
        elif not (root / folder).is_dir():
            found.append(f"{folder / module.name}: {folder}/ is no folder of the project")
    return found


def test_the_tests_mirror_the_packages():
    assert misplaced_tests(ROOT / "tests", ROOT) == []
    for folder, reads in TESTS_OF_THE_BOOK.items():
        assert all((ROOT / r).is_dir() for r in reads), (folder, reads)


def test_the_checker_finds_a_misplaced_test(tmp_path):
    (tmp_path / "autograder" / "intake").mkdir(parents=True)
    for name in ("autograder/intake/test_a.py", "autograder/exprots/test_b.py", "test_c.py",
                 "test_layout.py"):
        (tmp_path / "tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / name).write_text("")
    assert misplaced_tests(tmp_path / "tests", tmp_path) == [
        "autograder/exprots/test_b.py: autograder/exprots/ is no folder of the project",
        "test_c.py: in tests/ itself; put it in the folder it tests"]


def test_the_checker_finds_a_cycle_through_a_deferred_import(tmp_path):
    _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import f\n",
        "pkg/b.py": "def f():\n    from pkg import c\n",
        "pkg/c.py": "from . import a\n",
        "pkg/d.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n"
                    "from pkg.a import *\n"})
    graph = import_graph(tmp_path, "pkg")
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    assert graph["pkg.d"] == {"pkg.a": 4}, "an import under TYPE_CHECKING is no dependency"


def test_the_checker_finds_an_import_back_up_into_the_parent(tmp_path):
    """``pkg.sub.x`` imports ``pkg.top``, which imports ``pkg.sub.y``: no module cycle, but the
    subpackage runs back up into a module that imports it."""
    _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/top.py": "from pkg.sub.y import g\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/x.py": "import pkg.top\n",
        "pkg/sub/y.py": "def g(): pass\n",
        "pkg/low.py": "",
        "pkg/sub/z.py": "from pkg import low\n"})
    graph = import_graph(tmp_path, "pkg")
    assert cycles(graph) == []
    assert cycles(unit_graph(graph, "pkg")) == [["pkg.sub", "pkg.top", "pkg.sub"]]
    assert forbidden(graph, "pkg.sub", "pkg.top") == ["pkg.sub.x line 1 imports pkg.top"]


def test_the_checker_finds_the_book_importing_the_grader(tmp_path):
    _package(tmp_path, {"_ext/ext.py": "def setup(app):\n    from autograder.release import X\n",
                        "_ext/fine.py": "import autograderish\n"})
    assert foreign_imports(tmp_path / "_ext", {"autograder"}) == [
        "_ext/ext.py line 2 imports autograder.release.X"]


def test_the_checker_finds_an_import_from_a_later_stage(tmp_path):
    _package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/shared.py": "",
        "pkg/early/__init__.py": "",
        "pkg/early/a.py": "from pkg.late.b import g\nfrom pkg import shared\n",
        "pkg/late/__init__.py": "",
        "pkg/late/b.py": "from pkg.early import a\ndef g(): pass\n",
        "pkg/stray/__init__.py": "",
        "pkg/loose.py": "from pkg.late import b\n"})
    graph = import_graph(tmp_path, "pkg")
    found = folder_violations(graph, "pkg", {"early": set(), "late": {"early"}}, ("shared",))
    assert found == ["pkg.early.a line 1 imports pkg.late.b (early/ may import shared)",
                     "pkg.loose: not in a known folder (a new stage goes into MAY_IMPORT)",
                     "pkg.stray: not in a known folder (a new stage goes into MAY_IMPORT)"]


def test_the_checker_follows_a_reference_to_its_file(tmp_path):
    _package(tmp_path, {"course/checks/ps.py": "from x import y as z\ndef gen(): pass\nK = 1\n"})
    assert unresolved("course.checks.ps:gen", tmp_path) is None
    assert unresolved("course.checks.ps:z", tmp_path) is None
    assert unresolved("course.checks.ps:nope", tmp_path) == \
        "course.checks.ps:nope: course/checks/ps.py defines no nope"
    assert unresolved("course.checks.other:gen", tmp_path) == \
        "course.checks.other:gen: no file course/checks/other.py"
    nb = tmp_path / "nb.ipynb"
    nb.write_text(json.dumps({"cells": [{"metadata": {"course": {"check": {
        "reference": "solutions.mle:f", "cases": {"c": {"x": {"course.checks.ps:gen": {}}}},
        "outputs": ["not:a reference"]}}}}]}))
    assert notebook_references(nb) == {"solutions.mle:f", "course.checks.ps:gen"}
