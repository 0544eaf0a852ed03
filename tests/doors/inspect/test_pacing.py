"""No lost judgment under concurrency through Inspect (issue 42, point 1): calls refused ``json_schema`` at once
each fall back to the next form, never past it and never to none; a server that takes one call at a time (as
llama-cpp-python's says: ``owned_by: "me"`` on ``/v1/models``) is sent one call at a time, whatever the panel, and
judges every note."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.inspect_scorer import endpoint_keys, judge_models, server_paces
from helm_mtsamples_ext.judges.core.prompt import build_prompt
from helm_mtsamples_ext.judges.inspect_calls.judge import JudgeCall, judge_note
from tests.doors.inspect.served_eval import failures, judged_everywhere, served_eval
from tests.servers.judge import JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect


def prompt_for(n: int) -> str:
    return build_prompt(f"Operative note {n}.", f"Plan {n}.", "The reference plan.", "prefix")


@pytest.mark.parametrize("at_once", [3, 8])
def test_first_calls_refused_the_schema_at_once_each_get_a_verdict(at_once: int) -> None:
    """``at_once`` first calls to a judge refusing json_schema (HTTP 500, llama-cpp-python's words) are all in the
    server together (its rendezvous holds each until all arrived), all refused, and each asks json_object next:
    every one gets its verdict, none falls to no form, and the judge's later calls start at json_object."""
    call = JudgeCall("auto", None, 10.0, 60.0)
    with JudgeServer({"j": "schema_refuser"}, rendezvous=at_once, rendezvous_timeout=20.0) as server:
        urls = [server.base_url]
        (model,) = judge_models(["j"], urls, endpoint_keys(urls), ()).values()

        async def judge_all() -> list[JudgeEntry]:
            calls = (judge_note(call, "j", model, prompt_for(n), ()) for n in range(at_once))
            return list(await asyncio.gather(*calls))

        entries = asyncio.run(judge_all())
        assert server.max_in_flight >= at_once, "the first calls were in the server together"
        later = asyncio.run(judge_note(call, "j", model, prompt_for(at_once), ()))
    for n, entry in enumerate([*entries, later]):
        assert entry.status != "failed" and entry.scores == server.scores_for("j", prompt_for(n)), entry
    for n in range(at_once):
        tried = [r.response_format for r in server.requests if r.prompt == prompt_for(n)]
        assert tried == ["json_schema", "json_object"], tried
    assert [r.response_format for r in server.requests if r.prompt == prompt_for(at_once)] == ["json_object"]


def test_a_one_slot_server_is_probed_as_taking_one_call() -> None:
    """llama-cpp-python's ``/v1/models`` signature: its judges (every one it serves) share one slot."""
    with JudgeServer({"a": "steady", "b": "steady"}, owned_by="me") as server:
        urls = [server.base_url]
        paces = server_paces(["a", "b"], urls, endpoint_keys(urls))
        assert {p.slots for p in paces.values()} == {1} and set(paces) == {"a", "b"}
        assert server.get_requests and all("Authorization" not in path for path in server.get_requests)
    with JudgeServer({"a": "steady"}) as server:  # a server that does not say: not paced (Inspect's own limits)
        urls = [server.base_url]
        assert server_paces(["a"], urls, endpoint_keys(urls)) == {}


SERVICE_SECONDS = 0.3
"""Each call's time on the one-slot server: long enough that calls sent together would meet in it."""


def test_a_one_slot_judge_server_gets_one_call_at_a_time_and_judges_every_note(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    """Two judges on one llama-cpp-python-like server, four notes scored at once by Inspect: the server never holds
    two calls (queued ones included), none times out in its queue, every note is judged by both."""
    server = JudgeServer({"a": "steady", "b": "steady"}, one_at_a_time=SERVICE_SECONDS, owned_by="me")
    done, log = served_eval(synthetic_notes, tmp_path, server, "-T", "judge_timeout=5", limit=4)
    assert done.returncode == 0 and log is not None and log.status == "success", done.stderr[-3000:]
    assert log.samples and len(log.samples) == 4
    assert judged_everywhere(log, ["a", "b"]), [failures(s) for s in log.samples]
    assert server.max_in_flight == 1, "a call was sent while another was in the server"
    assert server.count("a") == server.count("b") == 4 and server.closed_while_serving == 0
