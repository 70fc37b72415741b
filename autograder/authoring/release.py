"""Release a problem set to students: ``python -m autograder release NAME``.

Runs ``nbgrader generate_assignment NAME`` for the course (solutions and hidden tests removed),
after checking that the notebook's instructions state the problem set's declared rules
(:func:`autograder.grading.rulebook.declaration_problems`) and that it would grade as written
(:func:`autograder.authoring.validate.problems`, with the marking scheme when the course has one
for it, and the release gate
:func:`autograder.authoring.gate.gate_problems`: markers, the rules against the reference answers,
the declared references run on every declared case, the marking scheme's points tables); a
refusal names the cell or case and what to change. It writes into a scratch folder swapped in
for ``release/NAME/`` only on success, so a failure never deletes the published release;
nbgrader's refusal to change a gradebook holding an earlier term's submissions is explained with
the command that archives the term
(:mod:`autograder.gradebook.term`). Then it puts the student kit's address into the released notebook: every
source notebook's setup cell names the placeholder ``@KIT_URL@`` in the message it shows when the
kit is missing, and the release replaces it with the kit wheel's URL on the course site (and
updates nbgrader's checksum of that cell, so nbgrader's "Validate" does not report a changed cell),
and removes the declared checks from the cells' metadata (nbgrader keeps them; they name the hidden
cases' inputs).

The course's public address and the kit's wheel are read as the book reads them, from
:mod:`coursesite` (the address is set in one place, ``html: baseurl:`` of ``_config.yml``; the
kit's wheel is published at ``<site>/kit/<wheel>``). While that address is still the one the
repository ships with, the release prints a loud warning, and refuses with ``MFPM_REQUIRE_SITE=1``
(:func:`coursesite.warn_if_placeholder`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import nbformat

from autograder.authoring.validate import VARIANTS_PLACEHOLDER
from autograder.course import Course
from autograder.grading.problemset import ProblemSet, list_problem_sets
from autograder.grading.rulebook import declaration_problems
from autograder.settings import COURSE_DIR, ROOT
from coursesite import (
    PLACEHOLDER,
    PLACEHOLDER_SITE,
    REQUIRE_SITE,
    check_site_url,
    kit_url,
    kit_version,
    kit_wheel_name,
    placeholder_warning,
    site_url,
    warn_if_placeholder,
)

# The site and kit settings of coursesite are the release's too (re-exported here).
__all__ = [
    "PLACEHOLDER",
    "PLACEHOLDER_SITE",
    "REQUIRE_SITE",
    "ROOT",
    "check_site_url",
    "site_url",
    "placeholder_warning",
    "warn_if_placeholder",
    "kit_version",
    "kit_wheel_name",
    "kit_url",
    "release",
    "register",
    "strip_declarations",
    "give_visible_checks",
    "substitute",
    "VARIANTS_PLACEHOLDER",
    "variant_table",
    "give_variants",
    "read_roster",
    "released_with_variants",
    "release_secret",
    "roster_warnings",
    "PRACTICE_KEY",
    "practice_only",
]

#: The key the practice identity's numbers are drawn with when the course has no secret (the
#: course site's copy, released without a roster: its numbers are anyone's to see).
PRACTICE_KEY = b"the course site's practice copy".ljust(32, b"\0")
#: The identity whose variant the release's checks judge a problem set with variants on.
_SAMPLE_STUDENT = "release-check"
#: The key that student's variant is drawn with (not the course's: its secret may not exist yet).
_SAMPLE_KEY = b"release-check: a sample student".ljust(32, b"\0")


def substitute(path: Path, url: str) -> int:
    """Replace :data:`PLACEHOLDER` by ``url`` in the notebook ``path``; return the cells changed.

    Raises ``ValueError`` if no cell names the placeholder (a setup cell without the kit guard).
    """
    return _replace_in_cells(
        path,
        PLACEHOLDER,
        url,
        f"{path}: no cell names {PLACEHOLDER}; the setup cell must start with "
        "the guard that tells students how to install the kit",
    )


def _replace_in_cells(path: Path, old: str, new: str, missing: str) -> int:
    """Replace ``old`` by ``new`` in every cell of the notebook ``path``, refreshing nbgrader's
    checksum of a locked cell; return the cells changed, or raise ``ValueError(missing)`` if none
    names ``old``."""
    from nbgrader.utils import compute_checksum, is_locked

    nb = nbformat.read(path, as_version=4)
    changed = 0
    for cell in nb.cells:
        if old in cell.source:
            cell.source = cell.source.replace(old, new)
            meta = cell.metadata.get("nbgrader", {})
            if "checksum" in meta and is_locked(cell):
                meta["checksum"] = compute_checksum(cell)
            changed += 1
    if not changed:
        raise ValueError(missing)
    nbformat.write(nb, path)
    return changed


#: nbgrader's refusal to change a gradebook that holds submissions.
_SUBMISSIONS_REFUSAL = "because there are submissions associated with it"


def release(
    name: str,
    course: Path = COURSE_DIR,
    db_url: str | None = None,
    url: str | None = None,
    validate: bool = True,
    roster: Sequence[str] | None = None,
    new_secret: bool = False,
) -> Path:
    """Generate the student version of ``name`` in ``course/release/name/``; return the folder.

    The problem set is validated first (:func:`autograder.authoring.validate.problems`,
    :func:`autograder.authoring.gate.gate_problems`, then graded on its reference answers and on
    generic wrong ones, :func:`autograder.authoring.graded.graded_problems`: a problem set that
    would mis-grade is refused). nbgrader writes into a scratch folder of the course,
    which replaces ``release/name/`` only once the release is complete (:func:`_swap_in`), so a
    refusal or a failure leaves the published release as it was. ``db_url`` is the gradebook
    nbgrader records the problem set's cells in (default: the course's ``gradebook.db``);
    ``validate`` False skips the validation (for a caller that ran it already). A problem set
    with per-student variants gets the table of its ``roster``'s variants (default: the
    gradebook's students; :func:`give_variants`), the course's secret made first if need be;
    without a roster (none given, none in the gradebook: the course site's copy), the table of
    the practice identity alone (:data:`coursedata.variants.PRACTICE`), with a note on stderr.
    ``new_secret`` lets it make a new secret where an earlier release's was lost
    (:func:`release_secret`).
    """
    from autograder.authoring.cells import cell_problems
    from autograder.authoring.gate import gate_problems
    from autograder.authoring.graded import graded_problems
    from autograder.authoring.validate import Problem, problems, refusal

    if name not in list_problem_sets(course):
        raise ValueError(
            f"unknown problem set {name!r} in {course}; choose one of "
            f"{', '.join(list_problem_sets(course))}"
        )
    source = ProblemSet(name, Course(course))
    unused = roster is not None and source.variants is None  # a roster it has no use for
    roster = list(roster) if roster is not None else _students(db_url, course)
    table = variant_table(source, roster, new_secret=new_secret)
    for warning in roster_warnings(source, roster):
        print(warning, file=sys.stderr)
    # the static checks below judge one student's declarations; grading samples several
    ps = source.for_student(_SAMPLE_STUDENT, _SAMPLE_KEY) if table is not None else source
    problems_found = declaration_problems(ps)
    if problems_found:
        raise ValueError("; ".join(problems_found))
    scheme = ps.course.rubric(name).is_file()  # a course may keep its marking schemes elsewhere
    metadata = cell_problems(ps) if validate else []  # every count below reads these flags
    found: Sequence[Problem | str] = metadata or (
        [*problems(ps, rubric=scheme), *gate_problems(ps)] if validate else []
    )
    if validate and not found:  # what only grading shows (it needs the static checks passed)
        ps.course.use_code()
        found = graded_problems(source)
    if found:
        raise ValueError(refusal(ps, found))
    url = url or kit_url()
    course = Path(course).resolve()
    scratch = tempfile.mkdtemp(prefix=f".release-{name}-", dir=course)
    try:
        _generate(name, course, Path(scratch).name, db_url)
        notebooks = sorted(Path(scratch, name).glob("*.ipynb"))
        if not notebooks:
            raise RuntimeError(f"nbgrader wrote no notebook for {name}")
        for path in notebooks:
            substitute(path, url)
            if table is not None:
                give_variants(path, table)
            strip_declarations(path)
            give_visible_checks(path, ps)
        folder = _swap_in(Path(scratch, name), course / "release" / name)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if table is not None and not roster:
        print(_practice_note(name), file=sys.stderr)
    if unused:
        print(
            f"note: {name} has no per-student variants (no course.variants in its source "
            "notebook's metadata): every student gets the same notebook, and the roster was not "
            "used for it",
            file=sys.stderr,
        )
    return folder


def roster_warnings(ps: ProblemSet, roster: Sequence[str]) -> list[str]:
    """The warnings a release of ``ps`` (a problem set with variants) prints for its roster's
    lines (:func:`autograder.checks.personal.roster_problems`), each naming the problem set."""
    from autograder.checks.personal import roster_problems

    if ps.variants is None:
        return []
    return [f"warning: {ps.name}'s roster: {p}" for p in roster_problems(list(roster))]


def _practice_note(name: str) -> str:
    """What a release of ``name`` (a problem set with variants) without a roster prints."""
    from coursedata.variants import PRACTICE

    return (
        f"note: {name} was released without a roster: its notebook knows only the practice "
        f"identity STUDENT_ID = \"{PRACTICE}\" (the course site's copy). For a course's students, "
        "release it with --roster FILE (one identity a line, as the LMS has it), or with the "
        "students in the gradebook"
    )


def read_roster(path: Path) -> list[str]:
    """The identities of a roster file: one per line (blank lines and ``#`` comments skipped),
    in UTF-8, with or without the byte-order mark a spreadsheet's "UTF-8 CSV" starts with.

    Raises
    ------
    ValueError
        A file that cannot be read, is not UTF-8, or names no identity (the message names it).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not UTF-8 text (byte {exc.start}: {exc.object[exc.start : exc.start + 1]!r}"
            '): save the roster as UTF-8 (a spreadsheet\'s "CSV UTF-8"), one identity a line'
        ) from None
    except OSError as exc:
        raise ValueError(
            f"cannot read the roster {path}: {exc.strerror or exc}; give --roster a text file "
            "of the class's identities, one a line"
        ) from None
    found = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not found:
        raise ValueError(f"{path} names no student: write one identity (as the LMS has it) a line")
    return found


def _students(db_url: str | None, course: Path) -> list[str]:
    """The students of nbgrader's gradebook (none when it does not exist yet)."""
    from nbgrader.api import Gradebook

    url = db_url or f"sqlite:///{Path(course).resolve() / 'gradebook.db'}"
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return []
    with Gradebook(url) as gradebook:
        return [student.id for student in gradebook.students]


def variant_table(
    ps: ProblemSet, roster: Sequence[str], *, new_secret: bool = False
) -> dict | None:
    """``{"salt": salt, "rows": {key: parameters}}`` of every student of ``roster``, keyed with
    a salt made anew (:func:`coursedata.variants.table_key`), drawn with the course's secret
    (:func:`release_secret`); None for a problem set without variants. An empty roster gives
    the table of the practice identity alone (:data:`coursedata.variants.PRACTICE`, drawn as a
    student's is), for a release without a class (the course site's copy), drawn with the
    course's secret if it has one, else with :data:`PRACTICE_KEY`: the site's copy (``make
    book`` on a fresh clone) never makes the course's secret, which a later class release or
    ``grade`` would then take for the one the class's notebooks were drawn from.

    Raises
    ------
    ValueError
        A roster naming the practice identity (its notebook would not be flagged as another's
        at grading), no answer cell for the student's identity
        (:func:`autograder.checks.personal.identity_cell_problem`), a visible cell that reads
        a student's parameter, or a lost secret
        (:func:`release_secret`).
    """
    from autograder.checks.personal import (
        draw,
        identity_cell_problem,
        secret_file,
        varied_visible_cells,
    )
    from coursedata.variants import PRACTICE, identity, salted_table, table_key

    spec = ps.variants
    if spec is None:
        return None
    if any(identity(s) == PRACTICE for s in roster):
        raise ValueError(
            f"the roster names {PRACTICE!r}, the identity anyone may try {ps.name} with on the "
            "course site: a student's identity must be their own, as the LMS has it"
        )
    roster = list(roster) or [PRACTICE]
    missing = identity_cell_problem(ps.source)
    if missing:
        raise ValueError(f"{ps.name}: {missing}")
    varied = varied_visible_cells(ps.source)
    if varied:
        raise ValueError(
            f"{', '.join(varied)} read a student's parameter, but a visible cell's cases are "
            "the whole class's (every student's check gets their inputs): vary the hidden "
            "cases, and let the visible test read the student's numbers from V"
        )
    secret = (
        release_secret(ps.course, new_secret=new_secret)
        if roster != [PRACTICE] or new_secret or secret_file(ps.course).exists()
        else PRACTICE_KEY  # the site's copy never makes the course's secret (a fresh clone's)
    )
    salt = secrets.token_hex(16)  # anew at each release
    rows = {table_key(ps.name, s, salt): spec.shown(draw(spec, ps.name, s, secret)) for s in roster}
    return salted_table(rows, salt)


def released_with_variants(course: Course) -> list[str]:
    """The problem sets of ``course`` with variants that have a release (``release/NAME/``)
    for a class, whose table of variants was drawn from the course's secret (not the course
    site's copy, which knows the practice identity alone: :func:`practice_only`)."""
    return [
        name
        for name in list_problem_sets(course.root)
        if course.release_notebook(name).is_file()
        and ProblemSet(name, course).variants is not None
        and not practice_only(name, course.release_notebook(name))
    ]


def practice_only(name: str, path: Path) -> bool:
    """Whether the released notebook ``path`` of ``name`` holds the table of the practice
    identity alone (a release without a roster, :func:`variant_table`)."""
    import ast
    import json

    from coursedata.variants import PRACTICE, table_key

    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type != "code" or "coursedata.variant(" not in cell.source:
            continue
        try:
            calls = [n for n in ast.walk(ast.parse(cell.source)) if isinstance(n, ast.Call)]
        except SyntaxError:
            return False
        for call in calls:
            given = call.args[2] if len(call.args) == 3 else None
            if isinstance(given, ast.Constant) and isinstance(given.value, str):
                try:
                    table = json.loads(given.value)
                except ValueError:
                    return False
                salt = table.get("salt") if isinstance(table, dict) else None
                rows = table.get("rows", table) if isinstance(table, dict) else {}
                return set(rows) == {table_key(name, PRACTICE, salt)}
    return False


def release_secret(course: Course, *, new_secret: bool = False) -> bytes:
    """The course's secret, for a release's table of variants: made now when the course has
    none, unless an earlier release's table was drawn from one now lost
    (:func:`released_with_variants`), which a new secret would silently contradict: every
    student of that release would be graded on other numbers than their notebook shows.
    ``new_secret`` makes a new one all the same (the instructor starts afresh on purpose). A
    secret made here is said on stderr, with its path and a word on keeping it.

    Raises
    ------
    ValueError
        The secret is lost and an earlier release needs it (without ``new_secret``), or
        ``new_secret`` where the course has a secret.
    """
    from autograder.checks.personal import read_secret, secret_file

    path = secret_file(course)
    if new_secret and path.exists():
        raise ValueError(
            f"--new-secret makes a secret where the course's is lost, but {path} exists: to "
            "start afresh, move it aside first (every student then gets new numbers)"
        )
    earlier = [] if new_secret or path.exists() else released_with_variants(course)
    if earlier:
        raise ValueError(
            f"{path} is missing, but {', '.join(earlier)} "
            f"{'was' if len(earlier) == 1 else 'were'} released with a table of variants drawn "
            f"from it ({course.root / 'release'}): a new secret would give every student other "
            "numbers than their notebook shows, and grade them on those. Restore the secret "
            "from your backup and release again; or, to start afresh deliberately, release "
            "with --new-secret, then release every problem set with variants again to the "
            "whole class before anyone hands it in"
        )
    made = not path.exists()
    key = read_secret(course, create=True)
    if made:
        print(_new_secret_note(path), file=sys.stderr)
    return key


def _new_secret_note(path: Path) -> str:
    """What a release that made the course's secret at ``path`` prints."""
    return (
        f"note: made the course's secret {path}: every student's numbers are drawn from it. "
        "Keep a backup (never commit or publish it): without it no student can be graded. If "
        "this course released a problem set with variants from another copy (another machine, "
        "an earlier clone), stop: put that copy's variants.secret here instead and release again"
    )


def give_variants(path: Path, table: dict) -> int:
    """Replace the string literal ``"@VARIANTS@"`` (:data:`VARIANTS_PLACEHOLDER`) by the JSON of
    ``table`` in the released notebook ``path`` (updating nbgrader's checksum of a locked cell);
    return the cells changed.

    Raises
    ------
    ValueError
        No cell names the placeholder (the setup does not look the student's numbers up).
    """
    import json

    return _replace_in_cells(
        path,
        f'"{VARIANTS_PLACEHOLDER}"',
        repr(json.dumps(table, sort_keys=True, separators=(",", ":"))),
        f'{path}: no cell names "{VARIANTS_PLACEHOLDER}"; the setup of a problem set with '
        f"variants looks the student's numbers up with coursedata.variant(NAME, "
        f'STUDENT_ID, "{VARIANTS_PLACEHOLDER}")',
    )


def register(name: str, course: Path, db_url: str) -> None:
    """Record the cells of ``name`` in the gradebook ``db_url`` as :func:`release` does, leaving
    the published release as it is (nbgrader's student version goes to a scratch folder)."""
    course = Path(course).resolve()
    scratch = tempfile.mkdtemp(prefix=f".gradebook-{name}-", dir=course)
    try:
        _generate(name, course, Path(scratch).name, db_url)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _generate(name: str, course: Path, release_dir: str, db_url: str | None) -> None:
    """``nbgrader generate_assignment`` of ``name`` into ``course/release_dir/name``."""
    bin_dir = Path(sys.executable).parent  # nbgrader runs `alembic` from PATH
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    command = [
        sys.executable,
        "-m",
        "nbgrader",
        "generate_assignment",
        name,
        "--force",
        "--log-level=WARN",
        f"--CourseDirectory.root={course}",
        f"--CourseDirectory.release_directory={release_dir}",
    ]
    if db_url:
        command.append(f"--CourseDirectory.db_url={db_url}")
    done = subprocess.run(command, cwd=course, env=env, capture_output=True, text=True)
    if done.returncode == 0:
        return
    output = done.stdout + done.stderr
    if _SUBMISSIONS_REFUSAL in output:
        gradebook = db_url or f"sqlite:///{course / 'gradebook.db'}"
        raise RuntimeError(
            f"nbgrader will not change the cells of {name} in the gradebook ({gradebook}) "
            f"because it holds submissions of an earlier term: archive that term with "
            f"`python -m autograder new-term --course {course}` and release again (nothing "
            f"published was changed)"
        )
    markers = _marker_problems(name, course)
    if markers:  # nbgrader's traceback names no cell; these do
        raise RuntimeError(
            f"nbgrader cannot make the student's version of {name}:\n"
            + "\n".join(f"  - {p}" for p in markers)
        )
    raise RuntimeError(f"nbgrader generate_assignment {name} failed:\n{output[-3000:]}")


def _marker_problems(name: str, course: Path) -> list:
    """The solution and hidden-test markers nbgrader would stumble on, each with its cell."""
    from autograder.authoring.gate import marker_problems

    try:
        return marker_problems(ProblemSet(name, Course(course)))
    except Exception:  # noqa: BLE001 - only a better message than nbgrader's is at stake
        return []


def _swap_in(new: Path, published: Path) -> Path:
    """Put the folder ``new`` at ``published`` by renames: the old release is moved aside, the
    new one renamed into place, then the old one deleted (and put back if the rename failed)."""
    published.parent.mkdir(parents=True, exist_ok=True)
    old = published.with_name(f".{published.name}.old-{os.getpid()}")
    if published.exists():
        os.rename(published, old)
    try:
        os.rename(new, published)
    except BaseException:
        if old.exists():
            os.rename(old, published)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return published


def give_visible_checks(path: Path, ps: ProblemSet) -> int:
    """Give the student's check what it needs to judge each visible cell as the grader does
    (:mod:`autograder.authoring.visible`), in the released notebook ``path``; return how many
    visible cells it can judge so."""
    from autograder.authoring.visible import embed
    from autograder.checks import load_checks

    nb = nbformat.read(path, as_version=4)
    ps.course.use_code()  # the references the declarations name are this course's
    hand_written = set(load_checks(ps.name, ps.course).CHECKS)
    judged = embed(nb, ps.source, hand_written)
    nbformat.write(nb, path)
    return judged


def strip_declarations(path: Path) -> int:
    """Remove the declared checks (:mod:`autograder.checks.declared`), which nbgrader keeps, from
    the released notebook ``path``; return how many cells carried one."""
    from autograder.checks.declared import strip

    nb = nbformat.read(path, as_version=4)
    removed = strip(nb)
    if removed:
        nbformat.write(nb, path)
    return removed
