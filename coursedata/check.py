"""Run a problem set's visible tests on your notebook: ``python -m coursedata.check NOTEBOOK``.

The notebook is executed from top to bottom in a fresh kernel of this Python (the one the kit is
installed in), as the grader will, and each visible test cell is reported as passed or failed,
with its error message, then what breaks the problem set's rules (the check's kernel enforces
them as the grader's does); the last line is ``N passed, M failed``. The exit status is 0 when
every visible test passes and no function breaks the rules, 1 otherwise, 2 when the notebook
cannot be read. Passing every visible test does not guarantee full marks: hidden tests check
your functions on other inputs after you submit. Nothing is sent anywhere and your notebook file is not modified.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from coursedata import rulecheck


def _kernel_manager(kernel_dir: Path):
    """A kernel manager for a kernel of this interpreter, whatever kernels Jupyter knows."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    spec = kernel_dir / "this-python"
    spec.mkdir()
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python (this environment)", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(kernel_dir)], ensure_native_kernel=False)
    # Local sockets where there are any (no TCP port, no warning about unencrypted TCP).
    transport = {"transport": "ipc", "ip": str(kernel_dir / "kernel")} if os.name == "posix" else {}
    return KernelManager(kernel_name="this-python", kernel_spec_manager=specs, **transport)


def _message(error) -> str:
    text = f"{error.ename}: {error.evalue}" if str(error.evalue).strip() else str(error.ename)
    return text.rstrip().replace("\n", "\n      ")


def check(path: Path, timeout: float = 120) -> int:
    """Execute ``path`` and print one line per visible test; return the number of failures."""
    import nbformat
    from nbclient import NotebookClient

    path = Path(path).resolve()
    nb = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="coursedata-check-") as kernel_dir:
        km = _kernel_manager(Path(kernel_dir))
        # The problem set's rules, kept by the kernel as the grader keeps them (coursedata.rulecheck).
        rules, kernel_options = rulecheck.prepare(nb, Path(kernel_dir))
        # The kernel's own log (start-up and shut-down notes) is not for students: errors of
        # the notebook's code come back in the cells' outputs.
        NotebookClient(nb, km=km, timeout=timeout, allow_errors=True,
                       **rules.client_options).execute(
            cwd=str(path.parent), stderr=subprocess.DEVNULL, **kernel_options)
        rule_lines, broken = rules.report()
    failures = 0
    tests = 0
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.get("metadata", {}).get("nbgrader", {})
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if not meta.get("grade") or not cell.source.strip():
            if errors and not meta.get("solution"):
                where = meta.get("grade_id") or f"cell {index + 1}"
                print(f"error in {where} (not a test): {_message(errors[0])}")
            continue
        tests += 1
        points = meta.get("points", 0)
        if errors:
            failures += 1
            print(f"FAIL  {meta.get('grade_id')} ({points:g} pt): {_message(errors[0])}")
        else:
            print(f"ok    {meta.get('grade_id')} ({points:g} pt)")
    print("\n".join(rule_lines))
    print(f"{tests - failures} passed, {failures} failed")
    return failures + broken


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursedata.check",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("notebook", type=Path)
    parser.add_argument("--timeout", type=float, default=120, help="seconds per cell")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        print(f"error: {args.notebook} is not a file", file=sys.stderr)
        return 2
    try:
        failures = check(args.notebook, args.timeout)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds of errors on bad files
        if type(exc).__module__.startswith(("nbformat", "json")):
            print(f"error: {args.notebook} is not a readable notebook ({exc})", file=sys.stderr)
            return 2
        raise
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
