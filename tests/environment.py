"""What the tests need from the machine, checked one way everywhere.

A test that needs a part of the machine (the bubblewrap sandbox, a browser) skips on a developer's
machine without it, but on CI (where the environment variable ``CI`` is set, and ``make`` installs
every such part) a missing part fails the run: a green CI never hides tests that did not run.
"""

from __future__ import annotations

import os

import pytest

__all__ = ["require", "skip_unless"]


def require(available: bool, reason: str) -> pytest.MarkDecorator:
    """A mark that skips the tests it marks unless ``available``; on CI, fail instead.

    Parameters
    ----------
    available : bool
        Whether the part the tests need is there.
    reason : str
        What is missing, for the skip message or the failure.

    Returns
    -------
    pytest.MarkDecorator
        ``pytest.mark.skipif(not available, reason=reason)``; use it as a module's
        ``pytestmark`` or as a decorator.

    Raises
    ------
    pytest.fail.Exception
        When ``available`` is false and ``CI`` is set: the module fails to collect.
    """
    if not available and os.environ.get("CI"):
        pytest.fail(f"CI must run these tests, but {reason}", pytrace=False)
    return pytest.mark.skipif(not available, reason=reason)


def skip_unless(available: bool, reason: str) -> None:
    """Inside a test or fixture: skip it unless ``available``; on CI, fail instead."""
    if not available:
        (pytest.fail if os.environ.get("CI") else pytest.skip)(
            f"CI must run this test, but {reason}" if os.environ.get("CI") else reason)
