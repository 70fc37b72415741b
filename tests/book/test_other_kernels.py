"""The book and the numerical tests hold on other machines, not only on this one.

Another processor's OpenBLAS kernel and NumPy loops round differently (:mod:`tests.blas`). Here
every chapter is executed again, hidden checks included, under two kernels other than this run's
(one that every processor of the architecture runs, ``Prescott`` on x86-64, with NumPy's loops at
their baseline; and one with wide vectors, ``Haswell`` where the processor has AVX2, with NumPy's
loops without the widest vectors the processor has), and every number the text quotes through ``glue`` is
printed as the page prints it and compared with the default build's (fixture ``html``), and so is
every code cell's printed output (cells tagged ``varies-by-machine``, a timing, excepted): a number
that reads differently on another machine is a failure. The unit tests (``-m "not slow"``: the
reference's tests against SciPy and scikit-learn, and the grader's comparisons) run again under
each kernel too. A kernel the processor cannot run is never silently skipped: another is chosen,
and the test says which in a warning; with none left, it fails.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import jupytext
import nbformat
import pytest
from myst_nb.core.variables import format_plain_text
from nbclient import NotebookClient

from tests import ROOT, blas
from tests.book.test_book import CHAPTERS

SLOW_FIXTURES = ("kernels",)

#: A glue role in the text: ``{glue}`key```, ``{glue:text}`key:.2f```, ``{glue:md}`key```.
GLUE_ROLE = re.compile(r"\{glue(?::(\w+))?\}`([^`]+)`")
#: A glue directive: ```` ```{glue:figure} key ````, ```` ```{glue:math} key ````.
GLUE_DIRECTIVE = re.compile(r"^\s*[`:]{3,}\{glue(?::(\w+))?\}\s+(\S+)", re.MULTILINE)


# ------------------------------------------------------------------------------------------------
# What the page prints of a glued value


def quoted(text: str) -> list[tuple[str, str, str]]:
    """The glued values a chapter's text shows: ``(key, kind, format spec)`` for each use."""
    uses = []
    for kind, content in GLUE_ROLE.findall(text):
        key, _, spec = content.partition(":") if kind in ("", "text") else (content, "", "")
        uses.append((key.split("::")[-1], kind or "any", spec))
    uses += [(key, kind or "any", "") for kind, key in GLUE_DIRECTIVE.findall(text)]
    return uses


def printed(data: dict[str, str], kind: str, spec: str) -> str | None:
    """The text a page shows for glued ``data`` (``None`` for an image, which shows no number),
    made by the function the book's build uses (myst-nb's ``format_plain_text``)."""
    if kind == "text":
        return format_plain_text(data["text/plain"], spec or "s")
    if any(mime.startswith("image/") for mime in data) or kind == "figure":
        return None
    for mime in {"md": ("text/markdown",), "math": ("text/latex",)}.get(
            kind, ("text/html", "text/markdown", "text/latex")):
        if mime in data:
            return data[mime]
    return data["text/plain"]


def glued(notebook: nbformat.NotebookNode) -> dict[str, dict[str, str]]:
    """The values an executed notebook glued, by key, with their MIME prefixes removed."""
    found = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook")
            if scrap:
                prefix = scrap.get("mime_prefix", "")
                found[scrap["name"]] = {m.removeprefix(prefix): v for m, v in output["data"].items()}
    return found


def differences(text: str, here: dict, there: dict) -> list[str]:
    """Every quoted number that reads differently in two runs of a chapter, as a sentence."""
    found = []
    for key, kind, spec in dict.fromkeys(quoted(text)):
        if key not in here or key not in there:
            found.append(f"{key}: glued in only one run")
            continue
        mine, theirs = printed(here[key], kind, spec), printed(there[key], kind, spec)
        if mine != theirs:
            found.append(f"{key} ({kind}{':' + spec if spec else ''}): {theirs!r} by default, "
                         f"{mine!r} under the other kernel")
    return found


#: The tag of a cell whose printed output is meant to differ between machines (a timing).
VARIES = "varies-by-machine"


def printed_outputs(notebook: nbformat.NotebookNode) -> list[tuple[str, str]]:
    """``(source, printed lines)`` of each code cell: what it printed and the plain text of the
    values it displayed (figures excluded), each distinct line once, in order, blank lines left out.

    The build's saved notebook is myst-nb 1.4's ``coalesce_streams`` (``nb_merge_streams``) at
    work: it appends a cell's later ``stdout`` streams to its first one in place, and the saved
    copy keeps the later streams as well (so lines the page shows once repeat, when a ``glue``
    display stood between two prints); and it ends each piece with one newline after stripping
    it, so a stream the kernel happened to send in two pieces gains a blank line where the split
    fell before a newline, and a line break where it fell inside a line (``print(text, array)``
    writes its arguments one by one). Which pieces a kernel sends is timing, not arithmetic, so
    :func:`output_differences` compares the printed words, not the lines."""
    found = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        parts = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stdout":
                parts.append(output.get("text", ""))
            elif output.get("output_type") in ("execute_result", "display_data"):
                data = output.get("data", {})
                if not any(m.startswith("image/") for m in data):
                    parts.append(data.get("text/plain", ""))
        lines = [line for line in "".join(parts).splitlines() if line.strip()]
        found.append((cell.source, "\n".join(dict.fromkeys(lines))))
    return found


def output_differences(here: nbformat.NotebookNode, there: nbformat.NotebookNode) -> list[str]:
    """Every code cell whose printed output reads differently in two runs of a chapter (cells
    tagged :data:`VARIES` excepted), with the first line that differs."""
    tagged = {c.source for c in there.cells if VARIES in c.get("metadata", {}).get("tags", [])}
    theirs = dict(printed_outputs(there))
    found = []
    for source, mine in printed_outputs(here):
        first = (source.splitlines() or [""])[0][:60]
        if source not in theirs:
            found.append(f"the cell starting {first!r} is not in the default build")
            continue
        if source in tagged or mine.split() == theirs[source].split():
            continue
        pairs = zip(theirs[source].splitlines() + [""], mine.splitlines() + [""])
        default, other = next(((a, b) for a, b in pairs if a != b), (theirs[source], mine))
        found.append(f"the cell starting {first!r} prints {default!r} by "
                     f"default, {other!r} under the other kernel")
    return found


def test_a_printed_line_that_moves_is_found_unless_the_cell_says_it_varies():
    """The printed-output comparison can fail: a changed digit is found; a tagged cell is not."""
    def run(text, tags=()):
        cell = nbformat.v4.new_code_cell("print(x)", metadata={"tags": list(tags)})
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        return nbformat.v4.new_notebook(cells=[cell])

    assert output_differences(run("gap 1.4e-15\n"), run("gap 1.4e-15\n")) == []
    assert output_differences(run("gap 7.8e-16\n"), run("gap 1.4e-15\n")) == [
        "the cell starting 'print(x)' prints 'gap 1.4e-15' by default, 'gap 7.8e-16' under the "
        "other kernel"]
    assert output_differences(run("12.0 ms\n"), run("9.1 ms\n", [VARIES])) == []
    assert output_differences(run("x"), nbformat.v4.new_notebook(cells=[])) == [
        "the cell starting 'print(x)' is not in the default build"]


def test_a_line_the_build_saves_twice_is_read_once():
    """The built notebook of a cell that prints, glues and prints again (myst-nb's in-place
    merge) reads as the page does: each printed line once."""
    def stream(text):
        return nbformat.v4.new_output("stream", name="stdout", text=text)

    glue = nbformat.v4.new_output("display_data", data={"text/plain": ""})
    run = nbformat.v4.new_code_cell("f()")
    run.outputs = [stream("a\n"), glue, stream("b 1.5\n")]
    built = nbformat.v4.new_code_cell("f()")
    built.outputs = [stream("a\nb 1.5\n"), stream("b 1.5\n")]
    moved = nbformat.v4.new_code_cell("f()")
    moved.outputs = [stream("a\nb 1.6\n"), stream("b 1.6\n")]

    def notebook(cell):
        return nbformat.v4.new_notebook(cells=[cell])

    assert output_differences(notebook(run), notebook(built)) == []
    split = nbformat.v4.new_code_cell("f()")  # "a" then "\nb 1.5\n" in two pieces, merged
    split.outputs = [stream("a\n\nb 1.5\n"), stream("\nb 1.5\n")]
    assert output_differences(notebook(run), notebook(split)) == []
    broken = nbformat.v4.new_code_cell("f()")  # "b" then " 1.5\n": a print's arguments, merged
    broken.outputs = [stream("a\nb\n 1.5\n"), stream(" 1.5\n")]
    assert output_differences(notebook(run), notebook(broken)) == []
    assert output_differences(notebook(run), notebook(moved)) == [
        "the cell starting 'f()' prints 'b 1.6' by default, 'b 1.5' under the other kernel"]


def test_a_quoted_number_that_moves_at_its_printed_precision_is_found():
    """The comparison can fail: a change in the printed digit shows, one past it does not."""
    text = "error {glue:text}`err:.2f` on {glue:text}`n` points, {glue}`tab`, {glue:text}`s:.0%`"
    base = {"err": {"text/plain": "0.1234"}, "n": {"text/plain": "40"},
            "tab": {"text/html": "<b>1</b>", "text/plain": "x"}, "s": {"text/plain": "0.125"}}
    assert differences(text, base, base) == []
    assert differences(text, dict(base, err={"text/plain": "0.1249"}), base) == []
    moved = differences(text, dict(base, err={"text/plain": "0.1251"}), base)
    assert moved == ["err (text:.2f): '0.12' by default, '0.13' under the other kernel"]
    assert differences(text, dict(base, tab={"text/html": "<b>2</b>"}), base)
    assert differences(text, {k: v for k, v in base.items() if k != "n"}, base)


def test_glue_uses_are_read_from_roles_and_directives():
    text = ("{glue:text}`a:.1f` and {glue}`b` and {glue:md}`c`\n"
            "```{glue:figure} fig\n:alt: x\n```\n:::{glue:math} eq\n:::\n")
    assert quoted(text) == [("a", "text", ".1f"), ("b", "any", ""), ("c", "md", ""),
                            ("fig", "figure", ""), ("eq", "math", "")]


# ------------------------------------------------------------------------------------------------
# Choosing the kernels


def test_a_kernel_the_processor_cannot_run_is_never_chosen():
    skylake = next(k for k in blas.X86_64 if k.name == "SkylakeX")
    assert not blas.runs_here(skylake, frozenset({"sse2", "avx", "avx2", "fma"}))
    assert blas.runs_here(skylake, frozenset({"avx512f", "avx512bw", "avx512dq", "avx512vl"}))


def test_no_kernel_left_is_a_failure_not_a_pass():
    with pytest.raises(RuntimeError, match="no other OpenBLAS kernel"):
        blas.choose(("NoSuchKernel",), set())


@pytest.fixture(scope="session")
def kernels() -> list[blas.Choice]:
    """The other kernels, chosen once; each choice that fell back says so in a warning."""
    chosen = blas.other_kernels()
    for choice in chosen:
        if "; " in choice.note:
            warnings.warn(f"OpenBLAS kernel: {choice.note}", stacklevel=1)
    return chosen


def test_the_other_kernels_really_compute_otherwise(kernels):
    """Each chosen kernel takes over in a new process, none is the one of this run, and NumPy's
    loops run narrower than this run's."""
    default = blas.reported(None)
    assert len({c.reports for c in kernels} | {tuple(default["openblas"])}) == len(kernels) + 1
    for choice in kernels:
        now = blas.reported(choice.kernel, choice.numpy_off)
        assert (tuple(now["openblas"]), tuple(now["numpy"])) == (choice.reports, choice.numpy)
        assert set(choice.numpy) < set(default["numpy"]) or not default["numpy"], choice


# ------------------------------------------------------------------------------------------------
# The chapters and the unit tests under each kernel

def execute_chapter(chapter: str, choice: blas.Choice) -> nbformat.NotebookNode:
    """The chapter executed as the book's build does (its folder as the working directory), in a
    kernel started to compute as ``choice`` says; a last cell prints what it computed with."""
    path = ROOT / f"{chapter}.md"
    notebook = jupytext.read(path)
    notebook.cells.append(nbformat.v4.new_code_cell(blas.REPORT))
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", allow_errors=False)
    client.execute(cwd=str(path.parent), env=choice.environment())
    return notebook


class _UnderAnotherKernel:
    """Tests run under the kernel :attr:`SLOT` of :func:`tests.blas.other_kernels`."""

    SLOT = 0

    @pytest.mark.parametrize("chapter", CHAPTERS)
    def test_chapter_runs_and_quotes_the_same_numbers(self, kernels, html, chapter):
        choice = kernels[self.SLOT]
        notebook = execute_chapter(chapter, choice)
        printed_kernel = "".join(o.get("text", "") for o in notebook.cells[-1].outputs
                                 if o.get("name") == "stdout")
        in_use = json.loads(printed_kernel)
        assert (tuple(in_use["openblas"]), tuple(in_use["numpy"])) == (
            choice.reports, choice.numpy), f"the chapter ran with {in_use}, not as {choice}"
        default_file = html.parent / "jupyter_execute" / f"{chapter}.glue.json"
        default = json.loads(default_file.read_text()) if default_file.exists() else {}
        default = {k: v["data"] for k, v in default.items()}
        text = (ROOT / f"{chapter}.md").read_text()
        moved = differences(text, glued(notebook), default)
        assert not moved, (f"{chapter} under OpenBLAS {choice.kernel} ({choice.note}): quoted "
                           "numbers that read differently on another machine:\n" + "\n".join(moved))
        built = html.parent / "jupyter_execute" / f"{chapter}.ipynb"
        chapter_only = nbformat.from_dict({**notebook, "cells": notebook.cells[:-1]})  # no report
        printed_moved = output_differences(chapter_only, nbformat.read(built, as_version=4))
        assert not printed_moved, (f"{chapter} under OpenBLAS {choice.kernel} ({choice.note}): "
                                   "printed output that reads differently on another machine:\n"
                                   + "\n".join(printed_moved))

    def test_unit_tests_pass(self, kernels, tmp_path):
        choice = kernels[self.SLOT]
        done = subprocess.run(
            [sys.executable, "-m", "pytest", str(ROOT / "tests"), "-m", "not slow", "-q",
             "-p", "no:cacheprovider", "-p", "no:xdist", "--basetemp", str(tmp_path / "run")],
            capture_output=True, text=True, cwd=ROOT, env=choice.environment(),
            timeout=1800)
        assert done.returncode == 0, (f"the unit tests under OpenBLAS {choice.kernel} "
                                      f"({choice.note}):\n{done.stdout[-6000:]}{done.stderr[-2000:]}")


class TestEveryProcessorsKernel(_UnderAnotherKernel):
    """Prescott on x86-64 (SSE3, every such processor), ARMV8 on 64-bit Arm."""

    SLOT = 0


class TestWideVectorKernel(_UnderAnotherKernel):
    """Haswell on x86-64 where the processor has AVX2 (another kernel where it is the default)."""

    SLOT = 1
