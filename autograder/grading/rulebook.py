"""Whether a submission kept its problem set's rules, and what breaking them costs.

A problem set declares what its answers may not use (:mod:`coursedata.rules`, in the source
notebook's metadata; never read from a submission). Two kinds of evidence decide:

- the static reading of the student's cells (:func:`coursedata.reading.read_cells`), done here in
  the grader's own process from the assembled notebook;
- the grading kernel's guard (:mod:`coursedata.guard`), configured by :func:`kernel_env`, which
  refuses forbidden imports to the student's code and logs each refusal in the results folder.

:func:`judge` turns them into a :class:`Verdict`: the recorded cases of every graded function
that used a forbidden module or name (every cell whose check reads one scores 0:
:func:`autograder.grading.scoring.score_results`), one note per such function for the student (which
rule, where, what the problem set allows), and flags for a person: attempts the reading could not
resolve (an import by a computed name, code run from text, a way around the guard) and signs that
the guard was tampered with. A flag costs no points.
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from autograder.checks.record_calls import cases_by_function
from autograder.grading.problemset import ProblemSet
from coursedata.guard import kernel_config, read_log
from coursedata.reading import Finding, Reading, StudentCell, read_cells
from coursedata.rules import Rules, covers

__all__ = [
    "Breach",
    "Verdict",
    "LOG_NAME",
    "kernel_env",
    "judge",
    "student_cells",
    "declaration_problems",
]

#: The guard's log, in the results folder (case names never start with an underscore).
LOG_NAME = "_rules.jsonl"
#: Flags kept per submission (the rest are counted).
MAX_FLAGS = 20


@dataclass(frozen=True)
class Breach:
    """A graded function that used something the rules forbid.

    Attributes
    ----------
    function : str
    entry : str
        The ``forbid`` entry it broke (``"sklearn"``).
    where : str
        Where and how, in plain words.
    cases : tuple of str
        The recorded cases of the function: every cell whose check reads one scores 0.
    named : str
        How the message names it when the function is the course's (a hidden cell's chain of
        the student's functions): ``"your predict_log_proba (through the test's _spam_filter)"``.
    """

    function: str
    entry: str
    where: str
    cases: tuple[str, ...]
    named: str = ""

    def to_dict(self) -> dict:
        return {
            "function": self.function,
            "entry": self.entry,
            "where": self.where,
            "cases": list(self.cases),
            "named": self.named,
        }

    @property
    def who(self) -> str:
        """The function in the student's words: theirs, or the test's that calls theirs."""
        return self.named or self.function

    @property
    def message(self) -> str:
        """The message of a cell that reads one of its cases."""
        return (
            f"0 points: {self.who} used {self.entry}, which this problem set does not "
            f"allow (see the note above)"
        )


@dataclass
class Verdict:
    """What the rules cost a submission (see :func:`judge`).

    Attributes
    ----------
    breaches : list of Breach
    notes : list of str
        One sentence per breach, for the student.
    flags : list of str
        For a person to look at; no points change.
    """

    breaches: list[Breach] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)

    @property
    def tainted(self) -> dict[str, str]:
        """``{case: message}`` for every recorded case of a function that broke the rules."""
        out: dict[str, str] = {}
        for breach in self.breaches:
            for case in breach.cases:
                out.setdefault(case, breach.message)
        return out


def _course_calls(ps: ProblemSet) -> dict[str, frozenset[str]]:
    """``{function the course defines: graded functions it refers to}``, read once per source."""
    sources = tuple(
        c.source for c in ps.source.cells if c.cell_type == "code" and not _meta(c).get("solution")
    )
    return _calls_in(sources, tuple(sorted(cases_by_function(ps.source))))


@functools.lru_cache(maxsize=32)
def _calls_in(sources: tuple[str, ...], graded: tuple[str, ...]) -> dict:
    reading = read_cells(
        [StudentCell(f"course cell {i}", s) for i, s in enumerate(sources)],
        Rules(forbid=()),
        graded,
    )
    return {f: frozenset(c) for f, c in reading.calls.items() if f}


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


def student_cells(ps: ProblemSet, notebook: nbformat.NotebookNode) -> list[StudentCell]:
    """The student's code in an assembled notebook: the answer cells (with their question) and
    every code cell that is not the course's own."""
    course = {
        c.source for c in ps.source.cells if c.cell_type == "code" and not _meta(c).get("solution")
    }
    cells, previous = [], None
    for cell in notebook.cells:
        gid = _meta(cell).get("grade_id")
        if cell.cell_type == "code":
            if _meta(cell).get("solution"):
                assert gid is not None, "an assembled notebook's answer cells are the source's"
                cells.append(StudentCell(gid, cell.source, gid))
            elif cell.source not in course:
                label = (
                    f"a cell you added after {previous!r}"
                    if previous
                    else "a cell you added at the top"
                )
                cells.append(StudentCell(label, cell.source, None))
        if gid:
            previous = gid
    return cells


def kernel_env(ps: ProblemSet, notebook: nbformat.NotebookNode, log: Path) -> dict[str, str]:
    """The environment that makes the grading kernel keep ``ps``'s rules (empty without rules)."""
    rules = ps.rules
    if rules is None:
        return {}
    trusted = [
        c.source for c in ps.source.cells if c.cell_type == "code" and not _meta(c).get("solution")
    ]
    answers = {
        c.source: _meta(c)["grade_id"]
        for c in notebook.cells
        if c.cell_type == "code" and _meta(c).get("solution")
    }
    return kernel_config(rules, trusted, answers, str(log))


def _words(text: str) -> str:
    return " ".join(text.split())


def _closest(statement: str, text: str) -> tuple[int, str]:
    """``(words in common, passage)``: the passage of ``text`` that reads most like
    ``statement`` (the most words of it in order; of those, the one nearest its length, then
    the one that starts or ends as it does)."""
    said, words = statement.split(), text.split()
    best, passage = (-1, 0, 0), ""
    for size in range(max(1, len(said) - 5), len(said) + 6):
        for start in range(max(1, len(words) - size + 1)):
            window = words[start : start + size]
            matcher = difflib.SequenceMatcher(None, said, window, autojunk=False)
            ends = (window[0] == said[0]) + (window[-1] == said[-1])
            score = (
                sum(b.size for b in matcher.get_matching_blocks()),
                -abs(size - len(said)),
                ends,
            )
            if score > best:
                best, passage = score, " ".join(window)
    return best[0], passage


def _cell_label(nb: nbformat.NotebookNode, cell: nbformat.NotebookNode) -> str:
    gid = _meta(cell).get("grade_id")
    return f"cell `{gid}`" if gid else f"cell {nb.cells.index(cell) + 1}"


def _unsaid(ps: ProblemSet, where: str | None, statement: str, cells: list) -> str:
    """The rule ``statement`` (of the problem set, or of the answer ``where``) that the text of
    ``cells`` does not say word for word: the cell closest to saying it, what it says there,
    where the declared rule lives and the fix."""
    closest = {id(c): _closest(statement, c.source) for c in cells}
    cell = max(cells, key=lambda c: closest[id(c)][0])
    label = _cell_label(ps.source, cell)
    declared = (
        "course.rules.statement"
        if where is None
        else (f'course.rules.questions["{where}"].statement')
    )
    return (
        f"{ps.notebook_name}, {label}: the instructions do not say the declared rule word for "
        f"word: the cell says “{closest[id(cell)][1]}”, the notebook's metadata "
        f"{declared} says “{statement}”. Make them say the same (edit the text of {label} or "
        f"{declared} in the notebook's metadata)"
    )


def declaration_problems(ps: ProblemSet) -> list[str]:
    """What is wrong with ``ps``'s declared rules, in words (empty when nothing is).

    The source must declare rules (``metadata.course.rules``), its instructions (the first cell)
    must say the declaration's statement word for word and the statement must name every
    forbidden entry in backticks; a question's own statement must be in the notebook's text. A
    statement the text does not say is named at the cell closest to saying it, with what that
    cell says (:func:`_unsaid`).
    """
    try:
        rules = ps.rules
    except ValueError as exc:
        return [f"{ps.name}: its rules cannot be read: {exc}"]
    if rules is None:
        return [
            f"{ps.name}: the source notebook declares no rules: add to its notebook metadata "
            '"course": {"rules": {"forbid": [...], "allow": [...], "statement": "..."}}, '
            "the statement said word for word in the first cell"
        ]
    problems = []
    intro = _words(ps.source.cells[0].source) if ps.source.cells else ""
    if ps.source.cells and _words(rules.statement) not in intro:
        problems.append(_unsaid(ps, None, rules.statement, ps.source.cells[:1]))
    texts = [c for c in ps.source.cells if c.cell_type == "markdown"]
    text = _words("\n".join(c.source for c in texts))
    for where, declared in [(None, rules)] + list(rules.questions.items()):
        if where is not None and where not in ps.solution_ids:
            problems.append(f"{ps.name}: rules for {where!r}, which is no answer cell")
        if where is not None and _words(declared.statement) not in text:
            problems.append(
                _unsaid(ps, where, declared.statement, texts)
                if texts
                else f"{ps.name}: the text does not say the rule of {where!r}"
            )
        for entry in declared.forbid:
            if f"`{entry}`" not in declared.statement:
                problems.append(f"{ps.name}: the rule's statement does not name `{entry}`")
    return problems


def _line(entry: dict) -> str:
    """`` (line N)`` of a guard's log entry when it states a plausible line number, else
    nothing (the kernel's code can write any value there)."""
    line = entry.get("line")
    ok = isinstance(line, int) and not isinstance(line, bool) and 0 < line < 100_000
    return f" (line {line})" if ok else ""


def _static(finding: Finding) -> str:
    return f"{finding.how} ({finding.where()})"


def judge(ps: ProblemSet, notebook: nbformat.NotebookNode, log: Path | None) -> Verdict:
    """Judge the assembled ``notebook`` against ``ps``'s rules (see the module docstring).

    Parameters
    ----------
    ps : ProblemSet
    notebook : NotebookNode
        The assembled notebook (:meth:`ProblemSet.assemble`); only the student's cells are read.
    log : Path or None
        The guard's log of the kernel that ran it (None: it did not run).
    """
    rules = ps.rules
    verdict = Verdict()
    if rules is None:
        return verdict
    cases = cases_by_function(ps.source)
    try:
        reading = read_cells(student_cells(ps, notebook), rules)
    except (RecursionError, MemoryError):  # code nested beyond what ast can read
        reading = Reading()
        verdict.flags.append(
            "the answer cells are nested too deeply to be read: a person should read them"
        )
    # A graded function the course defines (a hidden cell chaining the student's functions)
    # uses what the student's functions it calls use.
    for function, callees in _course_calls(ps).items():
        if function in cases and function not in reading.defined:
            reading.calls[function] = set(callees) & set(reading.defined)
    found: dict[str, tuple[str, str]] = {}
    through_test: dict[str, str] = {}
    for function in cases:
        uses = reading.uses(function)
        if uses:
            chain, finding = uses[0]
            assert finding.entry is not None, (
                "Reading.uses returns uses only: each breaks a forbid entry"
            )
            via = "".join(f"calls {b}, which " for b in chain[1:])
            found[function] = (finding.entry, via + _static(finding))
            if function not in reading.defined and len(chain) > 1:
                through_test[function] = f"your {chain[-1]} (through the test's {function})"
    entries = read_log(log) if log is not None else []
    for entry in entries:
        if entry.get("event") != "refused":
            continue
        # Written in the student's kernel: anything may be there, of any type. What reaches the
        # student is the grader's: the forbid entry that covers the module, and a line number.
        module = str(entry.get("module"))[:200]
        covering = [e for e in rules.every_forbidden() if covers(e, module)]
        rule = entry.get("entry") if entry.get("entry") in covering else next(iter(covering), None)
        if rule is None:
            verdict.flags.append(f"tampering: the rule log names {module!r}, which no rule forbids")
            continue
        functions = entry.get("functions")
        named = [
            f
            for f in (functions if isinstance(functions, list) else [])
            if isinstance(f, str) and f in cases
        ]
        case = entry.get("case")
        named += [
            f for f, cs in cases.items() if isinstance(case, str) and case in cs and f not in named
        ]
        for function in named:
            found.setdefault(
                function,
                (
                    rule,
                    f"tried to import {rule}, which the grading kernel refused{_line(entry)}",
                ),
            )
        covered = any(
            f.entry is not None and f.line == entry.get("line") and covers(f.entry, module)
            for f in reading.findings
        )
        if not named and not covered:
            verdict.flags.append(
                f"the grading kernel refused to import {module} outside any "
                f"graded function (line {entry.get('line')})"
            )
    for function, (forbidden, where) in found.items():
        breach = Breach(
            function, forbidden, where, tuple(cases[function]), through_test.get(function, "")
        )
        verdict.breaches.append(breach)
        cell = reading.defined.get(function, (None, 0))[0]
        statement = rules.policy(cell if cell in rules.questions else None).statement
        verdict.notes.append(
            f"{breach.who} used {forbidden}, which this problem set does not allow: it {where}. "
            f"The rule: “{statement}” Every test of {breach.who}, visible or hidden, scores 0."
        )
    counted = {id(f) for b in found for _, f in reading.uses(b)}
    for finding in reading.findings:
        if not finding.is_use:
            verdict.flags.append(f"{finding.how} ({finding.where()})")
        elif id(finding) not in counted:
            verdict.flags.append(f"{finding.how} ({finding.where()}); no graded function uses it")
    if log is not None:
        if not any(e.get("event") == "installed" for e in entries):
            verdict.flags.append(
                "the grading kernel's rule log is missing or lacks its start: "
                "the rules were not enforced while it ran, or the log was "
                "removed"
            )
        verdict.flags += [
            f"tampering: {str(e.get('what'))[:200]}"
            for e in entries
            if e.get("event") == "tampered"
        ]
    flags = list(dict.fromkeys(verdict.flags))
    verdict.flags = flags[:MAX_FLAGS] + (
        [f"and {len(flags) - MAX_FLAGS} more of the kind"] if len(flags) > MAX_FLAGS else []
    )
    return verdict
