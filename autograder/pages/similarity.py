"""The similarity page (``similarity.html``): which students' code is alike, side by side.

The fingerprints and the pairs are :mod:`autograder.grading.similarity`'s; this page shows the top
pairs with both students' code and the shared parts highlighted: evidence for a person to judge,
never a penalty (``grades.csv`` does not change).
"""

from __future__ import annotations

import html
import os
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from autograder.grading.problemset import ProblemSet
from autograder.grading.quoted import QuotedNumber
from autograder.grading.similarity import (
    KNOWN_MIN,
    KNOWN_SHARE,
    K,
    KnownMatch,
    Pair,
    StudentCode,
    W,
    common_limit,
    find_known,
    find_similar,
    known_sources,
    starter_lines,
    student_code,
)
from autograder.pages.report import quoted_section
from autograder.pages.style import page

__all__ = ["similarity_html", "write_similarity"]

_PAGE_STYLE = """<style>
.pair{margin:.3rem 0;border:1px solid #ddd;border-radius:.3rem;padding:.3rem .6rem}
.pair>summary{cursor:pointer}.sbs{display:grid;grid-template-columns:1fr 1fr;gap:.8rem}
.sbs pre{font-size:.8rem;background:#f7f7f7;padding:.4rem;overflow-x:auto;white-space:pre}
.sbs h2{font-size:1.1rem}.sbs h3{margin:.4rem 0 .1rem;font-size:.85rem;color:#555}
mark{background:#ffd27a}
body{max-width:90rem}</style>"""


def _highlighted(source: str, spans: list[tuple[int, int]]) -> str:
    """``source`` escaped, with the merged ``spans`` in ``<mark>``."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, at = [], 0
    for start, end in merged:
        out.append(html.escape(source[at:start]))
        out.append(f"<mark>{html.escape(source[start:end])}</mark>")
        at = end
    out.append(html.escape(source[at:]))
    return "".join(out)


def _side(code: StudentCode, common: frozenset) -> str:
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for h in common:
        for cell, start, end in code.fingerprints.get(h, []):
            spans[cell].append((start, end))
    parts = [f"<h2>{html.escape(code.student)}</h2>"]
    for i, (label, source) in enumerate(code.cells):
        if not source.strip():
            continue
        parts.append(f"<h3>{html.escape(label)}</h3><pre>{_highlighted(source, spans[i])}</pre>")
    return "<div>" + "".join(parts) + "</div>"


def _known_rows(
    codes: list[StudentCode], known: list[StudentCode], matches: list[KnownMatch]
) -> str:
    """The page's section on code taken from the book's published code."""
    by_name = {c.student: c for c in [*codes, *known]}
    rows = [
        f"<details class='pair'><summary>{html.escape(m.student)}, {html.escape(m.cell)}: "
        f"<b>{m.share:.0%}</b> of it is in {html.escape(m.source)} ({m.shared} shared "
        f"fingerprints)</summary><div class='sbs'>{_side(by_name[m.student], m.common)}"
        f"{_side(by_name[m.source], m.common)}</div></details>"
        for m in matches
    ]
    return (
        f"<h2>Code from the book's published code</h2><p>Each submission is also compared "
        f"with the code the course publishes: the {len(known)} modules and chapters of the "
        f"book's library and chapter notebooks. Listed: cells with at least "
        f"{KNOWN_SHARE:.0%} of their fingerprints (and {KNOWN_MIN} or more) in one of them.</p>"
        + ("".join(rows) or "<p>No submission takes a cell from them.</p>")
    )


def similarity_html(
    problem_set: str,
    codes: list[StudentCode],
    pairs: list[Pair],
    known: Sequence[StudentCode] = (),
    known_matches: Sequence[KnownMatch] = (),
    quoted: Sequence[QuotedNumber] = (),
) -> str:
    """The page: the pairs, best first, each with both students' code side by side; then the
    submissions that take code from the book's published code (``known``); then the written
    answers that state another student's numbers (``quoted``, a problem set with variants)."""
    by_student = {c.student: c for c in codes}
    rows = []
    for rank, p in enumerate(pairs, 1):
        rows.append(
            f"<details class='pair'><summary><b>{rank}.</b> {html.escape(p.a)} &amp; "
            f"{html.escape(p.b)}: <b>{p.score:.0%}</b> alike ({p.shared} shared fingerprints; "
            f"{p.in_a:.0%} of {html.escape(p.a)}'s code is in {html.escape(p.b)}'s, "
            f"{p.in_b:.0%} the other way)</summary><div class='sbs'>"
            f"{_side(by_student[p.a], p.common)}{_side(by_student[p.b], p.common)}</div></details>"
        )
    with_code = sum(bool(c.fingerprints) for c in codes)
    body = "".join(rows) if rows else "<p>No two submissions share enough code to list.</p>"
    return page(
        f"Similarity: {problem_set}",
        f"<h1>Similar code: {html.escape(problem_set)}</h1>"
        f"<p class='note'>Evidence for a person to judge, never a penalty: short functions "
        f"with one obvious solution are alike in honest work, and <code>grades.csv</code> "
        f"does not change. Only what students wrote counts (answer cells and cells they "
        f"added, without the release's starter code, comments and docstrings); renamed "
        f"variables, reordered functions and spacing are seen through.</p>"
        f"<p>{len(codes)} submissions, {with_code} with code of their own; the "
        f"{len(pairs)} most similar pairs, best first. Score: the share of the two "
        f"submissions' fingerprints (winnowed {K}-token sequences; any match of {K + W - 1} "
        f"tokens or more shows) that they have in common; a fingerprint found in more than "
        f"{common_limit(len(codes))} submissions is an idiom and does not count. Open a "
        f"pair to see the code, the shared parts <mark>highlighted</mark>.</p>"
        f"{body}{_known_rows(codes, list(known), list(known_matches)) if known else ''}"
        f"{quoted_section(quoted)}",
        _PAGE_STYLE,
    )


def write_similarity(
    problem_set: str | ProblemSet,
    submissions,
    out: Path,
    top: int = 50,
    codes: dict[str, StudentCode] | None = None,
    quoted: Sequence[QuotedNumber] = (),
) -> list[Pair]:
    """Write ``out/similarity.html`` for the submissions of ``problem_set``; return its pairs.

    Parameters
    ----------
    problem_set : str or ProblemSet
        A name (of the default course) or the problem set, whose course's release holds the
        starter code.
    submissions : dict of str to bytes, or list of Submission
        Each student's notebook file (``student -> bytes``, or
        :class:`autograder.intake.collect.Submission`).
    out : path-like
        The output folder (created).
    top : int
        How many pairs to list.
    codes : dict of str to StudentCode, optional
        What students wrote, fingerprinted already (by the grading workers,
        :func:`autograder.grading.pipeline.fingerprint_code`); the other submissions are read here.
    quoted : sequence of QuotedNumber
        Written answers stating another student's numbers
        (:func:`autograder.grading.quoted.quoted_numbers`), listed after the code.
    """
    ps = problem_set if isinstance(problem_set, ProblemSet) else ProblemSet(problem_set)
    items = (
        sorted(submissions.items())
        if isinstance(submissions, dict)
        else [(s.student_id, s.data) for s in submissions]
    )
    starter = starter_lines(ps)
    done = codes or {}
    every_code = [
        done[student] if student in done else student_code(ps, student, data, starter)
        for student, data in items
    ]
    pairs = find_similar(every_code, top)
    known = known_sources(starter)
    known_matches = find_known(every_code, known)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "similarity.html"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(
        similarity_html(ps.name, every_code, pairs, known, known_matches, quoted),
        encoding="utf-8",
    )
    os.replace(tmp, path)
    return pairs
