"""One submission's grading is the short list of steps of :mod:`autograder.grading.pipeline`, and a run
does each expensive thing once.

A real ``python -m autograder grade`` (sandboxed kernels, two worker processes, a late policy)
grades a small class with every process counting, through a ``sitecustomize`` hook that wraps
the real functions and logs each call: the problem set is loaded once in the coordinator and once
in each worker, each submission's bytes are parsed once in the whole run, each recorded answer
file is read once, and each student's lateness is assessed once. A second run (nothing changed,
so nothing is graded) reads each submission once, for the similarity page.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

import autograder.grading.pipeline as pipeline
from autograder.grading.problemset import ProblemSet
from autograder.settings import COURSE_DIR
from tests import ROOT
from tests.psharness import generate_release
from tests.submissions import Builder, delete, to_bytes

PS = "ps1_pca"
pytestmark = pytest.mark.slow  # one real sandboxed grading run

#: Installed in every process of the run (PYTHONPATH): logs each call of the functions counted.
HOOK = '''
import os

if os.environ.get("COUNT_LOG"):
    import hashlib

    def _log(kind, what):
        with open(os.environ["COUNT_LOG"], "a") as f:
            f.write(f"{kind} {what} {os.getpid()}\\n")

    import nbformat
    import numpy as np

    from autograder.intake import late
    from autograder.grading import problemset

    _reads, _load = nbformat.reads, np.load
    _post, _assess = problemset.ProblemSet.__post_init__, late.LateRule.assess

    def reads(s, *args, **kwargs):
        text = s if isinstance(s, str) else s.decode()
        _log("parse", hashlib.sha256(text.encode()).hexdigest())
        return _reads(s, *args, **kwargs)

    def load(file, *args, **kwargs):
        _log("answer", file)
        return _load(file, *args, **kwargs)

    def post_init(self):
        _log("problem-set", self.name)
        _post(self)

    def assess(self, student, *args, **kwargs):
        _log("lateness", student)
        return _assess(self, student, *args, **kwargs)

    nbformat.reads, np.load = reads, load
    problemset.ProblemSet.__post_init__, late.LateRule.assess = post_init, assess
'''


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``grade(tag) -> [(kind, what, pid)]``, and the class's ``{sha256: student}``."""
    tmp = tmp_path_factory.mktemp("pipeline")
    course = tmp / "course"
    shutil.copytree(COURSE_DIR / "source", course / "source")
    shutil.copytree(COURSE_DIR / "checks", course / "checks")
    shutil.copy(COURSE_DIR / "nbgrader_config.py", course)
    (course / "late.toml").write_text(
        f"[{PS}]\ndeadline = 2020-01-01T00:00:00Z\npercent_per_day = 10\n")
    (tmp / "nbgrader").mkdir()
    release = generate_release([PS], tmp / "nbgrader")
    b = Builder(ProblemSet(PS).path, release / PS / f"{PS}.ipynb")
    answer = ProblemSet(PS).solution_ids[0]
    files = {"ann": to_bytes(b.correct()), "bob": to_bytes(b.blank()),
             "cat": to_bytes(b.wrong()), "dan": to_bytes(delete(b.correct(), answer)),
             "eve": b"{this is no notebook"}
    for student, data in files.items():
        (tmp / "subs" / student).mkdir(parents=True)
        (tmp / "subs" / student / f"{PS}.ipynb").write_bytes(data)
    (tmp / "hook").mkdir()
    (tmp / "hook" / "sitecustomize.py").write_text(HOOK)

    def grade(tag: str) -> list[tuple[str, str, str]]:
        log = tmp / f"{tag}.log"
        env = dict(os.environ, COUNT_LOG=str(log), PYTHONPATH=f"{tmp / 'hook'}{os.pathsep}{ROOT}")
        done = subprocess.run([sys.executable, "-m", "autograder", "grade", PS, str(tmp / "subs"),
                               "--out", str(tmp / "out"), "--course", str(course), "--workers",
                               "2", "--quiet"], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "(3 awaiting-manual-grading, 1 invalid-notebook, 1 missing-answer-cell)" in \
            done.stdout, done.stdout
        return [tuple(line.rsplit(" ", 2)) for line in log.read_text().splitlines()]

    shas = {hashlib.sha256(data).hexdigest(): student for student, data in files.items()}
    return grade, shas


def test_one_run_loads_the_problem_set_once_per_process_and_parses_each_submission_once(run):
    grade, shas = run
    calls = grade("first")
    processes = {pid for _, _, pid in calls}
    loads = Counter(pid for kind, _, pid in calls if kind == "problem-set")
    assert 2 <= len(processes) <= 3, "the coordinator and at most two workers"
    assert loads == Counter(dict.fromkeys(processes, 1)), "the problem set once per process"

    parses = Counter(shas[what] for kind, what, _ in calls if kind == "parse" and what in shas)
    assert parses == Counter(dict.fromkeys(shas.values(), 1))
    answers = Counter(what for kind, what, _ in calls if kind == "answer")
    assert answers and set(answers.values()) == {1}, "each recorded answer file read once"
    assert {Path(f).parent.name for f in answers} == {"results"}
    late = Counter(what for kind, what, _ in calls if kind == "lateness")
    assert late == Counter(dict.fromkeys(shas.values(), 1)), late

    again = grade("again")  # nothing changed: nothing graded, the similarity page reads each
    assert Counter(kind for kind, _, _ in again)["problem-set"] == 1
    assert Counter(shas[w] for k, w, _ in again if k == "parse" and w in shas) == parses
    assert not any(kind == "answer" for kind, _, _ in again)
    assert Counter(w for k, w, _ in again if k == "lateness") == late


def test_the_steps_are_named_in_order_in_one_module():
    names = [step.__name__ for step in pipeline.STEPS]
    assert names == ["parse", "assemble", "fingerprint_code", "execute", "sign", "judge",
                     "score", "diagnose", "conceal", "sanitize"]
    listed = [line.split(":func:`")[1].split("`")[0] for line in pipeline.__doc__.splitlines()
              if line[:1].isdigit()]
    assert listed == names, "the module docstring lists every step, in order"


def test_a_notebook_of_too_many_cells_is_refused_before_the_graders_work():
    """Issue 37: 100,000 markdown cells (8 MB, under the size limit) cost the grader's own
    process a minute and a GB, outside every limit of the sandbox. Over
    :data:`~autograder.grading.problemset.MAX_CELLS` a notebook is ``invalid-notebook`` with the
    reason, and nothing runs; at the limit it is read."""
    import nbformat

    from autograder.grading.problemset import MAX_CELLS, read_notebook_bytes
    from autograder.status import Status

    ps = ProblemSet("ps1_pca")

    def notebook(cells: int) -> bytes:
        nb = nbformat.v4.new_notebook(cells=list(ps.source.cells))
        nb.cells += [nbformat.v4.new_markdown_cell("*x*") for _ in range(cells - len(nb.cells))]
        return nbformat.writes(nb).encode()

    def never(*_):
        raise AssertionError("a refused notebook is not run")

    g = pipeline.grade(ps, notebook(MAX_CELLS + 1), never)
    assert g.status == Status.INVALID, g.fault
    assert all(s.points in (0.0, None) for s in g.scores)
    assert any(f"{MAX_CELLS + 1:,} cells" in n and f"{MAX_CELLS:,}-cell limit" in n for n in g.notes)
    assert len(read_notebook_bytes(notebook(MAX_CELLS)).cells) == MAX_CELLS
