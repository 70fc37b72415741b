"""Run a problem set's visible tests on your notebook: ``python -m coursedata.check NOTEBOOK``.

The notebook is executed from top to bottom in a fresh kernel (as the grader will), and each
visible test cell is reported as passed or failed, with its error message. Passing every visible
test does not guarantee full marks: hidden tests check your functions on other inputs after you
submit. Nothing is sent anywhere and your notebook file is not modified.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def check(path: Path, timeout: float = 120) -> int:
    """Execute ``path`` and print one line per visible test; return the number of failures."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=timeout, allow_errors=True).execute(cwd=str(path.parent))
    failures = 0
    tests = 0
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.cell_type != "code" or not meta.get("grade") or not cell.source.strip():
            continue
        tests += 1
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        points = meta.get("points", 0)
        if errors:
            failures += 1
            e = errors[0]
            print(f"FAIL  {meta.get('grade_id')} ({points:g} pt): {e.ename}: {e.evalue}".rstrip())
        else:
            print(f"ok    {meta.get('grade_id')} ({points:g} pt)")
    print(f"{tests - failures} passed, {failures} failed")
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursedata.check", description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=float, default=120, help="seconds per cell")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        print(f"error: {args.notebook} is not a file", file=sys.stderr)
        return 2
    return 1 if check(args.notebook, args.timeout) else 0


if __name__ == "__main__":
    raise SystemExit(main())
