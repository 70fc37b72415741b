"""The late policy: the TOML file, its validation, and the penalty from the LMS mark and file times.
Pure computation: no kernel."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from autograder.intake.late import LatePolicy, load_policy, penalty_points

DEADLINE = datetime(2026, 11, 20, 23, 59, tzinfo=timezone(timedelta(hours=1)))

POLICY = """
[default]
policy = "none"

[ps3_mle]
deadline = 2026-11-20T23:59:00+01:00
percent_per_day = 10
cap_percent = 25
grace_minutes = 15

[ps3_mle.extensions]
alice = 2026-11-22T23:59:00+01:00
bob = { days = 1 }
"""


def _policy(tmp_path: Path, text: str = POLICY) -> LatePolicy:
    path = tmp_path / "late.toml"
    path.write_text(text)
    return load_policy(path)


def test_days_late_from_the_file_time_with_grace_and_cap(tmp_path):
    rule = _policy(tmp_path).for_problem_set("ps3_mle")
    on_time = rule.assess("carol", DEADLINE - timedelta(hours=1))
    within_grace = rule.assess("carol", DEADLINE + timedelta(minutes=10))
    one_day = rule.assess("carol", (DEADLINE + timedelta(hours=3)).timestamp())
    two_days = rule.assess("carol", DEADLINE + timedelta(days=1, minutes=30))
    a_week = rule.assess("carol", DEADLINE + timedelta(days=7))
    assert [x.days for x in (on_time, within_grace, one_day, two_days, a_week)] == [0, 0, 1, 2, 7]
    assert [x.percent for x in (on_time, one_day, two_days, a_week)] == [0, 10, 20, 25]
    assert "after the deadline" in one_day.reason and one_day.deadline.startswith("2026-11-20")


def test_the_lms_mark_counts_one_day_unless_an_extension_covers_the_file(tmp_path):
    rule = _policy(tmp_path).for_problem_set("ps3_mle")
    marked = rule.assess("carol", DEADLINE - timedelta(hours=1), lms_late=True)
    assert (marked.days, marked.percent, marked.reason) == (1, 10, "marked late by the LMS")
    unknown_time = rule.assess("carol", None, lms_late=True)
    assert unknown_time.days == 1
    covered = rule.assess("alice", DEADLINE + timedelta(days=1), lms_late=True)
    assert covered.days == 0 and "extension" in covered.reason
    past_extension = rule.assess("bob", DEADLINE + timedelta(days=1, hours=5), lms_late=True)
    assert past_extension.days == 1  # bob had one more day; five hours past it


def test_evidence_can_be_the_lms_alone_or_the_file_time_alone(tmp_path):
    lms_only = _policy(tmp_path, POLICY.replace("grace_minutes = 15",
                                                'evidence = "lms"')).for_problem_set("ps3_mle")
    assert lms_only.assess("carol", DEADLINE + timedelta(days=3)).days == 0
    assert lms_only.assess("carol", DEADLINE + timedelta(days=3), lms_late=True).days == 1
    files_only = _policy(tmp_path, POLICY.replace("grace_minutes = 15", 'evidence = "file-time"')
                         ).for_problem_set("ps3_mle")
    assert files_only.assess("carol", DEADLINE - timedelta(hours=1), lms_late=True).days == 0


def test_no_policy_file_or_policy_none_gives_no_penalty(tmp_path, monkeypatch):
    import autograder.intake.late as late

    monkeypatch.setattr(late, "POLICY_FILE", tmp_path / "absent.toml")
    assert late.load_policy().for_problem_set("ps3_mle").assess(
        "carol", DEADLINE + timedelta(days=9), lms_late=True).percent == 0
    assert _policy(tmp_path).for_problem_set("ps1_pca").assess(
        "carol", DEADLINE + timedelta(days=9), lms_late=True).percent == 0


def test_the_penalty_is_a_percentage_of_the_points_earned(tmp_path):
    late = _policy(tmp_path).for_problem_set("ps3_mle").assess(
        "carol", DEADLINE + timedelta(hours=3))
    assert penalty_points(late, 19.0) == 1.9
    assert penalty_points(late.to_dict(), 19.0) == 1.9
    assert penalty_points(None, 19.0) == 0.0


@pytest.mark.parametrize("text, message", [
    ("[ps3_mle]\ndeadline = 2026-11-20T23:59:00\npercent_per_day = 10",
     r"\[ps3_mle\] deadline: 2026-11-20T23:59:00 has no time zone"),
    ("[ps3_mle]\npercent_per_day = 10", r"\[ps3_mle\] deadline: is required"),
    ("[ps3_mle]\ndeadline = 2026-11-20T23:59:00Z\npercent_per_day = -5",
     r"percent_per_day: must be a number, 0 or more and at most 100"),
    ("[ps3_mle]\ndeadline = 2026-11-20T23:59:00Z\npercnt_per_day = 5",
     r"\[ps3_mle\] percnt_per_day: unknown setting"),
    ("[ps3_mle]\ndeadline = 'next friday'", r"'next friday' is not a date-time"),
    ("[ps3_mle]\ndeadline = 2026-11-20T23:59:00Z\nevidence = 'email'", r"evidence: must be one"),
    ("[ps3_mle]\ndeadline = 2026-11-20T23:59:00Z\n[ps3_mle.extensions]\nalice = { weeks = 1 }",
     r"extensions.alice: write a deadline or \{ days = N \}"),
    ("[ps3_mle]\npolicy = 'none'\npercent_per_day = 5", r"percent_per_day: given with policy"),
    ("[ps3_mle\n", r"not a valid TOML file"),
])
def test_a_bad_policy_file_says_where_and_what(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        _policy(tmp_path, text)


def test_a_named_policy_file_must_exist(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_policy(tmp_path / "nowhere.toml")
