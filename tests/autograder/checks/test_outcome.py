"""The feedback's sentences: each said once, with a hint that applies, and values in words.

Issue 36: ``gaussian_mle`` returning ``(mu, sigma, x.size)`` got "your function's result could
not be read back (it holds 3 values where the answer has 2); return numbers or numpy arrays"
four times in one cell (the values were numbers), and a log-likelihood of about -38000 where
``-inf`` is due was "yours is -above 1e+03".
"""

from __future__ import annotations

import numpy as np
import pytest

from autograder.checks import results_file as rf
from autograder.checks.outcome import weighted
from coursedata.compare import bounded, compare_extended
from coursedata.grading import RESULTS_ENV, record
from coursedata.results import AnswerUnavailable, read


def test_one_sentence_several_parts_give_is_said_once_with_its_count():
    outcome = weighted((0.25, "unreadable"), (0.25, None), (0.25, "unreadable"),
                       (0.25, "unreadable"))
    assert outcome.fraction == 0.25
    assert outcome.message == "unreadable (3 times)"
    assert weighted((0.5, "a"), (0.5, "b")).message == "a; b"


def test_too_many_values_hints_at_the_count_not_at_numbers(tmp_path, monkeypatch):
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path))
    record("case", lambda: (1.0, 2.0, 30))
    limits = rf.Limits.of_sizes([1, 1])
    with pytest.raises(AnswerUnavailable) as info:
        read(tmp_path, "case", lambda path: rf.load(path, rf.examine(path, limits)))
    message = str(info.value)
    assert "it holds 3 values where the answer has 2" in message, message
    assert "return only the values the question asks for" in message, message
    assert "numbers or numpy arrays" not in message, message


@pytest.mark.parametrize("value, words", [(-38000.0, "below -1e+03"), (-1e-15, "between -1e-12"),
                                          (5e4, "above 1e+03"), (1e-15, "below 1e-12")])
def test_a_value_out_of_the_named_decades_is_said_in_plain_words(value, words):
    with bounded():
        message = compare_extended(np.array([value]), np.array([-np.inf]), "ℓ(θ)")
    assert f"yours is {words}" in message, message
    assert "-above" not in message and "-below" not in message, message


def test_where_an_objective_rises_is_the_students_to_choose_and_said_only_in_classes():
    """Problem set 2's check of ALS's objective: the step of the first rise and the number of
    rises are integers a student's code chooses (so, in the grader, a channel out of the
    sandbox); the grader says only once or more than once, the student's own check says where."""
    from course.checks.ps2_matrix_completion import non_increasing

    values = np.array([9.0, 8.0, 7.0, 7.5, 6.0, 6.5, 5.0])  # rises at steps 4 and 6
    assert "at step 4 (2 rises in all)" in non_increasing(values, "J")
    with bounded():
        said = non_increasing(values, "J")
        once = non_increasing(values[:5], "J")
    assert "more than once" in said and " once" in once and "more than" not in once
    assert not any(ch.isdigit() for ch in said.replace("1e+00", "").replace("1e+01", "")), said
