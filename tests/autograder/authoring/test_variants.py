"""The self-check's generic variants: a view of some graded cells (``Subset``) is scored as its
problem set is, with that problem set's own course."""

from __future__ import annotations

import shutil
import sys

from autograder.authoring.variants import Subset
from autograder.checks.registry import checks_for
from autograder.course import CODE_PACKAGE, Course
from autograder.grading.problemset import ProblemSet
from autograder.settings import COURSE_DIR


def _copy_course(root):
    course = root / "course"
    shutil.copytree(COURSE_DIR, course, ignore=shutil.ignore_patterns(
        "release", "submitted", "autograded", "feedback", "gradebook.db", ".scratch*"))
    return Course(course)


def test_a_subset_keeps_the_cells_asked_for_in_notebook_order(tmp_path):
    ps = ProblemSet(Course.default().problem_sets()[0])
    autograded = [c.grade_id for c in ps.grade_cells if c.autograded]
    asked = autograded[::-2]  # reversed, every other one
    subset = Subset(ps, iter(asked))  # a one-pass iterable is read once
    assert [c.grade_id for c in subset.grade_cells] == [g for g in autograded if g in asked]
    assert (subset.name, subset.source) == (ps.name, ps.source)


def test_a_subset_is_scored_with_its_own_courses_code(tmp_path):
    """Scoring reads the course's code through the package ``course`` (the course in use): a
    subset of a problem set of a copy of the course, scored after another course came into use,
    must bring its own course back into use, as its problem set does."""
    copy = _copy_course(tmp_path)
    name = copy.problem_sets()[0]
    ps = ProblemSet(name, copy)
    try:
        ProblemSet(name)  # the default course comes into use
        assert list(sys.modules[CODE_PACKAGE].__path__) == [str(Course.default().root)]
        checks_for(Subset(ps, [c.grade_id for c in ps.grade_cells]))
        assert list(sys.modules[CODE_PACKAGE].__path__) == [str(copy.root)]
    finally:
        Course.default().use_code()
