"""The rules of outcome.py: how an exchange with a judge server is classified from HELM's result and the SDK's
exception."""

from __future__ import annotations

import httpx
import openai
import pytest
from helm.common.request import ErrorFlags, GeneratedOutput, RequestResult

from helm_mtsamples_ext.common.failure_kinds import KINDS, REQUEST_REFUSED, UNNAMED, kind_of
from helm_mtsamples_ext.judges.core.reply.shape import NoText
from helm_mtsamples_ext.judges.helm_calls.cache_gate import NotACompletion, ReplyTooLong
from helm_mtsamples_ext.judges.helm_calls.outcome import Sent, classify
from tests.judges.sdk_errors import http_request, status_error

pytestmark = pytest.mark.helm


def failed(error: BaseException | str, flags: ErrorFlags | None = None) -> RequestResult:
    """HELM's result for a failed call: OpenAIClient turns the exception into ``OpenAI error: <e>``."""
    message = error if isinstance(error, str) else f"OpenAI error: {error}"
    return RequestResult(success=False, cached=False, error=message, completions=[], embedding=[], error_flags=flags)


def answered(text: str, reason: str | None = "stop") -> RequestResult:
    completion = GeneratedOutput(
        text=text, logprob=0.0, tokens=[], finish_reason=None if reason is None else {"reason": reason}
    )
    return RequestResult(success=True, cached=False, completions=[completion], embedding=[])


def test_the_sdk_raises_its_own_subclass_for_each_status() -> None:
    """Guards the helper: the errors below are the SDK's real ones, as a live server would cause."""
    assert type(status_error(429)) is openai.RateLimitError
    assert type(status_error(401)) is openai.AuthenticationError


@pytest.mark.parametrize(
    ("headers", "retry_after"),
    [({"Retry-After": "7"}, 7.0), ({"retry-after-ms": "1500", "Retry-After": "7"}, 1.5), ({}, None)],
    ids=["retry-after", "retry-after-ms", "no-header"],
)
def test_a_429_is_rate_limited_with_the_servers_retry_after(headers: dict[str, str], retry_after: float | None) -> None:
    """HTTP 429 is "wait": its Retry-After (from the exception's response headers) says how long."""
    error = status_error(429, headers)
    sent = classify(failed(error), error, tokens=12)
    assert (sent.kind, sent.status, sent.retry_after, sent.tokens) == ("rate_limited", 429, retry_after, 12)
    assert sent.error.startswith("rate limited (HTTP 429): OpenAI error:")


def test_a_rate_limit_error_built_on_a_bare_response_is_rate_limited() -> None:
    """RateLimitError on a 429 with ``Retry-After: 7`` and no JSON body: still rate limited, wait 7 s."""
    response = httpx.Response(429, headers={"Retry-After": "7"}, request=http_request())
    error = openai.RateLimitError("Error code: 429", response=response, body=None)
    sent = classify(failed(error), error)
    assert (sent.kind, sent.status, sent.retry_after) == ("rate_limited", 429, 7.0)


def test_a_429_seen_only_in_helms_error_string_is_rate_limited_without_a_wait() -> None:
    """Without the tap's exception the status is read from HELM's message; there are no headers to wait on."""
    sent = classify(failed("OpenAI error: Error code: 429 - {'error': 'slow down'}"))
    assert (sent.kind, sent.status, sent.retry_after) == ("rate_limited", 429, None)


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, "auth"),
        (403, "auth"),
        (400, "client"),
        (404, "client"),
        (422, "client"),
        (408, "server"),
        (409, "server"),
        (500, "server"),
        (502, "server"),
        (503, "server"),
    ],
)
def test_an_http_error_is_classified_by_its_status(status: int, kind: str) -> None:
    """401/403 stop the judge (a key problem), other 4xx are the request's fault, 408/409/5xx are worth retrying."""
    error = status_error(status)
    sent = classify(failed(error), error)
    assert (sent.kind, sent.status) == (kind, status)
    refused = f"request refused: HTTP {status}: " if kind == "client" else f"HTTP {status}: "
    assert sent.error.startswith(f"{refused}OpenAI error:")


def test_a_timeout_is_a_timeout() -> None:
    """APITimeoutError (a subclass of APIConnectionError) is "no answer in time", not a connection failure."""
    error = openai.APITimeoutError(request=http_request())
    sent = classify(failed(error), error)
    assert (sent.kind, sent.status) == ("timeout", None)
    assert sent.error.startswith("timed out: OpenAI error:")


def test_a_refused_connection_is_a_connection_failure() -> None:
    """APIConnectionError: the server did not answer at all."""
    error = openai.APIConnectionError(request=http_request())
    sent = classify(failed(error), error)
    assert (sent.kind, sent.status) == ("connection", None)
    assert sent.error == "connection failed: OpenAI error: Connection error."


@pytest.mark.parametrize(
    "message", ["Content blocked by OpenAI filter", "Content blocked by Azure's content management filter"]
)
def test_a_content_filter_block_is_filtered(message: str) -> None:
    """HELM's content-filter results are "filtered", not a retryable failure."""
    sent = classify(failed(message, ErrorFlags(is_retriable=False, is_fatal=False)))
    assert sent.kind == "filtered" and message in sent.error


def test_a_non_retriable_failure_without_a_status_is_the_clients() -> None:
    """HELM's own "do not retry" flag, with no HTTP status to go on, is a client error: a refused request, its
    text beginning with its kind as every other failure's does."""
    sent = classify(failed("Prompt blocked by safety", ErrorFlags(is_retriable=False, is_fatal=False)))
    assert (sent.kind, sent.error) == ("client", f"{REQUEST_REFUSED}: Prompt blocked by safety")


def test_an_unexplained_failure_is_a_server_error_worth_retrying() -> None:
    """No status, no flags, no exception: retry it as the server's failure."""
    assert classify(failed("something went wrong")) == Sent("server", error="call error: something went wrong")


def test_a_success_without_completions_is_not_ok() -> None:
    """A successful result with no completion is no answer."""
    result = RequestResult(success=True, cached=False, completions=[], embedding=[])
    assert classify(result) == Sent("server", error="call error: no completion returned")


@pytest.mark.parametrize(("reason", "finish"), [("length", "length"), ("stop", "stop"), (None, None)])
def test_an_answer_is_ok_with_its_text_finish_reason_and_tokens(reason: str | None, finish: str | None) -> None:
    """A completion is "ok"; finish "length" tells the caller the reply was cut off."""
    sent = classify(answered('{"accuracy": {"score": 4', reason), tokens=57)
    assert sent == Sent("ok", text='{"accuracy": {"score": 4', finish=finish, tokens=57)


def test_an_answer_carries_its_input_and_output_tokens() -> None:
    sent = classify(answered("{}", "stop"), tokens=57, split=(50, 7))
    assert (sent.tokens, sent.tokens_in, sent.tokens_out) == (57, 50, 7)


def _every_failed_exchange() -> dict[str, Sent]:
    """An exchange of each kind classify names that ends a call with a recorded failure (auth stops the run)."""
    flags = ErrorFlags(is_retriable=False, is_fatal=False)
    errors: dict[str, tuple[RequestResult, BaseException | None]] = {
        "too long": (failed("x"), ReplyTooLong(99_999, "x" * 10)),
        "no text": (failed("x"), NoText("no message in the reply")),
        "not a completion": (failed("x"), NotACompletion("the endpoint answered 200 but not with a chat completion")),
        "unreadable 200": (failed("x"), ValueError("Expecting value")),
        "empty": (answered("  "), None),
        "timeout": (failed("t"), openai.APITimeoutError(request=http_request())),
        "connection": (failed("c"), openai.APIConnectionError(request=http_request())),
        "filtered": (failed("Content blocked by OpenAI filter", flags), None),
        "429": (failed(status_error(429)), status_error(429)),
        "context": (failed("maximum context length is 2048 tokens; you requested 2301 tokens"), None),
        "400": (failed(status_error(400)), status_error(400)),
        "non-retriable": (failed("Prompt blocked by safety", flags), None),
        "500": (failed(status_error(500)), status_error(500)),
        "no status": (failed("no completion returned"), None),
    }
    return {name: classify(result, error) for name, (result, error) in errors.items()}


@pytest.mark.parametrize(("name", "sent"), list(_every_failed_exchange().items()))
def test_every_failure_helms_path_records_has_its_kind_in_the_table(name: str, sent: Sent) -> None:
    """What ends a call on HELM's path (call.py records ``sent.error``) is named a kind of the table when its entry is
    written (reply/reading.py's ``entry_of``), never ``UNNAMED``."""
    assert sent.kind != "ok" and kind_of(sent.error) in KINDS and kind_of(sent.error) != UNNAMED, (name, sent.error)
