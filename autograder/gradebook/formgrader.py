"""Open nbgrader's formgrader on this course: ``python -m autograder formgrader``.

The formgrader is a Jupyter server extension that reads ``nbgrader_config.py`` from the folder
the server starts in and serves the course below its root. The command
(:mod:`autograder.commands.formgrader`) becomes ``jupyter server`` (it replaces its own process,
so a signal that stops the command stops the server) (this environment's, whether or not it is
activated) in the course folder
(:data:`autograder.settings.COURSE_DIR`, or ``--course``), with that folder as the server's root
and the environment's ``bin/`` first on ``PATH`` (nbgrader runs ``alembic`` from there), and
prints the address of ``/formgrader``. The course's exchange folder (``course/exchange``,
configured in ``nbgrader_config.py``) is created first, so the formgrader shows no "exchange
directory does not exist" banner.

The formgrader's "Autograde" button would run plain ``nbgrader autograde``, unsandboxed and with
nbgrader's scoring, which this course replaces (and which fails on its notebooks). The server
also loads this module as an extension that answers that button, and its REST endpoint
``POST /formgrader/api/submission/<assignment>/<student>/autograde``, with a failure that names
the command to run instead (nothing is deleted or graded). Hand-grading, comments and the
gradebook views work as in nbgrader: a score given in the formgrader is stored as the cell's
``Grade.manual_score``, which ``python -m autograder export`` merges into ``grades.csv`` and the
exports.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from autograder.settings import COURSE_DIR

__all__ = ["server_command", "AUTOGRADE_MESSAGE"]

AUTOGRADE_MESSAGE = (
    "This course is not graded by nbgrader's autograde: its notebooks are graded in a sandbox "
    "by `python -m autograder grade PROBLEM_SET SUBMISSIONS --out DIR --gradebook` (see the "
    'book\'s page "Grading a class", grading.md). Grade written answers here; then run '
    "`python -m autograder export PROBLEM_SET --out DIR`."
)
_AUTOGRADE_ROUTE = r"/formgrader/api/submission/([^/]+)/([^/]+)/autograde"


def server_command(
    course: Path = COURSE_DIR,
    port: int = 8899,
    token: str | None = None,
    open_browser: bool = False,
) -> tuple[list[str], dict]:
    """The ``jupyter server`` command line and environment that serve the formgrader."""
    course = Path(course).resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise ValueError(f"{course} is not an nbgrader course (it has no nbgrader_config.py)")
    (course / "exchange").mkdir(exist_ok=True)
    bin_dir = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        f"--ServerApp.root_dir={course}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.jpserver_extensions=nbgrader.server_extensions.formgrader=True",
        "--ServerApp.jpserver_extensions=autograder.gradebook.formgrader=True",
        f"--ServerApp.open_browser={open_browser}",
        "--ServerApp.default_url=/formgrader",
    ]
    if token is not None:
        command.append(f"--IdentityProvider.token={token}")
    if os.geteuid() == 0:
        command.append("--allow-root")
    return command, env


def _jupyter_server_extension_points():
    return [{"module": "autograder.gradebook.formgrader"}]


def _load_jupyter_server_extension(serverapp) -> None:
    """Answer the formgrader's Autograde button with :data:`AUTOGRADE_MESSAGE`."""
    from jupyter_server.base.handlers import JupyterHandler
    from jupyter_server.utils import url_path_join
    from tornado import web
    from tornado.routing import PathMatches, Rule

    class RefuseAutograde(JupyterHandler):
        @web.authenticated
        def post(self, assignment_id, student_id):
            self.finish(
                json.dumps({"success": False, "error": AUTOGRADE_MESSAGE, "log": AUTOGRADE_MESSAGE})
            )

    route = url_path_join(serverapp.web_app.settings["base_url"], _AUTOGRADE_ROUTE)
    # Ahead of every extension's rules (nbgrader's included): tornado takes the first match.
    serverapp.web_app.default_router.rules.insert(0, Rule(PathMatches(route), RefuseAutograde))
    serverapp.log.info(
        "autograder: the formgrader's Autograde button points to `python -m autograder grade`"
    )
