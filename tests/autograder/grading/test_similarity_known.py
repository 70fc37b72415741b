"""The similarity page also compares every submission with the book's published code.

The library (``solutions/``, published as the wheel ``mfpm-book``) and the chapters' code are
public when the book is: a submission whose answer is lifted from them is named on the page
beside the source, and honest work is not.
"""

from __future__ import annotations

import inspect
import re

import pytest

import solutions.mle
from autograder.grading.problemset import list_problem_sets
from autograder.grading.similarity import KNOWN_SHARE
from autograder.pages.similarity import write_similarity
from tests.honest import builder, honest_notebooks
from tests.submissions import to_bytes


def _known_section(page: str) -> str:
    return page.split("<h2>Code from the book's published code</h2>", 1)[1]


def test_an_answer_lifted_from_the_library_is_named_with_its_source(tmp_path):
    lifted = inspect.getsource(solutions.mle.gamma_mle)
    nb = builder("ps3_mle").with_answer("gamma_mle", lifted)
    subs = {name: to_bytes(h) for name, h in honest_notebooks("ps3_mle").items()}
    subs["lifter"] = to_bytes(nb)
    write_similarity("ps3_mle", subs, tmp_path)
    section = _known_section((tmp_path / "similarity.html").read_text())
    named = re.findall(r"<summary>([^,<]+), answer cell (\w+): <b>(\d+)%</b> of it is in "
                       r"the book(?:'|&#x27;)s library: ([^ ]+)", section)
    assert [(a, cell, where) for a, cell, _, where in named] == [
        ("lifter", "gamma_mle", "solutions/mle.py")], named
    assert int(named[0][2]) >= 100 * KNOWN_SHARE
    assert "<mark>" in section


@pytest.mark.parametrize("name", list_problem_sets())
def test_honest_work_is_not_named(tmp_path, name):
    """The honest answers of every problem set, written in the book's style (up to about 80% of
    a cell's fingerprints are also in the book's code), name no one."""
    subs = {n: to_bytes(h) for n, h in honest_notebooks(name).items()}
    write_similarity(name, subs, tmp_path)
    section = _known_section((tmp_path / "similarity.html").read_text())
    assert "No submission takes a cell from them." in section
