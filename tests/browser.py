"""Headless Chromium (Debian's ``/usr/bin/chromium``) for the tests that read a page as a reader's
browser shows it: after its scripts ran, with no network but this machine's 127.0.0.1.

:func:`dump_dom` runs the browser once for one page; :func:`offline_browser` drives it with
Playwright behind a proxy that refuses (and records) every request that leaves 127.0.0.1, and
:func:`serve` publishes a folder at an address of the test's choosing (a port and a path prefix),
recording what it served.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import socketserver
import subprocess
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tests.environment import skip_unless

__all__ = ["CHROMIUM", "Served", "Offline", "chromium", "dump_dom", "offline_browser", "serve",
           "settle", "third_party"]

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


@dataclass
class Served:
    """A folder published on 127.0.0.1: its address (ending with ``/``) and the requests served."""

    base: str
    requests: list[tuple[str, int]] = field(default_factory=list)

    def failed(self) -> list[tuple[str, int]]:
        """The requests answered with an error (a browser's own favicon probe aside)."""
        return [(p, c) for p, c in self.requests if c >= 400 and not p.endswith("/favicon.ico")]


@contextmanager
def serve(directory: Path, prefix: str = "/"):
    """Publish ``directory`` at ``http://127.0.0.1:PORT<prefix>`` (a fresh port).

    Yields a :class:`Served`.

    Any path outside ``prefix`` is a 404, so a page that reaches for the site's root (rather than
    its own address) shows up in :meth:`Served.failed`.
    """
    assert prefix.startswith("/") and prefix.endswith("/"), prefix
    served = Served(base="")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def translate_path(self, path):
            if not path.startswith(prefix):
                return str(Path(directory) / ".outside-the-prefix" / "none")
            return super().translate_path("/" + path[len(prefix):])

        def log_request(self, code="-", size="-"):
            served.requests.append((self.path, int(code) if str(code).isdigit() else 0))

        def log_message(self, format, *args):
            pass  # recorded above, not printed

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(directory)))
    served.base = f"http://127.0.0.1:{httpd.server_address[1]}{prefix}"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield served
    finally:
        httpd.shutdown()
        httpd.server_close()


class _Refuse(socketserver.BaseRequestHandler):
    """A proxy that forwards nothing: it records the request line and answers 403."""

    def handle(self):
        line = self.request.recv(8192).split(b"\r\n", 1)[0].decode(errors="replace")
        self.server.lines.append(line)
        self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                             b"Connection: close\r\n\r\n")


@dataclass
class Offline:
    """Playwright's Chromium with no network but 127.0.0.1, and what its proxy refused."""

    browser: object
    proxy_lines: list[str]


@contextmanager
def offline_browser():
    """Launch Chromium (Playwright) behind a refusing, recording proxy; yield :class:`Offline`.

    Skips where Playwright or the browser is missing (fails on CI).
    """
    skip_unless(importlib.util.find_spec("playwright") is not None,
                "playwright is not installed (make installs requirements.txt)")
    executable = chromium()
    from playwright.sync_api import sync_playwright

    proxy = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Refuse)
    proxy.daemon_threads = True
    proxy.lines = []
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, args=[
                "--no-sandbox", "--disable-gpu", "--disable-quic",
                f"--proxy-server=http://127.0.0.1:{proxy.server_address[1]}",
                "--proxy-bypass-list=127.0.0.1"])
            try:
                yield Offline(browser=browser, proxy_lines=proxy.lines)
            finally:
                browser.close()
    finally:
        proxy.shutdown()
        proxy.server_close()


def third_party(urls: list[str], site: str, allowed: tuple[str, ...] = ()) -> list[str]:
    """The ``urls`` that go to another host than the ``site``'s and do not start with ``allowed``.

    Addresses the browser makes itself (``data:``, ``blob:``, ``about:``) stay in the page.
    """
    origin = "{0.scheme}://{0.netloc}/".format(urlsplit(site))
    return [u for u in urls if not u.startswith((origin, "data:", "blob:", "about:", *allowed))]


def settle(page, requests: list, quiet_ms: int = 1000, timeout_ms: int = 60_000) -> None:
    """Wait until ``page`` has typeset its maths (if it has MathJax) and then asked for nothing new
    (``requests`` grows with each request) for ``quiet_ms``.

    Playwright's "networkidle" is not used: a long chapter can keep it from ever firing. A page
    that sends the browser on (the book's ``index.html`` redirects to its first page) is followed.
    """
    from playwright.sync_api import Error

    for _ in range(3):
        try:
            page.evaluate("() => window.MathJax?.startup?.promise ?? null")
            break
        except Error as exc:  # the page navigated on while it was asked
            if "context was destroyed" not in str(exc):
                raise
            page.wait_for_load_state("load")
    waited, count = 0, -1
    while count != len(requests):
        assert waited < timeout_ms, f"{page.url} kept asking for more after {timeout_ms} ms"
        count = len(requests)
        page.wait_for_timeout(quiet_ms)
        waited += quiet_ms
