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
