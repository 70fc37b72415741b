"""The class report (``DIR/report.html``): what the class missed, for the instructor.

From the records of one problem set it shows, in this order: the class's most common mistakes
(wrong answers grouped across students), the students per status, the grader's own faults, the
distribution of totals, per question the distribution of points and the most common wrong answers
with the students who gave each, and the slowest submissions with their phase timings and the
timeouts. Long lists are folded in ``<details>``, so the page stays readable for hundreds of
students.

Wrong answers are grouped by what the student's function returned: a record's ``recorded`` holds,
per autograded cell, a signature of the values its hidden part recorded
(:mod:`autograder.grading.recorded`), and students with the same signature made the same mistake on the
same seeded inputs; the check's verdict (its message without numbers) must agree too. A record
without signatures (written by an older grader) is grouped by its full message, which names the
first wrong value. Every text that comes from a record is escaped, and
the page forbids scripts, frames and requests (the Content-Security-Policy of
:mod:`autograder.pages.style`).
"""

from __future__ import annotations

import base64
import html
import io
import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from autograder.grading.quoted import QuotedNumber
from autograder.grading.record import Record, as_record
from autograder.pages.style import cell_title, page, scrolling
from autograder.status import RECORDED
from coursedata.naming import question_of

__all__ = ["report_html", "wrong_answer_clusters", "Cluster"]

#: Numbers in a check's message (its verdict is the rest; the values are in the signature).
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
#: Clusters shown per graded cell before the rest is folded away.
SHOWN = 5

_REPORT_STYLE = """<style>
details{margin:.25rem 0}summary{cursor:pointer}.bar{display:inline-block;height:.8rem;
background:#4c72b0;vertical-align:middle}.muted{color:#666}.num{text-align:right;
white-space:nowrap}td.msg{max-width:38rem;overflow-wrap:anywhere}h3{margin-bottom:.2rem}
.q{border-top:1px solid #ccc;margin-top:.6rem;padding-top:.3rem}</style>"""


@dataclass
class Cluster:
    """Students who gave the same wrong answer to one graded cell."""

    grade_id: str
    key: str  # the values' signature (or ``message``) and the check's message
    students: list[str] = field(default_factory=list)
    messages: Counter = field(default_factory=Counter)
    points: list[float] = field(default_factory=list)

    @property
    def message(self) -> str:
        """The check's most common message in the cluster."""
        return self.messages.most_common(1)[0][0] if self.messages else ""


def _scored(records: list[Record]) -> list[Record]:
    """The records whose scores say how the answers did (:attr:`Status.ran`)."""
    return [r for r in records if r.status.ran]


def wrong_answer_clusters(records: Iterable[Record | Mapping]) -> dict[str, list[Cluster]]:
    """Per autograded cell, the wrong answers (fewer points than the most), largest group first.

    Students are grouped by the signature of their recorded values for that cell (when the
    record has one) and the check's verdict (its message without the numbers): rounded values
    alone would merge answers that a tight tolerance tells apart, and a visible test that failed
    in the kernel is another verdict. Without signatures, the full message decides.
    """
    clusters: dict[str, dict[str, Cluster]] = defaultdict(dict)
    for r in _scored(list(map(as_record, records))):
        for s in r.scores:
            if s.points is None or s.points >= s.max_points:
                continue
            gid = s.grade_id
            # The same values (to four digits) and the same verdict of the check: one mistake.
            verdict = _NUMBER.sub("#", s.message)
            key = f"{r.recorded[gid]}:{verdict}" if gid in r.recorded else f"message:{s.message}"
            c = clusters[gid].setdefault(key, Cluster(gid, key))
            c.students.append(r.student_id)
            c.messages[s.message] += 1
            c.points.append(s.points)
    return {
        gid: sorted(by_key.values(), key=lambda c: (-len(c.students), c.message))
        for gid, by_key in clusters.items()
    }


# ------------------------------------------------------------------------------------------------
# Pieces of the page
# ------------------------------------------------------------------------------------------------


def _esc(text, limit: int = 2000) -> str:
    text = str(text)
    return html.escape(text if len(text) <= limit else text[:limit] + " …")


def _students(names: list[str], open_below: int = 0) -> str:
    """The names, folded in ``<details>`` (open when there are fewer than ``open_below``)."""
    if not names:
        return ""
    listed = ", ".join(html.escape(n) for n in sorted(names))
    opened = " open" if len(names) < open_below else ""
    noun = "student" if len(names) == 1 else "students"
    return f"<details{opened}><summary>{len(names)} {noun}</summary>{listed}</details>"


def _grader_errors(records: list[Record]) -> str:
    """The tracebacks of the grader's faults, for the instructor only (never in feedback)."""
    failed = [r for r in records if not r.status.scored]
    if not failed:
        return ""
    items = "".join(
        f"<li><b>{html.escape(r.student_id)}</b><pre>"
        f"{html.escape(r.grader_error or 'no traceback recorded')}</pre></li>"
        for r in failed
    )
    return (
        f"<h2 id='grader-errors'>Grader errors</h2><p class='note'>The grader failed on "
        f"{len(failed)} submission(s); they have no score and are graded again by the next "
        f"run of the same command, once the grader is fixed.</p>"
        f"<details><summary>tracebacks</summary><ul>{items}</ul></details>"
    )


def _rules_section(records: list[Record]) -> str:
    """Students who broke the problem set's rules (scored 0 there) or whose code a person should
    read (flags: attempts a reading cannot resolve, a guard tampered with)."""
    rows = []
    for r in sorted(records, key=lambda r: r.student_id):
        broke = [f"{b.who} used {b.entry}: {b.where}" for b in r.breaches]
        if broke or r.flags:
            items = "".join(f"<li>{_esc(t, 400)}</li>" for t in broke) + "".join(
                f"<li class='muted'>to read: {_esc(t, 400)}</li>" for t in r.flags
            )
            rows.append(
                f"<tr><td>{html.escape(r.student_id)}</td><td class='num'>{len(broke)}"
                f"</td><td class='msg'><ul>{items}</ul></td></tr>"
            )
    if not rows:
        return (
            "<h2 id='rules'>The problem set's rules</h2><p>No submission used what the rules "
            "forbid, and no code needs a person to read it.</p>"
        )
    return (
        "<h2 id='rules'>The problem set's rules</h2><p class='note'>These submissions used "
        "what the problem set forbids (those functions scored 0 on every test) or hold code "
        "a reading cannot resolve, such as an import by a computed name: a person should read "
        "them. A flag alone costs no points.</p><table><tr><th>student</th>"
        f"<th class='num'>functions scored 0</th><th>what was found</th></tr>{''.join(rows)}"
        "</table>"
    )


def quoted_section(quoted: Sequence[QuotedNumber]) -> str:
    """The written answers that state another student's numbers, both students named; nothing
    when there are none (or the problem set has no variants)."""
    if not quoted:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(q.student)}</td><td>{html.escape(q.cell)}</td>"
        f"<td>{html.escape(q.quoted)}</td><td>{html.escape(q.other)}</td>"
        f"<td>{html.escape(q.label)} = {q.value:.6g}</td></tr>"
        for q in quoted
    )
    return (
        "<h2 id='quoted'>Written answers with another student's numbers</h2><p class='note'>"
        "Each student has their own numbers; these written answers state a number that is not "
        "the writer's own expected value but is a classmate's. Evidence for a person to judge, "
        "never a penalty.</p><table><tr><th scope='col'>student</th><th scope='col'>answer</th>"
        "<th scope='col'>wrote</th><th scope='col'>whose number it is</th>"
        f"<th scope='col'>their value</th></tr>{rows}</table>"
    )


def _histogram_png(totals: list[float], max_auto: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.hist(
        totals,
        bins=min(20, max(5, int(max_auto) + 1)),
        range=(0, max_auto),
        color="#4c72b0",
        edgecolor="white",
    )
    ax.set(title="Distribution of autograded scores", xlabel="points", ylabel="students")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def _status_section(records: list[Record]) -> str:
    by_status: dict[str, list[str]] = defaultdict(list)
    for r in records:
        by_status[r.status].append(r.student_id)
    order = [s for s in RECORDED if s in by_status]
    rows = "".join(
        f"<tr><td>{html.escape(s)}</td><td class='num'>{len(by_status[s])}</td>"
        f"<td>{_students(by_status[s], open_below=6)}</td></tr>"
        for s in order
    )
    return (
        "<h2 id='status'>Students per status</h2><table><tr><th>status</th>"
        f"<th class='num'>students</th><th>who</th></tr>{rows}</table>"
    )


def _bars(counts: Counter, max_points: float, n: int) -> str:
    """Points distribution of one cell: a row per points value, best first."""
    rows = []
    for points in sorted(counts, reverse=True):
        k = counts[points]
        css = "ok" if points >= max_points else ("partial" if points > 0 else "bad")
        rows.append(
            f"<tr><td class='num {css}'>{points:g} / {max_points:g}</td>"
            f"<td class='num'>{k}</td><td style='width:60%'><span class='bar' "
            f"style='width:{100 * k / n:.1f}%'></span></td></tr>"
        )
    return (
        "<table><tr><th class='num'>points</th><th class='num'>students</th><th></th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _cluster_rows(clusters: list[Cluster]) -> str:
    rows = []
    for c in clusters:
        others = len(c.messages) - 1
        extra = (
            (f" <span class='muted'>(and {others} other message{'s' if others > 1 else ''})</span>")
            if others > 0
            else ""
        )
        rows.append(
            f"<tr><td class='num'><b>{len(c.students)}</b></td>"
            f"<td class='msg'>{_esc(c.message)}{extra}</td>"
            f"<td>{_students(c.students, open_below=4)}</td></tr>"
        )
    return (
        "<table><tr><th class='num'>students</th><th>what the check found</th>"
        "<th>who</th></tr>" + "".join(rows) + "</table>"
    )


def _questions(records: list[Record], clusters: dict[str, list[Cluster]]) -> str:
    scored = _scored(records)
    order: list[str] = []
    cells: dict[str, dict] = {}
    for r in scored:
        for s in r.scores:
            if s.points is None:
                continue
            if s.grade_id not in cells:
                order.append(s.grade_id)
                cells[s.grade_id] = {"max": s.max_points, "points": Counter()}
            cells[s.grade_id]["points"][s.points] += 1
    questions: dict[str, list[str]] = {}
    for gid in order:
        questions.setdefault(question_of(gid), []).append(gid)
    parts = []
    for question, gids in questions.items():
        earned = sum(p * k for g in gids for p, k in cells[g]["points"].items())
        possible = sum(cells[g]["max"] * sum(cells[g]["points"].values()) for g in gids)
        lost = {st for g in gids for c in clusters.get(g, []) for st in c.students}
        body = []
        for gid in gids:
            info = cells[gid]
            n = sum(info["points"].values())
            mean = sum(p * k for p, k in info["points"].items()) / n if n else 0.0
            wrong = clusters.get(gid, [])
            body.append(
                f"<h3>{html.escape(cell_title(gid))}: mean {mean:.2f} / {info['max']:g}, "
                f"{sum(len(c.students) for c in wrong)} of {n} lost points</h3>"
                + _bars(info["points"], info["max"], n)
            )
            if wrong:
                body.append(
                    f"<p><b>Most common wrong answers</b> ({len(wrong)} different):</p>"
                    + _cluster_rows(wrong[:SHOWN])
                )
                if len(wrong) > SHOWN:
                    body.append(
                        f"<details><summary>{len(wrong) - SHOWN} other wrong answers"
                        f"</summary>{_cluster_rows(wrong[SHOWN:])}</details>"
                    )
        share = f"{earned / possible:.0%}" if possible else "–"
        parts.append(
            f"<div class='q'><details><summary><b>{html.escape(question)}</b>: "
            f"{share} of its points earned; {len(lost)} of {len(scored)} students lost "
            f"points</summary>{''.join(body)}</details></div>"
        )
    return (
        "<h2 id='questions'>Per question</h2><p class='muted'>Open a question for its points "
        "distribution per check and its wrong answers, grouped by the values the students' "
        "functions returned on the same inputs (so one row is one mistake).</p>" + "".join(parts)
    )


def _top_mistakes(clusters: dict[str, list[Cluster]], scored: int, top: int = 10) -> str:
    """The class's largest groups of one wrong answer, across all cells."""
    flat = sorted(
        (c for cs in clusters.values() for c in cs if len(c.students) > 1),
        key=lambda c: (-len(c.students), c.grade_id),
    )[:top]
    if not flat:
        return (
            "<h2 id='mistakes'>Most common mistakes</h2><p>No wrong answer was given by more "
            "than one student.</p>"
        )
    rows = "".join(
        f"<tr><td class='num'><b>{len(c.students)}</b></td>"
        f"<td>{html.escape(cell_title(c.grade_id))}</td>"
        f"<td class='msg'>{_esc(c.message)}</td><td>{_students(c.students)}</td></tr>"
        for c in flat
    )
    return (
        f"<h2 id='mistakes'>Most common mistakes</h2><p>The wrong answers most students gave "
        f"(out of {scored} scored submissions); the same mistake on the same inputs gives the "
        f"same values.</p><table><tr><th class='num'>students</th><th>check</th>"
        f"<th>what the check found</th><th>who</th></tr>{rows}</table>"
    )


_PHASES = (
    ("wait_s", "waiting"),
    ("start_s", "sandbox start"),
    ("execute_s", "cells"),
    ("score_s", "checks"),
)


def _timing(records: list[Record], top: int = 10) -> str:
    ran = [r for r in records if r.elapsed_s]
    parts = ["<h2 id='time'>Time</h2>"]
    if ran:
        times = [r.elapsed_s for r in ran]
        parts.append(
            f"<p>Grading took {statistics.median(times):.1f} s per submission (median), "
            f"{max(times):.1f} s at most.</p>"
        )
        slow = sorted(ran, key=lambda r: -r.elapsed_s)[:top]
        heads = "".join(f"<th class='num'>{label}</th>" for _, label in _PHASES)
        rows = []
        for r in slow:
            cells = "".join(
                f"<td class='num'>{r.timings[k]:.1f} s</td>"
                if isinstance(r.timings.get(k), (int, float))
                else "<td class='num muted'>–</td>"
                for k, _ in _PHASES
            )
            rows.append(
                f"<tr><td>{html.escape(r.student_id)}</td>"
                f"<td>{html.escape(r.status)}</td>"
                f"<td class='num'><b>{r.elapsed_s:.1f} s</b></td>{cells}</tr>"
            )
        parts.append(
            f"<details open><summary>The {len(slow)} slowest submissions</summary>"
            + scrolling(
                f"<table><tr><th>student</th><th>status</th><th class='num'>in all</th>"
                f"{heads}</tr>{''.join(rows)}</table>",
                "Time of the slowest submissions per step",
            )
            + "</details>"
        )
    stopped = [r for r in records if r.status.stopped]
    if stopped:
        stopped_rows = "".join(
            f"<tr><td>{html.escape(r.student_id)}</td>"
            f"<td>{html.escape(r.status)}</td>"
            f"<td class='msg'>{_esc(' | '.join(r.notes), 400)}</td></tr>"
            for r in sorted(stopped, key=lambda r: (r.status, r.student_id))
        )
        parts.append(
            f"<details><summary>{len(stopped)} submission(s) stopped: timeouts and "
            f"crashes</summary><table><tr><th>student</th><th>status</th><th>why</th>"
            f"</tr>{stopped_rows}</table></details>"
        )
    else:
        parts.append("<p>No submission timed out or crashed.</p>")
    return "".join(parts)


def report_html(
    problem_set: str,
    records: Sequence[Record | dict],
    rubric: bool = False,
    similarity: bool = False,
    quoted: Sequence[QuotedNumber] = (),
) -> str:
    """Class report: the most common mistakes, students per status, the grader's faults, the
    distribution of totals, per question the points and the wrong answers, and the time taken.

    The grader's faults are listed with their tracebacks; those submissions count in no
    statistic, and neither do the ones where nothing ran (invalid or unmatched). ``rubric`` and
    ``similarity`` say whether ``marking-scheme.html`` and ``similarity.html`` are beside it, to
    be linked. ``quoted``: numbers of written answers that are another student's
    (:func:`autograder.grading.quoted.quoted_numbers`), listed for a person."""
    class_records = [as_record(r) for r in records]
    scored = _scored(class_records)
    totals = [r.total for r in scored]
    max_auto = max((r.max_auto for r in scored), default=0.0)
    clusters = wrong_answer_clusters(class_records)
    mean = sum(totals) / len(totals) if totals else 0.0
    median = statistics.median(totals) if totals else 0.0
    img = (
        (
            f"<img alt='Histogram of the autograded scores of the {len(scored)} students whose "
            f"notebooks ran, from 0 to {max_auto:g} points (mean {mean:.2f}, median {median:g}).' "
            f"src='data:image/png;base64,"
            f"{_histogram_png(totals, max_auto)}'>"
        )
        if totals and max_auto > 0
        else ""
    )
    nav = (
        "<p class='muted'>On this page: <a href='#mistakes'>most common mistakes</a> · "
        "<a href='#status'>students per status</a> · <a href='#rules'>rules</a> · "
        "<a href='#scores'>scores</a> · "
        "<a href='#questions'>per question</a> · <a href='#time'>time</a></p>"
    )
    return page(
        f"Report: {problem_set}",
        f"<h1>Grading report: {html.escape(problem_set)}</h1>"
        + (
            "<p>Written answers: the <a href='marking-scheme.html'>marking scheme</a>.</p>"
            if rubric
            else ""
        )
        + (
            "<p>Whose code is alike (evidence to judge, never a penalty): the <a "
            "href='similarity.html'>similarity report</a>.</p>"
            if similarity
            else ""
        )
        + f"<p>{len(class_records)} submissions; mean autograded score {mean:.2f} / {max_auto:g} "
        f"(median {median:g}) over the {len(scored)} whose notebooks ran.</p>{nav}"
        f"{_top_mistakes(clusters, len(scored))}"
        f"{_status_section(class_records)}"
        f"{_rules_section(class_records)}"
        f"{quoted_section(quoted)}"
        f"{_grader_errors(class_records)}"
        f"<h2 id='scores'>Score distribution</h2>{img}"
        f"{_questions(class_records, clusters)}"
        f"{_timing(class_records)}",
        _REPORT_STYLE,
    )
