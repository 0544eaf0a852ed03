"""MedARC's ``judge_feedback`` with our meaning: each judge's scores, explanations and failure, our reward."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.failure_kinds import NO_VERDICT
from helm_mtsamples_ext.common.record import FAILED, JudgeEntry, NoteRecord
from helm_mtsamples_ext.scoring.judge_feedback import judge_feedback
from helm_mtsamples_ext.scoring.reward import score_note

GOOD = JudgeEntry(
    scores={"accuracy": 5, "completeness": 4, "clarity": 3},
    explanations={"accuracy": "right", "completeness": "most", "clarity": "plain"},
)
LOST = JudgeEntry(status=FAILED, failure="no verdict in reply", raw_reply="Let me think.")


def test_a_failed_judge_has_its_reason_and_no_score_and_the_note_the_others_reward() -> None:
    record = NoteRecord(judges={"a": GOOD, "b": LOST}, failed_judges=("b",))
    feedback = judge_feedback(record, score_note(record, ["a", "b"]), {"a": "model-a", "b": "model-b"})
    a, b = feedback["judges"]
    assert a == {
        "name": "a",
        "model": "model-a",
        "scores": {"accuracy": 5, "completeness": 4, "clarity": 3},
        "explanations": {"accuracy": "right", "completeness": "most", "clarity": "plain"},
        "error": None,
        "failure_kind": None,
        "raw": None,
        "score": pytest.approx((5 + 4 + 3) / 15),
    }
    assert (b["scores"], b["score"], b["error"], b["raw"]) == ({}, None, "no verdict in reply", "Let me think.")
    assert b["failure_kind"] == NO_VERDICT
    assert (feedback["score"], feedback["failures"]) == (pytest.approx(0.8), 1)


def test_a_note_no_judge_scored_has_no_score() -> None:
    record = NoteRecord(judges={"b": LOST}, failed_judges=("b",))
    feedback = judge_feedback(record, score_note(record, ["b"]), {})
    assert feedback["score"] is None and feedback["judges"][0]["model"] == "b"


def test_an_empty_answer_scores_0_with_no_judge_asked() -> None:
    record = NoteRecord.empty()
    feedback = judge_feedback(record, score_note(record, ["a"]), {"a": "model-a"})
    assert feedback["score"] == 0.0 and feedback["empty_answer"] and feedback["judges"][0]["error"] is None
