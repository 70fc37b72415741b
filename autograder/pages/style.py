"""The grader's pages: their style, their Content-Security-Policy, their titles.

Every page the grader writes (a student's feedback, :mod:`autograder.pages.feedback`; the marking
scheme; the class report, :mod:`autograder.pages.report`; the similarity report,
:mod:`autograder.pages.similarity`) is a self-contained English page made by :func:`page`: one shared
style, and a policy that forbids scripts, frames, forms and requests (a second wall behind the
escaping of every text that comes from a record: the instructor opens these pages in a browser).
A graded cell is named the same way on every page and in every export (:func:`cell_title`).
"""

from __future__ import annotations

import html

from coursedata.naming import question_of, test_kind

__all__ = ["CSP", "STYLE", "page", "cell_title", "scrolling"]

#: No scripts, frames, forms or requests; only the inline style and the report's own data image.
CSP = (
    "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
    "style-src 'unsafe-inline'; img-src data:; form-action 'none'\">"
)

#: The style every page shares (at 320 CSS pixels no page scrolls sideways, WCAG 1.4.10: a long
#: word breaks, a wide image shrinks, a table too wide for the window scrolls in its own box,
#: :func:`scrolling`); a page may add its own after it (:func:`page`'s ``style``).
STYLE = """<style>
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #ddd;padding:.4rem;
text-align:left;vertical-align:top}.ok{color:#176b2c}.partial{color:#8a5a00}.bad{color:#a01c1c}
.note{background:#fff6d6;padding:.6rem;border-radius:.3rem}
main{overflow-wrap:anywhere}pre{white-space:pre-wrap}img{max-width:100%;height:auto}
.scrolls{overflow-x:auto}</style>"""


def page(title: str, body: str, style: str = "") -> str:
    """A self-contained English page in the grader's style, under its Content-Security-Policy.

    Parameters
    ----------
    title : str
        The page's title (escaped here).
    body : str
        The page's HTML body (trusted: every text from a record is escaped by the caller), put
        in the page's main landmark.
    style : str
        A ``<style>`` element of the page's own, after the shared one.
    """
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'>{CSP}"
        f"<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{html.escape(title)}</title>{STYLE}{style}</head><body><main>{body}</main></body></html>"
    )


def scrolling(table: str, name: str) -> str:
    """``table`` in a box that scrolls sideways when the window is narrower than the table.

    The box is a named region the keyboard reaches, so that a keyboard user can scroll it too:
    a data table may scroll in two dimensions under WCAG 1.4.10 (reflow), and axe's
    scrollable-region-focusable asks for the Tab stop.

    Parameters
    ----------
    table : str
        The table's HTML.
    name : str
        What the table holds (plain text, escaped here), unique on the page: the region's name.
    """
    return (
        f"<div class='scrolls' role='region' tabindex='0' aria-label='{html.escape(name)}'>"
        f"{table}</div>"
    )


def cell_title(grade_id: str, written: str = "") -> str:
    """A graded cell's name for people (plain text, not escaped).

    Parameters
    ----------
    grade_id : str
        The cell's nbgrader ``grade_id``: ``pca_fit_hidden`` is named ``pca fit (hidden test)``,
        ``pca_fit_visible`` ``pca fit (visible test)``, any other cell by its id with spaces.
    written : str
        Appended to the name of a cell that is not a test (a written answer), e.g.
        ``" (written answer)"``.
    """
    kind = test_kind(grade_id)
    if kind is not None:
        return f"{question_of(grade_id).replace('_', ' ')} ({kind} test)"
    return grade_id.replace("_", " ") + written
