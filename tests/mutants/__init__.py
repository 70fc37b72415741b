"""Realistic mistakes ("mutants") for each problem set: each must lose points on its question.

``tests/mutants/<problem_set>.py`` defines ``MUTANTS``, a list of :class:`Mutant`. A mutant edits
one solution cell of the source notebook by exact text replacement; the test grades the mutated
notebook and asserts that the listed graded cells together lose points.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    name: str
    cell: str  # grade_id of the solution cell to edit
    find: str  # exact text, which must occur once in that cell
    replace: str
    loses: tuple[str, ...]  # grade_ids of the test cells whose total must drop


def visible_alone(mutant: Mutant) -> Mutant:
    """``mutant`` required to lose points on its visible test cell alone: the visible test itself
    catches it, so the student sees the mistake before submitting."""
    visible = tuple(cell for cell in mutant.loses if cell.endswith("_visible"))
    assert len(visible) == 1, mutant
    return Mutant(f"{mutant.name} (caught by the visible test)", mutant.cell, mutant.find,
                  mutant.replace, visible)


def named(mutants: list[Mutant], *names: str) -> list[Mutant]:
    """The mutants of ``mutants`` with these names, in that order."""
    by_name = {m.name: m for m in mutants}
    return [by_name[name] for name in names]
