"""Failures named alike and shown (issue 42, points 6 and 7) through ``inspect eval``: each 200 with no reply to read
(an HTML page on the chat route, an ``error`` object alone or beside the choices, a choice without a message) is
the failure ``completion_failure`` names for the same body, the one text every door gives, never Inspect's or
Python's words nor the breaker's ``judge unavailable``; none is retried, none opens the breaker. The metrics carry
each judge's failed share and the reward with failed judgments at the scale's minimum, as HELM's report does."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from helm_mtsamples_ext.common.failure_kinds import JUDGE_UNAVAILABLE, failure_kind
from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rubric import DIMENSIONS, MAX_SCORE, MIN_SCORE
from helm_mtsamples_ext.judges.core.reply.shape import completion_failure
from helm_mtsamples_ext.scoring.reward import score_note
from tests.doors.inspect.served_eval import failures, metric_values, panel_score, served_eval
from tests.servers.judge import JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect

SHAPES = {"page": "html", "alone": "leaky_200", "beside": "error_beside", "bare": "no_message"}
"""Each judge (by served name) and the reply it gives every note."""
LIMIT = 4
"""Notes: one more than the breaker's three unanswered prompts, so a shape counted as unanswered would open it."""
FLOOR = MIN_SCORE / MAX_SCORE


def expected_failure(server: JudgeServer, judge: str) -> str:
    """``completion_failure`` of the body the server sent the judge's first request (None: not JSON)."""
    request = next(r for r in server.requests if r.model == judge)
    reply = server.respond(request)
    body = None if reply.html else json.loads(json.dumps(server.payload_of(request, reply)))
    failure = completion_failure(body)
    assert failure is not None
    return failure


def test_each_reply_without_text_is_named_as_every_door_names_it_and_shown_in_the_metrics(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    server = JudgeServer({"a": "steady", **SHAPES})
    done, log = served_eval(synthetic_notes, tmp_path, server, limit=LIMIT)
    assert done.returncode == 0 and log is not None and log.status == "success" and log.samples, done.stderr[-3000:]
    expected = {judge: expected_failure(server, judge) for judge in SHAPES}
    for sample in log.samples:
        failed = failures(sample)
        assert failed == expected, failed
        assert not any(failure_kind(f) == JUDGE_UNAVAILABLE for f in failed.values())
    for judge in SHAPES:
        assert server.count(judge) == LIMIT, f"{judge}: no retry, no repair turn"
    metrics = metric_values(log)
    assert metrics[("failed_share:a", "mean")] == 0.0
    assert all(metrics[(f"failed_share:{judge}", "mean")] == 1.0 for judge in SHAPES)
    rewards = [(panel_score(s).metadata or {})["judge_rewards"]["a"] for s in log.samples]
    at_min = [(r + FLOOR * len(SHAPES)) / (1 + len(SHAPES)) for r in rewards]  # four failed judgments at 1/5 each
    assert metrics[("reward_failed_at_min", "mean")] == pytest.approx(sum(at_min) / len(at_min))
    assert metrics[("reward", "mean")] == pytest.approx(sum(rewards) / len(rewards))


def test_the_reward_with_failed_judgments_at_the_minimum_is_helms_reports() -> None:
    """One note by HELM's report's definition: each failed judge at 1/5, an empty answer 0, a note no judge scored
    at the minimum (never left out)."""
    scored = JudgeEntry(scores=dict.fromkeys(DIMENSIONS, 4))
    failed = JudgeEntry(status="failed", failure="empty reply")
    both = score_note(NoteRecord(judges={"a": scored, "b": failed}), ["a", "b"])
    assert both.reward_failed_at_min == pytest.approx((4 / 5 + FLOOR) / 2)
    nobody = score_note(NoteRecord(judges={"a": failed, "b": failed}), ["a", "b"])
    assert nobody.unjudged and nobody.reward_failed_at_min == pytest.approx(FLOOR)
    empty = score_note(NoteRecord(empty_answer=True), ["a", "b"])
    assert empty.reward_failed_at_min == 0.0 and not math.isnan(empty.reward_failed_at_min)
