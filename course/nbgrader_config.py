"""nbgrader configuration of the course; run nbgrader commands from this folder."""

import os

c = get_config()  # noqa: F821 - provided by nbgrader

c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "mfpm"
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(c.CourseDirectory.root, "gradebook.db")
# The exchange (nbgrader's release/collect folder) inside the course, not /srv/nbgrader/exchange:
# `python -m autograder formgrader` creates it, so the formgrader shows no "exchange directory
# does not exist" banner. Submissions come from the LMS, not from the exchange.
c.Exchange.root = os.path.join(c.CourseDirectory.root, "exchange")

# Grading: `python -m autograder grade ... --gradebook` (sandboxed, trusted checks), never
# `nbgrader autograde`; the formgrader's Autograde button is answered with that advice when it
# is opened with `python -m autograder formgrader` (autograder/gradebook/formgrader.py).

# What students see in place of a solution.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Feedback never shows hidden tests (the trusted grader writes its own feedback anyway).
c.ClearHiddenTests.enforce_metadata = True
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.Execute.timeout = 60
