"""Builders of ps1_pca submissions for the autograder tests: honest, wrong and hostile notebooks.

Every builder starts from the student release (what ``nbgrader generate_assignment`` ships) and
changes it the way a student could: the "honest correct" answers are the reference solution
cells of the source notebook, without their ``### BEGIN/END SOLUTION`` marker lines. Builders
return notebook nodes; :func:`to_bytes` gives the file a student would upload.

Student ids contain no underscore, so the same submissions also fit an LMS file name
``<student>_<id>_ps1_pca.ipynb``.
"""

from __future__ import annotations

import copy
import json
import re

import nbformat

__all__ = ["Builder", "to_bytes", "cell", "replace", "insert_after", "delete", "strip_nbgrader",
           "WRONG_EIG", "WRONG_SVD", "PROBE_TAG"]

_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)

#: Plausible mistakes: the unbiased covariance (divisor N - 1) in one of the two PCA routes.
WRONG_EIG = ("pca_eig", "cov = Xc.T @ Xc / X.shape[0]", "cov = Xc.T @ Xc / (X.shape[0] - 1)")
WRONG_SVD = ("pca_svd", "return Ut[:k], s[:k] ** 2 / X.shape[0]",
             "return Ut[:k], s[:k] ** 2 / (X.shape[0] - 1)")

#: Prefix of the JSON lines the probes print, read back from the executed notebook.
PROBE_TAG = "PROBE "


def _gid(c) -> str | None:
    meta = c.get("metadata", {}).get("nbgrader", {})
    return meta.get("grade_id") if isinstance(meta, dict) else None


def cell(nb, grade_id: str):
    """The cell of ``nb`` whose nbgrader ``grade_id`` is ``grade_id`` (exactly one)."""
    found = [c for c in nb.cells if _gid(c) == grade_id]
    assert len(found) == 1, f"{len(found)} cells with grade_id {grade_id!r}"
    return found[0]


def replace(nb, grade_id: str, find: str, new: str):
    """Replace the one occurrence of ``find`` in a cell's source; returns ``nb``."""
    c = cell(nb, grade_id)
    assert c.source.count(find) == 1, f"{find!r} is not in {grade_id!r} exactly once"
    c.source = c.source.replace(find, new)
    return nb


def insert_after(nb, grade_id: str, source: str):
    """Add a student code cell (no nbgrader metadata) right after the cell ``grade_id``."""
    index = nb.cells.index(cell(nb, grade_id))
    nb.cells.insert(index + 1, nbformat.v4.new_code_cell(source))
    return nb


def delete(nb, grade_id: str):
    nb.cells.remove(cell(nb, grade_id))
    return nb


def strip_nbgrader(nb):
    """What some editors do: drop the nbgrader metadata of every cell (cell order unchanged)."""
    for c in nb.cells:
        c.metadata.pop("nbgrader", None)
    return nb


def to_bytes(nb) -> bytes:
    return nbformat.writes(nb).encode("utf-8")


class Builder:
    """Makes submissions from the source notebook (answers) and the student release (skeleton)."""

    def __init__(self, source_path, release_path):
        self.source = nbformat.read(source_path, as_version=4)
        self.release = nbformat.read(release_path, as_version=4)
        self.answers = {_gid(c): _MARKER.sub("", c.source) for c in self.source.cells
                        if c.get("metadata", {}).get("nbgrader", {}).get("solution")}

    def blank(self):
        """The release as handed out: every answer is the stub."""
        return copy.deepcopy(self.release)

    def correct(self):
        """The release with the reference answers typed in (and something in the written ones)."""
        nb = self.blank()
        for gid, text in self.answers.items():
            c = cell(nb, gid)
            c.source = text if c.cell_type == "code" else "My derivation, in words and LaTeX."
        return nb

    def wrong(self, mistake=WRONG_SVD):
        return replace(self.correct(), *mistake)

    def with_answer(self, grade_id: str, source: str, base=None):
        """``base`` (default: correct) with the answer cell ``grade_id`` replaced by ``source``."""
        nb = base if base is not None else self.correct()
        cell(nb, grade_id).source = source
        return nb

    def blank_answer(self, grade_id: str):
        """Correct, except the answer ``grade_id`` is left as released."""
        return self.with_answer(grade_id, cell(self.release, grade_id).source)


# --- hostile code -------------------------------------------------------------------------------

def probe_cell(name: str, body: str) -> str:
    """A cell that runs ``body`` (which fills the dict ``found``) and prints it as one JSON line."""
    return ("import json as _json\nfound = {}\n" + body +
            f"\nprint({PROBE_TAG!r} + _json.dumps({{'probe': {name!r}, **found}}))\n")


def snoop_cell(files: list[str], folders: list[str], modules: list[str]) -> str:
    """Try to read ``files``, list ``folders`` and import ``modules``; ``found`` holds what worked.

    ``SNOOPED`` is true if anything worked; the answers that follow then turn wrong, so a leak
    would show in the score as well as in the printed evidence.
    """
    body = (
        "import os, importlib, glob\n"
        f"for path in {files!r}:\n"
        "    try:\n"
        "        with open(path, 'rb') as f:\n"
        "            if f.read(64):\n"
        "                found['read:' + path] = True\n"
        "    except OSError:\n"
        "        pass\n"
        f"for folder in {folders!r}:\n"
        "    try:\n"
        "        names = [n for n in os.listdir(folder) if n != os.path.basename(os.getcwd())]\n"
        "    except OSError:\n"
        "        names = []\n"
        "    if names:\n"
        "        found['list:' + folder] = sorted(names)[:20]\n"
        "# its own scratch folders are there (its working folder's parent, the kernel's\n"
        "# socket folder); any other would be another execution's\n"
        "own = os.path.dirname(os.getcwd())\n"
        "for pattern in ['/tmp/grade-*', '/tmp/nbsbx-*']:\n"
        "    others = [p for p in glob.glob(pattern) if p != own]\n"
        "    if len(others) > (pattern == '/tmp/nbsbx-*'):\n"
        "        found['glob:' + pattern] = others[:20]\n"
        f"for module in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(module)\n"
        "        found['import:' + module] = True\n"
        "    except ImportError:\n"
        "        pass\n"
        "SNOOPED = bool(found)\n")
    return probe_cell("snoop", body)


def write_cell(targets: list[str]) -> str:
    """Try to create each of ``targets``; ``found['written']`` lists those that worked."""
    return probe_cell("write", (
        "written = []\n"
        f"for target in {targets!r}:\n"
        "    try:\n"
        "        with open(target, 'w') as f:\n"
        "            f.write('written by a student')\n"
        "        written.append(target)\n"
        "    except OSError:\n"
        "        pass\n"
        "found['written'] = written\n"))


def socket_cell(port: int) -> str:
    return probe_cell("socket", (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).close()\n"
        "    found['outcome'] = 'connected'\n"
        "except OSError as exc:\n"
        "    found['outcome'] = type(exc).__name__\n"))


FORK_LOOP = probe_cell("fork", (
    "import os, time\n"
    "children, error = [], None\n"
    "try:\n"
    "    for _ in range(200):\n"
    "        pid = os.fork()\n"
    "        if pid == 0:\n"
    "            time.sleep(20)\n"
    "            os._exit(0)\n"
    "        children.append(pid)\n"
    "except OSError as exc:\n"
    "    error = type(exc).__name__\n"
    "for pid in children:\n"
    "    os.kill(pid, 9)\n"
    "    os.waitpid(pid, 0)\n"
    "found.update(forked=len(children), error=error)\n"))

MONKEYPATCH = """\
import builtins
import numpy as np
import numpy.testing
np.isclose = lambda *args, **kwargs: np.True_
np.allclose = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None
builtins.AssertionError = type("X", (Exception,), {})
"""

BIG_ALLOCATION = "import numpy as np\nbig = np.ones(3 * 2**30, dtype=np.uint8)\n"

PRINT_50MB = "for _ in range(50):\n    print('x' * 1_000_000)\n"

# A loop that ignores the interrupt, at top level after every answer: the kernel must be killed.
STUCK_LOOP = ("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n"
              "while True:\n    pass\n")

LOOPING_BEST_RANK_K = '''\
def best_rank_k(X, k):
    """Never returns."""
    while True:
        pass
'''

CHEAT_IMPORT = """\
try:
    from solutions.pca import low_rank_approximation
    best_rank_k = low_rank_approximation
except ImportError as exc:
    print("import failed:", type(exc).__name__)
"""


def dumps_probe(found: dict) -> str:  # for messages in the tests
    return json.dumps(found, sort_keys=True)
