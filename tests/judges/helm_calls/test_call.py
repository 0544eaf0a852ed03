"""The rules of one judge call (judge_call.JudgeCaller), through HELM's real client and SQLite cache against
the loopback judge server playing what real servers and gateways do."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.helm_calls.cache_gate import REPLY_CAP, STORED_REPLY_CAP
from helm_mtsamples_ext.judges.helm_calls.call import JudgeAccessError
from tests.judges.callers import FIXED, KEY, SHORT, judge_once, make_caller, target
from tests.servers.judge import Behaviour, JudgeServer

pytestmark = pytest.mark.helm

LONG = SHORT + " word" * 60


def posts(server: JudgeServer, model: str | None = None) -> int:
    return server.count(model)


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    judges: dict[str, str | Behaviour] = {
        "steady": Behaviour("steady", FIXED),
        "html": "html",
        "fail_some": Behaviour("fail_some", fail_marker="FAILME"),
        "context_limit": Behaviour("context_limit", FIXED, context_words=30),
        "huge": "huge",
        "leaky_500": "leaky_500",
        "leaky_200": "leaky_200",
        "schema_refuser": Behaviour("schema_refuser", FIXED),
        "drip": Behaviour("drip", FIXED),
        "rate_limited": Behaviour("rate_limited", FIXED),
    }
    with JudgeServer(judges, drip_seconds=0.2, huge_bytes=10 * 1024 * 1024, max_lifetime=120) as s:
        yield s


# ---------------------------------------------------------------- the endpoint before the first live call


def test_an_endpoint_answering_with_an_html_page_stops_the_run_before_any_judge_call(tmp_path: Path) -> None:
    with JudgeServer({"steady": "steady"}, html_page=True) as server:
        caller = make_caller(tmp_path / "cache", server.base_url)
        judge = target(caller, server.base_url, "steady")
        with pytest.raises(JudgeAccessError) as raised:
            caller.call(judge, SHORT)
        assert posts(server) == 0
    message = str(raised.value)
    assert "answered with an HTML page" in message and "not the OpenAI API" in message
    assert f"e.g. http://127.0.0.1:{server.base_url.split(':')[2].split('/')[0]}/v1" in message


def test_a_refused_connection_stops_the_run_naming_the_endpoint(tmp_path: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
    caller = make_caller(tmp_path / "cache", url)
    with pytest.raises(JudgeAccessError, match=r"cannot be reached \(connection refused\): start the server"):
        caller.call(target(caller, url, "steady"), SHORT)
    assert caller.fatal is not None, "every later call stops too"


def test_the_endpoint_is_checked_and_asked_its_capacity_once_however_many_calls(
    tmp_path: Path, server: JudgeServer
) -> None:
    caller = make_caller(tmp_path / "cache", server.base_url)
    judge = target(caller, server.base_url, "steady")
    for i in range(3):
        caller.call(judge, f"{SHORT} {i}")
    assert server.get_requests == ["/v1/models", "/props", "/v1/models"]  # the check, then capacity.probe_capacity


def test_a_run_answered_from_the_cache_checks_nothing_and_calls_nothing(tmp_path: Path, server: JudgeServer) -> None:
    first = make_caller(tmp_path / "cache", server.base_url)
    judged = first.call(target(first, server.base_url, "steady"), SHORT)
    server.get_requests.clear()
    calls = posts(server)
    again = make_caller(tmp_path / "cache", server.base_url)
    replayed = again.call(target(again, server.base_url, "steady"), SHORT)
    assert (posts(server), server.get_requests) == (calls, [])
    assert replayed.verdict == judged.verdict


# ---------------------------------------------------------------- failures no retry fixes


@pytest.mark.parametrize(
    ("model", "failure", "calls"),
    [
        ("html", "not a chat completion", 1),
        ("leaky_200", "not a chat completion: the endpoint answered 200 but not with a chat completion", 1),
        ("huge", f"reply too long ({10 * 1024 * 1024} characters; the cap is {REPLY_CAP})", 1),
        ("fail_some", "server error repeats: HTTP 500", 3),
    ],
    ids=["html-200", "error-body-200", "huge-reply", "repeated-500"],
)
def test_a_fault_no_retry_fixes_ends_the_call_as_a_named_failure(
    tmp_path: Path, server: JudgeServer, model: str, failure: str, calls: int
) -> None:
    outcome = judge_once(tmp_path, server, model, prompt=f"{SHORT} FAILME")
    assert outcome.failure is not None and outcome.failure.startswith(failure)
    assert posts(server, model) == calls


def test_a_prompt_too_long_for_the_context_fails_as_such_and_keeps_the_format(
    tmp_path: Path, server: JudgeServer
) -> None:
    caller = make_caller(tmp_path / "cache", server.base_url)
    judge = target(caller, server.base_url, "context_limit")
    too_long = [caller.call(judge, f"{LONG} {i}") for i in range(3)]
    fits = caller.call(judge, SHORT)
    assert all(
        o.failure is not None and o.failure.startswith("prompt too long for the judge's context (") for o in too_long
    )
    assert "larger context" in (too_long[0].failure or "")
    assert fits.failure is None and fits.structured == "json_schema"
    assert {r.response_format for r in server.requests} == {"json_schema"}


def test_a_too_long_reply_is_stored_clipped_and_never_cached(tmp_path: Path, server: JudgeServer) -> None:
    outcome = judge_once(tmp_path, server, "huge")
    assert outcome.raw_reply is not None and len(outcome.raw_reply) <= STORED_REPLY_CAP + 100
    assert sum(p.stat().st_size for p in (tmp_path / "cache").rglob("*") if p.is_file()) < 1024 * 1024


def test_a_slow_drip_reply_ends_as_a_timeout_within_judge_timeout(tmp_path: Path, server: JudgeServer) -> None:
    """One byte every 0.2 s never trips a per-read timeout of 1 s; the whole-call bound does."""
    outcome = judge_once(tmp_path, server, "drip", timeout=1.0)
    assert outcome.failure is not None and outcome.failure.startswith("timed out")
    assert posts(server, "drip") == 2, "a timeout is retried once, as any"


# ---------------------------------------------------------------- the breaker


@pytest.mark.parametrize(("model", "prompt"), [("fail_some", f"{SHORT} FAILME"), ("html", SHORT)])
def test_calls_ending_in_server_errors_or_non_completions_open_the_breaker(
    tmp_path: Path, server: JudgeServer, model: str, prompt: str
) -> None:
    caller = make_caller(tmp_path / "cache", server.base_url, breaker_threshold=3)
    judge = target(caller, server.base_url, model)
    for i in range(3):
        caller.call(judge, f"{prompt} {i}")
    calls = posts(server, model)
    fourth = caller.call(judge, f"{prompt} 3")
    assert (fourth.failure or "").startswith("judge unavailable")
    assert posts(server, model) == calls, "an open breaker fails the call without reaching the server"


# ---------------------------------------------------------------- replays


def test_a_llamacpp_like_endpoint_replays_with_the_server_stopped(tmp_path: Path) -> None:
    """llama.cpp refuses json_schema (500) and answers json_object: a re-run finds the json_object replies."""
    prompts = [f"{SHORT} {i}" for i in range(3)]
    with JudgeServer({"schema_refuser": Behaviour("schema_refuser", FIXED)}) as server:
        url = server.base_url
        first = make_caller(tmp_path / "cache", url)
        judged = [first.call(target(first, url, "schema_refuser"), p) for p in prompts]
        assert posts(server) == 1 + 3
    again = make_caller(tmp_path / "cache", url)
    replayed = [again.call(target(again, url, "schema_refuser"), p) for p in prompts]
    assert [o.verdict for o in replayed] == [o.verdict for o in judged]
    assert {o.structured for o in replayed} == {"json_object"} and not any(o.failure for o in replayed)


def test_a_rerun_after_a_partial_run_makes_only_the_missing_calls(tmp_path: Path, server: JudgeServer) -> None:
    first = make_caller(tmp_path / "cache", server.base_url)
    for i in range(2):
        first.call(target(first, server.base_url, "schema_refuser"), f"{SHORT} {i}")
    before = posts(server)
    again = make_caller(tmp_path / "cache", server.base_url)
    for i in range(4):
        again.call(target(again, server.base_url, "schema_refuser"), f"{SHORT} {i}")
    assert posts(server) - before == 2, "the replayed notes taught it json_object: only the two missing calls"


# ---------------------------------------------------------------- secrets


@pytest.mark.parametrize("model", ["leaky_500", "leaky_200"])
def test_an_echoed_key_is_in_neither_the_failure_nor_helms_cache(
    tmp_path: Path, server: JudgeServer, model: str
) -> None:
    outcome = judge_once(tmp_path, server, model, key=KEY)
    assert server.requests[0].authorization == f"Bearer {KEY}"
    assert outcome.failure is not None and KEY not in outcome.failure and "***" in outcome.failure
    assert [p for p in (tmp_path / "cache").rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()] == []


# ---------------------------------------------------------------- what the log says


def helm_lines(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "helm"]


@pytest.mark.parametrize(
    ("model", "needle"),
    [
        ("schema_refuser", "refused response_format json_schema"),
        ("rate_limited", "429, waiting"),
        ("fail_some", "retrying in"),
    ],
)
def test_an_expected_event_is_one_warning_line_without_a_traceback(
    tmp_path: Path, server: JudgeServer, caplog: pytest.LogCaptureFixture, model: str, needle: str
) -> None:
    caplog.set_level(logging.INFO, logger="helm")
    judge_once(tmp_path, server, model, prompt=f"{SHORT} FAILME")
    records = helm_lines(caplog)
    assert [r for r in records if r.exc_info or r.levelno >= logging.ERROR] == []
    lines = [r.getMessage() for r in records if needle in r.getMessage()]
    assert lines and all("\n" not in line and r"judge " in line for line in lines)


def test_running_out_of_memory_reading_a_reply_is_named_never_no_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """A MemoryError while the verdict is read fails the call as such, with no repair turn: the reply may hold a valid
    verdict, so "no verdict in reply" (and its advice to use a larger judge) would be wrong."""
    from helm_mtsamples_ext.common.failure_kinds import OUT_OF_MEMORY
    from helm_mtsamples_ext.judges.core.reply import reading
    from helm_mtsamples_ext.judges.helm_calls import call
    from helm_mtsamples_ext.judges.helm_calls.outcome import Sent

    def exhausted(*_: object) -> None:
        raise MemoryError

    monkeypatch.setattr(reading, "parse_verdict", exhausted)
    outcome = Judgment()
    assert call._read_reply(outcome, Sent("ok", text="{}"), None, (), 512) is None
    assert (outcome.verdict, outcome.failure) == (None, OUT_OF_MEMORY)
