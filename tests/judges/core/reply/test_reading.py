"""reply/reading.py: what one judge reply counts for, the same through every front door."""

from __future__ import annotations

import json

import pytest

from helm_mtsamples_ext.common.failure_kinds import NO_VERDICT, REPLY_CUT_OFF
from helm_mtsamples_ext.common.record import FAILED, OK
from helm_mtsamples_ext.judges.core.reply.reading import entry_of, read_reply

VERDICT = json.dumps({d: {"score": s, "explanation": f"The plan meets the note on {d}."} for d, s in
                      (("accuracy", 4), ("completeness", 3), ("clarity", 5))})  # fmt: skip


def test_a_verdict_that_counts_is_read_and_needs_no_other_turn() -> None:
    reading = read_reply(VERDICT, "stop")
    assert reading.failure is None and not reading.retry
    entry = entry_of(reading.verdict, reading.failure, VERDICT)
    assert (entry.status, entry.scores, entry.raw_reply) == (OK, {"accuracy": 4, "completeness": 3, "clarity": 5}, None)


@pytest.mark.parametrize(
    ("finish", "failure", "retry", "more_tokens"),
    [("length", f"{REPLY_CUT_OFF} (max_tokens)", True, True),
     ("content_filter", f"{REPLY_CUT_OFF} (content filter)", False, False)],
    ids=["max_tokens", "content filter"],
)  # fmt: skip
def test_a_cut_reply_is_a_failure_never_read_even_when_it_holds_a_verdict(
    finish: str, failure: str, retry: bool, more_tokens: bool
) -> None:
    reading = read_reply(VERDICT, finish)
    assert (reading.verdict, reading.failure, reading.retry, reading.more_tokens) == (None, failure, retry, more_tokens)


def test_a_reply_without_a_verdict_fails_keeps_the_reply_and_scores_nothing() -> None:
    reading = read_reply("I think it is fine.", "stop")
    assert (reading.failure, reading.retry) == (NO_VERDICT, True)
    entry = entry_of(reading.verdict, reading.failure, "I think it is fine.", scrub=str.upper)
    assert entry.status == FAILED and entry.raw_reply == "I THINK IT IS FINE." and entry.failure == NO_VERDICT.upper()
    assert entry.failure_kind == NO_VERDICT, "the kind is named from the failure as written, beside its text"
    assert entry_of(read_reply(VERDICT, "stop").verdict, None, VERDICT).failure_kind is None
    assert all(score is None for score in entry.scores.values())


def test_a_failed_judge_with_a_partial_verdict_records_no_score() -> None:
    """A verdict read but failed (here: copied from the answer) never leaves a score in the record."""
    answer = VERDICT
    reading = read_reply(VERDICT, "stop", untrusted=[answer])
    assert reading.failure is not None
    entry = entry_of(reading.verdict, reading.failure, VERDICT)
    assert entry.status == FAILED and all(score is None for score in entry.scores.values())
