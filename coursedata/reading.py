"""A static reading of a student's answer cells against the problem set's rules.

:func:`read_cells` parses the cells (never runs them) and finds, for every function they define,
each use of a forbidden module or name (:mod:`coursedata.rules`) and each attempt to reach one in
a way a reading cannot resolve. It follows what a person reading the code would:

- imports anywhere (``import sklearn.decomposition as d``, ``from scipy import stats``), and the
  names they bind, at the top of any answer cell (used later inside a function) or inside it;
- attribute chains from an allowed module (``scipy.stats.gamma`` after ``import scipy``) and
  names assigned from a module or an object (``PCA = decomposition.PCA``);
- imports by name: ``importlib.import_module("sklearn")``, ``__import__("sklearn")``,
  ``sys.modules["sklearn"]``, ``getattr(scipy, "stats")``: a constant name is resolved, a computed
  one is an *attempt*;
- code run from text (``exec``, ``eval``, ``compile``): a constant is read as code, anything else
  is an attempt; so are ways around the grader's guard (``gc.get_objects``, ``sys._getframe``,
  ``sys.meta_path``, ``importlib.util``, shell commands, :mod:`coursedata.guard` itself);
- introspection, which reaches loaded modules with no import at all: an attribute such as
  ``__subclasses__``, ``__globals__``, ``__code__``, a frame's ``f_globals`` or
  ``f_back`` read on any object (:data:`_INTROSPECTION`), ``types.FunctionType`` and
  ``types.CodeType``, ``inspect.currentframe`` and ``__builtins__`` (also by subscript).

Comments and strings that merely mention a name count for nothing. A function *uses* what it uses
itself and what every function of the student it calls uses (:meth:`Reading.uses`); an import at
the top of a cell that the rules forbid stops that cell in the grading kernel, so it counts
against every function the cell defines after it.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass, field

from coursedata.rules import Policy, Rules, covers

__all__ = ["Finding", "Reading", "StudentCell", "read_cells"]

_MAGIC = re.compile(r"^(\s*)([%!].*)$")
_IPYTHON_RUNS = ("system", "getoutput", "run_line_magic", "run_cell_magic")
_COMPUTED_IMPORTS = {"importlib.import_module", "importlib.__import__", "builtins.__import__"}
#: Calls that reach objects or code a reading cannot follow: flagged for a person.
_SUSPECT_CALLS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._getframe",
                  "sys.setprofile", "sys.settrace", "sys.addaudithook", "importlib.reload",
                  "importlib.util.module_from_spec", "importlib.util.spec_from",
                  "importlib.util.LazyLoader", "importlib.machinery", "importlib._bootstrap", "subprocess",
                  "os.system", "os.popen", "os.exec", "os.spawn", "os.posix_spawn", "ctypes",
                  "inspect.getmodule", "runpy", "pkgutil", "zipimport", "pickle.loads",
                  "linecache", "inspect.currentframe", "inspect.stack", "inspect.trace",
                  "inspect.getouterframes", "inspect.getinnerframes", "sys._current_frames",
                  "sys.exception", "types.FunctionType", "types.LambdaType", "types.CodeType",
                  "types.FrameType", "types.ModuleType", "marshal.loads", "object.__subclasses__")
#: Attributes that lead from any object to others a reading cannot follow: the classes loaded
#: (``object.__subclasses__()``), a function's module namespace and code (``__globals__``,
#: ``__code__``: a forged file name), frames and their namespaces; read on anything, flagged.
_INTROSPECTION = frozenset({
    "__subclasses__", "__globals__", "__code__", "__closure__", "__builtins__", "__func__",
    "__self__", "__mro__", "__bases__", "__base__", "__init_subclass__",
    "func_globals", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame",
    "tb_next", "gi_frame", "cr_frame", "ag_frame", "co_filename", "co_code"})
#: Names whose very mention is a way around the guard.
_TAMPERING = ("sys.meta_path", "sys.path_hooks", "sys.modules", "builtins.__import__",
              "coursedata.guard", "coursedata.rules", "coursedata.reading")


@dataclass(frozen=True)
class StudentCell:
    """A cell of student code: a ``label`` for messages, its source, and the answer cell's
    ``grade_id`` whose rules apply (None: the problem set's, for a cell the student added)."""

    label: str
    source: str
    question: str | None = None


@dataclass(frozen=True)
class Finding:
    """One use of a forbidden name, or one attempt a reading cannot resolve.

    Attributes
    ----------
    cell : str
        The cell's label.
    line : int
        Line in the cell, from 1.
    function : str or None
        The top-level function (or class) that holds it; None at the top of the cell.
    name : str
        The dotted name reached, or what the code does (for an attempt).
    entry : str or None
        The ``forbid`` entry broken (None for an attempt).
    how : str
        In plain words: ``"imports sklearn.decomposition"``.
    code : str
        The line of code, shortened.
    """

    cell: str
    line: int
    function: str | None
    name: str
    entry: str | None
    how: str
    code: str

    @property
    def is_use(self) -> bool:
        return self.entry is not None

    def where(self) -> str:
        inside = f"in {self.function}, " if self.function else "at the top of "
        return f"{inside}cell {self.cell!r}, line {self.line}: {self.code}"


@dataclass
class Reading:
    """What :func:`read_cells` found.

    Attributes
    ----------
    findings : list of Finding
        In cell order.
    calls : dict
        ``{function: set of the student's functions it refers to}``.
    defined : dict
        ``{function: (cell label, line)}`` of each top-level function or class.
    cell_uses : dict
        ``{cell label: [top-level Finding, ...]}``: forbidden imports at the top of a cell.
    """

    findings: list[Finding] = field(default_factory=list)
    calls: dict[str, set[str]] = field(default_factory=dict)
    defined: dict[str, tuple[str, int]] = field(default_factory=dict)

    def own_uses(self, function: str) -> list[Finding]:
        """Uses inside ``function``, and forbidden imports above it at the top of its cell."""
        cell, line = self.defined.get(function, (None, 0))
        return [f for f in self.findings if f.is_use and (
            f.function == function or (f.function is None and f.cell == cell and f.line < line))]

    def uses(self, function: str) -> list[tuple[tuple[str, ...], Finding]]:
        """Every use ``function`` makes, with the chain of calls that leads to it.

        Returns
        -------
        list of (chain, Finding)
            ``chain`` starts with ``function`` and ends with the function holding the use.
        """
        out: list[tuple[tuple[str, ...], Finding]] = []
        seen = {function}
        stack: list[tuple[str, ...]] = [(function,)]
        while stack:
            chain = stack.pop(0)
            out += [(chain, f) for f in self.own_uses(chain[-1])]
            for callee in sorted(self.calls.get(chain[-1], ())):
                if callee not in seen:
                    seen.add(callee)
                    stack.append(chain + (callee,))
        return out

    @property
    def attempts(self) -> list[Finding]:
        return [f for f in self.findings if not f.is_use]


@functools.lru_cache(maxsize=1)
def _transformer():
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return None
    return TransformerManager()


def _python(source: str) -> tuple[str, list[tuple[int, str]]]:
    """The cell as Python, as IPython runs it (magics and shell commands become calls of
    ``get_ipython()``, read by :meth:`_Scope.visit_Call`), and the lines left out.

    Without IPython (it is always there where a kernel runs), magic and shell lines are blanked
    and returned for a plainer reading.
    """
    try:
        ast.parse(source)
        return source, []  # plain Python: IPython runs it as it is
    except SyntaxError:
        pass
    transformer = _transformer()
    if transformer is not None:
        try:
            return transformer.transform_cell(source), []
        except Exception:  # noqa: BLE001 - IPython's own error; the kernel reports it
            pass
    lines = source.splitlines()
    if lines and lines[0].lstrip().startswith("%%"):
        return "", list(enumerate(lines, 1))
    kept, magics = [], []
    for number, line in enumerate(lines, 1):
        match = _MAGIC.match(line)
        if match and not line.lstrip().startswith("%%"):
            kept.append(f"{match.group(1)}pass")
            magics.append((number, match.group(2)))
        else:
            kept.append(line)
    return "\n".join(kept), magics


def _constant(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _Scope(ast.NodeVisitor):
    """Reads one scope (a cell's top level, or a top-level function with everything inside)."""

    def __init__(self, reading: Reading, cell: StudentCell, policy: Policy, lines: list[str],
                 env: dict[str, str], functions: set[str], function: str | None):
        self.reading, self.cell, self.policy, self.lines = reading, cell, policy, lines
        self.env, self.functions, self.function = env, functions, function

    # -- recording -------------------------------------------------------------------------
    def _code(self, node) -> str:
        line = self.lines[node.lineno - 1].strip() if 0 < node.lineno <= len(self.lines) else ""
        return line if len(line) <= 120 else line[:117] + "..."

    def _add(self, node, name: str, entry: str | None, how: str) -> None:
        self.reading.findings.append(Finding(self.cell.label, node.lineno, self.function, name,
                                             entry, how, self._code(node)))

    def _check(self, node, name: str, how: str) -> bool:
        entry = self.policy.forbidding(name)
        if entry is not None:
            self._add(node, name, entry, how.format(name=name))
        return entry is not None

    # -- resolving names ---------------------------------------------------------------------
    def dotted(self, node) -> str | None:
        """The dotted name an expression stands for, when a reading can tell."""
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call):
            func = self._callee(node.func)
            if func in _COMPUTED_IMPORTS and node.args:
                return _constant(node.args[0])
            if func == "getattr" and len(node.args) >= 2:
                base, attr = self.dotted(node.args[0]), _constant(node.args[1])
                return f"{base}.{attr}" if base and attr else None
            if func in ("sys.modules.get",) and node.args:
                return _constant(node.args[0])
        if isinstance(node, ast.Subscript) and self.dotted(node.value) == "sys.modules":
            return _constant(node.slice)
        return None

    def _callee(self, func) -> str | None:
        if isinstance(func, ast.Name) and func.id not in self.env:
            return {"__import__": "builtins.__import__"}.get(func.id, func.id)
        return self.dotted(func)

    # -- bindings ----------------------------------------------------------------------------
    def bind(self, body: list) -> None:
        """Add the scope's imports and assignments of modules or objects to its names."""
        for node in (n for stmt in body for n in ast.walk(stmt)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.env[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        self.env[top] = top
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                for alias in node.names:
                    if alias.name != "*":
                        self.env[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                value = self.dotted(node.value)
                for target in targets:
                    if isinstance(target, ast.Name):
                        if value:
                            self.env[target.id] = value
                        elif self.function is not None:
                            self.env.pop(target.id, None)  # a local shadows the cell's name

    # -- visiting ------------------------------------------------------------------------------
    def visit_Import(self, node):
        for alias in node.names:
            self._check(node, alias.name, "imports {name}")

    def visit_ImportFrom(self, node):
        if node.level == 0 and node.module:
            for alias in node.names:
                name = node.module if alias.name == "*" else f"{node.module}.{alias.name}"
                if not self._check(node, node.module, "imports {name}"):
                    self._check(node, name, "imports {name}")

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            if self.function and node.id in self.functions and node.id != self.function:
                self.reading.calls.setdefault(self.function, set()).add(node.id)
            name = self.env.get(node.id)
            if name:
                self._check(node, name, "uses {name}")
            elif node.id == "__builtins__":
                self._add(node, "__builtins__", None, "reads __builtins__ (a way around imports)")

    def visit_Attribute(self, node):
        if node.attr in _INTROSPECTION:
            self._add(node, node.attr, None, f"reads {node.attr} (introspection: it can reach "
                                             f"modules and code a reading cannot follow)")
        name = self.dotted(node)
        if name is not None:
            if any(covers(t, name) for t in _TAMPERING):
                if not self._check(node, name, "uses {name}"):
                    self._add(node, name, None, f"uses {name} (a way around the grader's rules)")
                return
            if self._check(node, name, "uses {name}"):
                return
            base = name.rsplit(".", 1)[0]
            if node.attr.startswith("_") and not node.attr.startswith("__") and \
                    self.policy.reaches(base.split(".")[0]):
                self._add(node, name, None, f"reads the private {name} (it can lead to "
                                            f"{self.policy.reaches(base.split('.')[0])})")
                return
        self.generic_visit(node)

    def visit_Subscript(self, node):
        if self.dotted(node.value) == "sys.modules":
            key = _constant(node.slice)
            if key is None or not self._check(node, key, "takes {name} from sys.modules"):
                self._add(node, "sys.modules", None, "looks a module up in sys.modules")
            self.visit(node.slice)
            return
        self.generic_visit(node)

    def _shell(self, node) -> bool:
        """A magic or shell command (``!cmd``, ``%run``, ``%%bash``) that names a forbidden
        module: flagged, since it can run code no reading sees."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and func.attr in _IPYTHON_RUNS
                and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "get_ipython"):
            return False
        text = " ".join(a.value for a in node.args if isinstance(a, ast.Constant)
                        and isinstance(a.value, str))
        for entry in self.policy.forbidden:
            if re.search(rf"\b{re.escape(entry)}\b", text):
                self._add(node, text.strip()[:120], None, f"runs a shell or magic command "
                                                          f"that names {entry}")
                break
        return True

    def visit_Call(self, node):
        if self._shell(node):
            return
        func = self._callee(node.func)
        first = _constant(node.args[0]) if node.args else None
        if func in _COMPUTED_IMPORTS or func == "sys.modules.get":
            if first is None:
                self._add(node, func, None, f"calls {func} with a name computed at run time")
            else:
                self._check(node, first, "imports {name} by name")
        elif func == "getattr" and len(node.args) >= 2:
            base = self.dotted(node.args[0])
            attr = _constant(node.args[1])
            if attr in _INTROSPECTION:
                self._add(node, attr, None, f"reads {attr} through getattr (introspection: it "
                                            f"can reach modules and code a reading cannot "
                                            f"follow)")
            elif base and attr is not None:
                self._check(node, f"{base}.{attr}", "uses {name} (through getattr)")
            elif base and (self.policy.reaches(base.split(".")[0]) or
                           self.policy.forbidding(base)):
                self._add(node, base, None, f"reads an attribute of {base} whose name is "
                                            f"computed at run time")
        elif func in ("exec", "eval", "compile") and node.args:
            if first is not None:
                self._read_text(node, first)
            else:
                self._add(node, func, None, f"calls {func} on code built at run time")
        elif func is not None and any(covers(s, func) or func.startswith(s) for s in
                                      _SUSPECT_CALLS):
            self._add(node, func, None, f"calls {func} (it can reach modules a reading "
                                        f"cannot follow)")
        self.generic_visit(node)

    def _read_text(self, node, text: str) -> None:
        try:
            tree = ast.parse(text)
        except SyntaxError:
            return
        inner = _Scope(self.reading, self.cell, self.policy, self.lines, dict(self.env),
                       self.functions, self.function)
        inner.bind(tree.body)
        for sub in ast.walk(tree):  # every finding points at the line that runs the text
            if hasattr(sub, "lineno"):
                sub.lineno = node.lineno
        for stmt in tree.body:
            inner.visit(stmt)

    def visit_FunctionDef(self, node):  # a nested function: part of this scope
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_ClassDef = visit_FunctionDef


def read_cells(cells: list[StudentCell], rules: Rules, known=()) -> Reading:
    """Read the student's cells (in notebook order) against ``rules``; see the module docstring.

    Cells that do not parse are skipped (the grading kernel reports their syntax error).
    ``known`` names functions defined elsewhere whose calls :attr:`Reading.calls` records too.
    """
    reading = Reading()
    parsed = []
    env: dict[str, str] = {}
    for cell in cells:
        source, magics = _python(cell.source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        parsed.append((cell, tree, cell.source.splitlines(), magics))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                reading.defined[node.name] = (cell.label, node.lineno)
    functions = set(reading.defined) | set(known)
    # The names bound at the top of every cell: the kernel shares one namespace.
    top = _Scope(reading, StudentCell("", ""), rules.policy(), [], env, functions, None)
    for _, tree, _, _ in parsed:
        top.bind([n for n in tree.body
                  if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))])
    for cell, tree, lines, magics in parsed:
        policy = rules.policy(cell.question)
        for number, text in magics:
            for entry in policy.forbidden:
                if re.search(rf"\b{re.escape(entry)}\b", text):
                    reading.findings.append(Finding(cell.label, number, None, text.strip()[:120],
                                                    None, f"runs a shell or magic command that "
                                                          f"names {entry}", text.strip()[:120]))
                    break
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scope = _Scope(reading, cell, policy, lines, dict(env), functions, node.name)
                scope.bind(node.body)
                for part in (node.decorator_list + (node.body if not isinstance(node, ast.ClassDef)
                                                    else node.body)):
                    scope.visit(part)
                if not isinstance(node, ast.ClassDef):
                    for default in node.args.defaults + node.args.kw_defaults:
                        if default is not None:
                            scope.visit(default)
            else:
                _Scope(reading, cell, policy, lines, dict(env), functions, None).visit(node)
    return reading
