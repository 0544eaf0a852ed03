"""Every shape of judge reply is a result or a named failure, never a crash, live or replayed from HELM's cache."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext.judges.core.reply.shape import readable, reply_shape
from helm_mtsamples_ext.judges.helm_calls.batch.run import direct_key
from helm_mtsamples_ext.judges.helm_calls.cache_gate import CacheGate
from tests.judges.callers import FIXED, SHORT, make_caller, target
from tests.servers.judge import REFUSAL, JudgeServer

pytestmark = pytest.mark.helm

REFUSED = f"refused: {' '.join(REFUSAL.split()[:12])} …"


def completion(message: dict[str, Any] | None, **choice: Any) -> dict[str, Any]:
    body = {"index": 0, "finish_reason": "stop", **choice}
    if message is not None:
        body["message"] = message
    return {"object": "chat.completion", "choices": [body], "request_time": 0.1}


SHAPES = [
    ({"role": "assistant", "content": "A verdict."}, None),
    ({"role": "assistant", "content": None, "refusal": REFUSAL}, REFUSED),
    ({"role": "assistant", "content": None, "refusal": "No."}, "refused: No."),
    (
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
        "no text: the judge answered with a tool call",
    ),
    ({"role": "assistant", "content": ""}, "empty reply"),
    ({"role": "assistant", "content": "  \n"}, "empty reply"),
    ({"role": "assistant", "content": None}, "empty reply"),
    ({"role": "assistant", "content": [{"type": "text", "text": "A verdict."}]}, None),
    (None, "no message in the reply"),
]


@pytest.mark.parametrize(("message", "named"), SHAPES, ids=[str(n) for n, _ in enumerate(SHAPES)])
def test_each_reply_shape_is_text_or_a_named_failure(message: dict[str, Any] | None, named: str | None) -> None:
    """The name is the same for the reply as sent and as stored (readable), so a replay says what the call said."""
    raw = completion(message)
    assert reply_shape(raw) == named
    if message is not None:
        stored = readable(raw)
        assert isinstance(stored["choices"][0]["message"]["content"], str)
        assert reply_shape(stored) == named


ERRORS_BESIDE = [
    ({"message": "upstream model failed", "type": "server_error"}, "upstream model failed"),
    ({"type": "overloaded"}, "overloaded"),
    ("gateway timeout", "gateway timeout"),
]


@pytest.mark.parametrize(("error", "said"), ERRORS_BESIDE, ids=["message", "type-only", "string"])
def test_a_200_with_an_error_beside_its_choices_is_a_named_failure(error: object, said: str) -> None:
    """Whatever its choices hold (here a verdict), a completion also holding an ``error`` is no judge's answer."""
    raw = {**completion({"role": "assistant", "content": '{"accuracy": {"score": 5}}'}), "error": error}
    assert reply_shape(raw) == f"error beside the reply: the judge server answered 200 with an error: {said}"
    assert reply_shape({**raw, "error": None}) is None, "a null error is no error"


def test_a_missing_finish_reason_is_stored_as_null() -> None:
    raw = completion({"role": "assistant", "content": "x"})
    del raw["choices"][0]["finish_reason"]
    assert readable(raw)["choices"][0]["finish_reason"] is None


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    judges = {kind: kind for kind in ("refuser", "tool_caller", "empty", "no_message", "error_beside")}
    with JudgeServer({**judges, "steady": "steady"}, max_lifetime=120) as s:
        yield s


CACHED = [
    ("refuser", REFUSED),
    ("tool_caller", "no text: the judge answered with a tool call"),
    ("empty", "empty reply"),
]


@pytest.mark.parametrize(("model", "failure"), CACHED, ids=[m for m, _ in CACHED])
def test_a_reply_without_text_fails_the_judge_by_name_and_replays_without_a_call(
    server: JudgeServer, tmp_path: Path, model: str, failure: str
) -> None:
    """One call, no retry and no repair turn (a refusal is the judge's answer); the re-run replays it."""
    first = make_caller(tmp_path / "cache", server.base_url)
    outcome = first.call(target(first, server.base_url, model), SHORT)
    assert (outcome.verdict, outcome.failure) == (None, failure)
    assert server.count(model) == 1

    again = make_caller(tmp_path / "cache", server.base_url)
    replayed = again.call(target(again, server.base_url, model), SHORT)
    assert (replayed.verdict, replayed.failure) == (None, failure)
    assert server.count(model) == 1, "a re-run replays the stored reply"


def test_a_200_with_an_error_beside_a_verdict_fails_by_name_and_is_not_stored(
    server: JudgeServer, tmp_path: Path
) -> None:
    """The judges' server said its model failed: the verdict beside it is not counted, and the next run asks again."""
    first = make_caller(tmp_path / "cache", server.base_url)
    outcome = first.call(target(first, server.base_url, "error_beside"), SHORT)
    assert outcome.verdict is None and (outcome.failure or "").startswith("error beside the reply: ")
    calls = server.count("error_beside")
    assert calls == 1, "no retry and no repair turn"
    again = make_caller(tmp_path / "cache", server.base_url)
    assert again.call(target(again, server.base_url, "error_beside"), SHORT).failure == outcome.failure
    assert server.count("error_beside") == calls + 1


def test_a_choice_without_a_message_fails_by_name_and_is_not_stored(server: JudgeServer, tmp_path: Path) -> None:
    """HELM cannot read it back, so it is not stored: the next run asks again instead of crashing."""
    first = make_caller(tmp_path / "cache", server.base_url)
    assert first.call(target(first, server.base_url, "no_message"), SHORT).failure == "no message in the reply"
    calls = server.count("no_message")
    again = make_caller(tmp_path / "cache", server.base_url)
    assert again.call(target(again, server.base_url, "no_message"), SHORT).failure == "no message in the reply"
    assert server.count("no_message") == calls + 1


@pytest.mark.parametrize(
    ("message", "failure"),
    [
        ({"role": "assistant", "content": None, "refusal": REFUSAL}, REFUSED),
        (
            {"role": "assistant", "content": None, "tool_calls": [{"id": "c"}]},
            "no text: the judge answered with a tool call",
        ),
        (None, "no message in the reply"),
    ],
    ids=["refusal", "tool-call", "no-message"],
)
def test_a_cache_written_by_the_previous_release_replays_without_a_crash_or_a_call(
    server: JudgeServer, tmp_path: Path, message: dict[str, Any] | None, failure: str
) -> None:
    """The previous release stored such replies as sent (``null`` content), and every re-run crashed on them."""
    caller = make_caller(tmp_path / "cache", server.base_url)
    judge = target(caller, server.base_url, "steady")
    client = caller.client(judge.model_deployment)
    request = caller.first_request(judge, SHORT)
    key, _ = direct_key(client, request)  # type: ignore[arg-type]
    tap = client.cache  # type: ignore[attr-defined]
    assert isinstance(tap, CacheGate)
    tap._cache.get(key, lambda: {**completion(message), "request_datetime": int(time.time())})  # as stored then

    outcome = caller.call(judge, SHORT)
    assert (outcome.verdict, outcome.failure) == (None, failure)
    assert server.count("steady") == 0


def test_an_ordinary_verdict_is_unchanged(server: JudgeServer, tmp_path: Path) -> None:
    caller = make_caller(tmp_path / "cache", server.base_url)
    outcome = caller.call(target(caller, server.base_url, "steady"), SHORT)
    assert outcome.failure is None and outcome.verdict is not None and outcome.verdict.has_valid_dimension
    assert set(FIXED) == set(outcome.verdict.dimensions)
