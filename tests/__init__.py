"""The project's tests, in folders mirroring the packages they test (``tests/solutions/``,
``tests/autograder/intake/``, ...); the helpers they share sit here."""

from pathlib import Path

#: The project's root folder.
ROOT = Path(__file__).resolve().parents[1]
