"""The problem set's rules in the student's check command (``python -m coursedata.check``).

The released notebook carries its problem set's rules in its metadata (:mod:`coursedata.rules`).
:func:`prepare` makes the check's kernel keep them exactly as the grading kernel does
(:mod:`coursedata.guard`: a forbidden import fails with the rule in its message), and
:meth:`LocalRules.report` says, after the run, which functions break them and how, from the same
static reading the grader does (:mod:`coursedata.reading`) and the guard's refusals.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from coursedata.guard import KERNEL_ARGUMENT, kernel_config, read_log
from coursedata.reading import StudentCell, read_cells
from coursedata.rules import Rules

__all__ = ["LocalRules", "prepare"]


def _meta(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


@dataclass
class LocalRules:
    """A notebook's rules for one local check: how to start its kernel, and the report."""

    rules: Rules | None
    cells: list[StudentCell]
    log: Path | None

    @property
    def client_options(self) -> dict:
        """Keyword arguments of ``nbclient.NotebookClient``."""
        return {"extra_arguments": [KERNEL_ARGUMENT]} if self.rules is not None else {}

    def kernel_options(self, answers: dict[str, str], trusted: list[str]) -> dict:
        if self.rules is None:
            return {}
        env = {**os.environ, **kernel_config(self.rules, trusted, answers, str(self.log))}
        return {"env": env}

    def report(self) -> tuple[list[str], int]:
        """The lines to print and the number of functions that break the rules."""
        if self.rules is None:
            return ["rules: this notebook declares none (was its metadata removed?); the "
                    "grader applies the problem set's rules all the same"], 0
        reading = read_cells(self.cells, self.rules)
        answers = [name for name, (cell, _) in reading.defined.items()
                   if any(c.label == cell and c.question for c in self.cells)]
        lines, broken = [], 0
        statement = self.rules.policy(None).statement
        for function in answers:
            uses = reading.uses(function)
            if not uses:
                continue
            broken += 1
            chain, finding = uses[0]
            via = "".join(f"calls {b}, which " for b in chain[1:])
            lines.append(f"RULE  {function} uses {finding.entry}: it {via}{finding.how} "
                         f"({finding.where()}); the grader gives 0 to every test of {function}")
        seen = set()
        for entry in read_log(self.log) if self.log else []:
            if entry.get("event") == "refused" and (entry.get("module"), entry.get("line")) \
                    not in seen:
                seen.add((entry.get("module"), entry.get("line")))
                if any(f.line == entry.get("line") and f.is_use for f in reading.findings):
                    continue
                who = ", ".join(entry.get("functions") or []) or "your code"
                lines.append(f"RULE  {who} imported {entry.get('module')} (line "
                             f"{entry.get('line')}), which this problem set does not allow")
                broken += 1
        for finding in reading.attempts:
            lines.append(f"note  {finding.how} ({finding.where()}): the grader refuses "
                         f"forbidden modules however they are reached, and a person reads such "
                         f"code")
        head = (f"rules: {len(answers)} answer functions read against the problem set's rule "
                f"“{statement}”: " + (f"{broken} break it" if broken else "none breaks it"))
        return [head] + lines, broken


def prepare(notebook, folder: Path) -> tuple[LocalRules, dict]:
    """The rules of ``notebook`` for a check run, and the keyword arguments of ``execute``.

    ``folder`` is a private scratch folder (the guard's log goes there).
    """
    try:
        rules = Rules.from_metadata(notebook.get("metadata", {}))
    except ValueError:
        rules = None
    cells, answers, trusted = [], {}, []
    previous = None
    for cell in notebook.get("cells", []):
        gid = _meta(cell).get("grade_id")
        if cell.get("cell_type") == "code":
            if _meta(cell).get("solution"):
                cells.append(StudentCell(str(gid), cell.source, gid))
                answers[cell.source] = str(gid)
            elif _meta(cell):
                trusted.append(cell.source)
            else:
                label = f"a cell after {previous!r}" if previous else "a cell at the top"
                cells.append(StudentCell(label, cell.source, None))
        if gid:
            previous = gid
    local = LocalRules(rules, cells, Path(folder) / "rules.jsonl" if rules else None)
    return local, local.kernel_options(answers, trusted)
