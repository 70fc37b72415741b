"""Copies of student notebooks that are safe to open in the instructor's browser.

Formgrader renders the ``submitted/`` and ``autograded/`` notebooks with nbconvert, which puts a
notebook's HTML on the page as it is: a written answer holding ``<img src=x onerror=...>`` or a
``<script>``, or an output of type ``text/html`` or ``application/javascript``, would run in the
instructor's logged-in session. The grader therefore writes only copies made by
:func:`sanitize_notebook`, which keep text, maths, code and plain images and nothing active.
What the kernel runs and how it is scored are not affected: only the copies written for people
to read pass through here.

Modules, each importing only those above it:

- :mod:`~autograder.grading.sanitize.markup`: the HTML policy (:data:`POLICY`) and :func:`clean_html`;
- :mod:`~autograder.grading.sanitize.images`: the images kept, and :func:`clean_attachments`;
- :mod:`~autograder.grading.sanitize.markdown`: :func:`clean_markdown`, which keeps maths and renders
  markdown as nbconvert does to check that nothing active is left;
- :mod:`~autograder.grading.sanitize.notebook`: cells, outputs and metadata, :func:`sanitize_notebook`,
  :func:`safe_notebook_bytes` and :func:`formgrader_copies`.
"""

from __future__ import annotations

from autograder.grading.sanitize.images import BLANK_PNG, clean_attachments
from autograder.grading.sanitize.markdown import SHOWN_AS_TEXT, clean_markdown
from autograder.grading.sanitize.markup import POLICY, clean_html
from autograder.grading.sanitize.notebook import (
    formgrader_copies,
    safe_notebook_bytes,
    sanitize_notebook,
)

__all__ = [
    "POLICY",
    "clean_html",
    "clean_markdown",
    "clean_attachments",
    "sanitize_notebook",
    "safe_notebook_bytes",
    "formgrader_copies",
    "BLANK_PNG",
    "SHOWN_AS_TEXT",
]
