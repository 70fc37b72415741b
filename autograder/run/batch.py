"""Grade a whole class, from a folder or an LMS zip to grades and feedback.

:func:`grade_class` loads the problem set once, collects the submissions
(:mod:`autograder.intake.collect`), schedules one task per submission that changed since the last run
(:func:`autograder.run.schedule.run_tasks`) on a backend (:mod:`autograder.run.pool` or
:mod:`autograder.run.cluster`), and writes each record as it arrives (:mod:`autograder.run.output`), then
the class's pages. A task (:func:`autograder.run.task.grade_task`) runs in a worker process and takes
the submission through the steps of :mod:`autograder.grading.pipeline`, from the notebook's bytes to a
record. This process, the coordinator, is the only writer of the output folder and of the
gradebook.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.checks.personal import read_secret
from autograder.course import Course
from autograder.grading.problemset import ProblemSet
from autograder.grading.quoted import quoted_numbers
from autograder.grading.record import Record
from autograder.intake.collect import Collection, Submission, collect_submissions
from autograder.pages.similarity import write_similarity
from autograder.run.output import OutputWriter, write_atomic
from autograder.run.pool import Backend, LocalPool
from autograder.run.schedule import default_deadline, run_tasks
from autograder.run.task import GradingOptions, grader_fingerprint

__all__ = ["grade_class", "instructor_folders"]


def instructor_folders(*paths) -> tuple[str, ...]:
    """The folders to hide from student code so it cannot read what these paths hold.

    A file (a zip of submissions) is hidden through its folder. The root folder and any folder
    holding the system's temporary folder (where each submission's scratch folder lives, itself
    private inside the sandbox) cannot be hidden and are skipped.
    """
    scratch = Path(tempfile.gettempdir()).resolve()
    found = []
    for p in paths:
        if p is None:
            continue
        folder = Path(p).resolve()
        folder = folder if folder.is_dir() else folder.parent
        if folder != Path(folder.anchor) and not scratch.is_relative_to(folder):
            found.append(str(folder))
    return tuple(dict.fromkeys(found))


def _progress(total: int, quiet: bool):
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit="notebook",
        desc="grading",
        file=sys.stderr,
        disable=quiet or not sys.stderr.isatty(),
        smoothing=0.1,
    )


def grade_class(
    problem_set: str | ProblemSet,
    submissions: str | Path,
    out: str | Path,
    *,
    workers: int | None = None,
    options: GradingOptions = GradingOptions(),
    gradebook=None,
    quiet: bool = False,
    log=print,
    scheduler: str | None = None,
    deadline_s: float | None = None,
    visibility=None,
    policy=None,
    course: Course | str | Path | None = None,
    lms: str | None = None,
    collected: Callable[[Collection], None] | None = None,
) -> list[Record]:
    """Grade every submission under ``submissions`` into the folder ``out``.

    Parameters
    ----------
    problem_set : str or ProblemSet
        Name of the problem set (of ``course``), or the problem set loaded.
    submissions : path-like
        A folder or zip (see :mod:`autograder.intake.collect`).
    out : path-like
        Output folder (created); see the module docstring.
    workers : int, optional
        Worker processes of the local pool; default: the number of CPUs.
    options : GradingOptions
        Limits and sandboxing.
    gradebook : autograder.gradebook.writer.GradebookWriter, optional
        Where scores are also recorded for nbgrader's formgrader and export.
    quiet : bool
        No progress bar.
    log : callable
        Receives one-line messages.
    scheduler : str, optional
        Grade on a Dask cluster instead of the local pool: a scheduler address
        (``tcp://HOST:8786``) or ``local:N`` (see :mod:`autograder.run.cluster`).
    deadline_s : float, optional
        Seconds after which a task without result is recorded ``timeout`` and stopped; default
        :func:`default_deadline`.
    visibility, policy : optional
        What the feedback shows of hidden checks and the late policy (see
        :class:`autograder.run.output.OutputWriter`; default: the course's settings).
    course : Course or path-like, optional
        The course whose problem set grades (source notebook, rubric, release, policies,
        preload list; default :meth:`Course.default`); ignored for a loaded problem set, which
        has its course.
    lms : str, optional
        The format to read ``submissions`` as (``--lms``); default: the one its files show.
    collected : callable, optional
        Receives the :class:`Collection` before grading starts (the ``grade`` command says what
        was recognised, and later whether the whole class was graded).

    Returns
    -------
    list of Record
        Every record in ``out`` for this problem set (graded now or before).

    Raises
    ------
    autograder.checks.personal.SecretMissing
        A problem set with variants in a course without its secret (nothing is graded).
    autograder.run.cluster.ClusterError
        If the cluster cannot be reached or a worker cannot grade (records written until then
        are kept).
    """
    ps = (
        problem_set
        if isinstance(problem_set, ProblemSet)
        else ProblemSet(problem_set, Course.at(course))
    )
    if ps.variants is not None:  # missing: said now, before grading, not as everyone's error
        read_secret(ps.course)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    options = dataclasses.replace(
        options,
        course=str(ps.course.root),
        hidden_paths=options.hidden_paths
        + instructor_folders(submissions, out, ps.course.root, getattr(gradebook, "course", None)),
    )
    writer = OutputWriter(ps, out, grader_fingerprint(ps), gradebook, visibility, policy)
    rule = writer.policy.for_problem_set(ps.name)
    found = collect_submissions(submissions, ps.notebook_name, lms, rule.zone, ps.name)
    if collected is not None:
        collected(found)
    subs = found.submissions
    absent, roster = _roster_notes(found, writer.students())
    roster += extension_notes(rule, found, writer.students()) + evidence_notes(rule, found)
    heading = [f"format: {found.platform}"] + [f"lost: {n}" for n in found.lost]
    for note in found.notes + roster:
        log(f"note: {note}")
    write_atomic(out / "collection.txt", "".join(f"{n}\n" for n in heading + found.notes + roster))
    for missing in found.unmatched:
        log(f"note: {missing.student_id}: not graded, {missing.reason}: {', '.join(missing.files)}")
        if not writer.write_unmatched(missing):
            log(f"note: {missing.student_id}: their grade from an earlier run is kept")
    todo = [s for s in subs if not writer.is_current(s)]
    if len(todo) < len(subs):
        log(
            f"{len(subs) - len(todo)} of {len(subs)} submissions unchanged since the last run; "
            f"skipping them"
        )
    written: set[str] = set()
    codes: dict = {}  # what each student graded now wrote, fingerprinted by the workers
    if todo:
        backend: Backend[Any]
        if scheduler is None:
            backend = LocalPool(
                ps.name, options, max(1, min(workers or os.cpu_count() or 1, len(todo)))
            )
        else:
            from autograder.run.cluster import DaskBackend

            backend = DaskBackend(scheduler, ps.name, options, writer.fingerprint, log=log)
        bar = _progress(len(todo), quiet)

        def deliver(sub: Submission, record: Record) -> None:
            if sub.student_id in written:  # a second result for a student is never written
                return
            written.add(sub.student_id)
            if record.code is not None:
                codes[sub.student_id] = record.code
            if record.grader_error:
                log(
                    f"grader error on {sub.student_id} ({sub.origin}); not scored, and tried "
                    f"again on the next run:\n{record.grader_error}"
                )
            writer.write(record, sub)
            bar.update(1)

        try:
            run_tasks(
                backend,
                todo,
                deliver,
                problem_set=ps,
                deadline_s=deadline_s or default_deadline(options),
            )
        finally:
            bar.close()
            backend.close()
            writer.flush()  # the gradebook's last batch, even when interrupted
    # Whose code is alike, and whose written answers state another's numbers (a problem set
    # with variants): for a person to judge; no grade changes.
    quoted = quoted_numbers(ps, [(s.student_id, s.data) for s in subs])
    write_similarity(ps, subs, out, codes=codes, quoted=quoted)
    return writer.finish(absent, quoted)


def extension_notes(rule, found: Collection, previous: set[str]) -> list[str]:
    """A note for each extension of the late policy (``rule``, a
    :class:`autograder.intake.late.LateRule`) that names no student of this input or of earlier runs:
    a misspelt id, or a name where the student id is the name and the LMS's id."""
    students = (
        {s.student_id for s in found.submissions}
        | {u.student_id for u in found.unmatched}
        | previous
    )
    stray = sorted(set(rule.extensions) - students)
    if not stray:
        return []
    example = next(iter(sorted(students)), "")
    return [
        f"late policy: the extension for {name!r} names no student of this problem set, so "
        f"it applies to nobody (students are named as in grades.csv"
        + (f", e.g. {example!r}" if example else "")
        + ")"
        for name in stray
    ]


def evidence_notes(rule, found: Collection) -> list[str]:
    """A note when the late policy (``rule``, a :class:`autograder.intake.late.LateRule` with a
    deadline) reads evidence this download does not hold: ``evidence = "lms"`` on a platform that
    marks no file late, ``"file-time"`` where no file has a time, ``"both"`` with neither. Nobody
    is then counted late, and the instructor is told so rather than left to believe the class was
    on time."""
    if rule.deadline is None or not (found.submissions or found.unmatched):
        return []
    marks = rule.evidence in ("lms", "both") and found.marks_late
    times = rule.evidence in ("file-time", "both") and any(
        s.submitted_at is not None for s in found.submissions
    )
    if marks or times:
        return []
    missing = {
        "lms": f"{found.platform} marks no file late",
        "file-time": f"{found.platform} gives no time of handing in",
        "both": f"{found.platform} marks no file late and gives no time of handing in",
    }[rule.evidence]
    return [
        f'late policy: evidence = "{rule.evidence}", but {missing}: nobody is counted late '
        f"by this download"
        + (
            ' (evidence = "both" or "file-time" reads the times it gives)'
            if rule.evidence == "lms" and any(s.submitted_at is not None for s in found.submissions)
            else ""
        )
    ]


def _roster_notes(found: Collection, previous: set[str]) -> tuple[set[str], list[str]]:
    """The students absent from this input but graded before, and notes on the roster's change.

    An absent student's earlier grade is kept (a run on another archive never deletes a grade),
    and ``grades.csv`` says so in their row.
    """
    current = {s.student_id for s in found.submissions} | {u.student_id for u in found.unmatched}
    absent, new = sorted(previous - current), sorted(current - previous)
    notes = []
    if previous and new:
        notes.append(
            f"{len(new)} student(s) new since the last run into this folder: {', '.join(new)}"
        )
    if absent:
        notes.append(
            f"{len(absent)} student(s) graded in an earlier run have no file in this "
            f"input; their earlier grades are kept: {', '.join(absent)}"
        )
    return set(absent), notes
