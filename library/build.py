"""Build the book's library wheel: ``python library/build.py OUT_DIR`` prints the wheel's path.

The library is the repository's ``solutions/`` package (the chapters' code), unchanged, built
like the student kit (``kit/build.py``, whose staging and build it reuses): only this folder's
``pyproject.toml`` and ``README.md`` and the ``*.py`` files of ``solutions/`` are copied into a
scratch folder, so nothing else of the repository can slip in, and file times are fixed, so the
same sources give the same wheel, byte for byte.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PACKAGE = ROOT / "solutions"
#: The wheel's file-name prefix (distribution ``mfpm-book``).
PREFIX = "mfpm_book-"


def _kit_build():
    spec = importlib.util.spec_from_file_location("_kit_build", ROOT / "kit" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(out_dir: Path) -> Path:
    """Build the wheel into ``out_dir`` (removing older library wheels there); return its path."""
    return _kit_build().build(out_dir, project=HERE, package=PACKAGE, prefix=PREFIX)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python library/build.py OUT_DIR", file=sys.stderr)
        return 2
    print(build(Path(args[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
