"""Per-student variants: each student their own numbers, drawn from the course's secret.

A problem set may declare, in its source notebook's metadata beside its rules, that some of its
numbers differ from student to student::

    "metadata": {"course": {
      "rules": {...},
      "variants": {"draw": "course.checks.ps4_map_naive_bayes:draw_variant",
                   "hidden": ["seed"],
                   "expected": "course.checks.ps4_map_naive_bayes:expected_values"}
    }}

``draw`` names a function of a trusted module (as a declaration's generators,
:func:`autograder.checks.declaration.resolve`) called with one :class:`numpy.random.Generator`
and returning the student's parameters, ``{name: number or list of numbers}``; ``hidden``
(optional) names the parameters only the grader sees (a hidden case's seed); ``expected``
(optional) a function of the parameters giving ``{label: number}``, the values the student's
written answers should state (shown in their feedback and the marking scheme, and looked for in
the others' written answers: :mod:`autograder.grading.quoted`). A test cell's
declaration then reads a parameter wherever it states a value, as ``{"variant": name}``::

    "cases": {"beta_map_student": {"n_ones": {"variant": "heads"}, "n_zeros": {"variant": "tails"},
                                   "a": 2.0, "b": 2.0},
              "beta_large": {"x": {"bernoulli": {"seed": {"variant": "seed"}, "n": 500, "p": 0.3}}}}

:func:`personalise` replaces each by the student's value, after which the declaration is an
ordinary one: the grader writes that student's inputs, computes the reference on them and scores
against it, with the same code as for a problem set without variants (which it leaves as it is).

The generator's seed is ``HMAC-SHA256(secret, "<problem set>:<student id>")`` cut to 128 bits
(:func:`seed`): the course's secret is a random key in the course folder (:func:`read_secret`),
never released and hidden from the sandboxed kernel, so a student's variant is recomputed by the
grader from the student's identity alone and cannot be derived from another student's. A
student identity is compared as :func:`coursedata.variants.identity` writes it (letters folded
to ASCII, lower case, anything else a hyphen: the grader's own form of an LMS's name), so
``" AB123"`` and ``"ab123"``, or ``oneilzoë-104`` and Canvas's ``oneilzoe-104``, are one student.

The student meets their numbers in the one notebook released to the class
(:func:`autograder.authoring.release.give_variants` writes the roster's table into it), through
the kit's :func:`coursedata.variants.variant`; when the notebook is graded, the grader writes the
numbers of the student the LMS names for it to read (:func:`write_parameters`) and flags a
notebook whose ``STUDENT_ID`` says another student (:func:`identity_problem`).
"""

from __future__ import annotations

import ast
import copy
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from autograder.checks.declaration import KEY as CHECK_KEY
from autograder.checks.declaration import DeclarationError, reads_parameter, resolve
from autograder.course import Course
from coursedata.grading import INPUTS_FOLDER
from coursedata.naming import VISIBLE, test_kind
from coursedata.variants import (
    FOLDER_ID,
    IDENTITY_CELL,
    IDENTITY_NAME,
    LMS_ID,
    VARIANT_FILE,
    identity,
)

__all__ = [
    "KEY",
    "PARAMETER",
    "SECRET_BYTES",
    "VariantSpec",
    "SecretMissing",
    "identity",
    "seed",
    "read_secret",
    "secret_file",
    "draw",
    "personalise",
    "varied_visible_cells",
    "varied_cases",
    "write_parameters",
    "entered_identity",
    "identity_problem",
    "identity_cell_problem",
    "roster_problems",
]

#: The key of the source notebook's ``metadata.course`` declaring its variants.
KEY = "variants"
#: The key of ``{"variant": name}``, a student's parameter in a test cell's declaration.
PARAMETER = "variant"
#: The length of a course's secret, in bytes.
SECRET_BYTES = 32


class SecretMissing(FileNotFoundError):
    """The course has no secret yet where the grader needs the one its release used."""


@dataclass(frozen=True)
class VariantSpec:
    """What a problem set declares of its variants.

    Attributes
    ----------
    draw : str
        ``"module:function"`` of a trusted module: ``function(rng) -> {name: value}``.
    hidden : tuple of str
        Parameters for the grader alone (a hidden case's seed): never in the release's table,
        the notebook or the feedback.
    expected : str or None
        ``"module:function"``: ``function(parameters) -> {label: number}``, the values a
        student's written answers should state for their numbers, shown in their feedback and
        the marking scheme and looked for in the others' written answers.
    """

    draw: str
    hidden: tuple[str, ...] = ()
    expected: str | None = None

    @classmethod
    def from_metadata(cls, metadata: Mapping) -> VariantSpec | None:
        """The declaration in a notebook's metadata (``course.variants``), or None.

        Raises
        ------
        DeclarationError
            A declaration other than ``{"draw": "module:function", "hidden": [name, ...],
            "expected": "module:function"}`` (the last two optional).
        """
        course = metadata.get("course", {}) if isinstance(metadata, Mapping) else {}
        spec = course.get(KEY) if isinstance(course, Mapping) else None
        if spec is None:
            return None
        hidden = spec.get("hidden", []) if isinstance(spec, Mapping) else None
        expected = spec.get("expected") if isinstance(spec, Mapping) else None
        if (
            not isinstance(spec, Mapping)
            or not set(spec) >= {"draw"}
            or set(spec) - {"draw", "hidden", "expected"}
            or not _reference(spec["draw"])
            or not (isinstance(hidden, list) and all(isinstance(h, str) for h in hidden))
            or not (expected is None or _reference(expected))
        ):
            raise DeclarationError(
                f'the notebook\'s course.{KEY} must be {{"draw": "module:function"}}, with '
                f'"hidden": [parameter, ...] and "expected": "module:function" if need be; '
                f"got {spec!r}"
            )
        return cls(spec["draw"], tuple(hidden), expected)

    def shown(self, parameters: Mapping) -> dict:
        """``parameters`` but the :attr:`hidden` ones: what the student's notebook holds."""
        return {k: v for k, v in parameters.items() if k not in self.hidden}

    def expected_values(self, parameters: Mapping) -> dict:
        """``{label: number}`` the written answers should state for ``parameters`` (none when
        the problem set declares no ``expected``).

        Raises
        ------
        DeclarationError
            The function returns anything but ``{label: number}``.
        """
        if self.expected is None:
            return {}
        got = resolve(self.expected)(dict(parameters))
        if not isinstance(got, Mapping) or not all(
            isinstance(k, str) and isinstance(_plain(v, k), int | float) for k, v in got.items()
        ):
            raise DeclarationError(f"{self.expected} returns {got!r}, not {{label: number}}")
        return {k: _plain(v, k) for k, v in got.items()}


def _reference(value) -> bool:
    """Whether ``value`` is written ``"module:function"``."""
    return isinstance(value, str) and ":" in value


def seed(secret: bytes, problem_set: str, student: str) -> int:
    """The 128-bit seed of a student's variant of a problem set.

    Parameters
    ----------
    secret : bytes
        The course's secret (:func:`read_secret`).
    problem_set : str
    student : str
        The student's identity (normalised by :func:`coursedata.variants.identity`).

    Returns
    -------
    int
        The first 16 bytes of ``HMAC-SHA256(secret, "<problem set>:<student>")``, big-endian.
    """
    message = f"{problem_set}:{identity(student)}".encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:16], "big")


def secret_file(course: Course) -> Path:
    """Where the course's secret is kept: ``<course>/variants.secret``."""
    return course.root / "variants.secret"


def read_secret(course: Course, *, create: bool = False) -> bytes:
    """The course's secret, kept in ``<course>/variants.secret`` (never released or published;
    the repository's ``.gitignore`` names it, and the sandbox hides the course folder).

    Parameters
    ----------
    course : Course
    create : bool
        Make a new random secret (readable by its owner alone, mode 0600) when there is none:
        the release does, the grader never (a new secret would give every student other numbers
        than their notebook's).

    Raises
    ------
    SecretMissing
        No secret and ``create`` is false.
    ValueError
        A secret file that is not :data:`SECRET_BYTES` hexadecimal bytes.
    """
    path = secret_file(course)
    if not path.exists():
        if not create:
            raise SecretMissing(
                f"{path} is missing: it is the course's secret, the key every student's variant "
                "is drawn from, made by the first release (`python -m autograder release`) of a "
                "problem set with variants. Restore it there from your backup and run again; a "
                "new one would give every student other numbers than their notebook's"
            )
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(SECRET_BYTES) + "\n")
    text = path.read_text().strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != SECRET_BYTES:
        raise ValueError(f"{path} is not a secret of {SECRET_BYTES} hexadecimal bytes")
    return key


def _plain(value, where: str):
    """``value`` as JSON's plain numbers and lists (numpy's converted), or a DeclarationError."""
    value = value.tolist() if isinstance(value, np.ndarray | np.generic) else value
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v, where) for v in value]
    raise DeclarationError(f"{where} is {value!r}: a variant's parameter is numbers or lists")


def draw(spec: VariantSpec, problem_set: str, student: str, secret: bytes) -> dict:
    """A student's parameters: ``spec.draw`` called with a generator seeded by :func:`seed`.

    Returns
    -------
    dict
        ``{name: number or (nested) list of numbers}``, plain JSON values.

    Raises
    ------
    DeclarationError
        The function cannot be found, or returns anything but ``{identifier: numbers}``.
    """
    make = resolve(spec.draw)
    got = make(np.random.default_rng(seed(secret, problem_set, student)))
    if not isinstance(got, Mapping) or not all(
        isinstance(k, str) and k.isidentifier() for k in got
    ):
        raise DeclarationError(f"{spec.draw} returns {got!r}, not {{name: value}}")
    return {k: _plain(v, f"{spec.draw}'s {k!r}") for k, v in got.items()}


def _substitute(spec, parameters: Mapping, where: str):
    """``spec`` with each ``{"variant": name}`` in it replaced by the parameter's value."""
    if isinstance(spec, Mapping):
        if set(spec) == {PARAMETER}:
            name = spec[PARAMETER]
            if name not in parameters:
                raise DeclarationError(
                    f"{where}: no variant parameter {name!r}; the draw gives {sorted(parameters)}"
                )
            return copy.deepcopy(parameters[name])
        return {k: _substitute(v, parameters, where) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_substitute(v, parameters, where) for v in spec]
    return spec


def personalise(notebook, parameters: Mapping):
    """A copy of the source ``notebook`` whose test cells' declarations read ``parameters``
    (each ``{"variant": name}`` replaced by its value); ``notebook`` is left as it is.

    Raises
    ------
    DeclarationError
        A declaration reads a parameter the draw does not give (the message names the cell).
    """
    out = copy.deepcopy(notebook)
    for cell in out.get("cells", []):
        course = cell.get("metadata", {}).get("course")
        if isinstance(course, dict) and CHECK_KEY in course:
            where = cell["metadata"].get("nbgrader", {}).get("grade_id", "a cell")
            course[CHECK_KEY] = _substitute(course[CHECK_KEY], parameters, where)
    return out


def entered_identity(notebook) -> str | None:
    """The identity the student entered in the notebook: the string assigned to
    ``STUDENT_ID`` (:data:`coursedata.variants.IDENTITY_NAME`) in the answer cell
    :data:`coursedata.variants.IDENTITY_CELL`, read without running anything; None when there is
    no such cell or no string assigned."""
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not isinstance(meta, Mapping) or meta.get("grade_id") != IDENTITY_CELL:
            continue
        try:
            tree = ast.parse(cell.get("source", ""))
        except SyntaxError:
            return None
        for node in tree.body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == IDENTITY_NAME for t in node.targets)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                return node.value.value
    return None


def roster_problems(roster: list[str]) -> list[str]:
    """What a person should know of a roster's lines before a release: a line that is no
    student id the grader gives (neither a Canvas or Moodle id, ``<name>-<number>``, nor a
    folder's name of letters, digits and ``._@+-``: a display name such as ``Hopper, Grace``),
    whose student would be flagged and graded on another's numbers; a Canvas id written with
    the sortable name as Canvas's gradebook shows it (``Hopper, Grace-103``, where the download
    and grades.csv write ``hoppergrace-103``); two lines of one identity;
    a line with nothing to compare (:func:`coursedata.variants.identity`); an LMS id whose
    name has no letter the grader spells in ASCII (``ивановиван-201``, where the grader gives
    ``user-201``)."""
    found: list[str] = []
    seen: dict[str, str] = {}
    for line in roster:
        text, key = str(line).strip(), identity(line)
        if not key:
            found.append(f"{text!r} has no letter or digit to tell the student by")
        elif not (LMS_ID.search(text) or FOLDER_ID.match(text)):
            found.append(
                f"{text!r} is no student id the grader gives (Canvas and Moodle: "
                f"<name>-<number>, as grades.csv names the student, e.g. hoppergrace-103; a "
                "folder of submissions: the folder's name, of letters, digits and ._@+-): this "
                "student would be graded on other numbers than their notebook's, and flagged"
            )
        elif "," in text and LMS_ID.search(text):
            canvas = identity(text.replace(",", "").replace(" ", ""))
            found.append(
                f"{text!r} reads as Canvas's sortable name with its user id, which Canvas's "
                f"download writes without spaces or punctuation ({canvas!r}, as grades.csv "
                f"names the student; Moodle's full name has no comma): this student would be "
                f"graded on other numbers than their notebook's, and flagged"
            )
        elif number := _unspelt_number(text):
            found.append(
                f"{text!r} names the student by letters the grader cannot spell in ASCII, so it "
                f"names them by the LMS's id alone (user-{number} on Canvas, participant-{number} "
                "on Moodle, as grades.csv names the student): write that here and tell the "
                "student; as written, this student would be graded on other numbers than their "
                "notebook's, and flagged"
            )
        elif key in seen:
            found.append(f"{text!r} is {seen[key]!r} again (one identity, {key!r})")
        seen.setdefault(key, text)
    return found


def _unspelt_number(line: str) -> str | None:
    """The LMS's number of ``line`` when it is an LMS id (``<name>-<number>``) whose name has
    letters, none of which :func:`coursedata.variants.identity` keeps (Cyrillic, Greek,
    Chinese...): the grader's id of that student is ``user-<number>`` or
    ``participant-<number>`` (:func:`autograder.intake.lms.lms_student`), the line's identity
    ``<number>``; else None."""
    found = LMS_ID.search(line)
    if found is None:
        return None
    name = line[: found.start()]
    return found[0].lstrip("-") if any(c.isalpha() for c in name) and not identity(name) else None


def identity_problem(notebook, student: str) -> str | None:
    """What a person should know when the identity entered in ``notebook`` is not ``student``'s
    (the LMS's), or None when it is."""
    entered = entered_identity(notebook)
    if entered is not None and identity(entered) == identity(student):
        return None
    said = f"{IDENTITY_NAME} = {entered!r}" if entered else f"no {IDENTITY_NAME}"
    return (
        f"the notebook says {said}, but it was handed in as {student!r}: it was graded on "
        f"the numbers drawn for {student!r}, so answers made for another variant lose their points "
        "(a person should check whose work this is)"
    )


def identity_cell_problem(notebook) -> str | None:
    """What is wrong with the answer cell where the student enters their identity
    (:data:`coursedata.variants.IDENTITY_CELL`), or None: without it the grader finds no
    identity in any notebook, and flags every student of the class."""
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if isinstance(meta, Mapping) and meta.get("grade_id") == IDENTITY_CELL:
            if cell.get("cell_type") == "code" and meta.get("solution"):
                return None
            return (
                f"the cell {IDENTITY_CELL} must be an answer cell (a code cell of nbgrader's "
                f'type "Autograded answer"), where the student types {IDENTITY_NAME} = '
                '"their identity"'
            )
    return (
        f"a problem set with variants needs, after its setup, an answer cell with the grade_id "
        f'{IDENTITY_CELL} holding {IDENTITY_NAME} = "" (the student\'s identity, as the LMS '
        "knows them): without it no notebook says whose it is, and every student is flagged "
        '(authoring.md, "Giving every student their own numbers")'
    )


def varied_cases(notebook) -> set[str]:
    """The declared cases of the source ``notebook`` whose inputs read a student's parameter
    (every case of a declaration that reads one elsewhere): each student's own, so two students
    who made one mistake record other values on them."""
    found: set[str] = set()
    for cell in notebook.get("cells", []):
        course = cell.get("metadata", {}).get("course")
        check = course.get(CHECK_KEY) if isinstance(course, Mapping) else None
        cases = check.get("cases") if isinstance(check, Mapping) else None
        if not isinstance(check, Mapping) or not isinstance(cases, Mapping):
            continue
        rest = {k: v for k, v in check.items() if k != "cases"}
        found |= {c for c, spec in cases.items() if reads_parameter(rest) or reads_parameter(spec)}
    return found


def varied_visible_cells(notebook) -> list[str]:
    """The ``_visible`` cells whose declarations read a student's parameter. The release gives
    the whole class's check the visible cases' inputs (:mod:`autograder.authoring.visible`), so
    a visible case is the same for everyone; a visible test reads the student's numbers from the
    notebook's ``V`` instead."""
    found = []
    for cell in notebook.get("cells", []):
        course = cell.get("metadata", {}).get("course")
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if (
            isinstance(course, Mapping)
            and test_kind(gid) == VISIBLE
            and reads_parameter(course.get(CHECK_KEY))
        ):
            found.append(gid)
    return found


def write_parameters(parameters: Mapping, results_dir) -> Path:
    """Write a student's parameters to ``results_dir/inputs/variant.json``, where the notebook's
    setup reads them when it is graded (:func:`coursedata.variants.variant`); return the path."""
    folder = Path(results_dir) / INPUTS_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / VARIANT_FILE
    path.write_text(json.dumps(dict(parameters), sort_keys=True), encoding="utf-8")
    return path
