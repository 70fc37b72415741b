"""The instructor's commands as grading.md writes them, in an environment that is not activated.

``python -m autograder release`` with only the system's ``PATH`` (nbgrader needs ``alembic``
from the environment's ``bin/``), and ``python -m autograder formgrader`` started for real and
fetched over HTTP: the course's assignment listed, no exchange banner, and the Autograde button
answered with the command to use instead.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from autograder.settings import COURSE_DIR
from tests import ROOT

PS = "ps3_mle"
BARE_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}


#: Their users are slow (tests/conftest.py): a release by the command, then the formgrader.
SLOW_FIXTURES = ("course",)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the course, released with the command as written (venv not activated)."""
    root = tmp_path_factory.mktemp("course")
    shutil.copy(COURSE_DIR / "nbgrader_config.py", root)
    shutil.copytree(COURSE_DIR / "source", root / "source")
    shutil.copytree(COURSE_DIR / "checks", root / "checks")
    done = subprocess.run([sys.executable, "-m", "autograder", "release", PS,
                           "--course", str(root)], cwd=ROOT, env=BARE_ENV,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{PS}: released to {root / 'release' / PS}" in done.stdout
    return root


def test_release_works_without_the_environment_on_path(course):
    assert (course / "release" / PS / f"{PS}.ipynb").is_file()
    assert (course / "gradebook.db").is_file()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(url: str, method: str = "GET", token: str = "", body: bytes | None = None):
    request = urllib.request.Request(url, data=body, method=method,
                                     headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode()


@pytest.fixture(scope="module")
def formgrader(course):
    port, token = _free_port(), "t0ken-for-the-test"
    server = subprocess.Popen([sys.executable, "-m", "autograder", "formgrader", "--course",
                               str(course), "--port", str(port), "--token", token],
                              cwd=ROOT, env=BARE_ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                _request(f"{base}/api/status", token=token)
                break
            except (urllib.error.URLError, ConnectionError):
                if server.poll() is not None or time.monotonic() > deadline:
                    server.kill()
                    pytest.fail(f"the formgrader did not start:\n{server.stdout.read()}")
                time.sleep(0.5)
        yield base, token
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def test_the_formgrader_shows_the_course_without_an_exchange_banner(formgrader, course):
    base, token = formgrader
    status, page = _request(f"{base}/formgrader/manage_assignments", token=token)
    assert status == 200
    assert "does not exist" not in page and "warning-exchange" not in page
    assert "warning-course-id" not in page
    status, listing = _request(f"{base}/formgrader/api/assignments", token=token)
    assert PS in [a["name"] for a in json.loads(listing)]
    assert (course / "exchange").is_dir()


def test_the_autograde_button_names_our_command(formgrader, course):
    base, token = formgrader
    status, answer = _request(f"{base}/formgrader/api/submission/{PS}/alice/autograde",
                              method="POST", token=token, body=b"")
    result = json.loads(answer)
    assert status == 200 and result["success"] is False
    assert "python -m autograder grade" in result["error"]
    assert not (course / "autograded").exists()  # nothing ran, nothing was deleted
