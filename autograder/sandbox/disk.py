"""Size-capped folders for what a submission may write on the host.

A kernel can write to its working folder and to its private run folder (its sockets and log),
both on the host. ``RLIMIT_FSIZE`` caps one file, not how many there are, so a root grader mounts
a ``tmpfs`` with a size and an inode count (``size=``, ``nr_inodes=``: the kernel's
``Documentation/filesystems/tmpfs.rst``) on each such folder before the kernel starts and
detaches it (``umount2(MNT_DETACH)``) after its content was read; a write past the cap fails with
``ENOSPC`` in the student's code and :func:`is_full` tells the grader. A grader that is not root
cannot mount: :func:`cap_folder` then returns False, and :data:`UNCAPPED` says what is not
enforced.
"""

from __future__ import annotations

import ctypes
import logging
import os
from pathlib import Path

__all__ = ["SOURCE", "UNCAPPED", "cap_folder", "release", "is_full"]

log = logging.getLogger("autograder.sandbox")

#: What is not enforced where folders cannot be capped (a grader that is not root).
UNCAPPED = (
    "the disk a submission writes is not capped (only each file, by RLIMIT_FSIZE): "
    "capping it mounts a tmpfs, which needs a root grader"
)

#: The source name of every capped folder's mount, by which a warm zygote (its
#: ``CAPPED_SOURCE``) knows not to carry a submission's folders into another sandbox's ``/tmp``.
SOURCE = "grader-capped"
_MS_NOSUID, _MS_NODEV = 2, 4
_MNT_DETACH = 2
_libc = ctypes.CDLL(None, use_errno=True)


def cap_folder(path: str | os.PathLike[str], megabytes: int, inodes: int) -> bool:
    """Mount an empty ``tmpfs`` of ``megabytes`` and ``inodes`` on the folder ``path`` (which
    must be empty: what it holds is hidden until :func:`release`); return whether it was
    mounted (False where the grader is not root)."""
    if os.geteuid() != 0:
        return False
    options = f"size={int(megabytes)}m,nr_inodes={int(inodes)},mode=0755".encode()
    target = os.fsencode(str(path))
    if _libc.mount(SOURCE.encode(), target, b"tmpfs", _MS_NOSUID | _MS_NODEV, options) != 0:
        err = ctypes.get_errno()
        log.warning("could not cap %s with a tmpfs: %s", path, os.strerror(err))
        return False
    return True


def release(path: str | os.PathLike[str]) -> None:
    """Detach the ``tmpfs`` of :func:`cap_folder` from ``path`` (its content goes with it)."""
    if _libc.umount2(os.fsencode(str(path)), _MNT_DETACH) != 0:
        log.warning("could not detach the tmpfs of %s: %s", path, os.strerror(ctypes.get_errno()))


def is_full(path: str | os.PathLike[str]) -> bool:
    """Whether the capped folder ``path`` has (almost) no room or no inode left."""
    try:
        info = os.statvfs(Path(path))
    except OSError:
        return False
    return info.f_bavail * info.f_frsize < 1024 * 1024 or info.f_favail < 16
