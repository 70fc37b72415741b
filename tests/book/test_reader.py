"""A reader's machine: a clean virtual environment with only the site's wheels runs every chapter.

The environment gets the two wheels the built site publishes (the student kit and the book's
library) and what they declare, nothing of this repository; each chapter's notebook, downloaded
from the built site as a reader gets it, then runs end to end in that environment's kernel, in a
folder outside the repository. The environment is cached under ``_build/reader-venv/`` by the
wheels' and the pins' hash, so only the first run pays for the install.
"""

from __future__ import annotations

import fcntl
import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT
from tests.book.test_kit import clean_env

VENVS = ROOT / "_build" / "reader-venv"
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.md"))

_RUN = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False).execute()
errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
          if o.get("output_type") == "error"]
assert not errors, errors
print(sum(c.cell_type == "code" for c in nb.cells), "cells ran")
"""


def _site_wheels(html: Path) -> list[Path]:
    wheels = sorted((html / "kit").glob("*.whl")) + sorted((html / "library").glob("*.whl"))
    assert len(wheels) == 2, wheels
    return wheels


@pytest.fixture(scope="module")
def reader_venv(html) -> Path:
    """A venv with the site's kit and library wheels and their declared dependencies only."""
    wheels = _site_wheels(html)
    key = hashlib.sha256(b"".join(w.read_bytes() for w in wheels)
                         + (ROOT / "requirements.txt").read_bytes()
                         + sys.version.encode()).hexdigest()[:16]
    VENVS.mkdir(parents=True, exist_ok=True)
    venv = VENVS / key
    with open(VENVS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").is_file():
            for old in VENVS.iterdir():
                if old.is_dir():
                    shutil.rmtree(old)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                           env=clean_env())
            py = str(venv / "bin" / "python")
            # One pip install of the two wheels, as the page "Running the chapters" says; the
            # pins of requirements.txt as constraints give the tested combination.
            done = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-compile",
                                   "--disable-pip-version-check", "-c",
                                   str(ROOT / "requirements.txt"), *map(str, wheels)],
                                  env=clean_env(), capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr
            subprocess.run([py, "-m", "ipykernel", "install", "--sys-prefix", "--name",
                            "python3"], check=True, env=clean_env(venv), capture_output=True)
            (venv / ".complete").write_text("\n".join(w.name for w in wheels))
    return venv


def test_reader_environment_has_the_library_from_the_site_only(reader_venv):
    py = str(reader_venv / "bin" / "python")
    done = subprocess.run([py, "-c", "import solutions, coursedata, numba; "
                           "print(solutions.__file__)"], env=clean_env(reader_venv),
                          capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(reader_venv)
    listed = subprocess.run([py, "-m", "pip", "list", "--format=freeze"],
                            env=clean_env(reader_venv), capture_output=True, text=True)
    assert "mfpm-book==" in listed.stdout and "mfpm-course" not in listed.stdout


@pytest.mark.slow
@pytest.mark.parametrize("name", CHAPTERS)
def test_downloaded_chapter_runs_end_to_end(html, reader_venv, tmp_path, name):
    notebook = tmp_path / f"{name}.ipynb"
    shutil.copyfile(html / "notebooks" / "chapters" / f"{name}.ipynb", notebook)
    env = {**clean_env(reader_venv), "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([str(reader_venv / "bin" / "python"), "-c", _RUN, str(notebook)],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    assert "cells ran" in done.stdout
