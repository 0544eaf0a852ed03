"""judges/core/judgment.py: the one result of a judge's turns at every door, and the record's entry made from it."""

from __future__ import annotations

import asyncio

import pytest

from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.reply.served_model import NOT_REPORTED, ServedModel
from helm_mtsamples_ext.judges.core.turns import Exchange, Messages, judge_turns

pytestmark = pytest.mark.helm

VERDICT_REPLY = (
    '{"accuracy": {"score": 4, "explanation": "The plan matches the reference closely."}, '
    '"completeness": {"score": 3, "explanation": "It leaves out the follow-up visit."}, '
    '"clarity": {"score": 5, "explanation": "Each step is stated plainly."}}'
)


def mask(text: str) -> str:
    return text.replace("sk-secret-123456", "***")


def test_counting_turns_sums_what_servers_reported_and_keeps_the_last_named_model() -> None:
    judgment = Judgment()
    judgment.count(tokens_in=10, tokens_out=None, served=ServedModel("m-1", "fp-1"))
    judgment.count(tokens_in=None, tokens_out=5, served=NOT_REPORTED)
    judgment.count(tokens=None, tokens_in=2, tokens_out=3, served=ServedModel("m-2", None))
    assert (judgment.tokens, judgment.tokens_in, judgment.tokens_out) == (None, 12, 8)
    assert judgment.served == ServedModel("m-2", None)


def test_the_entry_masks_every_text_the_server_sent_the_served_model_too() -> None:
    """A server echoing a key in its model name or fingerprint: the entry keeps neither, at every door (the doors
    without HELM kept them as sent before there was one result type)."""
    served = ServedModel("judge sk-secret-123456", "fp sk-secret-123456", "loaded sk-secret-123456")
    entry = Judgment(failure="no verdict in reply: sk-secret-123456", raw_reply="sk-secret-123456", served=served)
    kept = entry.entry(mask).to_dict()
    assert "sk-secret-123456" not in repr(kept)
    assert kept["reported_model"] == "judge ***" and kept["failure"] == "no verdict in reply: ***"


def test_the_doors_turns_give_a_judgment_with_tokens_and_the_model_named_field_by_field() -> None:
    replies = iter(
        [
            Exchange(text="not a verdict", finish="stop", tokens_in=7, tokens_out=2, reported_model="m-1",
                     system_fingerprint="fp-1"),
            Exchange(text=VERDICT_REPLY, finish="stop", tokens_in=9, tokens_out=40, reported_model="m-2"),
        ]
    )  # fmt: skip

    async def send(messages: Messages, max_tokens: int) -> Exchange:
        return next(replies)

    judgment = asyncio.run(judge_turns(send, "the prompt", (), 512, 1))
    assert judgment.failure is None and judgment.verdict is not None
    assert (judgment.tokens, judgment.tokens_in, judgment.tokens_out) == (58, 16, 42)
    assert judgment.served == ServedModel("m-2", "fp-1"), "a reply naming one field keeps the other's last word"
    entry = judgment.entry(mask).to_dict()
    assert [entry[dim]["score"] for dim in ("accuracy", "completeness", "clarity")] == [4, 3, 5]
    assert entry["tokens"] == 58
