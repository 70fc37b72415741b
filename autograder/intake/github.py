"""GitHub Classroom: the students' repositories, cloned.

``gh classroom clone student-repos`` clones every accepted assignment's repository into
``<assignment slug>-submissions/<repository name>/`` (github/gh-classroom
``cmd/gh-classroom/clone/student-repos/student-repos.go``), and GitHub Classroom names a
student's repository ``<assignment slug>-<GitHub username>``: the student is the username (the
repository's name without the slug, taken from the ``-submissions`` folder, or else from what all
the repositories' names share). The time is the last commit's, read from the clone's own git
history with ``git cat-file`` (the raw commit: no hook, no configuration of the clone runs) when
the clone is a folder on disk; a zip of the clones gives no time, and the late policy says it
has no evidence. The download is recognised by the clones' ``.git`` folders (a copy without them
is a plain folder per student). A commit's time is the one the student's machine wrote.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from os.path import commonprefix
from pathlib import Path

from autograder.intake.lms import Claims, CourseZone, FileLike, LmsInfo, Owner, Reader

__all__ = ["NAME", "TITLE", "recognise", "claim", "last_commit_time"]

NAME = "github"
TITLE = "GitHub Classroom (cloned repositories)"
_GIT = ".git"
_SUBMISSIONS = "-submissions"
_COMMITTER = re.compile(rb"^committer .* (?P<seconds>\d+) [+-]\d{4}$", re.M)


def recognise(paths: list[tuple[str, ...]]) -> bool:
    """Whether the download holds git clones (a ``.git`` folder; a folder merely named
    ``...-submissions`` may be anyone's, ``grading.md`` suggests such names)."""
    return any(_GIT in p[:-1] for p in paths)


def last_commit_time(clone: Path) -> float | None:
    """The committer time of the clone's ``HEAD`` (POSIX seconds), or None when git cannot
    read it."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "HOME": os.devnull,
    }
    try:
        done = subprocess.run(
            [
                "git",
                "-c",
                "core.fsmonitor=false",
                "-c",
                f"safe.directory={clone}",
                f"--git-dir={clone / _GIT}",
                "cat-file",
                "commit",
                "HEAD",
            ],
            capture_output=True,
            env=env,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = _COMMITTER.search(done.stdout) if done.returncode == 0 else None
    return float(found.group("seconds")) if found else None


def _root(parts: tuple[str, ...]) -> int:
    """The index of the repository's folder in a file's path: the one above ``.git``, or the
    one below ``-submissions``, or the first."""
    if _GIT in parts[:-1]:
        return max(parts.index(_GIT) - 1, 0)
    wrapper = next((i for i, p in enumerate(parts[:-1]) if p.endswith(_SUBMISSIONS)), None)
    return wrapper + 1 if wrapper is not None and wrapper + 1 < len(parts) - 1 else 0


def _folders_above(
    files: Sequence[FileLike], repo_of: dict[str, tuple[str, ...]]
) -> dict[tuple[str, ...], str]:
    """The name of the folder on disk that holds each clone given as the download itself (the
    ``<slug>-submissions`` folder, which the files' paths do not include)."""
    above: dict[tuple[str, ...], str] = {}
    for file in files:
        disk, repo = getattr(file, "disk", None), repo_of[file.where]
        if disk is not None and len(repo) == 1 and len(file.parts) > 1:
            above[repo] = Path(disk).parents[len(file.parts) - 1].name
    return above


def _usernames(
    repos: set[tuple[str, ...]], above: dict[tuple[str, ...], str]
) -> dict[tuple[str, ...], str]:
    """Each repository's student: its name without the assignment slug (from the
    ``-submissions`` folder around it, in the download or on disk, else what all the
    repositories' names share)."""
    names = {r[-1] for r in repos}
    shared = commonprefix(sorted(names)) if len(names) > 1 else ""
    shared = shared[: shared.rfind("-") + 1]
    users = {}
    for repo in repos:
        wrapper = next(
            (p for p in (*repo[:-1], above.get(repo, "")) if p.endswith(_SUBMISSIONS)), ""
        )
        prefix = wrapper[: -len(_SUBMISSIONS)] + "-" if wrapper else shared
        name = repo[-1]
        users[repo] = name[len(prefix) :] if prefix and name.startswith(prefix) else name
    return users


def claim(files: Sequence[FileLike], read: Reader, course_offset: CourseZone = None) -> Claims:
    """Each clone's files, owned by its username at its last commit.
    ``course_offset`` is not read: these times name no zone abbreviation."""
    claims = Claims()
    repo_of = {file.where: file.parts[: _root(file.parts) + 1] for file in files}
    users = _usernames({r for r in repo_of.values() if len(r) >= 1}, _folders_above(files, repo_of))
    times: dict[tuple[str, ...], float | None] = {}
    for file in files:
        repo = repo_of[file.where]
        if _GIT in file.parts[len(repo) : -1]:
            claims.explained.add(file.where)  # the clone's history, read by git below
            disk = getattr(file, "disk", None)
            if repo not in times and disk is not None:
                clone = Path(disk).parents[len(file.parts) - len(repo) - 1]
                times[repo] = last_commit_time(clone)
    owning = {repo_of[f.where] for f in files if len(f.parts) > len(repo_of[f.where])}
    for repo in sorted(owning):
        when = times.get(repo)
        where = "/".join(repo)
        claims.notes.append(
            f"{where}: {users[repo]}'s repository; "
            + (
                "its last commit's time is the time handed in"
                if when is not None
                else "no git history was read (a zip of the clones, or a copy without .git): the "
                "late policy has no evidence of when it was handed in"
            )
        )
    for file in files:
        repo = repo_of[file.where]
        if file.where in claims.explained or len(file.parts) <= len(repo):
            continue
        user = users[repo]
        info = LmsInfo(NAME, user, user, False, None, "/".join(repo))
        claims.own(file, Owner(user, info, times.get(repo), file.parts[-1]))
    return claims
