"""A problem set's rules: the modules and names its answers may not use.

Each problem set declares its rules once, in its source notebook's metadata, under
``metadata["course"]["rules"]`` (Jupyter's notebook metadata editor shows it; the release keeps it
in the student's copy, so the kit's check command reads the same declaration)::

    {"forbid": ["sklearn", "scipy"],
     "allow": ["numpy"],
     "statement": "Write your code only where it says `YOUR CODE HERE`, with numpy only: ...",
     "questions": {"pca_svd": {"forbid": [...], "allow": [...], "statement": "..."}}}

``forbid`` and ``allow`` hold dotted names: a module (``sklearn``, ``scipy.stats``) stands for
itself and everything inside it; an object (``scipy.special.logsumexp``) for itself. A name is
forbidden when the most specific entry that covers it is a ``forbid`` entry, so
``"allow": ["scipy.special"]`` next to ``"forbid": ["scipy"]`` lets ``scipy.special`` through.
``statement`` is the sentence of the notebook's instructions that states the rules (a test checks
that the notebook says it word for word). ``questions`` overrides the rules for one answer cell
(its nbgrader ``grade_id``): a later question may use what an earlier one forbade; its own
``statement`` must appear in that question's text.

This module holds no reference implementation and imports nothing outside the standard library:
the grader, the grading kernel (:mod:`coursedata.guard`) and the student's check command all read
the rules through it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["Policy", "Rules", "RulesError", "METADATA_KEY", "covers"]

#: Where a notebook's metadata holds the rules: ``metadata["course"]["rules"]``.
METADATA_KEY = ("course", "rules")


class RulesError(ValueError):
    """A declaration of rules that cannot be read (a mistake of the course, not of a student)."""


def covers(entry: str, name: str) -> bool:
    """Whether the dotted ``entry`` covers ``name``: the same name, or something inside it."""
    return name == entry or name.startswith(entry + ".")


def _names(value, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise RulesError(f"{where} must be a list of dotted names")
    for name in value:
        if not all(part.isidentifier() for part in name.split(".")):
            raise RulesError(f"{where}: {name!r} is not a dotted name")
    return tuple(value)


@dataclass(frozen=True)
class Policy:
    """The rules in force in one place (a question, or the whole problem set).

    Attributes
    ----------
    entries : tuple of (str, bool)
        Dotted names, each ``True`` when forbidden and ``False`` when allowed.
    statement : str
        The sentence students read.
    """

    entries: tuple[tuple[str, bool], ...]
    statement: str

    def forbidding(self, name: str) -> str | None:
        """The ``forbid`` entry that forbids the dotted ``name`` here, or None if it is allowed.

        The most specific entry covering ``name`` decides.
        """
        best: tuple[str, bool] | None = None
        for entry, forbidden in self.entries:
            if covers(entry, name) and (best is None or len(entry) >= len(best[0])):
                best = (entry, forbidden)
        return best[0] if best is not None and best[1] else None

    def reaches(self, name: str) -> str | None:
        """The ``forbid`` entry found inside the module ``name``, if ``name`` leads to one.

        ``scipy`` is allowed when only ``scipy.stats`` is forbidden, but reading attributes of
        ``scipy`` can reach ``scipy.stats``; this says which forbidden entry lies below.
        """
        for entry, forbidden in self.entries:
            if forbidden and entry.startswith(name + "."):
                return entry
        return None

    @property
    def forbidden(self) -> tuple[str, ...]:
        return tuple(e for e, f in self.entries if f)

    @property
    def allowed(self) -> tuple[str, ...]:
        return tuple(e for e, f in self.entries if not f)


@dataclass(frozen=True)
class Rules:
    """A problem set's declared rules (see the module docstring).

    Attributes
    ----------
    forbid, allow : tuple of str
        The problem set's dotted names.
    statement : str
        The sentence of the notebook's instructions that states them.
    questions : dict
        ``{answer grade_id: Rules}``: per-question overrides (their own ``questions`` is empty).
    """

    forbid: tuple[str, ...]
    allow: tuple[str, ...] = ()
    statement: str = ""
    questions: Mapping[str, Rules] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data, where: str = "rules") -> Rules:
        """Read a declaration; raise :class:`RulesError` with the reason when it is malformed."""
        if not isinstance(data, Mapping):
            raise RulesError(f"{where} must be a mapping")
        unknown = set(data) - {"forbid", "allow", "statement", "questions"}
        if unknown:
            raise RulesError(f"{where} has unknown keys: {sorted(unknown)}")
        statement = data.get("statement", "")
        if not isinstance(statement, str) or not statement.strip():
            raise RulesError(f"{where} needs a statement: the sentence students read")
        questions = data.get("questions") or {}
        if not isinstance(questions, Mapping):
            raise RulesError(f"{where}.questions must map answer cells to rules")
        if where != "rules" and questions:
            raise RulesError(f"{where} cannot hold questions of its own")
        parsed = {str(q): cls.from_dict(r, f"{where}.questions.{q}") for q, r in questions.items()}
        return cls(_names(data.get("forbid"), f"{where}.forbid"),
                   _names(data.get("allow"), f"{where}.allow"), statement.strip(), parsed)

    @classmethod
    def from_metadata(cls, metadata: Mapping) -> Rules | None:
        """The rules a notebook's metadata declares, or None when it declares none."""
        node: object = metadata
        for key in METADATA_KEY:
            node = node.get(key) if isinstance(node, Mapping) else None
        return None if not isinstance(node, Mapping) else cls.from_dict(node)

    def to_dict(self) -> dict:
        out: dict[str, object] = {"forbid": list(self.forbid), "allow": list(self.allow),
                                  "statement": self.statement}
        if self.questions:
            out["questions"] = {q: r.to_dict() for q, r in self.questions.items()}
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    def policy(self, question: str | None = None) -> Policy:
        """The rules in force in the answer cell ``question`` (None: the problem set's own)."""
        entries = dict.fromkeys(self.forbid, True)
        entries.update(dict.fromkeys(self.allow, False))
        statement = self.statement
        override = self.questions.get(question) if question is not None else None
        if override is not None:
            entries.update(dict.fromkeys(override.forbid, True))
            entries.update(dict.fromkeys(override.allow, False))
            statement = f"{override.statement} ({self.statement})"
        return Policy(tuple(entries.items()), statement)

    def every_forbidden(self) -> tuple[str, ...]:
        """Every name forbidden somewhere: the problem set's and its questions'."""
        names = dict.fromkeys(self.forbid)
        for rules in self.questions.values():
            names.update(dict.fromkeys(rules.forbid))
        return tuple(names)
