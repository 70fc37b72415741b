"""Every problem set grades itself: the reference gets full marks, the blank release zero, every
realistic mistake declared next to its answer (``metadata.course.mutants``) loses points on its
question, every generic wrong answer (NaN, infinite, constant, rescaled, shifted, negated) scores
zero on every cell that reads it, and the reference in another form (lists, ints, values within
rounding) keeps full marks.

These run the real notebooks in real kernels and the real ``nbgrader generate_assignment``; the
generic wrong answers are written straight into a copy of the reference's results folder and
scored by the production scoring, with every visible test taken as passed (the worst case).
"""

from __future__ import annotations

import copy
import html
import re
import warnings

import nbformat
import pytest

from autograder.authoring.graded import sample_variants
from autograder.authoring.variants import case_functions
from autograder.authoring.visible import embed
from autograder.checks import load_checks
from autograder.checks.registry import equivalent_forms
from autograder.grading.executors import local_executor
from autograder.grading.pipeline import grade as grade_submission
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.grading.scoring import check_coverage, failed_visible_cells
from autograder.status import Status
from coursedata.causes import calls
from coursedata.cells import is_test_code
from coursedata.naming import VISIBLE, question_of
from coursedata.variants import IDENTITY_CELL
from coursedata.visible import verdict, visible_checks
from tests.book.test_accessibility import alt_problem, figure_cells
from tests.mutantruns import mutant_secrets, mutants_of
from tests.psharness import (
    equivalent_form,
    generate_release,
    run_variants,
    score_equivalent_forms,
    score_generic_variants,
    score_malformed,
)

PROBLEM_SETS = list_problem_sets()
#: How a hidden checks' slot reads in the student's notebook.
HIDDEN_SLOT = "# Hidden tests run here when your notebook is graded."
LEAKS = re.compile(r"BEGIN SOLUTION|END SOLUTION|BEGIN HIDDEN TESTS|coursedata\.grading|"
                   r"\brecord\(|import solutions|from solutions")


def _finished(ps: ProblemSet) -> Status:
    """What a run that scored every autograded cell says: written answers wait for a human."""
    return Status.AWAITING_MANUAL if any(not c.autograded for c in ps.grade_cells) else \
        Status.GRADED


#: A function's definition in an answer cell.
_DEF = re.compile(r"^def ([A-Za-z_][A-Za-z0-9_]*)\(", re.M)


def _points(scores, ids):
    return sum(s.points for s in scores if s.points is not None and s.grade_id in ids)


def _max_auto(scores, ids):
    return sum(s.max_points for s in scores if s.points is not None and s.grade_id in ids)


class ProblemSetTests:
    """The tests every problem set must pass; one subclass per problem set (see the end)."""

    name: str

    @pytest.fixture(scope="class")
    @classmethod
    def ps(cls):
        """The problem set as a student is graded on it (with variants: a sample student's)."""
        return sample_variants(ProblemSet(cls.name))[0]

    @pytest.fixture(scope="class")
    @classmethod
    def release(cls, tmp_path_factory):
        return generate_release([cls.name], tmp_path_factory.mktemp("course"))

    @pytest.fixture(scope="class")
    @classmethod
    def reference(cls, ps, tmp_path_factory):
        """The reference notebook graded once: ``(result, results folder)``."""
        work = tmp_path_factory.mktemp("reference") / "submission"
        return grade_submission(ps, ps.path.read_bytes(), local_executor(), workdir=work), \
            work / "results"

    def test_every_autograded_cell_has_a_trusted_check(self, ps):
        check_coverage(ps)

    def test_problem_set_shape(self, ps):
        answers = [c for c in ps.source.cells if c.cell_type == "code"
                   and c.metadata.get("nbgrader", {}).get("solution")]
        assert 1 <= len(answers) <= 8, f"{len(answers)} code answers; 1 to 8 expected"
        if len(answers) < 4:  # legitimate (a short set), but worth a second look
            warnings.warn(f"{ps.name} has {len(answers)} code answers; most sets have 4 to 8",
                          stacklevel=2)
        if all(c.autograded for c in ps.grade_cells):  # legitimate too (a short set)
            warnings.warn(f"{ps.name} has no answer graded by hand; most sets have one",
                          stacklevel=2)
        auto = [c for c in ps.grade_cells if c.autograded]
        assert all(c.grade_id.endswith(("_visible", "_hidden")) for c in auto)
        hidden = sum(c.points for c in auto if c.grade_id.endswith("_hidden"))
        assert hidden > sum(c.points for c in auto) / 2, "hidden checks must carry most points"

    def test_hidden_sections_only_record_and_come_first(self, ps):
        """Hidden code never judges in the student's kernel: it only calls student functions and
        records what they return, and it runs before a cell's visible asserts so that a failed
        visible test cannot hide the answer from the trusted checks."""
        judging = re.compile(r"\bassert\b|isclose|allclose|np\.testing|\braise\b|solutions")
        for cell in ps.source.cells:
            blocks = re.findall(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS",
                                cell.source, flags=re.S)
            for block in blocks:
                gid = cell.metadata.nbgrader.grade_id
                assert cell.source.startswith("### BEGIN HIDDEN TESTS"), gid
                assert not judging.search(block), f"{gid}: {judging.search(block).group(0)}"
                # A hidden-only cell may score answers that an earlier cell recorded.
                assert "record(" in block or gid.endswith("_hidden"), gid

    @pytest.mark.slow
    def test_reference_solution_gets_full_marks(self, ps, reference):
        result, _ = reference
        assert result.status == _finished(ps), result.notes
        wrong = [(s.grade_id, s.message) for s in result.scores
                 if s.points is not None and s.points != s.max_points]
        assert not wrong, wrong

    @pytest.mark.slow
    def test_reference_runs_without_an_error(self, reference):
        """Every cell of the source notebook runs: the run graded above, in the problem set's
        guarded kernel, holds no error output (the one run of each source in the test suite)."""
        result, _ = reference
        errors = [(c.metadata.get("nbgrader", {}).get("grade_id", c.source[:60]), o.ename,
                   o.evalue) for c in result.executed.cells if c.cell_type == "code"
                  for o in c.outputs if o.output_type == "error"]
        assert errors == [], errors

    @pytest.mark.slow
    def test_every_figure_reaches_the_reader_with_its_description(self, reference):
        """Every figure the run drew is an HTML image with an ``alt`` that describes it (what
        JupyterLab and JupyterLite show: ``renderImage`` of @jupyterlab/rendermime writes no
        ``alt`` for a bare ``image/png``), and every cell that draws (tests/book/test_accessibility.py's
        ``figure_cells``, from the code) has at least one figure in its output."""
        result, _ = reference
        cells = result.executed.cells
        drawn = []
        for index, cell in enumerate(cells):
            images = [o for o in cell.get("outputs", []) if "image/png" in o.get("data", {})]
            for output in images:
                img = re.search(r'<img src="data:image/png;base64,([^"]+)" alt="([^"]*)"',
                                output["data"].get("text/html", ""))
                assert img, (index, "an image with no alt")
                assert img.group(1) == output["data"]["image/png"].strip()
                alt = html.unescape(img.group(2))
                assert alt_problem("", alt) is None, (index, alt_problem("", alt))
            drawn += [index] if images else []
        nb = [{"cell_type": c.cell_type, "source": c.source} for c in cells]
        assert drawn and set(figure_cells(nb)) <= set(drawn), (figure_cells(nb), drawn)

    @pytest.mark.slow
    def test_release_is_clean_and_scores_zero(self, ps, release):
        path = release / ps.name / ps.notebook_name
        text = path.read_text()
        assert not LEAKS.search(text), f"the student version leaks: {LEAKS.search(text).group(0)}"
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name], "only the notebook ships"
        # The declared mutants are the grader's: no wrong answer, name or solution line of theirs.
        mutant_text = [p for p in mutant_secrets(ps) if p in text]
        assert not mutant_text, f"the student version carries mutants' text: {mutant_text}"
        result = grade_submission(ps, path.read_bytes(), local_executor())
        assert result.status == _finished(ps)
        scored = [s for s in result.scores if s.points is not None]
        assert scored and all(s.points == 0 for s in scored), [(s.grade_id, s.points) for s in scored]
        # The visible tests fail on the blank release: each one raises in the kernel.
        released = nbformat.read(path, as_version=4)
        visible = {c.metadata["nbgrader"]["grade_id"] for c in released.cells
                   if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
                   and is_test_code(c.source)}
        assert visible, "the release has no visible tests"
        # Each hidden checks' slot keeps, through nbgrader's release, the words saying what it is.
        slots = [c for c in released.cells if c.cell_type == "code"
                 and c.metadata.get("nbgrader", {}).get("grade_id", "").endswith("_hidden")]
        assert slots and all(c.source.startswith(HIDDEN_SLOT) and not is_test_code(c.source)
                             for c in slots), [c.source for c in slots]
        for cell in result.executed.cells:
            if cell.metadata.get("nbgrader", {}).get("grade_id") in visible:
                assert any(o.output_type == "error" for o in cell.outputs), cell.metadata.nbgrader

    def test_scratch_cells_are_allowed_and_kept_where_they_are(self, ps):
        """The rules say a student may add cells; the grader keeps each one after the cell it
        followed, and runs it there."""
        assert "You may add cells of your own" in ps.source.cells[0].source
        submitted = copy.deepcopy(ps.source)
        gids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in submitted.cells]
        first_test = next(g for g in gids if g and g.endswith("_visible"))
        submitted.cells.insert(gids.index(first_test) + 1,
                               nbformat.v4.new_code_cell("scratch = 'my own try'"))
        cells = ps.assemble(submitted).notebook.cells
        at = [c.source for c in cells].index("scratch = 'my own try'")
        assert cells[at - 1].metadata.nbgrader.grade_id == first_test

    def test_every_autograded_answer_is_caught_by_a_mutant(self, ps):
        """Every autograded answer has a wrong answer that must lose its points: a realistic
        mistake declared next to it (``metadata.course.mutants``, graded by the test below) or,
        at least, the generic wrong answers derived from the answers its hidden part records
        (NaN, constant, rescaled, shifted, negated: ``test_generic_wrong_answers_score_zero``).
        Only generic ones is legitimate (a short set, a new question) but worth a second look."""
        declared = {m.cell for m in mutants_of(ps.name)}  # raises on a mutant that cannot be made
        recorded = set(case_functions(ps))
        manual = {c.grade_id for c in ps.grade_cells if not c.autograded}
        sources = {c.metadata.nbgrader.grade_id: c.source for c in ps.source.cells
                   if c.metadata.get("nbgrader", {}).get("solution")}
        uncaught, generic_only = [], []
        identity = {IDENTITY_CELL}  # a problem set with variants: the student's identity, no answer
        for gid in set(ps.solution_ids) - manual - declared - identity:
            (generic_only if set(_DEF.findall(sources[gid])) & recorded else uncaught).append(gid)
        assert not uncaught, (f"{ps.notebook_name}: no mutant catches {sorted(uncaught)}: declare "
                              "a realistic mistake in its metadata.course.mutants, or record its "
                              "function's answers in a hidden part")
        if generic_only:
            warnings.warn(f"{ps.name}: {sorted(generic_only)} only face the generic wrong answers; "
                          "a realistic mistake declared next to each would test its check more",
                          stacklevel=2)

    @pytest.mark.slow
    def test_every_mutant_loses_points_on_its_question(self, ps, mutant_runs):
        """Each declared mutant made on the reference and graded in a kernel (once per test run,
        shared with tests/autograder/pages/test_report.py: the ``mutant_runs`` fixture of
        tests/conftest.py)."""
        mutants = mutants_of(ps.name)
        runs = mutant_runs(ps.name)
        assert [run.mutant for run in runs] == mutants
        results = [(run.scores, run.executed) for run in runs]
        survivors = [f"{m.cell}: {m.name}" for m, (scores, _) in zip(mutants, results)
                     if not _points(scores, m.loses) < _max_auto(scores, m.loses)
                     or m.seen_by and not _points(scores, [m.seen_by]) < _max_auto(scores,
                                                                                  [m.seen_by])]
        assert not survivors, f"mutants that lost no points: {survivors}"
        # A mutant of a rule the question states in words fails its visible test in the kernel:
        # the student sees the mistake before submitting.
        unseen = [f"{m.cell}: {m.name}" for m, (_, executed) in zip(mutants, results)
                  if m.seen_by and m.seen_by not in failed_visible_cells(executed)]
        assert not unseen, f"mutants that their visible test lets pass: {unseen}"

    @pytest.mark.slow
    def test_the_check_gives_each_visible_cell_the_graders_verdict(self, ps, mutant_runs):
        """For every declared mistake, each visible cell the student's check can judge (with what
        the release gives it: :mod:`autograder.authoring.visible`) gets the grader's verdict:
        ``ok`` exactly when the grader gives the cell its points. A cell it cannot judge is one
        whose check the course wrote in Python."""
        released = copy.deepcopy(ps.source)
        hand_written = set(load_checks(ps.name).CHECKS)
        embed(released, ps.source, hand_written)
        judged = visible_checks(released)
        visible = {c.grade_id for c in ps.grade_cells if c.autograded and c.kind == VISIBLE}
        assert set(judged) == visible
        assert {g for g, v in judged.items() if v.unchecked} <= hand_written
        differ = []
        for run in mutant_runs(ps.name):
            failed = failed_visible_cells(run.executed)
            for score in run.scores:
                check = judged.get(score.grade_id)
                if check is None or check.unchecked:
                    continue
                problem = verdict(check, run.results)
                says_ok = score.grade_id not in failed and problem is None
                if says_ok != (score.points == score.max_points):
                    differ.append(f"{run.mutant.name}: {score.grade_id} check "
                                  f"{'ok' if says_ok else problem}, grader {score.points}")
        assert not differ, "\n".join(differ)

    @pytest.mark.slow
    def test_a_mistake_is_named_where_a_later_function_pays_for_it(self, ps, mutant_runs):
        """A declared mistake in one answer that costs points in a question whose function calls
        it: that question's feedback names the mutated function; its own question's never
        blames another."""
        graph = calls(ps.source)
        unnamed = []
        for run in mutant_runs(ps.name):
            mutated = run.mutant.cell
            names = re.findall(r"^def (\w+)\(", next(
                c.source for c in ps.source.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == mutated), re.M)
            for score in run.scores:
                if score.points is None or score.points == score.max_points:
                    continue
                answer = question_of(score.grade_id)
                uses = answer != mutated and set(names) & graph.get(answer, set())
                named = "loses points in its own question" in score.message
                if uses and not (named and any(n in score.message for n in names)):
                    unnamed.append(f"{run.mutant.name}: {score.grade_id}: {score.message}")
                if answer == mutated and named:
                    unnamed.append(f"{run.mutant.name}: {score.grade_id} blames another")
        assert not unnamed, "\n".join(unnamed)

    @pytest.mark.slow
    def test_generic_wrong_answers_score_zero(self, ps, reference, tmp_path):
        """NaN, infinite, constant, rescaled, shifted and negated answers of every graded
        function (all its arrays, and each one alone) earn nothing on a visible cell that reads
        them, and nothing on a hidden cell all of whose arrays they replace; the symmetries
        declared in the checks' ``EQUIVALENT_FORMS`` keep full marks."""
        exemptions = equivalent_forms(ps)
        problems = score_generic_variants(ps, reference[1], tmp_path, exemptions)
        assert not problems, "\n".join(problems)

    @pytest.mark.slow
    def test_equivalent_answers_keep_full_marks(self, ps, reference, tmp_path):
        """Recorded answers as ints (where integral), within rounding, or transformed by a
        declared symmetry are still right."""
        exemptions = equivalent_forms(ps)
        problems = score_equivalent_forms(ps, reference[1], tmp_path, exemptions)
        assert not problems, "\n".join(problems)

    @pytest.mark.slow
    def test_equivalent_forms_pass_in_a_kernel(self, ps):
        """The reference returning lists, ints or values within rounding, its pairs as lists, or
        its parameters renamed, passes every visible test in a real kernel and keeps full marks."""
        forms = ["list", "ints", "rounding", "pairs", "renamed"]
        variants = [ps.assemble(equivalent_form(ps, form)).notebook for form in forms]
        for form, (scores, _executed) in zip(forms, run_variants(ps, variants)):
            wrong = [(s.grade_id, s.points, s.message) for s in scores
                     if s.points is not None and s.points != s.max_points]
            assert not wrong, (form, wrong)

    @pytest.mark.slow
    def test_malformed_answers_are_the_students_problem(self, ps, reference, tmp_path):
        """Wrong shapes, 0-d, empty, bool and complex arrays score zero with a message, never
        as a fault of the grader."""
        problems = score_malformed(ps, reference[1], tmp_path)
        assert not problems, "\n".join(problems)


for _name in PROBLEM_SETS:
    globals()[f"Test_{_name}"] = type(f"Test_{_name}", (ProblemSetTests,), {"name": _name})
