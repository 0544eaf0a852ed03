"""MedARC's ``judge_feedback`` evaluation with our meaning: each judge's scores, explanations and failure in MedARC's
fields, our reward; our fields beside them under keys MedARC never writes."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.failure_kinds import NO_VERDICT
from helm_mtsamples_ext.common.record import FAILED, JudgeEntry, NoteRecord
from helm_mtsamples_ext.scoring.judge_feedback import OURS, judge_feedback
from helm_mtsamples_ext.scoring.reward import score_note

GOOD = JudgeEntry(
    scores={"accuracy": 5, "completeness": 4, "clarity": 3},
    explanations={"accuracy": "right", "completeness": "most", "clarity": "plain"},
    reported_model="model-a-0125",
)
LOST = JudgeEntry(status=FAILED, failure="no verdict in reply", raw_reply="Let me think.")
MEDARC = ("model", "raw", "error", "scores", "score")
"""The keys MedARC's environment writes in a judge's entry."""


def test_a_failed_judge_has_its_reason_and_no_score_and_the_note_the_others_reward() -> None:
    record = NoteRecord(judges={"a": GOOD, "b": LOST}, failed_judges=("b",))
    feedback = judge_feedback(record, score_note(record, ["a", "b"]), {"a": "model-a", "b": "model-b"})
    a, b = feedback["judges"]
    assert a == {
        "model": "model-a",
        "raw": None,
        "error": None,
        "scores": {
            "accuracy": {"score": 5, "explanation": "right"},
            "completeness": {"score": 4, "explanation": "most"},
            "clarity": {"score": 3, "explanation": "plain"},
        },
        "score": pytest.approx((5 + 4 + 3) / 15),
        "judge": "a",
        "status": "ok",
        "failure_kind": None,
        "served_model": "model-a-0125",
    }
    assert set(a) == set(MEDARC) | set(OURS) and not set(MEDARC) & set(OURS)
    assert (b["score"], b["error"], b["raw"], b["status"]) == (None, "no verdict in reply", "Let me think.", "failed")
    assert all(dim == {"score": None, "explanation": None} for dim in b["scores"].values())
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
    assert feedback["judges"][0]["status"] is None
