"""What the student reads is cleared of hidden tests' source and hidden inputs' values
(:mod:`autograder.grading.conceal`), and nothing else is changed. A number of fewer than four
significant digits (0.1, a grid's step) is never taken for an input: it cannot be told apart.

Hidden blocks are nbgrader's (``nbgrader/preprocessors/clearhiddentests.py``: the lines between
``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``), read here from the course's source.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from autograder.authoring.graded import sample_variants
from autograder.checks.answers import Answers
from autograder.checks.declared import case_inputs, declared_cases
from autograder.grading.conceal import HIDDEN, secrets_of, visible_cases
from autograder.grading.problemset import ProblemSet, list_problem_sets
from coursedata.results import AnswerUnavailable, read


@pytest.fixture(scope="module", params=list_problem_sets())
def ps(request):
    ps = ProblemSet(request.param)
    ps.course.use_code()
    return sample_variants(ps)[0]  # with variants: as a sample student is graded


def test_hidden_lines_and_input_values_are_cleared(ps):
    secrets = secrets_of(ps)
    cases = declared_cases(ps.source)
    name = sorted(set(cases) - visible_cases(ps))[0]  # a hidden case (the visible ones' are the release's)
    value = next(v for v in case_inputs(cases, name).values() if np.ndim(v))
    floats = np.ravel(value).astype(float)[:5]
    hidden = [line.strip() for cell in ps.source.cells
              for block in cell.source.split("BEGIN HIDDEN TESTS")[1:]
              for line in block.split("END HIDDEN TESTS")[0].splitlines()[1:]
              if len(line.strip()) >= 8]
    assert hidden
    text = f"ValueError: {hidden!r} {floats.tolist()!r} {np.array2string(floats, precision=5)}"
    cleared = secrets.conceal(text)
    assert not [line for line in hidden if line in cleared]
    assert "record(" not in cleared and "HIDDEN TESTS" not in cleared
    # A value printed as Python prints it, to eight significant digits or more, is the input's;
    # a shorter one (data recorded to three decimals) may match any number shown there.
    long = [repr(float(v)) for v in floats if len(repr(float(v)).strip("-0.").replace(".", "")) >= 8]
    assert [v for v in long if v in cleared] == []
    assert cleared.startswith("ValueError: ") and HIDDEN in cleared


@pytest.mark.parametrize("message", [
    "the mean for X of shape (40, 6) is wrong at index (3,): yours is 0.5, expected about 1.5",
    "your function should return 2 values; it returned 3",
    "not run: your cell 'center' raised NameError at line 3: name 'np' is not defined",
])
def test_the_graders_own_words_are_kept(ps, message):
    assert secrets_of(ps).conceal(message) == message


def test_the_numbers_the_release_prints_are_kept(ps):
    """A number of the problem set's own text or visible tests (an assertion's message: "logits up
    to 1000 in size") is public: it is never taken for a hidden input."""
    public = " ".join(
        m.group(0)
        for cell in ps.source.cells
        for m in re.finditer(r"(?<![\w.])-?\d+\.\d{3,}|(?<![\w.])\d{4,}(?![\w.])",
                             re.sub(r"BEGIN HIDDEN TESTS.*?END HIDDEN TESTS", "", cell.source,
                                    flags=re.S))
    )
    assert secrets_of(ps).conceal(public) == public



def test_a_raise_on_a_hidden_case_names_its_inputs_and_no_hidden_value(ps, tmp_path):
    """A function that raises on a hidden case: the feedback says on which inputs (each array's
    dtype and shape, each scalar's name), from the grader's own inputs (not the file the student's
    code could rewrite), and the concealment still clears a hidden value it shows."""
    cases = declared_cases(ps.source)
    hidden = sorted(set(cases) - visible_cases(ps))
    name = max(hidden, key=lambda c: len(case_inputs(cases, c)))  # the most inputs to name
    given = case_inputs(cases, name)
    (tmp_path / f"{name}.error.json").write_text(json.dumps(
        {"type": "ValueError", "message": "ValueError: boom", "returned": False}))
    (tmp_path / "inputs").mkdir()
    np.savez(tmp_path / "inputs" / f"{name}.npz", forged=np.zeros(3))
    with pytest.raises(AnswerUnavailable) as raised:
        Answers(ps.name, tmp_path, cases).get(name)
    message = str(raised.value)
    assert message.startswith("your function raised ValueError: boom when called with "), message
    for arg, value in given.items():
        array = np.asarray(value)
        shown = f"{arg} ({array.dtype}, shape {array.shape})" if array.ndim else f"{arg}="
        assert shown in message, (shown, message)
    assert "forged" not in message
    secrets = secrets_of(ps)
    cleared = secrets.conceal(message)
    for arg, value in given.items():
        digits = f"{value:g}".partition("e")[0].lstrip("-").replace(".", "").lstrip("0") \
            if np.ndim(value) == 0 and isinstance(value, float) else ""
        if len(digits) >= 4 and value not in secrets.public:  # as every message's numbers
            assert f"{arg}={value:g}" not in cleared, cleared


def test_a_raise_in_the_check_names_the_inputs_it_wrote(tmp_path):
    """The student's check reads the same message from the inputs it wrote for the case."""
    (tmp_path / "c.error.json").write_text(json.dumps(
        {"type": "TypeError", "message": "TypeError: nope", "returned": False}))
    (tmp_path / "inputs").mkdir()
    np.savez(tmp_path / "inputs" / "c.npz", x=np.arange(4.0).reshape(2, 2), h=np.float64(0.7),
             kernel=np.array("uniform"))
    with pytest.raises(AnswerUnavailable, match=re.escape(
            "your function raised TypeError: nope when called with x (float64, shape (2, 2)), "
            "h=0.7, kernel='uniform'")):
        read(tmp_path, "c")


def _recorded_error(tmp_path, case: str, info: dict) -> str:
    """The message the grader's reader gives for a ``<case>.error.json`` the student's code
    wrote (:func:`coursedata.results.read`), as the feedback shows it."""
    from autograder.grading.conceal import without_error_messages

    (tmp_path / f"{case}.error.json").write_text(json.dumps(info))
    with pytest.raises(AnswerUnavailable) as caught:
        read(tmp_path, case, inputs=lambda: {})
    return without_error_messages(str(caught.value))


def test_what_a_function_returned_is_not_quoted(tmp_path):
    """Issue 37: "what your function returned is not numbers: <the file's 500 characters>" carried
    hidden inputs (hex) out; so did the name of the returned object's class, which ``record``
    writes in the same place and which the student's code chooses (``type("<hex>", (), {})``)."""
    from coursedata.grading import record

    payload = np.random.default_rng(37).normal(size=8).tobytes().hex()
    forged = _recorded_error(tmp_path, "a", {"type": "TypeError", "message": "hex " + payload,
                                            "returned": True})
    assert payload[:16] not in forged and forged.startswith("what your function returned")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRADER_RESULTS_DIR", str(tmp_path))
        record("b", lambda: type("C" + payload, (), {})())
    recorded = json.loads((tmp_path / "b.error.json").read_text())
    assert payload in recorded["message"]  # the kernel's text names the class: the channel
    with pytest.raises(AnswerUnavailable) as caught:
        read(tmp_path, "b", inputs=lambda: {})
    from autograder.grading.conceal import without_error_messages

    assert payload[:16] not in without_error_messages(str(caught.value))


def test_an_exception_class_is_named_by_itself_not_by_the_path_written(tmp_path):
    """Issue 37: a module's attributes lead back to its package (``numpy.ma.core.np``), so a path
    that ends at a library's exception class spelled anything; the class is named as it names
    itself, so a type carries no more than which class it is."""
    import numpy.linalg

    path = "numpy._core.numeric.np.ma.core.np.ma.extras.np.linalg.LinAlgError"
    shown = _recorded_error(tmp_path, "a", {"type": "X", "message": path + ": x"})
    cls = numpy.linalg.LinAlgError
    assert f"raised {cls.__module__}.{cls.__qualname__} " in shown, shown
    assert "ma.core" not in shown
    assert "raised ValueError " in _recorded_error(tmp_path, "b", {"message": "ValueError: x"})
