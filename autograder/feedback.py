"""Feedback for one student and the marking scheme, as self-contained HTML (the class report is
:mod:`autograder.report`, which shares this page style and policy).

Feedback lists, per graded cell, the points and the trusted check's message: what passed and what
failed, in words a student can act on. It never contains the source of a check (hidden or not):
only messages written by :mod:`autograder.checks`, and the student's own error messages, escaped.
Every text that comes from a record is escaped, and each page forbids scripts, frames and requests
by its Content-Security-Policy (a second wall: the instructor opens the report in a browser).

What each status means is said in the words of :attr:`autograder.status.Status.explanation`.
What the hidden checks' messages show follows the instructor's choice
(:class:`autograder.visibility.Visibility`: in full, pass/fail only, or nothing until a date);
the visible checks are always shown in full. Hand-graded scores (the record's ``manual``, merged
from the gradebook by ``python -m autograder export``) and the late penalty (``late``) are shown
with the total they give (:func:`autograder.exports.summary.summarize`).
"""

from __future__ import annotations

import html

from autograder.exports.summary import number, summarize
from autograder.record import Record, as_record

__all__ = ["feedback_html", "marking_scheme_html", "page"]

# No scripts, frames, forms or requests; only the inline style and the report's own data image.
_CSP = ("<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:; form-action 'none'\">")

_STYLE = """<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.4rem;
text-align:left;vertical-align:top}.ok{color:#176b2c}.partial{color:#8a5a00}.bad{color:#a01c1c}
.note{background:#fff6d6;padding:.6rem;border-radius:.3rem}</style>"""

#: What a cell's points mean, in words as well as in colour (WCAG 1.4.1).
_VERDICT = {"ok": "full marks", "partial": "part of the points", "bad": "no points"}


def page(title: str, body: str, style: str = "") -> str:
    """A self-contained English page in the grader's style, under its Content-Security-Policy.

    Parameters
    ----------
    title : str
        The page's title (escaped here).
    body : str
        The page's HTML body (trusted: every text from a record is escaped by the caller).
    style : str
        A ``<style>`` element of the page's own, after the shared one.
    """
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'>{_CSP}"
            f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
            f"<title>{html.escape(title)}</title>{_STYLE}{style}</head><body>{body}</body></html>")


def _title(grade_id: str) -> str:
    base, _, kind = grade_id.rpartition("_")
    if kind in ("visible", "hidden"):
        return f"{base.replace('_', ' ')} ({'visible test' if kind == 'visible' else 'hidden test'})"
    return grade_id.replace("_", " ")


def feedback_html(record: Record | dict, visibility=None) -> str:
    """Feedback page for one graded submission (a record, or its JSON object).

    ``visibility`` (an :class:`autograder.visibility.Visibility`) decides what the hidden
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
        rows.append(f"<tr><td>{html.escape(_title(s.grade_id))}</td><td class='{css}'>{pts}</td>"
                    f"<td>{html.escape(message)}</td></tr>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in record.notes if n)
    return page(f"Feedback: {record.problem_set}",
                f"<h1>Feedback on {html.escape(record.problem_set)}</h1>"
                f"<p>Student: <b>{html.escape(record.student_id)}</b>. Autograded score: "
                f"<b>{_score(record)}</b>.{_totals(record)}</p>"
                f"<p class='note'>{html.escape(record.status.explanation)}</p>"
                + (f"<ul>{notes}</ul>" if notes else "") +
                "<table><tr><th scope='col'>Question</th><th scope='col'>Points</th>"
                "<th scope='col'>What we found</th></tr>" + "".join(rows) + "</table>")


def _totals(record: Record) -> str:
    """The hand-graded points, the late penalty and the total, where the record has them."""
    summary = summarize(record)
    if summary.auto is None or not summary.status.file_read:
        return ""
    parts = []
    if summary.max_manual:
        parts.append(f" Written answers: <b>{number(summary.manual)} / "
                     f"{number(summary.max_manual)}</b>" + (" (not all graded yet)"
                                                            if summary.pending else "") + ".")
    if summary.late_days:
        reason = record.late.reason if record.late is not None else ""
        parts.append(f" Late penalty: <b>−{number(summary.penalty)}</b> points "
                     f"({number(summary.late_percent)}%: {html.escape(reason)}).")
    if summary.final is not None:
        parts.append(f" Total: <b>{number(summary.final)} / {number(summary.max_points)}</b>.")
    return "".join(parts)


def _score(record: Record) -> str:
    """``total / max``, or a dash where the grader failed (that is no one's zero)."""
    total = f"{record.total:g}" if record.status.scored else "–"
    return f"{total} / {record.max_auto:g}"


def marking_scheme_html(problem_set: str, markdown: str) -> str:
    """The instructor's marking scheme (``course/rubrics/<problem_set>.md``) as a page.

    Written beside the report for whoever grades the written answers in formgrader; the rubric is
    the course's own text (trusted), its formulas are left as TeX source.
    """
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return page(f"Marking scheme: {problem_set}", markdown2html_mistune(markdown))
