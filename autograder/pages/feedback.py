"""Feedback for one student and the marking scheme, as self-contained HTML pages
(:mod:`autograder.pages.style`: the style and policy the class report,
:mod:`autograder.pages.report`, shares).

Feedback lists, per graded cell, the points and the trusted check's message: what passed and what
failed, in words a student can act on. It never contains the source of a check (hidden or not):
only messages written by :mod:`autograder.checks`, and the student's own error messages, escaped.
Every text that comes from a record is escaped, and each page forbids scripts, frames and requests
by its Content-Security-Policy (a second wall: the instructor opens the report in a browser).

What each status means is said in the words of :attr:`autograder.status.Status.explanation`.
What the hidden checks' messages show follows the instructor's choice
(:class:`autograder.pages.visibility.Visibility`: in full, pass/fail only, or nothing until a date);
the visible checks are always shown in full. Hand-graded scores (the record's ``manual``, merged
from the gradebook by ``python -m autograder export``) and the late penalty (``late``) are shown
with the total they give (:func:`autograder.grades.summary.summarize`).
"""

from __future__ import annotations

import html

from autograder.grades.summary import number, summarize
from autograder.grading.record import Record, as_record
from autograder.pages.style import cell_title, page

__all__ = ["feedback_html", "marking_scheme_html"]

#: What a cell's points mean, in words as well as in colour (WCAG 1.4.1).
_VERDICT = {"ok": "full marks", "partial": "part of the points", "bad": "no points"}


def feedback_html(record: Record | dict, visibility=None) -> str:
    """Feedback page for one graded submission (a record, or its JSON object).

    ``visibility`` (an :class:`autograder.pages.visibility.Visibility`) decides what the hidden
    checks' messages show; None shows them in full."""
    record = as_record(record)
    rows = []
    for s in record.scores:
        points = record.points(s)
        if points is None:
            css, pts = "", f"– / {s.max_points:g}"
        else:
            css = "ok" if points == s.max_points else ("partial" if points > 0 else "bad")
            pts = f"{points:g} / {s.max_points:g} ({_VERDICT[css]})"
        message = visibility.message(s) if visibility is not None else s.message
        rows.append(
            f"<tr><td>{html.escape(cell_title(s.grade_id))}</td>"
            f"<td class='{css}'>{pts}</td><td>{html.escape(message)}</td></tr>"
        )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in record.notes if n)
    return page(
        f"Feedback: {record.problem_set}",
        f"<h1>Feedback on {html.escape(record.problem_set)}</h1>"
        f"<p>Student: <b>{html.escape(record.student_id)}</b>. Autograded score: "
        f"<b>{_score(record)}</b>.{_totals(record)}</p>"
        f"<p class='note'>{html.escape(record.status.explanation)}</p>"
        + (f"<ul>{notes}</ul>" if notes else "")
        + _variant(record)
        + "<table><tr><th scope='col'>Question</th><th scope='col'>Points</th>"
        "<th scope='col'>What we found</th></tr>" + "".join(rows) + "</table>",
    )


def _numbers(values, digits: bool = False) -> str:
    """``name = value, ...`` of a variant's parameters as the notebook prints them, or with
    ``digits`` of expected values to 6 significant digits, for a page."""
    return ", ".join(f"{k} = {v:.6g}" if digits else f"{k} = {v}" for k, v in values)


def _variant(record: Record) -> str:
    """The student's own numbers (a problem set with per-student variants), and the values
    their written answers should state for them; nothing for any other problem set."""
    if not record.variant:
        return ""
    out = (
        "<p>Your numbers in this problem set (your own variant): "
        f"{html.escape(_numbers(sorted(record.variant.items())))}.</p>"
    )
    if record.expected:
        rows = "".join(
            f"<tr><td>{html.escape(label)}</td><td>{value:.6g}</td></tr>"
            for label, value in record.expected.items()
        )
        out += (
            "<table><caption>What your written answers should state, for your numbers"
            "</caption><tr><th scope='col'>Value</th><th scope='col'>For your numbers</th></tr>"
            f"{rows}</table>"
        )
    return out


def _totals(record: Record) -> str:
    """The hand-graded points, the late penalty and the total, where the record has them."""
    summary = summarize(record)
    if summary.auto is None or not summary.status.file_read:
        return ""
    parts = []
    if summary.max_manual:
        parts.append(
            f" Written answers: <b>{number(summary.manual)} / "
            f"{number(summary.max_manual)}</b>"
            + (" (not all graded yet)" if summary.pending else "")
            + "."
        )
    if summary.late_days:
        reason = record.late.reason if record.late is not None else ""
        parts.append(
            f" Late penalty: <b>−{number(summary.penalty)}</b> points "
            f"({number(summary.late_percent)}%: {html.escape(reason)})."
        )
    if summary.final is not None:
        parts.append(f" Total: <b>{number(summary.final)} / {number(summary.max_points)}</b>.")
    return "".join(parts)


def _score(record: Record) -> str:
    """``total / max``, or a dash where the grader failed (that is no one's zero)."""
    total = f"{record.total:g}" if record.status.scored else "–"
    return f"{total} / {record.max_auto:g}"


def marking_scheme_html(problem_set: str, markdown: str, records=()) -> str:
    """The instructor's marking scheme (``course/rubrics/<problem_set>.md``) as a page.

    Written beside the report for whoever grades the written answers in formgrader; the rubric is
    the course's own text (trusted), its formulas are left as TeX source. For a problem set with
    per-student variants, a table follows: each student of ``records`` (their records), their
    numbers and the values their written answers should state.
    """
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    personal = sorted((r for r in map(as_record, records) if r.variant), key=lambda r: r.student_id)
    rows = "".join(
        f"<tr><td>{html.escape(r.student_id)}</td>"
        f"<td>{html.escape(_numbers(sorted(r.variant.items())))}</td>"
        f"<td>{html.escape(_numbers(r.expected.items(), digits=True))}</td></tr>"
        for r in personal
    )
    table = (
        "<table><caption>Each student's numbers, and what their written answers should "
        "state</caption><tr><th scope='col'>Student</th><th scope='col'>Their numbers</th>"
        f"<th scope='col'>Expected values</th></tr>{rows}</table>"
        if personal
        else ""
    )
    return page(f"Marking scheme: {problem_set}", markdown2html_mistune(markdown) + table)
