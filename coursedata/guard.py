"""The problem set's rules, enforced inside the kernel that runs a notebook.

The grader (and the kit's check command) starts the kernel with this module as an IPython
extension (:data:`KERNEL_ARGUMENT`) and the rules in the environment variable :data:`ENV`
(:func:`kernel_config`). Before the first cell runs, :func:`load_ipython_extension`:

1. takes every module the rules forbid out of ``sys.modules`` and out of its parent package's
   attributes (``scipy.stats`` from ``scipy``): a kernel forked from the grader's warm zygote, or
   one where the kit has run, has them loaded, and nothing of the student's may find them there;
2. puts a finder first on ``sys.meta_path`` that refuses to import a forbidden module for the
   student's code, raising :class:`ForbiddenModule` (an ``ImportError``) whose message states the
   rule, while the course's own code (the kit, the tests, the libraries) imports what it needs;
3. adds an audit hook (``sys.addaudithook``, which nothing can remove) that refuses the same
   imports again should the finder be taken off ``sys.meta_path`` (and puts it back), and refuses
   to run a forbidden module's own code for the student however it was found (a loader called
   by hand, ``importlib`` past the finder);
4. learns which code is whose: every cell IPython compiles is matched by its text against the
   course's cells (trusted) and the answer cells (their question's rules apply); any other code
   (added cells, text run with ``exec``, a file written on the fly) is the student's. Since this
   is read from a code object's file name, the audit hook also refuses (:class:`ForgedCode`,
   logged as tampering) the student's code making code under the name of trusted code:
   ``compile(source, numpy.__file__, ...)``, ``f.__code__.replace(co_filename=...)``,
   ``types.CodeType(...)`` or a loader of its own that claims a library's file
   (:meth:`Guard.forged`).

Every refusal is appended, as one JSON line, to the log named in the configuration (the grader's
results folder), with the question, the student's functions on the stack and the recorded case
being computed, so the grader can give that function's cells no points. A determined student can
defeat code running in the same process; what they must write to do so is what
:mod:`coursedata.reading` flags for a person.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import json
import os
import sys
import time
from types import FrameType

from coursedata.rules import Rules

__all__ = ["ENV", "KERNEL_ARGUMENT", "ForbiddenModule", "ForgedCode", "Guard", "kernel_config",
           "load_ipython_extension", "read_log"]

#: The environment variable that carries the configuration (:func:`kernel_config`).
ENV = "COURSE_RULES"
#: The kernel's command-line argument that loads this module as an IPython extension.
KERNEL_ARGUMENT = "--IPKernelApp.extra_extensions=coursedata.guard"
_TRUSTED = object()
_IMPORTLIB = os.path.dirname(importlib.__file__) + os.sep
# importlib.util's file, or its name when the interpreter runs it frozen
_UTIL = (os.path.join(os.path.dirname(importlib.__file__), "util.py"), "<frozen importlib.util>")
#: The endings of a module's code: an extension module's (longest first), source, bytecode.
_CODE = tuple(sorted(importlib.machinery.all_suffixes(), key=len, reverse=True))
_MACHINERY = ("<frozen importlib", "<frozen zipimport", _IMPORTLIB,
              os.path.join(os.path.dirname(os.__file__), "runpy.py"),
              os.path.join(os.path.dirname(os.__file__), "pkgutil.py"))


class ForgedCode(PermissionError):
    """The student's code made code that claims the file name of trusted code (a library's
    file, a course cell), which would make the guard take it for trusted code."""


class ForbiddenModule(ModuleNotFoundError):
    """The student's code imported a module that the problem set's rules forbid (for that code,
    the module is not there: ``except ImportError`` catches it)."""


def digest(source: str) -> str:
    """How the guard knows a cell: the SHA-256 of its text."""
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def kernel_config(rules: Rules, trusted: list[str], answers: dict[str, str],
                  log: str | None) -> dict[str, str]:
    """The environment that makes a kernel started with :data:`KERNEL_ARGUMENT` keep ``rules``.

    Parameters
    ----------
    rules : Rules
    trusted : list of str
        The text of every cell of the course's own (setup, tests, hidden cells, demonstrations).
    answers : dict
        ``{text of an answer cell: its grade_id}``.
    log : str or None
        The file refusals are appended to.
    """
    return {ENV: json.dumps({"rules": rules.to_dict(), "trusted": sorted(map(digest, trusted)),
                             "answers": {digest(s): q for s, q in answers.items()},
                             "log": log})}


def read_log(path, limit: int = 2**20) -> list[dict]:
    """The entries of a guard's log, from its first ``limit`` bytes (lines that are not JSON
    objects are skipped: the kernel's code can write there too)."""
    out = []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f.read(limit).splitlines():
                try:
                    entry = json.loads(line)
                except (ValueError, RecursionError):  # not JSON, or nested past reading
                    continue
                if isinstance(entry, dict):
                    out.append(entry)
    except OSError:
        pass
    return out


class _Restore(importlib.abc.Loader):
    """Gives back a module the guard took out of ``sys.modules`` (to the course's own code)."""

    def __init__(self, module):
        self.module, self.spec = module, getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec
        if self.spec is not None:
            module.__loader__ = self.spec.loader


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, guard: Guard):
        self.guard = guard

    def find_spec(self, name, path=None, target=None):
        guard = self.guard
        if not guard.touches(name) or guard.is_query():
            return None
        guard.check_import(name, "import")
        module = guard.store.pop(name, None)
        if module is None:
            return None
        spec = importlib.machinery.ModuleSpec(name, _Restore(module),
                                              is_package=hasattr(module, "__path__"))
        if hasattr(module, "__path__"):
            spec.submodule_search_locations = list(module.__path__)
        return spec


class Guard:
    """The rules of one problem set in one kernel (see the module docstring)."""

    def __init__(self, rules: Rules, trusted=(), answers=None, log: str | None = None):
        self.rules = rules
        self.every = rules.every_forbidden()
        self.trusted = frozenset(trusted)
        self.answers = dict(answers or {})
        self.log_path = log
        self.cells: dict[str, object] = {}  # compiled cell name -> _TRUSTED or its question
        self.store: dict[str, object] = {}
        self.finder = _Finder(self)
        here = os.path.dirname(os.path.abspath(__file__))
        # The interpreter's prefixes, and every package folder on the path (a virtual
        # environment's .pth may name another environment's site-packages): read-only to the
        # student's code in the sandbox.
        sites = {p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages")}
        prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix, here, *sites}
        self.library = tuple(os.path.join(p, "") for p in prefixes)
        self._policies: dict = {}
        self._count = -1
        self._places: tuple[str, ...] = ()
        self._exact = frozenset(self.every)
        self._inside = tuple(f"{entry}." for entry in self.every)
        self._grading = os.path.join(here, "grading.py")

    # -- who is asking ------------------------------------------------------------------------
    def policy(self, question: str):
        if question not in self._policies:
            self._policies[question] = self.rules.policy(question or None)
        return self._policies[question]

    def touches(self, name: str) -> bool:
        """Whether ``name`` is, or lies inside, something forbidden somewhere."""
        return name in self._exact or name.startswith(self._inside)

    def classify(self, filename: str):
        """``_TRUSTED`` for the course's code and the libraries, else the question whose rules
        apply to the student's code there (``""``: the problem set's)."""
        known = self.cells.get(filename)
        if known is not None:
            return known
        if filename.startswith(self.library) or filename.startswith("<frozen"):
            return _TRUSTED
        return ""

    def classify_source(self, source: str):
        key = digest(source)
        if key in self.trusted:
            return _TRUSTED
        return self.answers.get(key, "")

    def requester(self, frame):
        """The frame that asked for an import and whose it is, seen from ``frame`` outward:
        the import machinery and a package's lazy ``__getattr__`` only pass the request on."""
        while frame is not None:
            code = frame.f_code
            name = code.co_filename
            if name.startswith(_MACHINERY) or (
                    code.co_name == "__getattr__" and name.endswith("__init__.py")
                    and "__path__" in frame.f_globals):
                frame = frame.f_back
                continue
            return frame, self.classify(name)
        return None, _TRUSTED

    def is_query(self) -> bool:
        """Whether the finder was asked by ``importlib.util.find_spec``: a question, which
        loads nothing (loading the module's code afterwards is refused by the audit hook)."""
        frame: FrameType | None = sys._getframe(2)
        while frame is not None and \
                frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            frame = frame.f_back
        return frame is not None and frame.f_code.co_name == "find_spec" and \
            frame.f_code.co_filename in _UTIL

    # -- refusing -------------------------------------------------------------------------------
    def student_below(self, frame: FrameType | None):
        """The innermost frame of the student's code from ``frame`` outward and whose it is,
        when no import is under way (an import's files are the import checks' business), else
        ``(None, _TRUSTED)``.

        A forbidden module's compiled or source file read or mapped on the student's behalf
        (``shutil.copy``, ``ctypes.CDLL``: the standard library's code, itself trusted) is the
        student's request, wherever the call went through."""
        found = None
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(_MACHINERY):
                return None, _TRUSTED
            if found is None and self.classify(name) is not _TRUSTED:
                found = frame
            frame = frame.f_back
        return (found, self.classify(found.f_code.co_filename)) if found else (None, _TRUSTED)

    def forbidden_code(self, path) -> str | None:
        """The module whose code ``path`` is (followed through any link), where it is a
        forbidden module's (:meth:`_locate`), else None."""
        if not self._places or isinstance(path, int):
            return None
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError, OSError):
            return None
        if real.startswith(self._places) and real.endswith(_CODE):
            return _module_name(real)
        return None

    def check_import(self, name: str, route: str, asked=None) -> None:
        """Raise :class:`ForbiddenModule` if the student's code asks for ``name`` (``asked``:
        the frame that asks and whose it is, default :meth:`requester`)."""
        frame, whose = asked or self.requester(sys._getframe(2))
        if whose is _TRUSTED:
            return
        policy = self.policy(whose)
        entry = policy.forbidding(name)
        if entry is None:
            return
        functions, case, outer = [], None, frame
        while outer is not None:
            if self.classify(outer.f_code.co_filename) is not _TRUSTED and \
                    outer.f_code.co_name != "<module>":
                functions.append(outer.f_code.co_name)
            if outer.f_code.co_name == "record" and outer.f_code.co_filename == self._grading:
                case = outer.f_locals.get("case")
            outer = outer.f_back
        self.log({"event": "refused", "module": name, "entry": entry, "route": route,
                  "question": whose or None, "functions": functions,
                  "case": case if isinstance(case, str) else None, "line": frame.f_lineno})
        raise ForbiddenModule(
            f"{name} may not be used in the answers of this problem set: {entry} is not allowed. "
            f"The rule: “{policy.statement}”", name=name)

    def log(self, entry: dict) -> None:
        if not self.log_path:
            return
        entry = {**entry, "time": time.time()}
        try:
            with open(self.log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        except OSError:
            pass

    # -- installing -----------------------------------------------------------------------------
    def purge(self) -> list[str]:
        """Take every forbidden module out of ``sys.modules`` and its parent's attributes."""
        taken = {name: module for name, module in list(sys.modules.items())
                 if self.touches(name)}
        for name, module in taken.items():
            sys.modules.pop(name, None)
            parent, _, child = name.rpartition(".")
            holder = sys.modules.get(parent)
            if holder is not None and getattr(holder, child, None) is module:
                try:
                    delattr(holder, child)
                except (AttributeError, TypeError):
                    pass
        self.store.update(taken)
        self._count = len(sys.modules)
        return sorted(taken)

    def ensure_first(self) -> None:
        """Keep the finder first on ``sys.meta_path`` (noting it when code took it away)."""
        if not sys.meta_path or sys.meta_path[0] is not self.finder:
            present = self.finder in sys.meta_path
            while self.finder in sys.meta_path:
                sys.meta_path.remove(self.finder)
            sys.meta_path.insert(0, self.finder)
            if not present:
                self.log({"event": "tampered", "what": "the guard's finder was removed from "
                                                      "sys.meta_path"})

    def refresh(self) -> None:
        """Before and after each cell: the finder first, and whatever the course's code imported
        meanwhile taken away (the course's code only adds modules, so an unchanged count is
        taken to mean nothing new)."""
        self.ensure_first()
        if len(sys.modules) != self._count:
            self.purge()

    def _locate(self) -> None:
        """The files of every forbidden module (found without importing anything), so that
        running their code is recognised however the module was loaded."""
        from importlib.machinery import PathFinder

        places = []
        for entry in self.every:
            module = self.store.get(entry) or sys.modules.get(entry)
            path = getattr(module, "__file__", None) if module is not None else None
            if path is None:
                top, *rest = entry.split(".")
                try:
                    spec = PathFinder.find_spec(top)
                except (ImportError, ValueError):
                    spec = None
                if spec is None or not spec.origin:
                    continue
                path = os.path.join(os.path.dirname(spec.origin), *rest)
                places += [path + os.sep, path + ".py"]
                continue
            places.append(os.path.dirname(path) + os.sep if path.endswith("__init__.py")
                          else path)
        self._places = tuple(places)

    def forged(self, filename, source) -> str | None:
        """Why code being made (``compile`` of ``source``, or a code object built or
        ``replace``-d) under the name ``filename`` is a forgery, or None.

        Whose code is whose is read from its file name (:meth:`classify`), so the student's
        code may not make code that claims the name of trusted code (a library's file, a
        course cell). The import machinery compiles a library's source under its file's name:
        that is genuine when the file holds that very source."""
        try:
            name = os.fsdecode(filename)
        except TypeError:
            return None
        if self.classify(name) is not _TRUSTED or name.startswith("<frozen"):
            return None
        caller = sys._getframe(2)  # forged <- _audit <- the code calling compile, replace...
        if caller.f_code.co_filename.startswith(_MACHINERY):
            if source is not None and _holds(name, source):
                return None
        elif self.classify(caller.f_code.co_filename) is _TRUSTED:
            return None
        return f"the student's code claimed the file {name} (line {caller.f_lineno})"

    def _audit(self, event: str, args) -> None:
        if event in ("compile", "code.__new__"):
            why = self.forged(args[1], args[0] if event == "compile" else None) \
                if len(args) > 1 else None
            if why is not None:
                self.log({"event": "tampered", "what": why})
                raise ForgedCode(f"{why}: code may not pretend to be another file's")
            return
        if event == "exec":
            # A module's code run on the student's request, however it was found (e.g. a
            # loader called by hand, past sys.meta_path).
            code = args[0] if args else None
            name = getattr(code, "co_filename", "")
            if self._places and name.startswith(self._places) and \
                    getattr(code, "co_name", None) == "<module>":
                self.check_import(_module_name(name), "module code run by hand")
            return
        if event in ("open", "ctypes.dlopen"):
            # a forbidden module's code copied, linked to or loaded by hand
            module = self.forbidden_code(args[0]) if args else None
            if module is not None:
                self.check_import(module, "its file read or loaded by hand",
                                  self.student_below(sys._getframe(1)))
            return
        if event != "import":
            return
        self.ensure_first()
        name = args[0]
        if isinstance(name, str) and self.touches(name):
            self.check_import(name, "import statement")
        elif len(args) > 1 and (module := self.forbidden_code(args[1])) is not None:
            # a forbidden module's compiled code loaded under another name
            self.check_import(module, f"its file loaded as {name}")

    def install(self, shell=None) -> None:
        purged = self.purge()
        self._locate()
        sys.meta_path.insert(0, self.finder)
        sys.addaudithook(self._audit)
        if shell is not None:
            compiler = shell.compile
            cache = compiler.cache

            def cache_and_classify(transformed_code, number=0, raw_code=None):
                name = cache(transformed_code, number, raw_code)
                self.cells[name] = self.classify_source(
                    raw_code if raw_code is not None else transformed_code)
                return name

            compiler.cache = cache_and_classify
            # What the course's code imported in a cell is taken away again before the next.
            shell.events.register("pre_run_cell", lambda *_: self.refresh())
            shell.events.register("post_run_cell", lambda *_: self.refresh())
        self.log({"event": "installed", "purged": purged})


def _holds(path: str, source) -> bool:
    """Whether the file ``path`` holds exactly ``source`` (text or bytes)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return False
    if isinstance(source, str):
        source = source.encode("utf-8")
    return isinstance(source, (bytes, bytearray, memoryview)) and data == bytes(source)


def _module_name(path: str) -> str:
    """A module's dotted name from its file below ``site-packages`` (for messages and rules)."""
    stem = next((path[: -len(s)] for s in _CODE if path.endswith(s)), path)
    for root in sorted(sys.path, key=len, reverse=True):
        if root and path.startswith(os.path.join(root, "")):
            parts = os.path.relpath(stem, root).split(os.sep)
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return path


def load_ipython_extension(shell) -> None:
    """Install the guard in this kernel when :data:`ENV` holds a configuration."""
    text = os.environ.get(ENV)
    if not text:
        return
    config = json.loads(text)
    Guard(Rules.from_dict(config["rules"]), config.get("trusted", ()), config.get("answers"),
          config.get("log")).install(shell)
