"""Which students' code is alike: winnowed fingerprints of what each student wrote.

Only what a student wrote counts: the code of the answer cells (the nbgrader solution cells,
matched as grading matches them, :meth:`ProblemSet.assemble`) and of the code cells they added.
Every line that the release already holds (a function's ``def`` line, ``# YOUR CODE HERE``, a
visible test pasted again) is left out, and so are comments and docstrings. The rest is cut into
tokens; a name a student chose becomes ``V`` (keywords, builtins, attributes such as ``.mean`` and
keyword arguments such as ``axis=`` keep theirs), so renamed variables, other comments, other
blank lines and spacing change nothing.

Each cell's token stream is fingerprinted by winnowing (Schleimer, Wilkerson and Aiken,
SIGMOD 2003, the method of MOSS): hashes of every ``K`` consecutive tokens, of which each window of
``W`` hashes keeps its smallest, so any match of ``K + W - 1`` tokens or more is found. Since a
submission's fingerprints are a set, reordered functions and cells match as well. An inverted index
from fingerprint to submissions finds the pairs that share fingerprints (no pair is compared that
shares none), and a fingerprint found in many submissions (an idiom, or the one obvious way to
write a line) is no evidence and is ignored, as MOSS does.

The score of a pair is the share of their fingerprints that they have in common,
``2 |A ∩ B| / (|A| + |B|)``. The page ``similarity.html`` (:mod:`autograder.pages.similarity`) shows
the top pairs with both students' code side by side and the shared parts highlighted: evidence for
a person to judge, never a penalty (``grades.csv`` does not change).
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from autograder.grading.problemset import InvalidNotebook, ProblemSet, read_notebook_bytes
from autograder.settings import ROOT

__all__ = [
    "StudentCode",
    "Pair",
    "student_code",
    "code_of",
    "starter_lines",
    "find_similar",
    "find_known",
    "known_sources",
    "KnownMatch",
    "common_limit",
    "K",
    "W",
]

#: Tokens per hashed k-gram, and hashes per winnowing window: every match of K + W - 1 = 8
#: tokens or more (a short line, ``V = V.mean(axis=0)`` is 10) leaves a shared fingerprint.
K, W = 5, 4
#: A pair needs this many shared fingerprints to be listed at all.
MIN_SHARED = 3
#: A submission's cell is named beside a known source (the book's published code) when at least
#: this share of its fingerprints, and at least KNOWN_MIN of them, are in that source.
KNOWN_SHARE, KNOWN_MIN = 0.9, 20

_TOKEN = re.compile(
    r"""
    (?P<comment>\#[^\n]*)
  | (?P<string>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<name>[^\W\d]\w*)
  | (?P<number>\d[\w.]*(?:[eE][-+]?\d+)?j?|\.\d[\w]*)
  | (?P<op>\*\*=?|//=?|==|!=|<=|>=|->|:=|[-+*/%@&|^<>]=|\S)
""",
    re.VERBOSE,
)
_KEEP = (frozenset(dir(builtins)) | frozenset(keyword.kwlist) | frozenset(keyword.softkwlist)) - {
    "_"
}
_MAGIC = re.compile(r"^[ \t]*[%!].*$", re.M)  # IPython magics and shell lines


@dataclass
class StudentCode:
    """What one student wrote, and its fingerprints.

    Attributes
    ----------
    student : str
    cells : list of (str, str)
        ``(label, source)`` of every answer cell and added code cell, as submitted.
    fingerprints : dict
        Fingerprint -> list of ``(cell, start, end)`` character spans of the cell's source.
    """

    student: str
    cells: list[tuple[str, str]] = field(default_factory=list)
    fingerprints: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)


@dataclass
class KnownMatch:
    """A submission's cell whose code is in a known source (the book's published code)."""

    student: str
    source: str
    cell: str  # the cell's label, "answer cell gamma_mle"
    share: float  # share of the cell's fingerprints found in the source
    shared: int
    common: frozenset = field(default=frozenset(), repr=False)


@dataclass
class Pair:
    """Two students whose code shares fingerprints."""

    a: str
    b: str
    score: float  # 2|A∩B| / (|A| + |B|), over the fingerprints that count
    shared: int  # fingerprints in common
    in_a: float  # share of a's fingerprints found in b
    in_b: float  # share of b's fingerprints found in a
    common: frozenset = field(default=frozenset(), repr=False)  # the shared fingerprints


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return meta if isinstance(meta, dict) else {}


_SOLUTION = re.compile(
    r"^[ \t]*### BEGIN SOLUTION[ \t]*\n[\s\S]*?^[ \t]*### END SOLUTION[ \t]*\n?", re.M
)


_STARTER: dict[tuple, frozenset[str]] = {}


def starter_lines(ps: ProblemSet) -> frozenset[str]:
    """:func:`_release_lines` of ``ps``, read once per process while its release and source
    files are unchanged."""

    def stamp(path: Path) -> tuple:
        try:
            return str(path), path.stat().st_mtime_ns, path.stat().st_size
        except OSError:
            return str(path), None, None

    key = (ps.name, stamp(ps.course.release_notebook(ps.name)), stamp(ps.path))
    if key not in _STARTER:
        _STARTER[key] = _release_lines(ps)
    return _STARTER[key]


def _release_lines(ps: ProblemSet, release: Path | None = None) -> frozenset[str]:
    """Every stripped line of the release's code cells: the starter code no student wrote."""
    path = release or ps.course.release_notebook(ps.name)
    if path.is_file():
        cells = read_notebook_bytes(path.read_bytes()).cells
    else:  # derive the release from the source: solution regions become the stub
        cells = []
        for cell in ps.source.cells:
            text = _SOLUTION.sub(
                "    # YOUR CODE HERE\n    raise NotImplementedError()\n", cell.source
            )
            cells.append({"cell_type": cell.cell_type, "source": text})
    return frozenset(
        line.strip()
        for c in cells
        if c.get("cell_type") == "code"
        for line in c.get("source", "").splitlines()
        if line.strip()
    )


def _tokens(source: str, starter: frozenset[str]) -> list[tuple[str, int, int]]:
    """Normalised tokens of ``source`` with their spans, outside the starter lines; comments,
    docstrings (strings that are a whole statement), magics and blank space dropped."""
    return [t for segment in _segments(source, starter) for t in segment]


def _segments(source: str, starter: frozenset[str]) -> list[list[tuple[str, int, int]]]:
    """:func:`_tokens` cut at every starter line: no k-gram runs from one function's body into
    the next one's across their ``def`` lines, so reordered functions keep their fingerprints."""
    text = _MAGIC.sub(lambda m: " " * len(m.group()), source)
    skip = {n for n, text_line in enumerate(text.split("\n")) if text_line.strip() in starter}
    line_starts = [0]
    for m in re.finditer("\n", text):
        line_starts.append(m.end())
    # (kind, token, start, end, line number) of each token, None where a starter line cuts
    raw: list[tuple[str | None, str, int, int, int] | None] = []
    line = 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        while line + 1 < len(line_starts) and line_starts[line + 1] <= m.start():
            line += 1
        if kind == "comment":
            continue
        if line in skip:
            if raw and raw[-1] is not None:
                raw.append(None)  # a cut
            continue
        raw.append((kind, m.group(), m.start(), m.end(), line))
    segments: list[list[tuple[str, int, int]]] = [[]]
    out = segments[0]
    depth = 0
    for i, item in enumerate(raw):
        if item is None:
            out = []
            segments.append(out)
            continue
        kind, tok, start, end, line = item
        prev = raw[i - 1] if i and raw[i - 1] is not None else None
        nxt = raw[i + 1] if i + 1 < len(raw) and raw[i + 1] is not None else None
        if kind == "op":
            depth += tok in "([{"
            depth -= tok in ")]}" and depth > 0
        if kind == "string":
            # A string alone on its lines is a docstring or a comment in disguise.
            alone_before = prev is None or prev[4] < line or prev[1] in (":", ";")
            end_line = text.count("\n", 0, end)
            alone_after = nxt is None or nxt[4] > end_line or nxt[1] == ";"
            if alone_before and alone_after and depth == 0:
                continue
            out.append((tok, start, end))
        elif kind == "name":
            keep = (
                tok in _KEEP
                or (prev is not None and prev[1] == ".")
                or (depth > 0 and nxt is not None and nxt[1] == "=")
            )  # keyword argument
            out.append((tok if keep else "V", start, end))
        else:
            out.append((tok, start, end))
    return [segment for segment in segments if segment]


def _hash(tokens: list[str]) -> int:
    return int.from_bytes(
        hashlib.blake2b("\x00".join(tokens).encode(), digest_size=8).digest(), "big"
    )


def _winnow(tokens: list[tuple[str, int, int]]) -> list[tuple[int, int, int]]:
    """Winnowed fingerprints of one cell: ``(hash, start, end)`` with the k-gram's span."""
    if len(tokens) < K:
        return []
    grams = [
        (_hash([t[0] for t in tokens[i : i + K]]), tokens[i][1], tokens[i + K - 1][2])
        for i in range(len(tokens) - K + 1)
    ]
    if len(grams) <= W:
        return [min(grams, key=lambda g: g[0])]
    picked: dict[int, tuple[int, int, int]] = {}
    for i in range(len(grams) - W + 1):
        window = grams[i : i + W]
        j = min(range(W), key=lambda n: (window[n][0], -n))  # rightmost minimum
        picked[i + j] = window[j]
    return [picked[i] for i in sorted(picked)]


def student_code(
    ps: ProblemSet, student: str, data: bytes, starter: frozenset[str] | None = None
) -> StudentCode:
    """What ``student`` wrote in the notebook ``data``, fingerprinted.

    A file that is no notebook gives an empty result (nothing to compare).
    """
    try:
        nb = read_notebook_bytes(data)
    except InvalidNotebook:
        return StudentCode(student)
    return code_of(ps, student, ps.assemble(nb).notebook, starter)


def code_of(
    ps: ProblemSet, student: str, assembled, starter: frozenset[str] | None = None
) -> StudentCode:
    """What ``student`` wrote, fingerprinted, from their notebook as grading rebuilt it
    (:meth:`ProblemSet.assemble`); ``starter``: the release's lines (default
    :func:`starter_lines`)."""
    starter = starter_lines(ps) if starter is None else starter
    code = StudentCode(student)
    answers = set(ps.solution_ids)
    plain = {c.source for c in ps.source.cells if not _nbgrader(c)}
    for cell in assembled.cells:
        if cell.cell_type != "code":
            continue
        gid = _nbgrader(cell).get("grade_id")
        if gid in answers:
            label = f"answer cell {gid}"
        elif not _nbgrader(cell) and cell.source not in plain:
            label = "cell added by the student"
        else:
            continue
        _add_cell(code, label, cell.source, starter)
    return code


def _add_cell(code: StudentCode, label: str, source: str, starter: frozenset[str]) -> None:
    """Append a cell to ``code`` and add its fingerprints."""
    index = len(code.cells)
    code.cells.append((label, source))
    for segment in _segments(source, starter):
        for h, start, end in _winnow(segment):
            code.fingerprints.setdefault(h, []).append((index, start, end))


_CODE_CELL = re.compile(
    r"^```\{code-cell\}[^\n]*\n(?:---\n.*?\n---\n)?(?::\w+:[^\n]*\n)*(.*?)^```", re.S | re.M
)


def known_sources(starter: frozenset[str], root: Path = ROOT) -> list[StudentCode]:
    """The book's published code as known sources, fingerprinted like a submission: each module
    of its library (``solutions/*.py``, the wheel ``mfpm-book``) and each chapter's code cells
    (``chapters/*.md``, downloadable from the book)."""
    sources = []
    for module in sorted((root / "solutions").glob("*.py")):
        code = StudentCode(f"the book's library: solutions/{module.name}")
        _add_cell(code, f"solutions/{module.name}", module.read_text(encoding="utf-8"), starter)
        sources.append(code)
    for chapter in sorted((root / "chapters").glob("*.md")):
        code = StudentCode(f"the book's chapter: chapters/{chapter.stem}")
        for i, match in enumerate(_CODE_CELL.finditer(chapter.read_text(encoding="utf-8"))):
            _add_cell(code, f"chapters/{chapter.stem}, code cell {i + 1}", match.group(1), starter)
        sources.append(code)
    return [c for c in sources if c.fingerprints]


def find_known(codes: list[StudentCode], known: list[StudentCode]) -> list[KnownMatch]:
    """The cells of submissions taken from a known source, most taken first.

    A cell is named when at least :data:`KNOWN_SHARE` of its fingerprints, and at least
    :data:`KNOWN_MIN` of them, are in one source: a copy, not the same approach (answers written
    honestly after the chapter share up to about 80% of a cell's fingerprints with the book's
    code; a cell pasted from it shares all). Idioms (fingerprints in many submissions) do not
    count.
    """
    owners: Counter = Counter(h for code in codes for h in code.fingerprints)
    ignored = {h for h, n in owners.items() if n > common_limit(len(codes))}
    by_hash: dict[int, list[int]] = defaultdict(list)
    for j, source in enumerate(known):
        for h in source.fingerprints:
            by_hash[h].append(j)
    found = []
    for code in codes:
        cells: dict[int, set[int]] = defaultdict(set)
        for h, spans in code.fingerprints.items():
            if h not in ignored:
                for cell, _, _ in spans:
                    cells[cell].add(h)
        for cell, mine in sorted(cells.items()):
            hits = Counter(j for h in mine for j in by_hash.get(h, ()))
            for j, shared in hits.items():
                if shared >= KNOWN_MIN and shared / len(mine) >= KNOWN_SHARE:
                    found.append(
                        KnownMatch(
                            code.student,
                            known[j].student,
                            code.cells[cell][0],
                            shared / len(mine),
                            shared,
                            frozenset(mine & known[j].fingerprints.keys()),
                        )
                    )
    found.sort(key=lambda m: (-m.share, -m.shared, m.student, m.source, m.cell))
    return found


def common_limit(n: int) -> int:
    """A fingerprint found in more submissions than this is an idiom, not evidence."""
    return max(10, n // 100)


def find_similar(codes: list[StudentCode], top: int = 50) -> list[Pair]:
    """The ``top`` most similar pairs among ``codes``, best first.

    Pairs are found through an inverted index (fingerprint -> submissions); only pairs that share
    at least :data:`MIN_SHARED` fingerprints are scored.
    """
    index: dict[int, list[int]] = defaultdict(list)
    for i, code in enumerate(codes):
        for h in code.fingerprints:
            index[h].append(i)
    limit = common_limit(len(codes))
    ignored = {h for h, owners in index.items() if len(owners) > limit}
    sizes = [sum(h not in ignored for h in code.fingerprints) for code in codes]
    counts: Counter = Counter()
    for h, owners in index.items():
        if h not in ignored and len(owners) > 1:
            counts.update(combinations(owners, 2))
    pairs = []
    for (i, j), shared in counts.items():
        if shared < MIN_SHARED:
            continue
        common = frozenset(
            h for h in codes[i].fingerprints if h in codes[j].fingerprints and h not in ignored
        )
        pairs.append(
            Pair(
                codes[i].student,
                codes[j].student,
                2 * shared / (sizes[i] + sizes[j]),
                shared,
                shared / sizes[i],
                shared / sizes[j],
                common,
            )
        )
    pairs.sort(key=lambda p: (-p.score, -p.shared, p.a, p.b))
    return pairs[:top]


# ------------------------------------------------------------------------------------------------
# The page
# ------------------------------------------------------------------------------------------------
