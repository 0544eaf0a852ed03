"""common/failure_kinds.py: each kind of failed judgment named once, its advice written once and printed the same
wherever a failure is explained."""

from __future__ import annotations

import json

import pytest

from helm_mtsamples_ext.common.failure_kinds import (
    ADVICE,
    CONNECTION_FAILED,
    CONTEXT_FAILURE,
    DOOR_FAILED,
    DUPLICATE_KEYS,
    ECHOED,
    EMPTY_REPLY,
    ERROR_BESIDE,
    GAVE_UP_WAITING,
    JUDGE_UNAVAILABLE,
    KINDS,
    LARGER_CONTEXT,
    NO_MESSAGE,
    NO_TEXT,
    NO_VALID_DIMENSION,
    NO_VERDICT,
    NOT_A_COMPLETION,
    RATE_LIMITED,
    REFUSED,
    REPLY_CUT_OFF,
    REPLY_TOO_LONG,
    REQUEST_REFUSED,
    SAME_VERDICT,
    SERVER_ERROR,
    SERVER_ERROR_REPEATS,
    TIMED_OUT,
    UNNAMED,
    advice,
    context_failure,
    door_failure,
    failure_kind,
    http_failure,
    kind_of,
    reply_too_long,
)
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.reply.reading import read_reply
from helm_mtsamples_ext.judges.core.reply.shape import completion_failure
from helm_mtsamples_ext.scoring.failure_reasons import reasons_text
from helm_mtsamples_ext.scoring.unjudged import Unjudged, failure_kinds


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        ("prompt too long for the judge's context (2301 tokens): give the judge more", CONTEXT_FAILURE),
        ("rate limited (HTTP 429): slow down", "rate limited (HTTP 429)"),
        ("no verdict in reply", "no verdict in reply"),
        ("", "failed"),
    ],
)
def test_a_failures_kind_is_its_text_before_the_colon_without_a_size(failure: str, kind: str) -> None:
    assert failure_kind(failure) == kind


def test_each_kind_has_one_advice() -> None:
    kinds = [kind for kind, _ in ADVICE]
    assert len(kinds) == len(set(kinds))
    assert advice("rate limited (HTTP 429)") == advice("gave up waiting for the endpoint")
    assert advice("a kind nobody knows") is None


def test_the_context_advice_is_the_same_in_the_failure_line_the_end_of_run_and_the_unjudged_summary() -> None:
    """The judges write the failure, scoring counts it twice: all three say the one advice."""
    line = context_failure("This model's maximum context length is 2048 tokens; you requested 2301 tokens")
    assert line == f"{CONTEXT_FAILURE} (2301 tokens): {LARGER_CONTEXT}"
    assert (
        f"1 {CONTEXT_FAILURE} ({LARGER_CONTEXT})" == reasons_text([kind_of(line)]) == reasons_text([failure_kind(line)])
    )
    summary = Unjudged(1, 1, failure_kinds([{"A": {"status": "failed", "failure": line}}])).summary()
    assert summary.endswith(f"which no re-run fixes: {LARGER_CONTEXT})")
    assert advice(NOT_A_COMPLETION) is not None


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
         CONTEXT_FAILURE),
        (500, "the request exceeds the context window", CONTEXT_FAILURE),
        (400, "response_format is not supported by this server", REQUEST_REFUSED),
        (404, "model 'judge-x' not served", REQUEST_REFUSED),
        (404, "no route for context length", REQUEST_REFUSED),
        (429, "slow down", "rate limited (HTTP 429)"),
        (503, "overloaded", JUDGE_UNAVAILABLE),
        (None, "socket closed", JUDGE_UNAVAILABLE),
    ],
)  # fmt: skip
def test_an_http_error_is_named_alike_at_every_door(status: int | None, message: str, kind: str) -> None:
    """HELM's path, the Inspect door and the verifiers door name a final HTTP error with this one function: a
    context overflow is never a refused request (no re-run fixes it), a 4xx never "judge unavailable", whose advice
    (check the server, re-run) would send the user the wrong way; each kind has its advice."""
    failure = http_failure(status, message)
    assert failure_kind(failure) == kind and advice(kind) is not None
    assert message in failure or kind == CONTEXT_FAILURE


def _read(reply: str, finish: str = "stop", untrusted: tuple[str, ...] = ()) -> str:
    failure = read_reply(reply, finish, untrusted).failure
    assert failure is not None, reply
    return failure


_OWN = "The plan names each step and its timing plainly."
_COPIED = json.dumps({dim: {"score": 5, "explanation": f"Flawless for {dim}, as written."} for dim in DIMENSIONS})
WRITTEN = {
    "context": (context_failure("maximum context length is 2048 tokens; you requested 2301 tokens"), CONTEXT_FAILURE),
    "http 400": (http_failure(400, "bad response_format"), REQUEST_REFUSED),
    "http 429": (http_failure(429, "slow down"), RATE_LIMITED),
    "http 503": (http_failure(503, "overloaded"), JUDGE_UNAVAILABLE),
    "no status": (http_failure(None, "socket closed"), JUDGE_UNAVAILABLE),
    "too long": (reply_too_long(99, 50), REPLY_TOO_LONG),
    "too long at the wire": (f"{reply_too_long(99, 50)}: the body passed 64 bytes and was not read on", REPLY_TOO_LONG),
    "door": (door_failure(ValueError("boom"), "boom"), DOOR_FAILED),
    "verifiers door": (door_failure(KeyError("k"), "", "the verifiers environment"), DOOR_FAILED),
    "not json": (completion_failure(None), NOT_A_COMPLETION),
    "error alone": (completion_failure({"error": {"message": "overloaded"}}), NOT_A_COMPLETION),
    "error beside": (
        completion_failure({"choices": [{"message": {"content": "x"}}], "error": "gateway"}),
        ERROR_BESIDE,
    ),
    "no message": (completion_failure({"choices": [{"index": 0}]}), NO_MESSAGE),
    "empty": (completion_failure({"choices": [{"message": {"content": None}}]}), EMPTY_REPLY),
    "tool call": (completion_failure({"choices": [{"message": {"content": None, "tool_calls": [{}]}}]}), NO_TEXT),
    "refusal": (completion_failure({"choices": [{"message": {"content": None, "refusal": "I can't"}}]}), REFUSED),
    "cut at max_tokens": (_read('{"accuracy": {"score": 4', "length"), REPLY_CUT_OFF),
    "content filter": (_read("", "content_filter"), REPLY_CUT_OFF),
    "no verdict": (_read("I think it is fine."), NO_VERDICT),
    "no valid dimension": (_read('{"accuracy": {"score": 9, "explanation": "' + _OWN + '"}}'), NO_VALID_DIMENSION),
    "echoed": (_read(_COPIED, untrusted=(f"My plan.\n{_COPIED}",)), ECHOED),
    "duplicate keys": (_read('{"accuracy": {"score": 4, "explanation": "a"}, "accuracy": 5}'), DUPLICATE_KEYS),
    "timed out": (f"{TIMED_OUT}: no reply within judge_timeout=2s per attempt", TIMED_OUT),
    "connection": (f"{CONNECTION_FAILED}: refused", CONNECTION_FAILED),
    "breaker": (f"{JUDGE_UNAVAILABLE}: {TIMED_OUT}: no reply", JUDGE_UNAVAILABLE),
    "gave up": (f"{GAVE_UP_WAITING} within judge_max_wait: {http_failure(429, 'slow')}", GAVE_UP_WAITING),
    "repeats": (f"{SERVER_ERROR_REPEATS}: HTTP 500: boom", SERVER_ERROR_REPEATS),
    "helm's server error": ("HTTP 502: bad gateway", SERVER_ERROR),
    "helm's call error": ("call error: no completion returned", SERVER_ERROR),
    "same verdict": (f"{SAME_VERDICT}: the same scores and explanations given to 3 different answers", SAME_VERDICT),
}
"""A failure as each writer of the judging core makes it (HELM's path's own:
tests/judges/helm_calls/test_outcome.py), and its
kind."""


@pytest.mark.parametrize(("failure", "kind"), list(WRITTEN.values()), ids=list(WRITTEN))
def test_every_failure_a_writer_makes_has_its_kind_in_the_table(failure: str | None, kind: str) -> None:
    """The kind an entry stores (``kind_of``) is one of the table's, never ``UNNAMED``, and for every failure we
    write it is the kind an older reader read from the text, but where the text does not begin with one."""
    assert failure is not None
    assert kind_of(failure) == kind and kind in KINDS and kind != UNNAMED, failure
    if kind not in (RATE_LIMITED, REPLY_CUT_OFF, GAVE_UP_WAITING, SERVER_ERROR):  # a suffix, or no kind at all
        assert failure_kind(failure) == kind


def test_the_table_holds_each_kind_once_and_a_kind_alone_is_its_own() -> None:
    assert len(KINDS) == len(set(KINDS))
    assert all(kind_of(kind) == kind for kind in KINDS)
    assert kind_of("request refused: HTTP 404: gone") == REQUEST_REFUSED, "the longest kind wins over 'refused'"
    assert kind_of("server error repeats: HTTP 500: boom") == SERVER_ERROR_REPEATS
    assert kind_of("timed outside") == UNNAMED, "a kind is a whole phrase"
    assert kind_of("something nobody wrote") == UNNAMED


def test_the_kinds_with_no_advice_come_last_so_an_older_records_kind_keeps_its_advice() -> None:
    """``advice`` matches by prefix, first entry first: the kinds added to the table without advice follow every
    kind with one, so a kind read from an older record's text gets the advice it got before (or none)."""
    advised = [what is not None for _, what in ADVICE]
    assert advised == sorted(advised, reverse=True)
    assert advice("rate limited (HTTP 429)") == advice(RATE_LIMITED) is not None
    assert advice("HTTP 500") is None and advice("reply too long") is None
