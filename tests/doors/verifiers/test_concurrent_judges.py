"""Concurrent first calls to a judge that refuses the schema, through the verifiers door's judge (``AsyncJudge``) and
a real ``openai.AsyncOpenAI`` client: every call, and every later one, gets its verdict.

Why: verifiers scores a rollout's notes at once. Three concurrent first calls to llama-cpp-python's server (HTTP 500
to ``json_schema``) each cut the judge's shared list of formats by their own position; the list ran out, every
later call failed with ``unreachable``, and verifiers scored each note 0 (issue 42). The server here holds the
first calls until all of them are in flight (``rendezvous``), so they are refused together, every time.
"""

from __future__ import annotations

import asyncio
import types

import pytest
from openai import AsyncOpenAI

from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.judges.openai_calls import judge as async_openai
from tests.servers.judge import JudgeServer

pytestmark = pytest.mark.verifiers

JUDGE = "smollm2"


async def judge_at_once(module: types.ModuleType, base_url: str, rounds: list[list[str]]) -> list[object]:
    """Each round's prompts judged at once by one judge of ``module`` (its ``AsyncJudge``), round after round;
    each entry, or the exception a call raised."""
    client = AsyncOpenAI(base_url=base_url, api_key="EMPTY", timeout=30, max_retries=0)
    judge = module.AsyncJudge(client, JUDGE, module.AsyncCallSettings(timeout=30, max_wait=60))
    entries: list[object] = []
    try:
        for prompts in rounds:
            entries += await asyncio.gather(*(judge.judge(prompt) for prompt in prompts), return_exceptions=True)
        return entries
    finally:
        await client.close()


def concurrent_first_calls(module: types.ModuleType, n: int) -> tuple[list[object], JudgeServer, list[str]]:
    """``n`` first calls at once to a ``schema_refuser`` judge, then ``n`` later ones; the entries, the server
    and the prompts."""
    first = [f"Judge plan number {i}." for i in range(n)]
    later = [f"Judge plan number {i}, later." for i in range(n)]
    with JudgeServer({JUDGE: "schema_refuser"}, rendezvous=n, rendezvous_timeout=20) as server:
        entries = asyncio.run(judge_at_once(module, server.base_url, [first, later]))
    return entries, server, first + later


def ok(entry: object) -> bool:
    return isinstance(entry, JudgeEntry) and not entry.failed


@pytest.mark.timeout(120)
@pytest.mark.parametrize("n", [3, 8])
def test_concurrent_first_calls_to_a_schema_refuser_each_get_their_verdict(n: int) -> None:
    entries, server, prompts = concurrent_first_calls(async_openai, n)
    failures = [e if isinstance(e, Exception) else getattr(e, "failure", e) for e in entries if not ok(e)]
    assert failures == [], failures
    for prompt, entry in zip(prompts, entries, strict=True):
        assert isinstance(entry, JudgeEntry) and entry.scores == server.scores_for(JUDGE, prompt), "its own verdict"
        assert entry.structured == "json_object"
    formats = [r.response_format for r in server.requests]
    assert formats.count("json_schema") == n and formats.count("json_object") == 2 * n, formats
