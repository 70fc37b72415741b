"""The class report: wrong answers grouped by mistake, and a page that stays readable for 300.

The mutants declared next to the answers (``metadata.course.mutants`` of the source notebooks)
are realistic mistakes. Each is made by two students: one on the reference solution, one whose
other answers are the honest "route" answers of ``course/honest`` (so only the mistake is
shared). Graded with the production scoring and summed up with
:mod:`autograder.grading.recorded`, the two must fall in one group of wrong answers wherever they
lose points, and two mistakes whose checks say different things must not.
"""

from __future__ import annotations

import html
import random
import re
import subprocess
from collections import Counter

import numpy as np
import pytest

from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.grading.recorded import cell_cases, signatures
from autograder.pages.report import _NUMBER, report_html, wrong_answer_clusters
from tests.honest import honest_notebooks, run_keeping_results
from tests.mutantruns import mutant_notebook

PROBLEM_SETS = list_problem_sets()


def _record(student: str, scores, recorded: dict | None, status="awaiting-manual-grading",
            **extra) -> dict:
    scores = [s.to_dict() if hasattr(s, "to_dict") else s for s in scores]
    rec = {"student_id": student, "problem_set": "ps", "status": status, "scores": scores,
           "notes": [], "total": sum(s["points"] or 0 for s in scores),
           "max_auto": sum(s["max_points"] for s in scores if s["points"] is not None),
           "elapsed_s": 1.0, **extra}
    if recorded is not None:
        rec["recorded"] = recorded
    return rec


# --- mutants ------------------------------------------------------------------------------------

@pytest.fixture(scope="module", params=[pytest.param(n, marks=pytest.mark.slow)
                                        for n in PROBLEM_SETS])
def mutant_class(request, tmp_path_factory, mutant_runs):
    """``(problem set, mutants, records)``: every mutant made by student ``a`` on the reference;
    the first mutant of each graded function made again by student ``b`` on other honest code
    (every mutant twice would double the suite's longest test for little more evidence).

    Student ``a``'s runs are the ones tests/course/test_problem_sets.py grades (the ``mutant_runs``
    fixture of tests/conftest.py: each mutant graded once per test run); student ``b``'s are
    graded here."""
    name = request.param
    ps = mutant_runs.problem_set(name)  # with variants: the sample student's numbers
    runs = mutant_runs(name)
    mutants = [run.mutant for run in runs]
    honest = honest_notebooks(name)  # "route" is vectorised: the loops would take minutes
    other = honest.get("route", honest["reference"])
    twice = sorted({m.cell: i for i, m in reversed(list(enumerate(mutants)))}.values())
    work = tmp_path_factory.mktemp(f"mutants-{name}")
    graded_b = run_keeping_results(ps, [mutant_notebook(ps, mutants[i], other) for i in twice],
                                   work)
    records = []
    for i, run in enumerate(runs):
        records.append(_record(f"m{i:02d}a", run.scores, signatures(ps, run.results)))
        if i in twice:
            scores, results = graded_b[twice.index(i)]
            records.append(_record(f"m{i:02d}b", scores, signatures(ps, results)))
    return name, mutants, records


def test_the_same_mistake_falls_in_one_group(mutant_class):
    name, mutants, records = mutant_class
    clusters = wrong_answer_clusters(records)
    where = {(gid, s): i for gid, cs in clusters.items() for i, c in enumerate(cs)
             for s in c.students}
    split = []
    for i, m in enumerate(mutants):
        lost = [gid for gid in m.loses if (gid, f"m{i:02d}a") in where]
        assert lost, f"{name}: {m.name} lost no points (the mutant tests say it must)"
        for gid in lost:
            b = (gid, f"m{i:02d}b")
            if b in where and where[(gid, f"m{i:02d}a")] != where[b]:
                split.append(f"{m.name} on {gid}")
    made_twice = {m.cell for i, m in enumerate(mutants)
                  if any(s == f"m{i:02d}b" for (_, s) in where)}
    assert made_twice == {m.cell for m in mutants}, "every graded function has a mistake made twice"
    assert not split, f"{name}: one mistake in two groups: {split}"


def test_different_mistakes_fall_in_different_groups(mutant_class):
    """A group's students got one verdict from the check (its message up to the numbers, which
    name the worst entry and may differ in the last digits between two honest computations)."""
    name, mutants, records = mutant_class
    clusters = wrong_answer_clusters(records)
    message = {(r["student_id"], s["grade_id"]): s["message"] for r in records
               for s in r["scores"]}
    merged = []
    for gid, cs in clusters.items():
        for c in cs:
            said = {_NUMBER.sub("#", message[(s, gid)]) for s in c.students}
            if len(said) > 1:
                merged.append((gid, sorted({s[:3] for s in c.students}), said))
    assert not merged, f"{name}: groups whose checks say different things: {merged}"


def test_the_report_names_the_common_mistakes(mutant_class):
    name, mutants, records = mutant_class
    page = report_html(name, records)
    top = page.split("id='mistakes'")[1].split("<h2")[0]
    rows = re.findall(r"<tr><td class='num'><b>\d+</b>.*?</tr>", top)
    clusters = sorted((c for cs in wrong_answer_clusters(records).values() for c in cs
                       if len(c.students) > 1), key=lambda c: (-len(c.students), c.grade_id))
    assert rows and len(rows) == min(10, len(clusters))
    for row, c in zip(rows, clusters):
        assert row.startswith(f"<tr><td class='num'><b>{len(c.students)}</b>")
        # the check's message, whole up to a page's limit of 2000 characters
        assert html.escape(c.message[:2000]) in row and ", ".join(sorted(c.students)) in row
    # most rows hold both students of a mutant: one mistake made twice
    twice = [row for row in rows if any(f"m{i:02d}a" in row and f"m{i:02d}b" in row
                                        for i in range(len(mutants)))]
    assert len(twice) >= len(rows) / 2, rows


# --- signatures ---------------------------------------------------------------------------------

def test_every_autograded_cell_has_cases():
    for name in PROBLEM_SETS:
        ps = ProblemSet(name)
        cases = cell_cases(ps)
        assert set(cases) == {c.grade_id for c in ps.grade_cells if c.autograded}
        assert all(cases.values()), [g for g, c in cases.items() if not c]


def test_signatures_see_values_to_four_digits_and_errors(tmp_path):
    ps = ProblemSet("ps1_pca")
    folders = {}
    for who, value in (("x", 1.0), ("y", 1.0 + 1e-9), ("z", 1.01)):
        folders[who] = tmp_path / who
        folders[who].mkdir()
        np.savez(folders[who] / "center.npz", out_0=np.full((3, 2), value), out_1=np.zeros(2))
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "center.error.json").write_text('{"type": "ValueError", "message": "no"}')
    sig = {who: signatures(ps, folder)["center_visible"] for who, folder in folders.items()}
    assert sig["x"] == sig["y"] != sig["z"]
    assert signatures(ps, tmp_path / "e")["center_visible"] not in sig.values()
    assert signatures(ps, tmp_path / "absent") == {}


@pytest.mark.slow
def test_grade_task_records_the_signatures():
    from autograder.run.task import GradingOptions, grade_task

    ps = ProblemSet("ps3_mle")
    record = grade_task(ps.name, "ref", ps.path.read_bytes(), GradingOptions(unsafe=True))
    assert set(record.recorded) == {c.grade_id for c in ps.grade_cells if c.autograded}
    assert all(re.fullmatch(r"[0-9a-f]{10}", v) for v in record.recorded.values())


# --- a class of 300 -----------------------------------------------------------------------------

CELLS = [("center_visible", 2.0), ("center_hidden", 2.0), ("pca_eig_visible", 2.0),
         ("pca_eig_hidden", 3.0)]
MISTAKES = {  # check message -> how many students made it
    "the variances are wrong at index (0,): yours is 2.04, expected about 2 (used 1/(N-1))": 23,
    "the components should have shape (2, 5); yours has shape (5, 2)": 11,
    "your function raised NotImplementedError": 40,
}


def synthetic_class(n: int = 300, with_values: bool = True) -> list[dict]:
    rng = random.Random(1)
    statuses = (["awaiting-manual-grading"] * (n - 30) + ["timeout"] * 12 + ["crashed"] * 5
                + ["invalid-notebook"] * 6 + ["grader-error"] * 4 + ["unmatched"] * 3)
    mistakes = [m for m, k in MISTAKES.items() for _ in range(k)]
    mistakes += [None] * (n - len(mistakes))
    records = []
    for i in range(n):
        student = f"student{i:03d}" if i != 7 else "<b>bold</b>"
        mistake = mistakes[i]
        scores, recorded = [], {}
        for gid, pts in CELLS:
            wrong = mistake is not None and gid.startswith("pca_eig")
            scores.append({"grade_id": gid, "points": 0.0 if wrong else pts, "max_points": pts,
                           "message": mistake if wrong else "correct"})
            recorded[gid] = f"{abs(hash(mistake)) % 10**10:010x}" if wrong else "0" * 10
        scores.append({"grade_id": "derivation", "points": None, "max_points": 4.0,
                       "message": "graded by hand"})
        timings = ({"wait_s": 0.5, "start_s": 1.2, "execute_s": 10 + i / 10, "score_s": 0.3}
                   if i % 3 else {})
        records.append(_record(student, scores, recorded if with_values else None,
                               status=statuses[i], elapsed_s=5 + i / 10 + rng.random(),
                               timings=timings, notes=["a note <i>"],
                               grader_error="Traceback: <boom>" if statuses[i] == "grader-error"
                               else None))
    return records


@pytest.mark.parametrize("with_values", [True, False])
def test_the_page_for_300_students(with_values):
    records = synthetic_class(with_values=with_values)
    page = report_html("ps1_pca", records, rubric=True)
    for section in ("mistakes", "status", "scores", "questions", "time"):
        assert f"id='{section}'" in page
    # the common mistakes, largest first, each with its count and its students (folded)
    top = page.split("id='mistakes'")[1].split("<h2")[0]
    counted = [int(n) for n in re.findall(r"<td class='num'><b>(\d+)</b>", top)]
    ran = {r["student_id"] for r in records
           if r["status"] not in ("invalid-notebook", "unmatched", "grader-error")}
    expected = Counter()
    for r in records:
        if r["student_id"] in ran:
            for s in r["scores"]:
                if s["points"] is not None and s["points"] < s["max_points"]:
                    expected[(s["grade_id"], s["message"])] += 1
    assert counted == sorted(expected.values(), reverse=True)[:len(counted)]
    assert "used 1/(N-1)" in top
    # students per status: every status with its count, the names folded away
    status = page.split("id='status'")[1].split("<h2")[0]
    for word, k in Counter(r["status"] for r in records).items():
        assert f"<td>{word}</td><td class='num'>{k}</td>" in status
    assert status.count("<details") == len({r["status"] for r in records})
    # slowest submissions with their phases; the stopped ones listed
    time_part = page.split("id='time'")[1]
    assert "student299" in time_part.split("</table>")[0] and "sandbox start" in time_part
    assert time_part.count("<td>timeout</td>") == 12 and time_part.count("<td>crashed</td>") == 5
    # everything from a record is escaped, nothing runs
    assert "<b>bold</b>" not in page and "&lt;b&gt;bold&lt;/b&gt;" in page
    assert "<boom>" not in page and "<i>" not in page
    assert "<script" not in page and "default-src 'none'" in page
    assert len(page) < 400_000


def test_the_report_of_an_empty_class():
    page = report_html("ps1_pca", [])
    assert "0 submissions" in page and "No wrong answer" in page


@pytest.mark.slow
def test_screenshot_of_the_report_for_300(tmp_path):
    """The page as a reader's browser shows it (headless Chromium; skipped where missing)."""
    from tests.browser import chromium

    browser = chromium()
    page = tmp_path / "report.html"
    page.write_text(report_html("ps1_pca", synthetic_class(), rubric=True))
    shot = tmp_path / "report.png"
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           "--no-first-run", "--hide-scrollbars", "--window-size=1280,2600",
                           f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0 and shot.stat().st_size > 20_000, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
