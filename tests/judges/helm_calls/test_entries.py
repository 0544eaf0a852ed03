"""entries.py: what a note's judge calls leave in its record."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.failure_kinds import REPLY_CUT_OFF, SERVER_ERROR
from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.reply.served_model import ServedModel
from helm_mtsamples_ext.judges.core.reply.verdict import DimensionScore, Verdict
from helm_mtsamples_ext.judges.helm_calls.entries import judge_entry, note_record

pytestmark = pytest.mark.helm

JUDGE = JudgeTarget("a", "a", "host/a", "host", "http://host/v1", "JUDGE_API_KEY_1")
VERDICT = Verdict({d: DimensionScore(4, f"{d}: fine, key sk-leak") for d in ("accuracy", "completeness", "clarity")})


def mask(text: str) -> str:
    return text.replace("sk-leak", "***")


def test_a_judge_that_failed_keeps_no_score_but_its_reply_and_failure_masked() -> None:
    entry = judge_entry(JUDGE, Judgment(VERDICT, failure="reply cut off (max_tokens)", raw_reply="{sk-leak"), mask)
    assert entry.failed and set(entry.scores.values()) == {None}
    assert entry.raw_reply == "{***" and "sk-leak" not in str(entry.explanations)


def test_a_failed_judges_entry_stores_its_kind_beside_its_text_in_the_annotation() -> None:
    """HELM's path: the record written into scenario_state.json carries each failure's kind, a table constant."""
    outcomes = [
        Judgment(failure="HTTP 502: bad gateway"),
        Judgment(VERDICT, failure="reply cut off (max_tokens)"),
    ]
    record = note_record("n1", [JUDGE, JudgeTarget("b", "b", "host/b", "host", "http://host/v1", "K")], outcomes, mask)
    written = record.to_dict()
    assert (written["a"]["failure_kind"], written["b"]["failure_kind"]) == (SERVER_ERROR, REPLY_CUT_OFF)
    assert (
        written["a"]["failure"] == "HTTP 502: bad gateway"
        and "failure_kind" not in judge_entry(JUDGE, Judgment(VERDICT), mask).to_dict()
    )


def test_a_judge_that_answered_keeps_its_scores_and_not_its_reply() -> None:
    entry = judge_entry(JUDGE, Judgment(VERDICT, raw_reply="{...}", tokens=12), mask)
    assert not entry.failed and set(entry.scores.values()) == {4}
    assert (entry.raw_reply, entry.tokens, entry.model_deployment) == (None, 12, "host/a")


def test_the_model_the_server_reported_is_kept_masked_whether_the_judge_answered_or_failed() -> None:
    served = ServedModel("judge-v1 sk-leak", "fp_1")
    failed = Judgment(VERDICT, failure="no valid dimension", served=served)
    for outcome in (Judgment(VERDICT, served=served), failed):
        entry = judge_entry(JUDGE, outcome, mask)
        assert (entry.reported_model, entry.system_fingerprint) == ("judge-v1 ***", "fp_1")
    assert (
        judge_entry(JUDGE, Judgment(VERDICT), mask)
        .to_dict()
        .keys()
        .isdisjoint({"reported_model", "system_fingerprint"})
    ), "a server that reported nothing leaves no key"


def test_a_note_no_judge_was_asked_about_is_the_empty_answer_record() -> None:
    assert note_record("n1", [JUDGE], [], mask).empty_answer


def test_the_failed_judges_are_listed_in_panel_order() -> None:
    judges = [JUDGE, JudgeTarget("b", "b", "host/b", "host", "http://host/v1", "JUDGE_API_KEY_1")]
    record = note_record("n1", judges, [Judgment(failure="timed out"), Judgment(VERDICT)], mask)
    assert list(record.judges) == ["a", "b"] and record.failed_judges == ("a",)


def test_every_note_record_carries_the_current_rules_version_judged_or_empty() -> None:
    """The report tells a suite scored under two rules apart only if each record says which it was scored under."""
    judged = note_record("n1", [JUDGE], [Judgment(VERDICT)], mask).to_dict()
    empty = note_record("n1", [JUDGE], [], mask).to_dict()
    assert judged["rules_version"] == empty["rules_version"] == RULES_VERSION
