"""Build the student kit's wheel: ``python kit/build.py OUT_DIR`` prints the wheel's path.

The kit is the repository's ``coursedata/`` package, unchanged. So that there is one source of
truth and nothing else of the repository can slip in, the build copies only this folder's
``pyproject.toml`` and ``README.md`` and the ``*.py`` files of ``coursedata/`` into a scratch
folder and builds the wheel there (``pip wheel --no-deps``, with the build backend pinned in
``kit/pyproject.toml``). File times are fixed (``SOURCE_DATE_EPOCH``), so the same sources give
the same wheel, byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KIT = Path(__file__).resolve().parent
ROOT = KIT.parent
PACKAGE = ROOT / "coursedata"
#: 1980-01-01, the earliest time a zip file can hold.
EPOCH = 315532800


def stage(dest: Path, project: Path = KIT, package: Path = PACKAGE) -> None:
    """Copy the project files (the kit's) and the package's (coursedata's) Python files into
    ``dest``."""
    for name in ("pyproject.toml", "README.md"):
        shutil.copyfile(project / name, dest / name)
    for src in sorted(package.rglob("*.py")):
        rel = src.relative_to(ROOT)
        if "__pycache__" in rel.parts:
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    for path in dest.rglob("*"):
        os.utime(path, (EPOCH, EPOCH))


def build(out_dir: Path, project: Path = KIT, package: Path = PACKAGE,
          prefix: str = "mfpm_kit-") -> Path:
    """Build the wheel into ``out_dir`` (removing older wheels named ``prefix*`` there) and return
    its path. ``project`` holds ``pyproject.toml`` and ``README.md``, ``package`` the sources
    (the kit's by default; ``library/build.py`` builds the book's library the same way)."""
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob(f"{prefix}*.whl"):
        old.unlink()
    env = dict(os.environ, SOURCE_DATE_EPOCH=str(EPOCH), PIP_DISABLE_PIP_VERSION_CHECK="1")
    with tempfile.TemporaryDirectory(prefix="kit-src-") as tmp:
        src = Path(tmp, "src")
        src.mkdir()
        stage(src, project, package)
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet",
                               "--wheel-dir", str(out_dir), str(src)],
                              env=env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"building {prefix}* failed:\n{done.stdout}{done.stderr}")
    wheels = sorted(out_dir.glob(f"{prefix}*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"expected one {prefix}* wheel in {out_dir}; found {wheels}")
    return wheels[0]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python kit/build.py OUT_DIR", file=sys.stderr)
        return 2
    print(build(Path(args[0])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
