"""The working folder of an execution: lent to the sandbox user, taken back, and cleared of
anything but regular files and folders."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def _walk(root: Path) -> list[Path]:
    paths = [root]
    for folder, dirs, files in os.walk(root):  # does not follow symbolic links
        paths += [Path(folder, name) for name in dirs + files]
    return paths


def _lend(root: Path, uid: int) -> dict[Path, tuple[int, int]]:
    """Give ``root`` and everything under it to ``uid``; return the previous owners."""
    owners = {}
    for path in _walk(root):
        info = path.lstat()
        owners[path] = (info.st_uid, info.st_gid)
        os.chown(path, uid, uid, follow_symlinks=False)
    return owners


def _remove_special_files(root: Path) -> list[str]:
    """Delete everything under ``root`` that is not a regular file or folder.

    A symbolic link left by the student could point the grader at a host file (the gradebook,
    the reference package), and a named pipe would block the grader reading it.
    """
    removed = []
    for path in _walk(root)[1:]:
        try:
            if not (stat.S_ISREG(path.lstat().st_mode) or stat.S_ISDIR(path.lstat().st_mode)):
                path.unlink()
                removed.append(str(path.relative_to(root)))
        except FileNotFoundError:
            pass
    return removed


def _take_back(root: Path, uid: int, owners: dict[Path, tuple[int, int]]) -> None:
    """Return what ``uid`` owns under ``root`` to its previous owner, new files to root's."""
    for path in _walk(root):
        try:
            if path.lstat().st_uid == uid:  # never touch what the sandbox user does not own
                os.chown(path, *owners.get(path, owners[root]), follow_symlinks=False)
        except OSError:
            pass
