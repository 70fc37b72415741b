"""The working folder of an execution: lent to the sandbox user, taken back, and cleared of
anything but regular files and folders; and the removal of a folder the student wrote into.

Everything here reads a tree the student's code built, so nothing here recurses, follows a link
or builds a path from the tree's names: each folder is opened relative to its parent's open
descriptor (``openat``), without following links, and every step tolerates an entry that is
gone, of any type, or of any owner the sandbox allows. :func:`_walk` keeps at most
:data:`MAX_DEPTH` folders open and removes (with :func:`_remove_child`) any folder nested deeper:
the grader reads nothing that deep. :func:`remove_tree` removes a tree of any depth with two
folders open at a time, by moving every folder it meets up into one staging folder.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["MAX_DEPTH", "remove_tree"]

log = logging.getLogger("autograder.sandbox")

#: The folders below the working folder the grader walks; any folder deeper is removed.
MAX_DEPTH = 32

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(name: str, dir_fd: int | None = None) -> int:
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _names(fd: int) -> list[str]:
    try:
        return os.listdir(fd)
    except OSError:
        return []


def _walk(
    root: Path, cut: list[str] | None = None
) -> Iterator[tuple[int, str, os.stat_result, str]]:
    """``(folder's descriptor, name, lstat, path relative to root)`` of everything below
    ``root``, depth first, a folder before its content; links are not followed.

    A folder :data:`MAX_DEPTH` levels down is not entered: with ``cut`` given, it is removed
    and its relative path appended to ``cut``.
    """
    try:
        top = _open_dir(str(root))
    except OSError:
        return
    stack = [(top, "", iter(_names(top)))]
    try:
        while stack:
            fd, prefix, names = stack[-1]
            name = next(names, None)
            if name is None:
                os.close(fd)
                stack.pop()
                continue
            try:
                info = os.lstat(name, dir_fd=fd)
            except OSError:
                continue
            yield fd, name, info, prefix + name
            if not stat.S_ISDIR(info.st_mode):
                continue
            if len(stack) >= MAX_DEPTH:
                if cut is not None:
                    _remove_child(fd, name)
                    cut.append(prefix + name)
                continue
            try:
                child = _open_dir(name, fd)
            except OSError:
                continue
            stack.append((child, prefix + name + "/", iter(_names(child))))
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _lend(root: Path, uid: int) -> dict[str, tuple[int, int]]:
    """Give ``root`` and everything under it to ``uid``; return the previous owners, by path
    relative to ``root`` (``""`` for ``root``)."""
    info = root.lstat()
    owners = {"": (info.st_uid, info.st_gid)}
    os.chown(root, uid, uid, follow_symlinks=False)
    for fd, name, info, rel in _walk(root):
        owners[rel] = (info.st_uid, info.st_gid)
        os.chown(name, uid, uid, dir_fd=fd, follow_symlinks=False)
    return owners


def _remove_special_files(root: Path) -> list[str]:
    """Delete everything under ``root`` that is not a regular file or folder, and every folder
    nested more than :data:`MAX_DEPTH` deep; return their paths relative to ``root`` (a folder's
    with a trailing ``/``).

    A symbolic link left by the student could point the grader at a host file (the gradebook,
    the reference package), and a named pipe would block the grader reading it.
    """
    removed: list[str] = []
    cut: list[str] = []
    for fd, name, info, rel in _walk(root, cut):
        if stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode):
            continue
        try:
            os.unlink(name, dir_fd=fd)
            removed.append(rel)
        except FileNotFoundError:
            pass
    return removed + [f"{c}/" for c in cut]


def _take_back(root: Path, uid: int, owners: dict[str, tuple[int, int]]) -> None:
    """Return what ``uid`` owns under ``root`` to its previous owner, new files to root's."""
    try:
        if root.lstat().st_uid == uid:
            os.chown(root, *owners[""], follow_symlinks=False)
    except OSError:
        pass
    for fd, name, info, rel in _walk(root):
        if info.st_uid != uid:  # never touch what the sandbox user does not own
            continue
        try:
            os.chown(name, *owners.get(rel, owners[""]), dir_fd=fd, follow_symlinks=False)
        except OSError:
            pass


def _empty(fd: int, stage: int, skip: str | None, moved: int) -> int:
    """Unlink every non-folder of the folder ``fd`` and move each of its folders into the
    staging folder ``stage`` as ``str(moved)``, ``str(moved + 1)``...; return the new count."""
    for name in _names(fd):
        if name == skip:
            continue
        try:
            info = os.lstat(name, dir_fd=fd)
            if not stat.S_ISDIR(info.st_mode):
                os.unlink(name, dir_fd=fd)
                continue
            if info.st_uid == os.geteuid() and stat.S_IMODE(info.st_mode) & 0o700 != 0o700:
                os.chmod(name, 0o700, dir_fd=fd)  # a folder of our own we may not enter
            os.rename(name, str(moved), src_dir_fd=fd, dst_dir_fd=stage)
            moved += 1
        except OSError:
            continue
    return moved


def _remove_child(parent: int, name: str) -> None:
    """Remove the folder ``name`` of the open folder ``parent`` and everything in it."""
    try:
        top = _open_dir(name, parent)
    except PermissionError:  # a folder of our own without permissions: give them back
        try:
            os.chmod(name, 0o700, dir_fd=parent)
            top = _open_dir(name, parent)
        except OSError:
            return
    except OSError:
        return
    try:
        stage_name = _staging(top)
        stage = _open_dir(stage_name, top)
        try:
            moved = _empty(top, stage, stage_name, 0)
            done = 0
            while done < moved:
                try:
                    fd = _open_dir(str(done), stage)
                except OSError:
                    done += 1
                    continue
                try:
                    moved = _empty(fd, stage, None, moved)
                finally:
                    os.close(fd)
                _quietly(os.rmdir, str(done), dir_fd=stage)
                done += 1
        finally:
            os.close(stage)
        _quietly(os.rmdir, stage_name, dir_fd=top)
    except OSError:
        pass
    finally:
        os.close(top)
    _quietly(os.rmdir, name, dir_fd=parent)


def _staging(fd: int) -> str:
    """A new, empty folder in the folder ``fd``, only the grader writes into."""
    for n in range(1000):
        name = f".grader-removing-{os.getpid()}-{n}"
        try:
            os.mkdir(name, 0o700, dir_fd=fd)
            return name
        except FileExistsError:
            continue
    raise OSError(f"no staging folder could be made in {fd}")


def _quietly(call: Callable[..., object], *args: object, **kwargs: object) -> None:
    try:
        call(*args, **kwargs)
    except OSError:
        pass


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` and everything under it, whatever the student's code built there.

    Any depth (no recursion: every folder met is moved up into one staging folder, so at most
    two are open at a time), any file type (links are removed, never followed), any owner the
    sandbox allows, folders without permissions. Nothing raises; what could not be removed is
    logged.
    """
    path = Path(path)
    try:
        info = path.lstat()
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode):
        _quietly(os.unlink, path)
        return
    try:
        parent = _open_dir(str(path.parent))
    except OSError as exc:
        log.warning("could not remove %s: %s", path, exc)
        return
    try:
        _remove_child(parent, path.name)
    finally:
        os.close(parent)
    if os.path.lexists(path):
        log.warning("could not remove all of %s", path)
