"""Which file the check reads, when it was saved, and signs that it is not the latest version.

The check reads the notebook as saved on disk; Jupyter keeps a student's latest edits in the
browser until it saves them (JupyterLab autosaves every two minutes, and on Ctrl-S). What can be
told from outside:

- the path is Jupyter's checkpoint copy (``.ipynb_checkpoints/NAME-checkpoint.ipynb``), the
  version of the last explicit save, not the notebook itself;
- a Jupyter server running on this machine (found, as ``jupyter server list`` finds them, by the
  files in Jupyter's runtime folder) has the notebook open, and its kernel was active after the
  file was last written: cells ran since the last save, so the editor may hold newer code.

Edits made without running anything leave no trace outside the browser, so they cannot be told.
"""

from __future__ import annotations

import json
import os
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["Saved", "describe", "staleness_warnings", "open_sessions"]

_CHECKPOINTS = ".ipynb_checkpoints"


@dataclass(frozen=True)
class Saved:
    """The notebook file as the check reads it."""

    path: Path
    modified: datetime  # aware, local time

    def sentence(self, now: datetime | None = None) -> str:
        """``Checking /home/s/ps3_mle.ipynb, saved 15:20:03 today (2 min ago).``"""
        now = now or datetime.now().astimezone()
        when = self.modified.strftime("%H:%M:%S")
        when += " today" if self.modified.date() == now.date() else \
            self.modified.strftime(" on %Y-%m-%d")
        return f"Checking {self.path}, saved {when} ({_ago(now - self.modified)})."


def _ago(delta) -> str:
    seconds = delta.total_seconds()
    if seconds < 0:
        return "in the future: check your clock"
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 36 * 3600:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"


def describe(path: Path) -> Saved:
    path = Path(path).resolve()
    modified = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).astimezone()
    return Saved(path, modified)


def staleness_warnings(saved: Saved) -> list[str]:
    """Sentences saying why the file may not hold the student's latest edits."""
    out = []
    if saved.path.parent.name == _CHECKPOINTS or saved.path.stem.endswith("-checkpoint"):
        original = saved.path.parent.parent / (saved.path.stem.removesuffix("-checkpoint")
                                               + saved.path.suffix)
        out.append("this file is Jupyter's checkpoint copy (your notebook as of your last "
                   "Ctrl-S), not your notebook" + (f": check {original} instead"
                                                   if original.is_file() else ""))
    for server, activity in open_sessions(saved.path):
        if activity > saved.modified.timestamp() + 1:
            ran = datetime.fromtimestamp(activity, tz=timezone.utc).astimezone()
            out.append(f"Jupyter ({server}) has this notebook open, and its kernel was active at "
                       f"{ran:%H:%M:%S}, after the file was saved: changes you made since are not "
                       "checked. Save it (Ctrl-S) and run the check again")
    return out


def _runtime_files() -> list[Path]:
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:  # pragma: no cover - jupyter_core comes with nbclient
        return []
    runtime = Path(jupyter_runtime_dir())
    return sorted(runtime.glob("jpserver-*.json")) + sorted(runtime.glob("nbserver-*.json"))


def open_sessions(path: Path, timeout: float = 1.0) -> list[tuple[str, float]]:
    """``(server URL, kernel's last activity as a Unix time)`` for every running Jupyter server
    on this machine that has ``path`` open in a kernel session. Servers that do not answer
    within ``timeout`` seconds are skipped."""
    found = []
    for info_file in _runtime_files():
        try:
            info = json.loads(info_file.read_text())
            if info.get("pid") and not _alive(int(info["pid"])):
                continue
            root = Path(info.get("root_dir") or info.get("notebook_dir") or "/")
            for session in _get(info["url"], "api/sessions", info.get("token", ""), timeout):
                kernel = session.get("kernel") or {}
                where = (root / session.get("path", "")).resolve()
                if where == path and kernel.get("last_activity"):
                    found.append((info["url"], _parse_time(kernel["last_activity"])))
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _get(url: str, endpoint: str, token: str, timeout: float):
    request = urllib.request.Request(url.rstrip("/") + "/" + endpoint,
                                     headers={"Authorization": f"token {token}"} if token else {})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def _parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
