"""End-to-end tests of the autograder CLI on ps1_pca: honest, wrong and hostile submissions.

One batch run of ``python -m autograder grade`` (real sandboxed kernels, two workers, a 20 s
cell limit) grades the whole battery of :mod:`tests.submissions`; the tests then read what it wrote:
``grades.csv``, ``records/``, the feedback pages, the temporary course's gradebook and its
``autograded/`` notebooks. Everything lives in a temporary course under ``/var/tmp`` (not
``/tmp``: the sandbox has a private ``/tmp``, so hiding a folder there would prove nothing).
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest

from autograder.grading.problemset import ProblemSet
from autograder.intake.collect import collect_submissions
from autograder.sandbox import sandbox_available
from autograder.status import Status
from tests import ROOT
from tests import submissions as sb
from tests.environment import require
from tests.psharness import generate_release

AVAILABLE, REASON = sandbox_available()
pytestmark = require(AVAILABLE, f"no sandbox here: {REASON}")

PS, NB = "ps1_pca", "ps1_pca.ipynb"
FULL = 20.0  # autograded points of ps1_pca
# --timeout: seconds per cell; the notebook gets 10x that. Not less: the digits cell of ps1_pca
# imports scikit-learn, which took over 5 s on this 2-core machine under load.
CELL_TIMEOUT = 20
QUESTIONS = {  # answer cell -> the graded cells that score it
    "center": ("center_visible", "center_hidden"),
    "pca_eig": ("pca_eig_visible", "pca_eig_hidden"),
    "pca_svd": ("pca_svd_visible", "pca_svd_hidden"),
    "project": ("project_visible", "project_hidden"),
    "best_rank_k": ("best_rank_k_visible", "best_rank_k_hidden"),
    "reconstruction_error": ("reconstruction_error_visible", "reconstruction_error_hidden"),
}
EDITED_DELETED = ("center_visible", "pca_eig_hidden", "reconstruction_error_hidden")
#: The original of each copy in the battery: ``copy-<i>`` is a copy of ``COPIES[i]``.
COPIES = ("correct", "blank", "wrong") * 2
HIDDEN_SOURCE = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "record(", 'inputs("ps1_pca"',
                 "coursedata.grading", "BEGIN SOLUTION")


def cli(*args: str, timeout: float = 600) -> tuple[subprocess.CompletedProcess, float]:
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)
    return done, time.monotonic() - start


@dataclass
class Battery:
    base: Path
    course: Path
    submissions: Path
    out: Path
    students: dict[str, bytes]
    run: subprocess.CompletedProcess
    elapsed: float
    marker: str
    write_targets: list[str]
    listener: socket.socket

    def record(self, student: str) -> dict:
        return json.loads((self.out / "records" / f"{student}.json").read_text())

    def points(self, student: str) -> dict[str, float | None]:
        return {s["grade_id"]: s["points"] for s in self.record(student)["scores"]}

    def executed(self, student: str) -> nbformat.NotebookNode:
        path = self.course / "autograded" / student / PS / NB
        return nbformat.read(path, as_version=4)

    def probes(self, student: str) -> dict[str, dict]:
        """The JSON lines printed by the probe cells of a student's executed notebook."""
        found = {}
        for c in self.executed(student).cells:
            for o in c.get("outputs", []):
                for line in o.get("text", "").splitlines() if o.output_type == "stream" else []:
                    if line.startswith(sb.PROBE_TAG):
                        info = json.loads(line[len(sb.PROBE_TAG):])
                        found[info.pop("probe")] = info
        return found

    def errors(self, student: str) -> list[str]:
        return [o.ename for c in self.executed(student).cells if c.cell_type == "code"
                for o in c.outputs if o.output_type == "error"]


def build_battery(b: sb.Builder, course: Path, subs: Path, out: Path, marker: str,
                  port: int) -> tuple[dict[str, object], list[str]]:
    """Every submission of the battery, by student id (see the tests below for the outcomes).

    Probes that cannot disturb one another share a notebook, to keep kernel start-ups few.
    """
    nb: dict[str, object] = {}
    nb["correct"] = b.correct()
    nb["blank"] = b.blank()
    nb["wrong"] = b.wrong(sb.WRONG_SVD)
    nb["wrong-eig"] = b.wrong(sb.WRONG_EIG)
    # the same wrong answers; the failing visible test edited to pass, and test cells deleted
    # (a visible one and hidden ones carrying 5 points)
    edited = b.wrong(sb.WRONG_SVD)
    sb.cell(edited, "pca_svd_visible").source = "assert True"
    for gid in EDITED_DELETED:
        sb.delete(edited, gid)
    nb["wrong-edited"] = edited
    nb["answer-deleted"] = sb.delete(b.correct(), "project")
    nb["stripped"] = sb.strip_nbgrader(b.correct())
    nb["not-json"] = b"this is { not a notebook"
    # infinite loops: inside a function the checks call, and at top level after every answer
    nb["loop-fn"] = b.with_answer("best_rank_k", sb.LOOPING_BEST_RANK_K)
    nb["loop-top"] = sb.insert_after(b.correct(), "numerics", sb.STUCK_LOOP)
    # reads of everything it must not see (any success turns its `center` wrong), and the
    # reference implementation imported in place of the stub of best_rank_k
    files = [f"{course}/source/{PS}/{NB}", f"{course}/gradebook.db",
             f"{course}/release/{PS}/{NB}", f"{ROOT}/autograder/checks/{PS}.py",
             f"{ROOT}/course/source/{PS}/{NB}", f"{ROOT}/course/gradebook.db",
             f"{ROOT}/solutions/pca.py", f"{subs}/correct/{NB}", f"{out}/records/correct.json"]
    folders = ["..", f"{course}/source", f"{course}/submitted", f"{course}/autograded",
               f"{ROOT}/solutions", f"{ROOT}/autograder", f"{subs}", f"{out}"]
    snoop = b.blank_answer("best_rank_k")
    sb.insert_after(snoop, "setup", sb.snoop_cell(files, folders, ["solutions", "autograder"]))
    sb.replace(snoop, "center", "return X - mean, mean",
               "return (X, 0 * mean) if SNOOPED else (X - mean, mean)")
    sb.insert_after(snoop, "best_rank_k", sb.CHEAT_IMPORT)
    nb["snoop"] = snoop
    nb["os-exit"] = sb.insert_after(b.correct(), "project_hidden", "import os\nos._exit(0)")
    # wrong answers, and every assertion helper made to pass
    nb["monkeypatch"] = sb.insert_after(b.wrong(sb.WRONG_SVD), "setup", sb.MONKEYPATCH)
    # resources and isolation; the 50 MB of output last, since output beyond 1 MB is dropped
    targets = [f"/tmp/{marker}", f"/var/tmp/{marker}", f"{course}/{marker}",
               f"{course}/source/{PS}/{marker}", f"{subs}/correct/{marker}", f"{out}/{marker}",
               f"{ROOT}/{marker}", f"{ROOT}/autograder/{marker}", f"{Path.home()}/{marker}",
               f"../{marker}"]
    hostile = b.correct()
    for after, code in [("setup", sb.BIG_ALLOCATION), ("setup", sb.FORK_LOOP),
                        ("setup", sb.write_cell(targets)), ("setup", sb.socket_cell(port)),
                        ("center_visible", "import sys\nsys.exit()"),
                        ("numerics", sb.PRINT_50MB)]:
        sb.insert_after(hostile, after, code)
    nb["hostile"] = hostile
    # copies of three honest submissions, graded at the same time as the rest by the other
    # worker: each must get the record its original gets graded alone (one worker)
    for i in range(len(COPIES)):
        nb[f"copy-{i}"] = nb[COPIES[i]]
    return nb, targets


#: Their users are slow (tests/conftest.py): a grading run of the whole battery.
SLOW_FIXTURES = ("battery",)


@pytest.fixture(scope="module")
def battery():
    base = Path(tempfile.mkdtemp(prefix="autograder-test-", dir="/var/tmp"))
    base.chmod(0o755)  # the kernel runs as another user when the grader is root
    marker = f"autograder-test-{uuid.uuid4().hex}.txt"
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        course, subs, out = base / "course", base / "submissions", base / "out"
        course.mkdir()
        release = generate_release([PS], course)
        builder = sb.Builder(course / "source" / PS / NB, release / PS / NB)
        notebooks, targets = build_battery(builder, course, subs, out, marker,
                                           listener.getsockname()[1])
        students = {s: n if isinstance(n, bytes) else sb.to_bytes(n)
                    for s, n in notebooks.items()}
        for student, data in students.items():
            (subs / student).mkdir(parents=True)
            (subs / student / NB).write_bytes(data)
        run, elapsed = cli(PS, str(subs), "--out", str(out), "--workers", "2",
                           "--timeout", str(CELL_TIMEOUT), "--course", str(course),
                           "--gradebook", "--quiet", timeout=1200)
        print(f"\nbattery of {len(students)} graded in {elapsed:.0f} s")
        yield Battery(base, course, subs, out, students, run, elapsed, marker, targets, listener)
    finally:
        listener.close()
        shutil.rmtree(base, ignore_errors=True)
        for leftover in (Path("/tmp") / marker, Path("/var/tmp") / marker, ROOT / marker):
            leftover.unlink(missing_ok=True)  # only there if a test failed


def test_batch_run_finishes_with_a_record_per_student(battery):
    assert battery.run.returncode == 0, battery.run.stderr[-3000:]
    assert f"{len(battery.students)} submissions" in battery.run.stdout
    with open(battery.out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["student_id"] for r in rows) == sorted(battery.students)
    for row in rows:
        rec = battery.record(row["student_id"])
        assert row["status"] == rec["status"]
        assert float(row["autograded_total"]) == pytest.approx(rec["total"])
    # nothing waited for the notebook limit (10x the cell limit), let alone forever
    assert all(battery.record(s)["elapsed_s"] < 10 * CELL_TIMEOUT for s in battery.students)


# --- honest and wrong answers -------------------------------------------------------------

def lost_on(points: dict, reference: dict) -> set[str]:
    """Graded cells where ``points`` is below ``reference``."""
    return {g for g, p in points.items() if p is not None and p < reference[g]}


def test_correct_gets_full_marks(battery):
    rec = battery.record("correct")
    assert rec["status"] == Status.AWAITING_MANUAL, rec["notes"]
    assert rec["total"] == FULL and rec["max_auto"] == FULL
    assert all(s["message"] == "correct" for s in rec["scores"] if s["points"] is not None)


def test_blank_release_gets_zero(battery):
    rec = battery.record("blank")
    assert rec["status"] == Status.AWAITING_MANUAL
    assert rec["total"] == 0 and rec["max_auto"] == FULL


@pytest.mark.parametrize("student, question", [("wrong", "pca_svd"), ("wrong-eig", "pca_eig")])
def test_wrong_answer_loses_points_on_its_question_only(battery, student, question):
    # the variances with divisor N - 1; the components (and so the structure) are right
    rec = battery.record(student)
    assert rec["status"] == Status.AWAITING_MANUAL
    assert 0 < rec["total"] < FULL
    lost = lost_on(battery.points(student), battery.points("correct"))
    assert lost and lost <= set(QUESTIONS[question]), lost


def test_edited_and_deleted_test_cells_change_nothing(battery):
    # the test cells come from the source: the visible test edited to `assert True` gains
    # nothing, and the deleted ones are still run and scored
    rec = battery.record("wrong-edited")
    assert rec["status"] == Status.AWAITING_MANUAL
    assert battery.points("wrong-edited") == battery.points("wrong")
    full = battery.points("correct")
    assert all(battery.points("wrong-edited")[g] == full[g] for g in EDITED_DELETED)


def test_deleted_answer_needs_manual_grading(battery):
    rec, points = battery.record("answer-deleted"), battery.points("answer-deleted")
    assert rec["status"] == Status.MISSING_ANSWER
    assert any("'project'" in n and "missing" in n for n in rec["notes"])
    assert lost_on(points, battery.points("correct")) == set(QUESTIONS["project"])
    assert points["project_visible"] == points["project_hidden"] == 0


def test_stripped_metadata_is_graded_by_position(battery):
    rec = battery.record("stripped")
    assert rec["status"] == Status.AWAITING_MANUAL
    assert rec["total"] == FULL
    assert any("by position" in n for n in rec["notes"])


def test_not_json_is_an_invalid_notebook(battery):
    rec = battery.record("not-json")
    assert rec["status"] == "invalid-notebook"
    assert rec["total"] == 0 and "JSON" in " ".join(rec["notes"])


# --- time limits --------------------------------------------------------------------------

def test_loop_inside_a_function_costs_that_question_only(battery):
    rec, points = battery.record("loop-fn"), battery.points("loop-fn")
    # each cell calling it is interrupted at the cell limit and the notebook runs on
    # (sandbox docstring: status "ok", so the submission is graded)
    assert rec["status"] == Status.AWAITING_MANUAL
    assert lost_on(points, battery.points("correct")) == set(QUESTIONS["best_rank_k"])
    assert points["best_rank_k_visible"] == points["best_rank_k_hidden"] == 0
    assert battery.errors("loop-fn").count("CellTimeoutError") == 2


def test_loop_inside_a_function_is_explained_in_the_feedback(battery):
    assert any("time limit" in n or "cell limit" in n for n in battery.record("loop-fn")["notes"])


def test_uninterruptible_loop_at_the_end_times_out_and_keeps_the_answers(battery):
    rec = battery.record("loop-top")
    # the kernel ignored the interrupt, so it was killed: "timeout", answers recorded before kept
    assert rec["status"] == "timeout"
    assert rec["total"] == FULL
    assert any("ignored the interrupt" in n for n in rec["notes"])


# --- cheating -----------------------------------------------------------------------------

def test_import_of_the_reference_fails_and_scores_as_if_absent(battery):
    outputs = "".join(o.get("text", "") for c in battery.executed("snoop").cells
                      for o in c.get("outputs", []))
    # refused by the problem set's rules (coursedata.guard) before the sandbox's own wall
    assert "import failed: ForbiddenModule" in outputs
    assert battery.record("snoop")["status"] == Status.AWAITING_MANUAL
    # as the same notebook without the import: the stub of best_rank_k scores zero
    points = battery.points("snoop")
    assert all(points[g] == 0 for g in QUESTIONS["best_rank_k"])


def snooped(battery) -> dict:
    return battery.probes("snoop")["snoop"]


def test_project_root_reference_and_other_executions_are_invisible(battery):
    leaks = {k: v for k, v in snooped(battery).items()
             if str(ROOT) in k or k.startswith(("import:", "glob:", "list:.."))}
    assert leaks == {}, f"the sandbox let student code see: {sb.dumps_probe(leaks)}"


def test_course_submissions_and_output_folders_are_invisible(battery):
    found = snooped(battery)
    assert found == {}, f"the sandbox let student code see: {sb.dumps_probe(found)}"
    points = battery.points("snoop")  # a read that worked turned its `center` wrong
    full = battery.points("correct")
    assert points["center_visible"] == full["center_visible"]
    assert points["center_hidden"] == full["center_hidden"]


def test_edited_assertion_helpers_gain_nothing(battery):
    # np.isclose/allclose/testing.assert_allclose and AssertionError replaced, wrong answers
    patched, wrong = battery.points("monkeypatch"), battery.points("wrong")
    assert battery.record("monkeypatch")["status"] == Status.AWAITING_MANUAL
    assert all(p is None or p <= wrong[g] for g, p in patched.items()), patched


# --- resources and isolation --------------------------------------------------------------

def test_hostile_notebook_is_graded_normally(battery):
    rec = battery.record("hostile")
    assert rec["status"] == Status.AWAITING_MANUAL, rec["notes"]
    assert rec["total"] == FULL


def test_three_gigabytes_raise_memory_error(battery):
    assert "MemoryError" in battery.errors("hostile")


def test_sys_exit_is_an_error_of_its_cell(battery):
    assert "SystemExit" in battery.errors("hostile")


def test_os_exit_crashes_and_keeps_the_answers_recorded_before(battery):
    rec, points = battery.record("os-exit"), battery.points("os-exit")
    assert rec["status"] == "crashed"
    assert any("died" in n for n in rec["notes"])
    before = {g for q in ("center", "pca_eig", "pca_svd", "project") for g in QUESTIONS[q]}
    after = {g for q in ("best_rank_k", "reconstruction_error") for g in QUESTIONS[q]}
    full = battery.points("correct")
    assert all(points[g] == full[g] for g in before)
    assert all(points[g] == 0 for g in after)


def test_fork_loop_is_contained(battery):
    fork = battery.probes("hostile")["fork"]
    assert fork["error"] == "BlockingIOError" and fork["forked"] < 200


def test_writes_outside_the_working_folder_do_not_reach_the_host(battery):
    # only its private /tmp, which vanished with the kernel, took a file
    assert battery.probes("hostile")["write"]["written"] in ([], [f"/tmp/{battery.marker}"])
    leaked = [t for t in battery.write_targets if t.startswith("/") and Path(t).exists()]
    for t in leaked:
        Path(t).unlink()
    assert not leaked
    assert not list(battery.base.rglob(battery.marker))


def test_no_connection_reaches_a_host_listener(battery):
    assert battery.probes("hostile")["socket"]["outcome"] != "connected"
    battery.listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        battery.listener.accept()


def test_fifty_megabytes_of_output_are_bounded(battery):
    executed = battery.course / "autograded" / "hostile" / PS / NB
    assert executed.stat().st_size < 2 * 2**20
    assert (battery.out / "feedback" / "hostile" / "ps1_pca.html").stat().st_size < 50_000


def test_no_submission_scores_above_its_honest_answers(battery):
    # the honest baseline of a hostile submission is the same answers without the hostility
    baseline = {"wrong-edited": "wrong", "monkeypatch": "wrong"}
    for student in battery.students:
        honest = battery.points(baseline.get(student, "correct"))
        for gid, p in battery.points(student).items():
            assert p is None or p <= honest[gid], (student, gid)


def test_feedback_never_shows_hidden_tests(battery):
    for student in battery.students:
        page = (battery.out / "feedback" / student / "ps1_pca.html").read_text()
        assert student in page
        leaks = [s for s in HIDDEN_SOURCE if s in page]
        assert not leaks, (student, leaks)
    report = (battery.out / "report.html").read_text()
    assert not [s for s in HIDDEN_SOURCE if s in report]


def test_the_same_run_writes_the_similarity_page_and_the_report_links_it(battery):
    page = (battery.out / "similarity.html").read_text()
    assert "href='similarity.html'" in (battery.out / "report.html").read_text()
    assert "<script" not in page.lower() and not [s for s in HIDDEN_SOURCE if s in page]


# --- how a submission is put back together (no kernel) -------------------------------------

def _count(nb, text: str) -> int:
    return sum(text in c.source for c in nb.cells)


def test_a_cell_added_before_every_answer_runs_once():
    ps = ProblemSet(PS)
    submitted = copy.deepcopy(ps.source)
    submitted.cells.insert(0, nbformat.v4.new_code_cell("print('my own first cell')"))
    assert _count(ps.assemble(submitted).notebook, "my own first cell") == 1


def test_an_ungraded_cell_of_the_assignment_runs_once():
    ps = ProblemSet(PS)
    plain = [c for c in ps.source.cells if c.cell_type == "code" and "nbgrader" not in c.metadata]
    assert plain, "ps1_pca has an ungraded code cell"
    assembled = ps.assemble(copy.deepcopy(ps.source)).notebook
    assert _count(assembled, plain[0].source) == 1


# --- collection, gradebook, resumption, parallelism ---------------------------------------

def test_zip_and_lms_zip_collect_the_same_students(battery, tmp_path):
    folder = collect_submissions(battery.submissions, NB).submissions
    expected = {s.student_id: s.data for s in folder}
    assert expected == battery.students
    nested = tmp_path / "class.zip"
    with zipfile.ZipFile(nested, "w") as z:
        for student, data in battery.students.items():
            z.writestr(f"ps1/{student}/{NB}", data)
        z.writestr("__MACOSX/ps1/._x.ipynb", b"junk")
    lms = tmp_path / "lms.zip"
    with zipfile.ZipFile(lms, "w") as z:
        for i, (student, data) in enumerate(battery.students.items()):
            z.writestr(f"{student}_{1000 + i}_{NB}", data)
    # in the LMS's names, the student is the name and the user id
    by_user = {f"{student}-{1000 + i}": data
               for i, (student, data) in enumerate(battery.students.items())}
    for archive, want in ((nested, expected), (lms, by_user)):
        found = collect_submissions(archive, NB)
        assert {s.student_id: s.data for s in found.submissions} == want, archive.name
        assert found.unmatched == []
        # besides the ignored system files, a Canvas-named download says its times are no
        # evidence (and how to add a group set's members)
        canvas = [n for n in found.notes if n.startswith("Canvas")]
        stamps = [n for n in canvas if n.startswith("Canvas's download stamps every file")]
        assert (len(stamps) == 1) == (archive is lms), found.notes
        assert all("ignored, a system or editor file" in n for n in found.notes if n not in canvas)


def test_gradebook_has_the_scores_and_flags_written_answers(battery):
    from nbgrader.api import Gradebook

    db = f"sqlite:///{battery.course / 'gradebook.db'}"
    done = subprocess.run([sys.executable, "-m", "nbgrader", "export",
                           f"--CourseDirectory.root={battery.course}",
                           f"--CourseDirectory.db_url={db}"],
                          cwd=battery.course, capture_output=True, text=True,
                          env=dict(os.environ, PATH=f"{Path(sys.executable).parent}"
                                                    f"{os.pathsep}{os.environ['PATH']}"))
    assert done.returncode == 0, done.stderr[-2000:]
    with open(battery.course / "grades.csv", newline="") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == PS}
    assert set(exported) == set(battery.students)
    for student in battery.students:
        assert float(exported[student]["score"]) == pytest.approx(
            battery.record(student)["total"]), student
    assert float(exported["correct"]["max_score"]) == 26  # 20 autograded + 6 by hand
    with Gradebook(db) as gb:
        for student in ("correct", "blank"):
            nb = gb.find_submission_notebook(Path(NB).stem, PS, student)
            flags = {g.name: g.needs_manual_grade for g in nb.grades}
            assert flags["derivation"] and flags["numerics"], flags
            assert not any(flags[g] for g in flags if g not in ("derivation", "numerics"))


def test_parallel_and_serial_grading_agree(battery):
    """The battery's run (two workers, the copies graded alongside their originals) gives every
    submission of each kind, and every copy, the record one worker gives the original alone."""
    subset = ["correct", "blank", "wrong", "answer-deleted", "not-json"]
    folder, out = battery.base / "subset", battery.base / "serial"
    for student in subset:
        (folder / student).mkdir(parents=True)
        (folder / student / NB).write_bytes(battery.students[student])
    run, _ = cli(PS, str(folder), "--out", str(out), "--workers", "1",
                 "--timeout", str(CELL_TIMEOUT), "--quiet")
    assert run.returncode == 0, run.stderr[-3000:]
    originals = {student: student for student in subset}
    originals.update({f"copy-{i}": kind for i, kind in enumerate(COPIES)})
    for student, original in originals.items():
        serial = json.loads((out / "records" / f"{original}.json").read_text())
        parallel = battery.record(student)
        assert (serial["status"], serial["scores"]) == (parallel["status"], parallel["scores"]), \
            student


def test_rerun_skips_everything_and_keeps_the_grades(battery):
    before = (battery.out / "grades.csv").read_text()
    records = {p.name: p.read_text() for p in (battery.out / "records").iterdir()}
    run, elapsed = cli(PS, str(battery.submissions), "--out", str(battery.out), "--workers", "2",
                       "--timeout", str(CELL_TIMEOUT), "--course", str(battery.course))
    assert run.returncode == 0, run.stderr[-3000:]
    n = len(battery.students)
    assert f"{n} of {n} submissions unchanged" in run.stderr
    assert (battery.out / "grades.csv").read_text() == before
    assert {p.name: p.read_text() for p in (battery.out / "records").iterdir()} == records
    assert elapsed < 60  # start-up only: grading the battery takes minutes
