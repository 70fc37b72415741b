"""Grade a whole class: parallel workers, one writer, resumable.

Each submission is graded by :func:`grade_task`, a pure function from the notebook's bytes to a
result record (a JSON-serialisable dict) that runs in a worker process. The coordinating process
is the only writer of the output folder and of the gradebook. It writes each record as soon as it
arrives (atomically), so a batch killed half-way keeps every grade already recorded, and a re-run
skips submissions whose bytes and grader are unchanged.

Output folder layout::

    DIR/grades.csv                      one row per student
    DIR/report.html                     score distribution, failures per check
    DIR/feedback/<student>/<notebook>.html
    DIR/records/<student>.json          the full record (resume state)
"""

from __future__ import annotations

import concurrent.futures as cf
import csv
import dataclasses
import hashlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.collect import Submission, collect_submissions
from autograder.feedback import feedback_html, report_html
from autograder.grade import grade_submission, local_executor, sandbox_executor
from autograder.problemset import COURSE_DIR, ProblemSet

__all__ = ["GradingOptions", "grade_task", "grade_class", "grader_fingerprint"]


@dataclass(frozen=True)
class GradingOptions:
    """How each submission runs: limits and whether the sandbox is used."""

    cell_timeout_s: float = 30.0
    notebook_timeout_s: float = 300.0
    memory_mb: int = 2048
    unsafe: bool = False  # run without the sandbox (only where it cannot be built)
    # Instructor folders hidden from student code on top of the sandbox's own list (the
    # submissions, the output folder, the course): see :func:`instructor_folders`.
    hidden_paths: tuple[str, ...] = ()


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


def grader_fingerprint(problem_set: ProblemSet) -> str:
    """Hash of everything that decides a grade: the source notebook, checks, inputs, reference."""
    root = COURSE_DIR.parent
    files = [problem_set.path, COURSE_DIR / "checks" / f"{problem_set.name}.py",
             COURSE_DIR / "checks" / "common.py", COURSE_DIR / "scoring.py",
             COURSE_DIR / "problemset.py", root / "coursedata" / "grading.py",
             root / "coursedata" / "inputs" / f"{problem_set.name}.py",
             *sorted((root / "solutions").glob("*.py"))]
    digest = hashlib.sha256()
    for f in files:
        if f.is_file():
            digest.update(f.name.encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()[:16]


def _executor(options: GradingOptions):
    if options.unsafe:
        return local_executor(timeout=options.cell_timeout_s)
    from autograder.sandbox import SandboxConfig

    defaults = SandboxConfig()
    return sandbox_executor(SandboxConfig(
        cell_timeout_s=options.cell_timeout_s, notebook_timeout_s=options.notebook_timeout_s,
        memory_mb=options.memory_mb,
        hidden_paths=defaults.hidden_paths + tuple(Path(p) for p in options.hidden_paths)))


def grade_task(problem_set: str, student_id: str, data: bytes, options: GradingOptions) -> dict:
    """Grade one submission; a pure task (bytes in, record out) for a worker process.

    Returns
    -------
    dict
        ``student_id``, ``problem_set``, ``sha256``, ``status``, ``scores`` (list of dicts with
        ``grade_id``, ``points``, ``max_points``, ``message``), ``notes``, ``total``, ``max_auto``,
        ``max_manual``, ``elapsed_s`` and ``executed`` (the executed notebook as JSON text, for
        the instructor).
    """
    import nbformat

    start = time.monotonic()
    ps = ProblemSet(problem_set)
    try:
        result = grade_submission(ps, data, _executor(options))
    except Exception as exc:  # noqa: BLE001 - a grader fault must not lose the batch
        from autograder.grade import GradeResult, _zero_scores

        result = GradeResult(ps.name, "crashed", _zero_scores(ps, "not graded: grader error"),
                             [f"the grader failed on this submission: {type(exc).__name__}: {exc}"])
    scores = [s.to_dict() for s in result.scores]
    return {
        "student_id": student_id,
        "problem_set": ps.name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "status": result.status,
        "scores": scores,
        "notes": [n for n in result.notes if n],
        "total": round(result.total, 6),
        "max_auto": sum(s["max_points"] for s in scores if s["points"] is not None),
        "max_manual": sum(s["max_points"] for s in scores if s["points"] is None),
        "elapsed_s": round(time.monotonic() - start, 3),
        "executed": nbformat.writes(result.executed) if result.executed is not None else None,
    }


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


class _Writer:
    """The single writer of the output folder (and, optionally, of the gradebook)."""

    def __init__(self, ps: ProblemSet, out: Path, fingerprint: str, gradebook):
        self.ps, self.out, self.fingerprint, self.gradebook = ps, out, fingerprint, gradebook

    def record_path(self, student: str) -> Path:
        return self.out / "records" / f"{student}.json"

    def is_current(self, sub: Submission) -> bool:
        path = self.record_path(sub.student_id)
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            return False
        return old.get("sha256") == sub.sha256 and old.get("fingerprint") == self.fingerprint

    def write(self, record: dict, sub: Submission) -> None:
        record = {**record, "fingerprint": self.fingerprint, "origin": sub.origin}
        executed = record.pop("executed", None)
        stem = Path(self.ps.notebook_name).stem
        _write_atomic(self.out / "feedback" / sub.student_id / f"{stem}.html",
                      feedback_html(record))
        if self.gradebook is not None:
            self.gradebook.record(record, sub.data, executed)
        # Last: the record marks the submission as done for a resumed run.
        _write_atomic(self.record_path(sub.student_id), json.dumps(record, indent=1))

    def finish(self) -> list[dict]:
        records = []
        for path in sorted((self.out / "records").glob("*.json")):
            rec = json.loads(path.read_text())
            if rec.get("problem_set") == self.ps.name:
                records.append(rec)
        cells = [c.grade_id for c in self.ps.grade_cells]
        lines = [["student_id", "status", *cells, "autograded_total", "autograded_max",
                  "manual_max", "notes"]]
        for rec in records:
            pts = {s["grade_id"]: s["points"] for s in rec["scores"]}
            lines.append([rec["student_id"], rec["status"],
                          *["" if pts.get(c) is None else f"{pts[c]:g}" for c in cells],
                          f"{rec['total']:g}", f"{rec['max_auto']:g}", f"{rec['max_manual']:g}",
                          " | ".join(rec["notes"])[:500]])
        tmp = self.out / ".grades.csv.tmp"
        with tmp.open("w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(lines)
        os.replace(tmp, self.out / "grades.csv")
        _write_atomic(self.out / "report.html", report_html(self.ps.name, records))
        return records


def _progress(total: int, quiet: bool):
    from tqdm import tqdm

    return tqdm(total=total, unit="notebook", desc="grading", file=sys.stderr,
                disable=quiet or not sys.stderr.isatty(), smoothing=0.1)


def grade_class(problem_set: str, submissions: str | Path, out: str | Path, *,
                workers: int | None = None, options: GradingOptions = GradingOptions(),
                gradebook=None, quiet: bool = False, log=print) -> list[dict]:
    """Grade every submission under ``submissions`` into the folder ``out``.

    Parameters
    ----------
    problem_set : str
        Name of the problem set.
    submissions : path-like
        A folder or zip (see :mod:`autograder.collect`).
    out : path-like
        Output folder (created); see the module docstring.
    workers : int, optional
        Worker processes; default: the number of CPUs.
    options : GradingOptions
        Limits and sandboxing.
    gradebook : autograder.gradebook.GradebookWriter, optional
        Where scores are also recorded for nbgrader's formgrader and export.
    quiet : bool
        No progress bar.

    Returns
    -------
    list of dict
        Every record in ``out`` for this problem set (graded now or before).
    """
    ps = ProblemSet(problem_set)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    options = dataclasses.replace(options, hidden_paths=options.hidden_paths + instructor_folders(
        submissions, out, getattr(gradebook, "course", None)))
    subs, problems = collect_submissions(submissions, ps.notebook_name)
    for p in problems:
        log(f"note: {p}")
    writer = _Writer(ps, out, grader_fingerprint(ps), gradebook)
    todo = [s for s in subs if not writer.is_current(s)]
    if len(todo) < len(subs):
        log(f"{len(subs) - len(todo)} of {len(subs)} submissions unchanged since the last run; "
            f"skipping them")
    workers = max(1, min(workers or os.cpu_count() or 1, max(1, len(todo))))
    bar = _progress(len(todo), quiet)

    def run_pool(batch: list[Submission], n: int) -> list[Submission]:
        """Grade ``batch`` with ``n`` workers; return the submissions lost to a broken pool."""
        lost = []
        with cf.ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("forkserver")) as pool:
            futures = {pool.submit(grade_task, ps.name, s.student_id, s.data, options): s
                       for s in batch}
            for future in cf.as_completed(futures):
                sub = futures[future]
                try:
                    record = future.result()
                except cf.process.BrokenProcessPool:
                    lost.append(sub)
                    continue
                except Exception as exc:  # noqa: BLE001 - one failure never stops the batch
                    record = _failed_record(ps, sub, f"{type(exc).__name__}: {exc}")
                writer.write(record, sub)
                bar.update(1)
        return lost

    # A worker that dies takes the pool down; its unfinished submissions are then graded one at
    # a time, so only a submission that kills its own worker is recorded as crashed.
    for sub in run_pool(todo, workers) if todo else []:
        if run_pool([sub], 1):
            writer.write(_failed_record(ps, sub, "its grading worker died"), sub)
            bar.update(1)
    bar.close()
    return writer.finish()


def _failed_record(ps: ProblemSet, sub: Submission, why: str) -> dict:
    from autograder.grade import _zero_scores

    scores = [s.to_dict() for s in _zero_scores(ps, "not graded: the grader failed")]
    return {"student_id": sub.student_id, "problem_set": ps.name, "sha256": sub.sha256,
            "status": "crashed", "scores": scores, "notes": [why], "total": 0.0,
            "max_auto": sum(s["max_points"] for s in scores if s["points"] is not None),
            "max_manual": sum(s["max_points"] for s in scores if s["points"] is None),
            "elapsed_s": 0.0, "executed": None}

