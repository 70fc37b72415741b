"""What the course tells students about the hidden tests is what the grader does.

Issue 36: problem set 5's Silverman bandwidth hard-coded to the visible example lost its visible
point and half a point of the hidden cell, whose feedback quoted the visible case's inputs: the
hidden cells' weights may name the visible cases (authoring.md), while the course page and the
check's ``--help`` said only that hidden tests try "other inputs".
"""

from __future__ import annotations

from autograder.grading.problemset import ProblemSet, list_problem_sets
from coursedata import check
from coursedata.naming import VISIBLE
from tests import ROOT

_SAID = "score the visible test's inputs"


def _visible_cases_weighed_again(names: list[str] | None = None) -> list[str]:
    """``ps5_kde: bandwidth_rules_hidden weighs scott``: every visible case a hidden cell scores."""
    found = []
    for name in list_problem_sets() if names is None else names:
        ps = ProblemSet(name)
        visible = set()
        for cell in ps.source.cells:
            meta = cell.metadata.get("nbgrader", {})
            declared = cell.metadata.get("course", {}).get("check", {})
            if str(meta.get("grade_id", "")).endswith(f"_{VISIBLE}"):
                visible |= set(declared.get("cases", {}))
        for cell in ps.source.cells:
            weights = cell.metadata.get("course", {}).get("check", {}).get("weights", {})
            gid = cell.metadata.get("nbgrader", {}).get("grade_id")
            found += [f"{name}: {gid} weighs {case}" for case in sorted(visible & set(weights))]
    return found


def test_the_course_page_and_the_check_say_hidden_cells_score_the_visible_inputs_again():
    again = _visible_cases_weighed_again()
    page = " ".join((ROOT / "problem_sets.md").read_text().split())
    help_text = " ".join((check.__doc__ or "").split())
    for text in (page, help_text):  # said exactly when true
        assert (_SAID in text) == bool(again), again[:3]


def _said(text: str) -> bool:
    return _SAID in " ".join(text.split())


def test_each_problem_set_and_its_chapter_say_it_where_it_is_true():
    """The notebook's Rules paragraph, which the student reads first, and the chapter page that
    hands the notebook out say what the problem set's own hidden cells do."""
    chapters = {path: path.read_text() for path in sorted((ROOT / "chapters").glob("*.md"))}
    for name in list_problem_sets():
        again = bool(_visible_cases_weighed_again([name]))
        rules = [c.source for c in ProblemSet(name).source.cells
                 if c.cell_type == "markdown" and "**Rules.**" in c.source]
        assert len(rules) == 1, name
        assert _said(rules[0]) == again, name
        handing_out = [path for path, text in chapters.items() if f"release/{name}/" in text]
        assert handing_out, f"no chapter hands out {name}"
        for path in handing_out:
            assert _said(chapters[path]) == again, (path.name, name)
