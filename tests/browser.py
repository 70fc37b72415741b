"""Headless Chromium (Debian's ``/usr/bin/chromium``) for the tests that read a page as a reader's
browser shows it: after its scripts ran, with no network but this machine's 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import tempfile

from tests.environment import skip_unless

__all__ = ["CHROMIUM", "chromium", "dump_dom"]

CHROMIUM = "/usr/bin/chromium"
#: Quiet and offline: no background requests, every host name but 127.0.0.1 unresolvable, and
#: anything else sent to a closed proxy port.
_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
          "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=127.0.0.1"]


def chromium() -> str:
    """The browser's path; skips the calling test where it is missing (fails it on CI)."""
    skip_unless(os.access(CHROMIUM, os.X_OK),
                f"{CHROMIUM} is missing (make test installs Debian's chromium as root)")
    return CHROMIUM


def dump_dom(url: str, *, budget_ms: int = 15_000, timeout: float = 180) -> str:
    """The DOM of ``url`` after its scripts ran for ``budget_ms`` of virtual time.

    Each call has a fresh, empty profile, so no page sees another's storage or cache.
    """
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        done = subprocess.run([chromium(), *_FLAGS, f"--user-data-dir={profile}",
                               f"--virtual-time-budget={budget_ms}", "--dump-dom", url],
                              capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-3000:]
    return done.stdout
