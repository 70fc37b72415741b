"""Run a problem set's visible tests on your notebook: python -m coursedata.check NOTEBOOK

It reads the notebook as saved on disk (it says which file, and when it was saved: save in
Jupyter first), then says what it can see without running anything: answer cells Python cannot
read, written answers still reading YOUR ANSWER HERE, test cells that are missing or were changed.
Then it runs the notebook from top to bottom in a fresh kernel of this Python (the one the kit is
installed in), as the grader will, and prints each visible test as passed or failed as soon as it
has run, named by its question. A cell that runs longer than the time limit (--timeout) is
stopped, and the check says which line was running; Ctrl-C stops the check at once, with the
results so far. The last line is "N passed, M failed".

After the run it says which functions break the problem set's rules (the modules its answers
may not use): the check's kernel refuses them as the grader's does, and the grader gives 0 to
every test of such a function.

Each visible test's line is the grader's verdict on that cell: "ok" when the cell will earn
its points (its test passes and your function's values on the cell's own inputs match the correct
ones to the declared tolerance), "FAIL" with what differs otherwise; where the values cannot be
compared here (a cell whose check needs the course's reference), the "ok" line says so. The
kernel runs under the grader's limits: a cell is stopped after its time limit (--timeout), each
process may use as much memory as at grading, and the numerical libraries use one thread.

The exit status is 0 when every visible test passes and no function breaks the rules, 1 when a
test fails or is missing or changed or a rule is broken, 2 when the notebook cannot be read, 130
after Ctrl-C. Passing every visible test does not guarantee full marks: hidden tests check your
functions on other inputs when your notebook is graded, and carry most of the points. A hidden
cell may score the visible test's inputs again too, so a visible test that fails can cost part of
its hidden cell as well. Nothing is sent anywhere and your notebook file is not modified.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import os
import re
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from coursedata import rulecheck
from coursedata.causes import answer_functions, calls, causes, note
from coursedata.cells import Cell, Finding, findings, read_cells, users
from coursedata.grading import CELL_TIMEOUT_S, MEMORY_MB, ONE_THREAD, RESULTS_ENV
from coursedata.naming import question_of
from coursedata.runner import MAX_OUTPUT, CellRun, run_cells
from coursedata.saved import describe, staleness_warnings
from coursedata.visible import VisibleCheck, prepare, verdict, visible_checks

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = ["check", "main"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
#: A frame of a notebook cell in IPython's traceback: ``Cell In[5], line 7``.
_FRAME = re.compile(r"^Cell In\[(\d+)\], line (\d+)")
_NOT_DEFINED = re.compile(r"name '([A-Za-z_]\w*)' is not defined")
_UNEXPECTED = re.compile(r"^([A-Za-z_]\w*)\(\) got an unexpected keyword argument '(\w+)'")
#: Characters of output past which a cell that ran out of time is said to have printed too much.
_MUCH_OUTPUT = 100_000
#: The signals that stop the check, named as the student knows them.
_SIGNALS = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM"}


def before_running(nb) -> list[Finding]:
    """What the check reports before running anything (each a problem the student can fix)."""
    return findings(nb)


@dataclass
class _Report:
    """What the check has printed so far, to name later failures and to sum up."""

    nb: NotebookNode  # the notebook being run, outputs filled in as it runs
    cells: list[Cell]
    timeout: float
    broken: dict[str, str] = field(default_factory=dict)  # function -> label of its broken cell
    passed: int = 0
    failed: int = 0
    seen: set[int] = field(default_factory=set)  # indices of the cells that ran
    reported: set[int] = field(default_factory=set)  # cells whose error was printed before
    running: int | None = None
    visible: dict[str, VisibleCheck] = field(default_factory=dict)  # what the grader judges too
    lost: set[str] = field(default_factory=set)  # the questions whose visible test failed
    results: Path | None = None  # where the visible cells record, as at grading

    def by_count(self) -> dict[int, Cell]:
        """The cells that ran, by their execution count (``In[5]`` in a traceback)."""
        return {c.get("execution_count"): self.cells[i] for i, c in enumerate(self.nb.cells)
                if c.get("execution_count") is not None}


def _say(text: str = "") -> None:
    print(text, flush=True)


def _deepest(error: dict, report: _Report) -> tuple[Cell, int, str] | None:
    """The deepest frame of the error's traceback in an answer cell or another code cell of the
    notebook: ``(cell, line number, code of that line)``."""
    cells = report.by_count()
    found = None
    lines = [_ANSI.sub("", line) for entry in error.get("traceback", [])
             for line in str(entry).splitlines()]
    for i, line in enumerate(lines):
        frame = _FRAME.match(line.strip())
        if not frame:
            continue
        cell = cells.get(int(frame.group(1)))
        if cell is None or cell.kind not in ("answer", "code"):
            continue
        code = next((after.split("->", 1)[1].strip().split(None, 1)[-1]
                     for after in lines[i + 1:i + 12] if after.lstrip().startswith("--")), "")
        found = (cell, int(frame.group(2)), code)
    return found


def _where(error: dict, report: _Report) -> str:
    """`` (in your gamma_mle (Question 6), line 7: while True:)``: where the error happened."""
    found = _deepest(error, report)
    if found is None:
        return ""
    cell, line, code = found
    return f" (in {cell.label}, line {line}" + (f": {code}" if code else "") + ")"


def _blank_answer(error: dict, report: _Report) -> str | None:
    """``your gamma_mle (Question 6)`` when the error was raised by an answer not yet written."""
    cell = _deepest(error, report)
    if cell is not None and cell[0].kind == "answer" and "NotImplementedError" in cell[2]:
        return cell[0].short
    return None


def _message(error: dict) -> str:
    value = str(error.get("evalue", "")).strip()
    text = f"{error.get('ename')}: {value}" if value else str(error.get("ename"))
    if "MemoryError" in str(error.get("ename")):
        text += f" (each process may use {MEMORY_MB} MB, here as at grading)"
    return text.replace("\n", "\n      ")


def _parameters(source: str, function: str) -> list[str] | None:
    """The parameters of ``function`` as the answer cell ``source`` defines it at its top level."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            args = node.args
            return ([a.arg for a in args.posonlyargs + args.args]
                    + ([f"*{args.vararg.arg}"] if args.vararg else [])
                    + [a.arg for a in args.kwonlyargs]
                    + ([f"**{args.kwarg.arg}"] if args.kwarg else []))
    return None


def _renamed(error: dict, report: _Report) -> str | None:
    """What a test's call by keyword says about a parameter the student renamed: the function's
    parameters as written, and the name the problem set gives (the one the test passed)."""
    found = _UNEXPECTED.match(str(error.get("evalue", "")).strip())
    if error.get("ename") != "TypeError" or not found:
        return None
    function, keyword = found.groups()
    owner = next((c for c in report.cells if c.kind == "answer" and function in c.defines), None)
    params = _parameters(owner.source, function) if owner is not None else None
    if params is None:
        return None
    return (f"{_message(error)}: your {function}'s parameters are ({', '.join(params)}); the "
            f"test passes {keyword}=... by the name the problem set gives it: keep the "
            "function's signature")


def _explain(error: dict, report: _Report) -> str:
    """The error of a cell in words, with where it happened and what caused it."""
    name = _NOT_DEFINED.search(str(error.get("evalue", "")))
    if error.get("ename") == "NameError" and name and name.group(1) in report.broken:
        return (f"{name.group(1)} is not defined, because {report.broken[name.group(1)]} "
                "has an error (see above)")
    if error.get("ename") == "NameError" and name:
        owner = next((c for c in report.cells if c.kind == "answer"
                      and c.grade_id == name.group(1)), None)
        if owner is not None and name.group(1) not in owner.defines:
            defined = ", ".join(owner.defines) or "no function"
            where = f" ({owner.question})" if owner.question else ""
            return (f"{name.group(1)} is not defined: your answer cell{where} defines "
                    f"{defined}; keep the function's name")
    if error.get("ename") == "NotImplementedError" and (blank := _blank_answer(error, report)):
        return f"{blank} is not written yet (it still raises NotImplementedError)"
    if error.get("ename") == "AssertionError" and str(error.get("evalue", "")).strip():
        return _message(error)  # the test's own message says what is wrong
    if renamed := _renamed(error, report):
        return renamed
    return _message(error) + _where(error, report)


def _printer(cell: Cell, report: _Report) -> str:
    """Who printed in ``cell``: an answer cell itself; for any other cell (a test, which the
    student cannot change), the student's functions it calls (by name, or in its recorded part),
    named where they are, and the cell."""
    if cell.kind == "answer":
        return cell.label
    called = {f for _, f, _ in report.visible[cell.grade_id].calls} if (
        cell.grade_id in report.visible) else set()
    mine = [c for c in report.cells if c.kind == "answer"
            and any(f in called or re.search(rf"\b{re.escape(f)}\b", cell.source)
                    for f in c.defines)]
    yours = [c.short.replace("your ", "", 1) for c in mine]
    graph = calls(report.nb)  # what those call may be what printed (loo_log_likelihood)
    named = {f for c in mine for f in c.defines}
    deeper = sorted({f for c in mine for f in graph.get(c.grade_id or "", ())} - named)
    also = f" (or the {', '.join(deeper)} {'they call' if len(mine) > 1 else 'it calls'})" \
        if deeper else ""
    return f"your {', '.join(yours)}{also}, called by {cell.label}," if yours else cell.label


def _on_result(run: CellRun, report: _Report) -> None:
    cell = report.cells[run.index]
    if run.dropped:
        _say(f"NOTE  {_printer(cell, report)} printed past the limit of {MAX_OUTPUT:,} "
             "characters of output per notebook: the rest of the notebook's output was dropped, "
             "here and when it is graded (print less: a summary, not every value)")
    report.seen.add(run.index)
    report.running = None
    error = run.error
    if run.timed_out:
        where = _where(error, report) if error else ""
        stopped = "interrupted" if not run.killed else "killed (it ignored the interrupt)"
        text = f"still running after {report.timeout:g} s{where}, so it was {stopped}: " + (
            f"it had printed {run.printed:,} characters, and printing that much takes time "
            "(print less: a summary, not every value)" if run.printed > _MUCH_OUTPUT
            else "does a loop never end?")
        if run.killed:
            text += " No later cell ran."
    elif run.died:
        text = "the kernel died running it (the code ended Python or crashed it). No later cell ran."
    else:
        text = _explain(error, report) if error else ""
    if cell.kind == "test":
        stopped_in = _deepest(error, report) if error else None
        _on_test(cell, report, text if (error or run.timed_out or run.died) else None,
                 stopped_in[0] if stopped_in else None)
        return
    if not (error or run.timed_out or run.died) or run.index in report.reported:
        return
    for name in cell.defines:
        report.broken.setdefault(name, cell.short)
    affects = users(report.cells, cell.defines)
    tail = f"\n      affects: {', '.join(affects)}" if affects else ""
    _say(f"ERROR {cell.label}: {text}{tail}")


def _passing_callees(report: _Report, gid: str, stopped_in: Cell | None = None) -> str:
    """`` (this calls your loo_log_likelihood, ...)``: the earlier functions a failing cell uses
    whose own visible tests passed. The grader also tries them on other inputs, and names one
    that loses points there as the cause; the check cannot know, so it says where else to look.

    ``stopped_in``: the answer cell where the test's error was raised or its time ran out, when
    known. Then the mistake is there: only the earlier functions that cell defines are named (none
    when it is the question's own answer, as for a loop that never ends in it)."""
    every = set(answer_functions(report.nb))
    used = causes(report.nb, every).get(question_of(gid))
    if used and stopped_in is not None and stopped_in.kind == "answer":
        used = [name for name in used if name in stopped_in.defines]
    if not used:
        return ""
    return (f" (this calls your {', '.join(used)}, whose visible test passes here but which the "
            "grader also tries on other inputs: if this function looks right, the mistake may be "
            "there)")


def _on_test(cell: Cell, report: _Report, failure: str | None,
             stopped_in: Cell | None = None) -> None:
    """Print a visible test's line: the grader's verdict on the cell, as far as it can be known
    (``stopped_in``: the answer cell where its error was raised, see :func:`_passing_callees`)."""
    meta = report.nb.cells[cell.index].metadata.get("nbgrader", {})
    head = f"{cell.grade_id} ({meta.get('points', 0):g} pt, {cell.question or 'no question'})"
    gid = cell.grade_id or ""
    judged = report.visible.get(gid)
    if failure is None and judged is not None and report.results:
        failure = verdict(judged, report.results)
    if failure is not None:
        report.failed += 1
        report.lost.add(question_of(gid))
        named = causes(report.nb, report.lost).get(question_of(gid))
        _say(f"FAIL  {head}: {failure}" + (note(named, "in its visible test above") if named
                                           else _passing_callees(report, gid, stopped_in)))
        return
    report.passed += 1
    if judged is None or judged.unchecked:
        named = causes(report.nb, report.lost).get(question_of(gid))
        _say(f"ok    {head}: its test passes; at grading, its points also need your answer to "
             "match the reference on the cell's own inputs, which this check cannot compare"
             + (f" (it uses your {', '.join(named)}, which fails its visible test above: fix "
                "that first, or this cell may lose its point too)" if named else ""))
    else:
        _say(f"ok    {head}")


def _on_slow(index: int, seconds: float, report: _Report) -> None:
    _say(f"      ... {report.cells[index].label} is still running after {seconds:.0f} s "
         f"(stopped at {report.timeout:g} s; Ctrl-C stops the check now)")


def _print_findings(found: list[Finding], report: _Report) -> None:
    if not found:
        return
    _say("Before running:")
    for finding in found:
        _say(f"  - {finding.message}".replace("\n", "\n    "))
        if finding.affects:
            _say(f"    affects: {', '.join(finding.affects)}")
        if finding.kind == "syntax" and finding.cell is not None:
            report.reported.add(finding.cell.index)
            for name in finding.cell.defines:
                report.broken.setdefault(name, finding.cell.short)
    _say()


def _summary(report: _Report, stopped: str | None, missing: int) -> str:
    tests = [c for c in report.cells if c.kind == "test"]
    not_run = [c for c in tests if c.index not in report.seen]
    text = f"{report.passed} passed, {report.failed} failed"
    if missing:
        text += f", {missing} missing"
    if stopped:
        running = report.cells[report.running].label if report.running is not None else None
        during = f" while running {running}" if running else ""
        names = ", ".join(c.grade_id or c.label for c in not_run)
        return (f"stopped by {stopped}{during}; tests not run or not finished: "
                f"{names or 'none'}\n"
                f"{text}, {len(not_run)} not run")
    if not_run:
        text += f", {len(not_run)} not run"
    return text


async def _run(report: _Report, cwd: Path, kernel: dict) -> list[CellRun]:
    def on_start(index: int) -> None:
        report.running = index

    return await run_cells(report.nb, cwd, report.timeout, on_start,
                           lambda run: _on_result(run, report),
                           lambda index, seconds: _on_slow(index, seconds, report), **kernel)


async def _run_until_stopped(report: _Report, cwd: Path,
                             kernel: dict) -> signal.Signals | None:
    """Run the notebook; return the signal that stopped it, if one did. The run is cancelled on
    the first SIGINT or SIGTERM (a second one while the kernel shuts down changes nothing)."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(_run(report, cwd, kernel))
    stopped: list[signal.Signals] = []

    def stop(signum: signal.Signals) -> None:
        if not stopped:
            stopped.append(signum)
            task.cancel()

    for signum in _SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        await task
    except asyncio.CancelledError:
        if not stopped:
            raise
    finally:
        for signum in _SIGNALS:
            loop.remove_signal_handler(signum)
    return stopped[0] if stopped else None


def check(path: Path, timeout: float = CELL_TIMEOUT_S) -> int:
    """Check the notebook at ``path``, printing as it goes; return the exit status."""
    import nbformat

    saved = describe(Path(path))
    nb = nbformat.read(saved.path, as_version=4)
    _say(saved.sentence())
    for warning in staleness_warnings(saved):
        _say(f"Warning: {warning}.")
    report = _Report(nb, read_cells(nb), timeout)
    found = before_running(nb)
    _print_findings(found, report)
    _say(f"Running every cell from the top in a fresh kernel (each at most {timeout:g} s; "
         "Ctrl-C stops):")
    with tempfile.TemporaryDirectory(prefix="coursedata-rules-") as folder:
        # The problem set's rules, kept by the kernel as the grader keeps them.
        rules, options = rulecheck.prepare(nb, Path(folder))
        # The visible cells record their answers, and are judged, as at grading.
        report.results = Path(folder, "results")
        report.visible = visible_checks(nb)
        prepare(nb, report.visible, report.results)
        env = {**(options.get("env") or os.environ), **ONE_THREAD,
               RESULTS_ENV: str(report.results)}
        kernel = {"kernel_args": rules.client_options.get("extra_arguments", []), "env": env}
        stopped = asyncio.run(_run_until_stopped(report, saved.path.parent, kernel))
        rule_lines, broken = rules.report() if not stopped else ([], 0)
    for line in rule_lines:
        _say(line)
    missing = sum(f.kind == "missing test" for f in found)
    _say(_summary(report, _SIGNALS[stopped] if stopped else None, missing))
    if stopped:
        return 128 + stopped  # what a shell reports for a program the signal ended
    problems = any(f.kind in ("missing", "missing test", "changed") for f in found)
    return 1 if report.failed or problems or broken else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m coursedata.check", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebook", type=Path, help="your notebook file (.ipynb)")
    parser.add_argument("--timeout", type=float, default=CELL_TIMEOUT_S,
                        help="seconds a cell may run before it is stopped (default: "
                             f"{CELL_TIMEOUT_S:g}, the grader's limit)")
    args = parser.parse_args(argv)
    if not args.notebook.is_file():
        print(f"error: {args.notebook} is not a file", file=sys.stderr)
        return 2
    if args.timeout <= 0:
        print("error: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    try:
        return check(args.notebook, args.timeout)
    except KeyboardInterrupt:  # Ctrl-C before the kernel started: nothing to clean up
        print("stopped by Ctrl-C before any cell ran", flush=True)
        return 130
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds of errors on bad files
        if type(exc).__module__.startswith(("nbformat", "json")):
            print(f"error: {args.notebook} is not a readable notebook ({exc})", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    raise SystemExit(main())
