"""What went wrong with a judge call through Inspect, named in the core's failure kinds.

Why apart from judges/inspect_calls/judge.py: that module sends the turns; this one reads what Inspect raised once its
retries were spent, or the output it gave without text, so a judge failing the same way fails under the same
name through every door (common/failure_kinds.py): "timed out", "connection failed", an HTTP status, a reply the
wire named ("not a chat completion", ...), never Inspect's or tenacity's own words, and never a key the error
repeats. "judge unavailable" is the breaker's (or a server's 5xx, as on HELM's path); an error nothing else names
is "failed in the door", with its class, so it reads as ours to fix, not the judge's.
"""

from __future__ import annotations

from typing import Protocol

import openai
from inspect_ai.model import ContentText, ModelOutput
from tenacity import RetryError

from helm_mtsamples_ext.common.failure_kinds import (
    CONNECTION_FAILED,
    NO_MESSAGE,
    TIMED_OUT,
    door_failure,
    http_failure,
)
from helm_mtsamples_ext.judges.core.reply.shape import reply_shape
from helm_mtsamples_ext.judges.core.sdk_errors import kind_of

__all__ = ["CallBounds", "GaveUp", "NamedReply", "error_kind", "failure_of", "named_reply", "origin", "shape_failure"]

_TIMEOUTS = ("AttemptTimeoutError", "StreamIdleTimeoutError")
"""Inspect's own timeouts (``inspect_ai.model._model``, not exported): an attempt past ``attempt_timeout``."""


class CallBounds(Protocol):
    """What a failure's text names of the call: its bounds, and the keys to scrub (inspect_calls.judge.JudgeCall)."""

    timeout: float
    max_wait: float

    def scrub(self, text: str) -> str: ...


class GaveUp(Exception):
    """A turn given up at ``judge_max_wait`` while Inspect was still retrying it, with the last error it retried
    (None: the first attempt was still running)."""

    def __init__(self, last: BaseException | None) -> None:
        super().__init__(str(last) if last is not None else "no reply")
        self.last = last


class NamedReply(Exception):
    """A judge's 200 that holds no verdict to read, named at the wire in the core's words (``completion_failure``'s
    ``not a chat completion``, ``error beside the reply``, ``no message in the reply``, ...; ``reply too long`` for a
    body past the wire's ceiling). Why an exception: the wire sees the body before Inspect parses it, and Inspect
    would otherwise fail on it in its own words (``TypeError``, ``ValidationError``) or keep it whole; raised, the
    call ends there, Inspect's retry is declined (the server answered: asking again gets the same) and the judgment
    fails under this name. ``text`` is what of the reply may be kept (clipped, scrubbed)."""

    def __init__(self, failure: str, text: str = "") -> None:
        super().__init__(failure)
        self.failure = failure
        self.text = text


def named_reply(error: BaseException) -> NamedReply | None:
    """The wire's ``NamedReply`` behind what Inspect raised (the SDK wraps a transport's error in
    ``APIConnectionError``, tenacity and our ``GaveUp`` wrap that), or None."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, NamedReply):
            return current
        if isinstance(current, RetryError) and current.last_attempt.failed:
            current = current.last_attempt.exception()
        elif isinstance(current, GaveUp):
            current = current.last
        else:
            current = current.__cause__ or current.__context__
    return None


def origin(error: BaseException) -> BaseException:
    """The error behind what Inspect raised: tenacity's ``RetryError`` holds the last attempt's, our ``GaveUp`` the
    last one Inspect retried, and Inspect's ``ModelGenerateError`` (whose text is the whole request, formats and
    all) the provider's as its cause."""
    if isinstance(error, RetryError) and error.last_attempt.failed:
        error = error.last_attempt.exception() or error
    if isinstance(error, GaveUp):
        error = error.last or TimeoutError()
    cause = error.__cause__
    return cause if not isinstance(error, openai.OpenAIError) and isinstance(cause, openai.OpenAIError) else error


def error_kind(error: BaseException) -> str:
    """What waiting can do about an error Inspect raised (core.sdk_errors.kind_of's kinds; Inspect's own timeouts
    are timeouts)."""
    error = origin(error)
    if type(error).__name__ in _TIMEOUTS:
        return "timeout"
    return kind_of(error)


def failure_of(error: BaseException, call: CallBounds) -> str:
    """The named failure for an exception Inspect raised once its retries were spent (the last attempt's, when
    tenacity wraps it), in the core's kinds; the details scrubbed of any key. A reply the wire named keeps its name:
    ``judge unavailable`` is only the breaker's, or an error no other kind fits."""
    named = named_reply(error)
    if named is not None:
        return call.scrub(named.failure)
    error = origin(error)
    if isinstance(error, (TimeoutError, openai.APITimeoutError)) or type(error).__name__ in _TIMEOUTS:
        return (
            f"{TIMED_OUT}: no reply within judge_timeout={call.timeout:g}s per attempt, "
            f"judge_max_wait={call.max_wait:g}s in all"
        )
    # another provider's error stays wrapped in Inspect's ModelGenerateError, which keeps its status and message
    lines = str(getattr(error, "provider_message", None) or error).strip().splitlines()
    said = call.scrub(lines[0] if lines else "")[:200]
    if isinstance(error, openai.APIConnectionError):
        return f"{CONNECTION_FAILED}: {said}"
    status = getattr(error, "status_code", None)
    # no status, no connection, no timeout: Inspect or our code raised on what it was handed (the door's failing)
    return http_failure(status, said) if status else door_failure(error, said)


def shape_failure(output: ModelOutput) -> str | None:
    """``reply_shape``'s name for a reply without text, read from Inspect's output put back in OpenAI's shape
    (Inspect keeps OpenAI's ``refusal`` as a ``ContentText`` marked ``refusal``), or None when it has text."""
    if not output.choices:
        return NO_MESSAGE
    message = output.choices[0].message
    parts = [ContentText(text=message.content)] if isinstance(message.content, str) else message.content
    texts = [p for p in parts if isinstance(p, ContentText)]
    refusal = "".join(p.text for p in texts if p.refusal)
    content = "".join(p.text for p in texts if not p.refusal)
    said = {"content": content, "refusal": refusal or None, "tool_calls": message.tool_calls or None}
    return reply_shape({"choices": [{"message": said}]})
