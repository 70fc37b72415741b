"""``python -m autograder formgrader``: nbgrader's formgrader on the course, for hand-grading.

Becomes the ``jupyter server`` of :func:`autograder.gradebook.formgrader.server_command` (the process is
replaced, so a signal that stops the command stops the server) after printing the formgrader's
address with its access token. Exit code 2 when the folder is not an nbgrader course.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

from autograder.gradebook.formgrader import server_command
from autograder.settings import COURSE_DIR

__all__ = ["add_parser", "main"]


def add_parser(sub):
    """Declare ``formgrader`` and its arguments in ``sub`` (the subparsers of the command
    line)."""
    formgrader = sub.add_parser(
        "formgrader",
        help="open nbgrader's formgrader on the course "
        "(hand-grading; its Autograde button points to `grade`)",
    )
    formgrader.add_argument(
        "--course",
        type=Path,
        default=COURSE_DIR,
        help=f"nbgrader course folder (default {COURSE_DIR})",
    )
    formgrader.add_argument("--port", type=int, default=8899, help="port (default 8899)")
    formgrader.add_argument(
        "--token", default=None, help="the server's access token (default: a random one, printed)"
    )
    formgrader.add_argument("--browser", action="store_true", help="open a web browser")
    return formgrader


def main(args) -> int:
    """The ``formgrader`` subcommand (arguments declared by :func:`add_parser`)."""
    token = args.token if args.token is not None else secrets.token_hex(16)
    try:
        command, env = server_command(args.course, args.port, token, args.browser)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"The formgrader of {Path(args.course).resolve()}: "
        f"http://localhost:{args.port}/formgrader?token={token}\n(stop it with Ctrl-C)",
        flush=True,
    )
    # The server takes this process's place: Ctrl-C, SIGTERM and a closed terminal reach it
    # directly, and no server outlives the command that started it.
    os.chdir(Path(args.course).resolve())
    os.execve(command[0], command, env)
    return 1  # not reached
