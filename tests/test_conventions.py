"""The conventions a maintainer relies on, run with the tests: the linter, the formatter, the type
checker (each configured in ``pyproject.toml``, pinned in ``requirements.txt``) and the examples in
the docstrings of the reference package.

- ruff's lint rules hold on every Python file of the repository (``[tool.ruff.lint]``);
- ruff's formatter has nothing to change where the layout is the formatter's (the paths of
  :data:`FORMATTED`; the rest keeps its hand-aligned layout for now);
- mypy finds no error in the paths of ``[tool.mypy] files`` (slow: a cold run takes a minute);
- every ``>>>`` example of ``solutions/`` (and of the grader's modules that have them) runs and
  prints what it says.
"""

from __future__ import annotations

import doctest
import importlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

#: Where the formatter's layout is the rule.
FORMATTED = ["autograder", "course/checks", "coursesite", "tests/test_conventions.py"]


def _tool(name: str) -> str:
    path = BIN / name
    if path.exists():
        return str(path)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: it is pinned in requirements.txt (make setup)")
    return found


def _run(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_ruff_finds_nothing():
    done = _run(_tool("ruff"), "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_formatted_paths_stay_formatted():
    done = _run(_tool("ruff"), "format", "--check", "--no-cache", *FORMATTED)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.slow
def test_mypy_finds_nothing():
    done = _run(_tool("mypy"), "--no-incremental", timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr


def _modules_with_examples() -> list[str]:
    names = []
    for folder in ("solutions", "autograder"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if ">>> " in path.read_text(encoding="utf-8"):
                parts = path.relative_to(ROOT).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_reference_package_has_examples():
    assert sum(m.startswith("solutions") for m in MODULES) >= 10


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, result
