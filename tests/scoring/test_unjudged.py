"""The notes no judge could score: each judge's failures by kind, the one line that says why, and when that
many fails the run. (That the metric logs or raises these is tests/test_metric.py's.)"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from helm_mtsamples_ext.scoring.unjudged import Unjudged, failure_kinds

pytestmark = pytest.mark.helm

TOO_LONG = "prompt too long for the judge's context (1532 tokens): give the judge a larger context"


def failed(failure: str, **extra: Any) -> dict[str, Any]:
    return {"status": "failed", "failure": failure, **extra}


OK = {"accuracy": {"score": 4, "explanation": "fine"}, "status": "ok"}


def test_each_judges_failures_are_counted_by_the_reasons_text_before_its_first_colon() -> None:
    records = [
        {"A": failed("rate limited (HTTP 429): slow down"), "B": failed("timed out: Request timed out.")},
        {"A": failed("rate limited (HTTP 429): again"), "B": OK, "failed_judges": ["A"]},
    ]
    assert failure_kinds(records) == Counter({"A: rate limited (HTTP 429)": 2, "B: timed out": 1})


def test_a_judge_without_a_valid_dimension_is_named_with_why_they_were_invalid() -> None:
    """An echoing judge says so: the kinds of its invalid dimensions, sorted, once each."""
    echo = {"status": "failed", "invalid": {"accuracy": "not its own words: copied", "clarity": "missing"}}
    assert failure_kinds([{"A": echo}]) == Counter({"A: no valid dimension (missing; not its own words)": 1})


def test_a_judge_listed_as_failed_without_a_reason_is_marked_failed() -> None:
    assert failure_kinds([{"A": OK, "failed_judges": ["A"]}]) == Counter({"A: marked failed": 1})


@pytest.mark.parametrize("record", [None, "garbage", ["A"]])
def test_a_note_without_a_record_counts_as_no_annotation(record: object) -> None:
    assert failure_kinds([record]) == Counter({"no annotation": 1})


def test_a_judge_that_scored_and_an_empty_answer_add_no_failure() -> None:
    assert failure_kinds([{"A": OK, "failed_judges": []}, {"failed_judges": [], "answer": "empty"}]) == Counter()


def test_the_summary_gives_the_three_commonest_fixable_kinds_with_their_counts() -> None:
    kinds = Counter({"A: timed out": 3, "B: HTTP 500": 2, "A: HTTP 500": 1, "B: timed out": 1})
    summary = Unjudged(2, 5, kinds).summary()
    assert (
        summary
        == "2 of 5 notes have no reward: every judge failed on them (A: timed out ×3, B: HTTP 500 ×2, A: HTTP 500 ×1)"
    )


def test_prompts_too_long_for_the_context_are_counted_apart_as_what_no_rerun_fixes() -> None:
    report = Unjudged(2, 2, failure_kinds([{"A": failed(TOO_LONG), "B": failed(TOO_LONG)}] * 2))
    assert report.too_long == 4 and not report.fixable
    assert report.summary().endswith(
        "(4 judge calls had a prompt too long for the judge's context, which no re-run fixes: give the judge a "
        "larger context or use a judge with one)"
    )
    assert "Re-running" not in report.error(0.0), "no re-run fixes a prompt too long for the context"


def test_the_error_says_a_rerun_makes_only_the_failed_calls_when_one_can_help() -> None:
    error = Unjudged(1, 2, Counter({"A: timed out": 1})).error(0.25)
    assert "\n" not in error
    assert error.endswith(
        "; max_unjudged=0.25. Re-running the same command makes only the failed judge calls (the rest replay from "
        "HELM's cache); max_unjudged=1 reports such notes instead."
    )


@pytest.mark.parametrize(
    ("unjudged", "notes", "max_unjudged", "fails"),
    [(1, 2, 0.0, True), (1, 2, 0.5, False), (2, 3, 0.5, True), (3, 3, 1.0, False), (0, 0, 0.0, False)],
)
def test_the_run_fails_only_when_the_share_of_unjudged_notes_is_past_max_unjudged(
    unjudged: int, notes: int, max_unjudged: float, fails: bool
) -> None:
    assert Unjudged(unjudged, notes).fails_run(max_unjudged) is fails


def test_the_warning_says_where_each_notes_reasons_are() -> None:
    warning = Unjudged(1, 4, Counter({"A: timed out": 1})).warning()
    assert warning.endswith("(A: timed out ×1); the reasons are in each note's 'mtsamples_procedures' annotation")
