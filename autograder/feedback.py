"""Feedback for one student and the class report, as self-contained HTML.

Feedback lists, per graded cell, the points and the trusted check's message: what passed and what
failed, in words a student can act on. It never contains the source of a check (hidden or not):
only messages written by :mod:`autograder.checks`, and the student's own error messages, escaped.
Every text that comes from a record is escaped, and each page forbids scripts, frames and requests
by its Content-Security-Policy (a second wall: the instructor opens the report in a browser).
"""

from __future__ import annotations

import base64
import html
import io
from collections import Counter

__all__ = ["feedback_html", "report_html", "marking_scheme_html"]

# No scripts, frames, forms or requests; only the inline style and the report's own data image.
_CSP = ("<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:; form-action 'none'\">")

_STYLE = """<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.4rem;
text-align:left;vertical-align:top}.ok{color:#176b2c}.partial{color:#8a5a00}.bad{color:#a01c1c}
.note{background:#fff6d6;padding:.6rem;border-radius:.3rem}</style>"""

_STATUS_WORDS = {
    "graded": "All autograded questions were scored. Written answers are graded by hand.",
    "needs-manual-grading": "Some answers could not be scored automatically; an instructor will "
                            "look at them.",
    "timeout": "Your notebook did not finish within the time limit; answers recorded before that "
               "were scored.",
    "crashed": "Your notebook's kernel stopped (it crashed or exited); answers recorded before "
               "that were scored.",
    "invalid-notebook": "Your file could not be read as a Jupyter notebook, so nothing was scored.",
    "unmatched": "We found no notebook for this problem set among the files you handed in, so "
                 "nothing was scored; the files are named below.",
    "grader-error": "The grader failed on your submission (a fault of the grader, not of your "
                    "work), so your score is not final. Your instructor has been told and will "
                    "grade it again.",
}


def _title(grade_id: str) -> str:
    base, _, kind = grade_id.rpartition("_")
    if kind in ("visible", "hidden"):
        return f"{base.replace('_', ' ')} ({'visible test' if kind == 'visible' else 'hidden test'})"
    return grade_id.replace("_", " ")


def feedback_html(record: dict) -> str:
    """Feedback page for one graded submission (a record from :mod:`autograder.batch`)."""
    rows = []
    for s in record["scores"]:
        if s["points"] is None:
            css, pts = "", f"– / {s['max_points']:g}"
        else:
            css = "ok" if s["points"] == s["max_points"] else ("partial" if s["points"] > 0 else "bad")
            pts = f"{s['points']:g} / {s['max_points']:g}"
        rows.append(f"<tr><td>{html.escape(_title(s['grade_id']))}</td><td class='{css}'>{pts}</td>"
                    f"<td>{html.escape(s['message'])}</td></tr>")
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in record.get("notes", []) if n)
    return (f"<!doctype html><html><head><meta charset='utf-8'>{_CSP}<title>Feedback: "
            f"{html.escape(record['problem_set'])}</title>{_STYLE}</head><body>"
            f"<h1>Feedback on {html.escape(record['problem_set'])}</h1>"
            f"<p>Student: <b>{html.escape(record['student_id'])}</b>. Autograded score: "
            f"<b>{_score(record)}</b>.</p>"
            f"<p class='note'>{html.escape(_STATUS_WORDS.get(record['status'], record['status']))}</p>"
            + (f"<ul>{notes}</ul>" if notes else "") +
            "<table><tr><th>Question</th><th>Points</th><th>What we found</th></tr>"
            + "".join(rows) + "</table></body></html>")


def _score(record: dict) -> str:
    """``total / max``, or a dash where the grader failed (that is no one's zero)."""
    total = "–" if record["status"] == "grader-error" else f"{record['total']:g}"
    return f"{total} / {record['max_auto']:g}"


def _grader_errors(records: list[dict]) -> str:
    """The tracebacks of the grader's faults, for the instructor only (never in feedback)."""
    failed = [r for r in records if r["status"] == "grader-error"]
    if not failed:
        return ""
    items = "".join(f"<li><b>{html.escape(r['student_id'])}</b><pre>"
                    f"{html.escape(r.get('grader_error') or 'no traceback recorded')}</pre></li>"
                    for r in failed)
    return (f"<h2>Grader errors</h2><p class='note'>The grader failed on {len(failed)} "
            f"submission(s); they have no score and are graded again by the next run of the "
            f"same command, once the grader is fixed.</p><ul>{items}</ul>")


def _histogram_png(totals: list[float], max_auto: float) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.hist(totals, bins=min(20, max(5, int(max_auto) + 1)), range=(0, max_auto),
            color="#4c72b0", edgecolor="white")
    ax.set(title="Distribution of autograded scores", xlabel="points", ylabel="students")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


def report_html(problem_set: str, records: list[dict], rubric: bool = False) -> str:
    """Class report: status counts, score distribution, per check the failures, and the
    tracebacks of the grader's own faults (whose submissions count in no statistic)."""
    statuses = Counter(r["status"] for r in records)
    errors = _grader_errors(records)
    records = [r for r in records if r["status"] != "grader-error"]
    totals = [r["total"] for r in records]
    max_auto = max((r["max_auto"] for r in records), default=0.0)
    per_cell: dict[str, list[str]] = {}
    order: list[str] = []
    for r in records:
        for s in r["scores"]:
            if s["points"] is None:
                continue
            if s["grade_id"] not in per_cell:
                per_cell[s["grade_id"]] = []
                order.append(s["grade_id"])
            if s["points"] < s["max_points"]:
                per_cell[s["grade_id"]].append(s["message"])
    rows = []
    for gid in order:
        fails = per_cell[gid]
        common = Counter(fails).most_common(1)
        msg = f"{html.escape(common[0][0][:300])} ({common[0][1]}×)" if common else ""
        rows.append(f"<tr><td>{html.escape(gid)}</td><td>{len(fails)} / {len(records)}</td>"
                    f"<td>{msg}</td></tr>")
    status_rows = "".join(f"<tr><td>{html.escape(k)}</td><td>{v}</td></tr>"
                          for k, v in sorted(statuses.items()))
    mean = sum(totals) / len(totals) if totals else 0.0
    img = (f"<img alt='histogram of scores' src='data:image/png;base64,"
           f"{_histogram_png(totals, max_auto)}'>") if totals and max_auto > 0 else ""
    return (f"<!doctype html><html><head><meta charset='utf-8'>{_CSP}<title>Report: "
            f"{html.escape(problem_set)}</title>{_STYLE}</head><body>"
            f"<h1>Grading report: {html.escape(problem_set)}</h1>"
            + ("<p>Written answers: the <a href='marking-scheme.html'>marking scheme</a>.</p>"
               if rubric else "") +
            f"<p>{sum(statuses.values())} submissions; mean autograded score {mean:.2f} / "
            f"{max_auto:g} over the {len(records)} the grader scored.</p>"
            f"<h2>Status</h2><table><tr><th>status</th><th>students</th></tr>{status_rows}</table>"
            f"{errors}"
            f"<h2>Score distribution</h2>{img}"
            f"<h2>Checks</h2><table><tr><th>check</th><th>students who lost points</th>"
            f"<th>most common message</th></tr>{''.join(rows)}</table></body></html>")


def marking_scheme_html(problem_set: str, markdown: str) -> str:
    """The instructor's marking scheme (``course/rubrics/<problem_set>.md``) as a page.

    Written beside the report for whoever grades the written answers in formgrader; the rubric is
    the course's own text (trusted), its formulas are left as TeX source.
    """
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    return (f"<!doctype html><html><head><meta charset='utf-8'>{_CSP}<title>Marking scheme: "
            f"{html.escape(problem_set)}</title>{_STYLE}</head><body>"
            f"{markdown2html_mistune(markdown)}</body></html>")
