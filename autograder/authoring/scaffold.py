"""A new problem set, ready to release: ``python -m autograder new NAME``.

:func:`create` writes ``<course>/source/NAME/NAME.ipynb`` and the marking scheme
``<course>/rubrics/NAME.md``: a complete problem set in the course's current form, with one worked
example of each kind of question, which the author then edits into their own:

- the header: title, the ``**Points:**`` line and the question table (what
  :mod:`autograder.authoring.validate` compares with the cells' points), the data, and the rules;
- the rules, declared in ``metadata.course.rules`` (:mod:`coursedata.rules`) and stated word for
  word in the header (the release refuses instructions that disagree with the declaration);
- the setup cell with the guard that tells a student without the kit how to install it
  (``@KIT_URL@``, which the release replaces with the kit's address);
- question 1, autograded: ``gaussian_mle(x)``, the answer cell, a visible test cell (1 point, all
  or nothing) and a hidden test cell (2 points, weighted), both checked by *declarations*
  (``metadata.course.check``, :mod:`autograder.checks.declaration`) against the reference
  :func:`solutions.mle.gaussian_mle` on seeded inputs: no Python check, no input module; its
  answer cell declares two realistic mistakes its tests must catch (``metadata.course.mutants``,
  :mod:`autograder.checks.mutants`);
- question 2, a written answer graded by hand, with its marking-scheme section.

With ``variants=True`` (``new NAME --variants``) the problem set also gives every student their
own numbers (:mod:`autograder.checks.personal`), as ``authoring.md`` describes it: the draw and
the expected values in ``<course>/checks/NAME.py``, ``metadata.course.variants``, the identity
and variant cells after the setup, a hidden case on the student's own seed, and question 2's
second part on the student's own sample.

The template lives here alone; nothing is written when the name is unusable or already taken.
"""

from __future__ import annotations

import copy
import json
import keyword
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.course import Course
from coursedata.variants import IDENTITY_CELL

__all__ = [
    "NAME",
    "Scaffold",
    "ScaffoldError",
    "check_name",
    "create",
    "default_title",
    "notebook",
    "rubric_section",
]

#: A problem set's name: what ``coursedata.grading.inputs`` accepts, and a Python identifier.
NAME = re.compile(r"[a-z][a-z0-9_]*")
_MAX_NAME = 40

#: The example's points: question 1's visible and hidden cells, question 2's written answer.
VISIBLE_POINTS, HIDDEN_POINTS, WRITTEN_POINTS = 1, 2, 2
WRITTEN_ID = "divisor_explanation"


class ScaffoldError(ValueError):
    """A problem set that cannot be created; the message says why and what to do."""


@dataclass(frozen=True)
class Scaffold:
    """What :func:`create` wrote.

    Attributes
    ----------
    name : str
    notebook : Path
        The source notebook ``<course>/source/NAME/NAME.ipynb``.
    rubric : Path
        The marking scheme ``<course>/rubrics/NAME.md``.
    rubric_created : bool
        True when the marking-scheme file is new, False when the section was appended.
    variants : bool
        True when every student gets their own numbers (``checks/NAME.py`` was written).
    autograded, by_hand : int
        The example's points.
    """

    name: str
    notebook: Path
    rubric: Path
    rubric_created: bool
    variants: bool = False
    autograded: int = VISIBLE_POINTS + HIDDEN_POINTS
    by_hand: int = WRITTEN_POINTS


# ---------------------------------------------------------------------------------------------
# The template
# ---------------------------------------------------------------------------------------------

RULES = {
    "forbid": ["scipy.stats", "sklearn", "solutions"],
    "allow": ["numpy"],
    "statement": "Write your code only where it says `YOUR CODE HERE`, with `numpy` imported "
    "below (no `scipy.stats`, `sklearn` or the course package `solutions` in your "
    "answers: the point is to write the estimators yourself).",
}

_HEADER = """# {title}

**Points:** {auto} autograded + {hand} graded by hand = {total}.

| Question | Task | Points |
|---|---|---|
| 1 | `gaussian_mle` — the mean and standard deviation of a sample | {q1} |
| 2 | Explanation: why the maximum-likelihood variance divides by $N$ (by hand) | {q2} |

You write the maximum-likelihood estimates of a univariate Gaussian, and explain their bias.
(This is the worked example that `python -m autograder new` writes: replace it with your own
questions, keep the points here in step with the cells, and run
`python -m autograder check-problem-set {name}`.)

**Data.**
- The lecture's March temperatures in Toronto (°C): −2.5, −9.9, −12.1, −8.9, −6.0, −4.8, 2.4.

**Rules.**
- {statement}
  The grader holds you to this: a function that uses something forbidden scores 0 on all its
  tests, visible and hidden, and `python -m coursedata.check` tells you before you submit.
- Run the visible tests below each function; they check the lecture's numbers. A visible test's
  point also needs your function's values on the grader's own inputs to be right, so a visible
  test that passes here can still score 0 after you submit. Hidden tests run after you submit:
  they compare your results with correct values on other inputs and carry most of the points.
  A hidden cell may also score the visible test's inputs again, so a visible test that fails can
  cost part of its hidden cell's points too.
- Keep every function's name and signature. Do not copy cells, and do not delete any.
- You may add cells of your own, for scratch work: the grader keeps them and runs them where you
  put them, but they earn no points."""

_SETUP = """try:
    import coursedata  # the course's student kit: data loaders and the check command
except ModuleNotFoundError:
    raise ModuleNotFoundError(
        "this problem set needs the course's student kit, which is not installed here. "
        "Install it with\\n\\n    %pip install @KIT_URL@\\n\\nthen restart the kernel "
        "(the course site's page 'Doing the problem sets' has the details)") from None

import numpy as np

temps = np.array([-2.5, -9.9, -12.1, -8.9, -6.0, -4.8, 2.4])   # Toronto in March, °C"""

_Q1_TEXT = """## Question 1 — The Gaussian's maximum-likelihood estimates ({q1} points)

For i.i.d. $x_1, \\dots, x_N$ from $\\mathcal N(\\mu, \\sigma^2)$ the log-likelihood is largest at

$$\\hat\\mu = \\frac1N \\sum_{{n=1}}^N x_n, \\qquad
\\hat\\sigma = \\sqrt{{\\frac1N \\sum_{{n=1}}^N (x_n - \\hat\\mu)^2}} .$$

Write `gaussian_mle(x)`, returning $(\\hat\\mu, \\hat\\sigma)$ as two floats. Compute
$\\hat\\sigma$ from the deviations $x_n - \\hat\\mu$, not as
$\\sqrt{{\\overline{{x^2}} - \\hat\\mu^2}}$: for data far from zero with a small spread, the
difference of two large numbers loses every digit."""

_Q1_SOLUTION = '''def gaussian_mle(x):
    """Maximum-likelihood mean and standard deviation of a univariate Gaussian.

    Parameters
    ----------
    x : ndarray of shape (N,)
        The observations.

    Returns
    -------
    mu : float
        The sample mean.
    sigma : float
        The standard deviation with divisor N.
    """
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=float)
    mu = float(np.mean(x))
    sigma = float(np.sqrt(np.mean((x - mu) ** 2)))
    return mu, sigma
    ### END SOLUTION'''

_Q1_VISIBLE = """### BEGIN HIDDEN TESTS
from coursedata.grading import inputs, record
record("sample", gaussian_mle, **inputs("{name}", "sample"))
### END HIDDEN TESTS
mu_hat, sigma_hat = gaussian_mle(temps)
assert np.isclose(mu_hat, -5.9714286, atol=1e-6), (
    f"μ̂ for the temperatures is their mean −5.9714; yours is {{mu_hat}}")
assert np.isclose(sigma_hat, 4.5524606, atol=1e-6), (
    f"σ̂ for the temperatures is 4.5525 (divisor N = 7, not N − 1); yours is {{sigma_hat}}")"""

_Q1_HIDDEN = """### BEGIN HIDDEN TESTS
from coursedata.grading import inputs, record
record("sample_small", gaussian_mle, **inputs("{name}", "sample_small"))
record("sample_far", gaussian_mle, **inputs("{name}", "sample_far"))
### END HIDDEN TESTS
# Hidden tests run here when your notebook is graded. Nothing to do in this cell: the grader
# runs its own copy of it, so edits here change nothing."""

#: Question 1's declarations: what its two test cells compare (see
#: :mod:`autograder.checks.declaration`). The hidden cell takes the reference, the outputs and
#: the tolerances from the visible one.
VISIBLE_CHECK = {
    "reference": "solutions.mle:gaussian_mle",
    "outputs": ["μ̂", "σ̂ (divisor N)"],
    "rtol": 1e-8,
    "atol": 1e-10,
    "cases": {"sample": {"x": {"normal": {"seed": 1, "n": 30, "mean": 10, "sd": 3}}}},
}
HIDDEN_CHECK = {
    "cases": {
        "sample_small": {"x": {"normal": {"seed": 2, "n": 3, "mean": -2, "sd": 1.5}}},
        "sample_far": {"x": {"normal": {"seed": 3, "n": 2000, "mean": 1e4, "sd": 0.01}}},
    },
    "weights": {"sample": 1, "sample_small": 1, "sample_far": 1},
}
#: Realistic mistakes in question 1's answer, each of which its tests must catch
#: (:mod:`autograder.checks.mutants`; ``check-problem-set NAME --mutants`` grades them).
MUTANTS = [
    {
        "name": "one-pass variance (cancels for a large mean)",
        "find": "np.sqrt(np.mean((x - mu) ** 2))",
        "replace": "np.sqrt(np.mean(x ** 2) - mu ** 2)",
    },
    {
        "name": "median instead of mean",
        "find": "mu = float(np.mean(x))",
        "replace": "mu = float(np.median(x))",
    },
]

_Q2_TEXT = """## Question 2 — Why divide by $N$? ({q2} points, graded by hand)

The maximum-likelihood variance $\\hat\\sigma^2 = \\frac1N\\sum_n (x_n - \\hat\\mu)^2$ of question 1
divides by $N$, while many textbooks divide by $N - 1$.

1. (1 point) Show that $\\mathbb E[\\hat\\sigma^2] = \\frac{{N-1}}{{N}}\\,\\sigma^2$.
{part2}

Write your answer in the cell below in Markdown with LaTeX ($...$)."""

_RUBRIC_HEAD = """# {title}: marking scheme

Hand-graded: `{gid}` ({q2} points).
"""

_RUBRIC_SECTION = """
## `{gid}` — {q2} points

**Question (Q2).** Show $\\mathbb E[\\hat\\sigma^2] = \\frac{{N-1}}{{N}}\\sigma^2$ for the
maximum-likelihood variance, and compare the divisors $N$ and $N - 1$ for {sample}.

**Model answer.**

1. $\\sum_n (x_n - \\bar x)^2 = \\sum_n (x_n - \\mu)^2 - N(\\bar x - \\mu)^2$. The first sum has
   expectation $N\\sigma^2$, the second term $N \\operatorname{{Var}}(\\bar x) = \\sigma^2$ (the
   $x_n$ are independent), so $\\mathbb E[\\hat\\sigma^2] = \\frac{{(N - 1)\\sigma^2}}{{N}}$.
{model2}

**Marking scheme.**

| Points | Award for |
|---:|---|
| 1 | Part 1: the decomposition (or $\\mathbb E[\\bar x^2] = \\mu^2 + \\sigma^2/N$) with the reason (independence), leading to $\\frac{{N-1}}{{N}}\\sigma^2$. |
{award2}
"""  # noqa: E501 (a marking scheme's table rows are one line each)


# ---------------------------------------------------------------------------------------------
# The template's variant (``new NAME --variants``)
# ---------------------------------------------------------------------------------------------

#: ``<course>/checks/NAME.py``: what varies, and what the written answer should state.
_CHECKS_MODULE = '''"""Problem set {name}'s own Python: each student's numbers.

:func:`draw_variant` draws one student's numbers from the generator the grader seeds with the
course's secret, the problem set and the student (``autograder.checks.personal``); the hidden
case ``sample_small`` reads ``seed``, question 2 the sample's size ``n`` and its estimate
``sigma``. :func:`expected` gives what question 2's second part should state for them.
"""

import numpy as np


def draw_variant(rng: np.random.Generator) -> dict:
    """One student's numbers: a seed for a hidden case (the grader's alone), the size N of
    their sample and its maximum-likelihood estimate of sigma (one of thousands of values, so
    that a classmate's is evidence)."""
    return {{"seed": int(rng.integers(2**31)), "n": int(rng.integers(5, 60)),
            "sigma": round(float(rng.uniform(1, 20)), 2)}}


def expected(parameters: dict) -> dict:
    """What question 2's second part states for the student's numbers: the estimate of sigma
    with divisor N - 1."""
    n = parameters["n"]
    return {{"sigma with divisor N - 1": parameters["sigma"] * float(np.sqrt(n / (n - 1)))}}
'''

_IDENTITY_TEXT = """## Your own numbers

Some numbers of this problem set are drawn for you alone. In the cell below, replace its two
lines by your course identity, exactly as your instructor gave it to you (as the course's LMS
knows you), in quotes:

```python
STUDENT_ID = "your identity here"
```

then run it and the cell after it, which prints your numbers. Spaces, punctuation, accents and
upper or lower case do not matter. The grader knows who handed the notebook in and grades you on
your own numbers whatever this cell says. To try the problem set on the course site, without a
course, enter `STUDENT_ID = "practice"`."""

_IDENTITY = 'STUDENT_ID = "practice"  # your course identity as your instructor gave it\n'

_VARIANT = """# STUDENT_ID is the identity you entered in the cell above (none yet: this cell says so)
V = coursedata.variant("{name}", globals().get("STUDENT_ID", ""), "@VARIANTS@")
print(f"Your numbers (question 2): a sample of N = {{V['n']}} values whose "
      f"maximum-likelihood estimate of σ is {{V['sigma']}}.")"""

_Q2_OWN = """2. (1 point) Your own sample (printed under the setup) has $N$ values and the
   maximum-likelihood estimate $\\hat\\sigma$ printed there. What is the estimate of $\\sigma$
   with divisor $N - 1$, to four decimals? When does the choice matter?"""

_Q2_LECTURE = (
    "2. (1 point) For the seven temperatures of the data, by how much (in %) do the two "
    "estimates of\n   $\\sigma$ differ? When does the choice matter?"
)

_MODEL_LECTURE = """\
2. The ratio of the two estimates of $\\sigma$ is $\\sqrt{N / (N - 1)} = \\sqrt{7/6} \\approx
   1.080$: they differ by about 8 % for $N = 7$ (4.55 and 4.92 °C), and by less than 1 % once
   $N > 50$; the choice matters only for small samples."""

_AWARD_LECTURE = (
    "| 1 | Part 2: about 8 % (the factor $\\sqrt{7/6}$), and that it matters only for small $N$. |"
)

_MODEL_OWN = """2. The estimate with divisor $N - 1$ is $\\hat\\sigma\\sqrt{N / (N - 1)}$, the student's own
   value beside their answer in the feedback and the marking scheme; the two differ by more
   than 1 % only for $N < 51$, so the choice matters only for small samples."""

_AWARD_OWN = (
    "| 1 | Part 2: their own $\\hat\\sigma\\sqrt{N/(N-1)}$ (the value shown beside the answer), "
    "and that it matters only for small $N$. |"
)


def _variants(name: str) -> dict:
    """``metadata.course.variants`` of the example with variants."""
    return {
        "draw": f"course.checks.{name}:draw_variant",
        "hidden": ["seed"],
        "expected": f"course.checks.{name}:expected",
    }


def _variant_cells(name: str) -> list[dict]:
    """The cells after the setup that meet the student's numbers."""
    return [
        _cell("markdown", "identity_text", _IDENTITY_TEXT),
        _cell("code", IDENTITY_CELL, _IDENTITY, solution=True),
        _cell("code", "variant", _VARIANT.format(name=name)),
    ]


def _hidden_check(variants: bool) -> dict:
    """Question 1's hidden declaration; with variants, ``sample_small`` is drawn from the
    student's own seed."""
    check: dict[str, Any] = copy.deepcopy(HIDDEN_CHECK)
    if variants:
        check["cases"]["sample_small"]["x"]["normal"]["seed"] = {"variant": "seed"}
    return check


def _nbgrader(grade_id: str, *, points: int | None = None, solution: bool = False) -> dict:
    meta = {
        "grade": points is not None,
        "grade_id": grade_id,
        "locked": not solution,
        "schema_version": 3,
        "solution": solution,
        "task": False,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _cell(
    kind: str, grade_id: str, source: str, *, course: dict | None = None, **nbgrader
) -> dict[str, object]:
    meta = _nbgrader(grade_id, **nbgrader)
    if course is not None:
        meta["course"] = course
    cell: dict[str, object] = {
        "cell_type": kind,
        "id": grade_id.replace("_", "-"),
        "metadata": meta,
        "source": source.splitlines(keepends=True),
    }
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def default_title(name: str) -> str:
    """The title of a problem set called ``name`` when the author gives none."""
    return f"Problem set {name.replace('_', ' ')}"


def notebook(name: str, title: str, variants: bool = False) -> dict:
    """The source notebook of a new problem set ``name`` (nbformat 4.5, as plain JSON data),
    with every student's own numbers when ``variants`` is true."""
    q1, q2 = VISIBLE_POINTS + HIDDEN_POINTS, WRITTEN_POINTS
    header = _HEADER.format(
        title=title,
        auto=q1,
        hand=q2,
        total=q1 + q2,
        q1=q1,
        q2=q2,
        name=name,
        statement=RULES["statement"],
    )
    cells = [
        _cell("markdown", "header", header),
        _cell("code", "setup", _SETUP),
        *(_variant_cells(name) if variants else []),
        _cell("markdown", "q1_text", _Q1_TEXT.format(q1=q1)),
        _cell("code", "gaussian_mle", _Q1_SOLUTION, solution=True, course={"mutants": MUTANTS}),
        _cell(
            "code",
            "gaussian_mle_visible",
            _Q1_VISIBLE.format(name=name),
            points=VISIBLE_POINTS,
            course={"check": VISIBLE_CHECK},
        ),
        _cell(
            "code",
            "gaussian_mle_hidden",
            _Q1_HIDDEN.format(name=name),
            points=HIDDEN_POINTS,
            course={"check": _hidden_check(variants)},
        ),
        _cell(
            "markdown",
            "q2_text",
            _Q2_TEXT.format(q2=q2, part2=_Q2_OWN if variants else _Q2_LECTURE),
        ),
        _cell("markdown", WRITTEN_ID, "YOUR ANSWER HERE", points=q2, solution=True),
    ]
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "course": {"rules": RULES, **({"variants": _variants(name)} if variants else {})},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def rubric_section(variants: bool = False) -> str:
    """The marking-scheme section of the example's written answer (Markdown)."""
    return _RUBRIC_SECTION.format(
        gid=WRITTEN_ID,
        q2=WRITTEN_POINTS,
        sample="the student's own sample" if variants else "the seven temperatures",
        model2=_MODEL_OWN if variants else _MODEL_LECTURE,
        award2=_AWARD_OWN if variants else _AWARD_LECTURE,
    )


def check_name(name: str, course: Course, variants: bool = False) -> None:
    """Raise :class:`ScaffoldError` unless ``name`` can be a new problem set of ``course``
    (with ``variants``, one whose ``checks/NAME.py`` does not exist yet)."""
    if not NAME.fullmatch(name) or len(name) > _MAX_NAME or keyword.iskeyword(name):
        raise ScaffoldError(
            f"{name!r} cannot name a problem set: use lower-case letters, digits and "
            f"underscores, starting with a letter, at most {_MAX_NAME} characters, not a Python "
            f"keyword (for example ps7_mixtures)"
        )
    if not course.source_dir.is_dir():
        raise ScaffoldError(
            f"{course.root} is no course folder (it has no source/ folder); "
            "give the course with --course"
        )
    folder = course.source_dir / name
    if folder.exists():
        raise ScaffoldError(
            f"the problem set {name!r} exists already ({folder}); nothing was "
            "changed. Choose another name, or edit that notebook"
        )
    rubric = course.rubric(name)
    if rubric.exists() and f"## `{WRITTEN_ID}`" in rubric.read_text(encoding="utf-8"):
        raise ScaffoldError(
            f"{rubric} already has a section for `{WRITTEN_ID}`; nothing was "
            "changed. Move that file away, or choose another name"
        )
    if variants and course.checks_module(name).exists():
        raise ScaffoldError(
            f"{course.checks_module(name)} exists already, and --variants writes the draw of "
            "each student's numbers there; nothing was changed. Move that file away, or "
            "choose another name"
        )


def create(
    name: str,
    course: Course | str | Path | None = None,
    title: str | None = None,
    variants: bool = False,
) -> Scaffold:
    """Create the problem set ``name`` in ``course`` (default: the default course).

    Writes ``source/NAME/NAME.ipynb`` and creates ``rubrics/NAME.md`` (or appends the written
    answer's section to it); with ``variants``, also ``checks/NAME.py``, the draw of each
    student's numbers. Raises :class:`ScaffoldError`, writing nothing, when the name is not
    usable or is taken.
    """
    course = Course.at(course)
    check_name(name, course, variants)
    title = (title or "").strip() or default_title(name)
    path = course.source_notebook(name)
    path.parent.mkdir(parents=True)
    path.write_text(
        json.dumps(notebook(name, title, variants), indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    if variants:
        course.checks_module(name).parent.mkdir(parents=True, exist_ok=True)
        course.checks_module(name).write_text(_CHECKS_MODULE.format(name=name), encoding="utf-8")
    rubric = course.rubric(name)
    created = not rubric.exists()
    rubric.parent.mkdir(parents=True, exist_ok=True)
    with rubric.open("a", encoding="utf-8") as out:
        if created:
            out.write(_RUBRIC_HEAD.format(title=title, gid=WRITTEN_ID, q2=WRITTEN_POINTS))
        out.write(rubric_section(variants))
    return Scaffold(name, path, rubric, created, variants)
