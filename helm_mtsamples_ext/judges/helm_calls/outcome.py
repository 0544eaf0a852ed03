"""What an exchange with a judge server was, in the terms a retry decision needs.

``classify`` names each exchange from HELM's result and, when the cache gate (cache_gate.py) saw it, the
exception raised while the reply was fetched and read, so call.py can decide: wait, retry, repair, give up,
or stop the run. Each failure begins with its kind (common/failure_kinds.py). A prompt too long for the judge's
context is named apart (``CONTEXT_FAILURE``): no re-run fixes it, only a larger context.
"""

from __future__ import annotations

from dataclasses import dataclass

import openai
from helm.common.request import RequestResult

from helm_mtsamples_ext.common.failure_kinds import (
    API_ROOT,
    CONNECTION_FAILED,
    CONTEXT_STATUS,
    EMPTY_REPLY,
    NOT_A_COMPLETION,
    REPLY_CUT_OFF,
    REQUEST_REFUSED,
    TIMED_OUT,
    context_failure,
    http_failure,
)
from helm_mtsamples_ext.judges.core.reply.served_model import NOT_REPORTED, ServedModel
from helm_mtsamples_ext.judges.core.reply.shape import NoText
from helm_mtsamples_ext.judges.core.throttle import parse_retry_after
from helm_mtsamples_ext.judges.helm_calls.cache_gate import NotACompletion, NotCached, ReplyTooLong, clip


@dataclass
class Sent:
    """One exchange with the server, classified."""

    kind: str  # ok | rate_limited | timeout | connection | server | client | auth | filtered | unavailable
    # | context (prompt too long for the judge) | not_completion | too_long | no_text (refused, empty, tool call)
    text: str = ""
    finish: str | None = None
    error: str = ""
    status: int | None = None
    retry_after: float | None = None
    tokens: int | None = None
    tokens_in: int | None = None  # the server's usage: prompt_tokens
    tokens_out: int | None = None  # completion_tokens
    served: ServedModel = NOT_REPORTED  # the model and system_fingerprint the reply named (served_model.py)


def classify(
    result: RequestResult,
    error: BaseException | None = None,
    tokens: int | None = None,
    split: tuple[int | None, int | None] = (None, None),
) -> Sent:
    """What an exchange was, from HELM's result and, when the tap saw it, the exception raised while the
    server's reply was fetched and read (``error``: the SDK's, or HELM failing to read a non-completion)."""
    if isinstance(error, ReplyTooLong):
        return Sent("too_long", text=error.head, error=str(error), tokens=tokens)
    if isinstance(error, NoText):
        return Sent("no_text", error=str(error))
    if isinstance(error, NotACompletion):
        return Sent("not_completion", error=f"{NOT_A_COMPLETION}: {error}; {API_ROOT}")
    if error is not None and not isinstance(error, (openai.OpenAIError, NotCached)):
        # HELM's client could not read the reply (the SDK hands back an HTML page as a str): not a completion
        return Sent(
            "not_completion",
            error=f"{NOT_A_COMPLETION}: the endpoint's 200 could not be read ({type(error).__name__}: "
            f"{clip(str(error), 200)}); {API_ROOT}",
        )
    if result.success and result.completions:
        completion = result.completions[0]
        if not isinstance(completion.text, str) or not completion.text.strip():  # defensive: reply_shape names it
            return Sent("no_text", error=EMPTY_REPLY, tokens=tokens, tokens_in=split[0], tokens_out=split[1])
        reason = (completion.finish_reason or {}).get("reason")
        return Sent("ok", text=completion.text, finish=reason, tokens=tokens, tokens_in=split[0], tokens_out=split[1])
    message = result.error or "no completion returned"
    if isinstance(error, openai.APITimeoutError):
        return Sent("timeout", error=f"{TIMED_OUT}: {message}")
    if isinstance(error, openai.APIConnectionError):
        return Sent("connection", error=f"{CONNECTION_FAILED}: {message}")
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    headers = dict(error.response.headers) if isinstance(error, openai.APIStatusError) else None
    if status is None and "Error code: " in message:
        code = message.split("Error code: ", 1)[1][:3]
        status = int(code) if code.isdigit() else None
    if "blocked" in message.lower() and "filter" in message.lower():
        return Sent("filtered", error=f"{REPLY_CUT_OFF} (content filter): {message}", tokens=tokens)
    if status == 429:
        return Sent("rate_limited", error=http_failure(429, message), status=429,
                     retry_after=parse_retry_after(headers), tokens=tokens)  # fmt: skip
    if status in (401, 403):
        return Sent("auth", error=f"HTTP {status}: {message}", status=status)
    context = context_failure(message) if status is None or status in CONTEXT_STATUS or status >= 500 else None
    if context is not None:
        return Sent("context", error=context, status=status)
    if status is not None and 400 <= status < 500 and status not in (408, 409):
        return Sent("client", error=http_failure(status, message), status=status)
    if status is None and result.error_flags is not None and result.error_flags.is_retriable is False:
        return Sent("client", error=f"{REQUEST_REFUSED}: {message}")
    return Sent("server", error=f"HTTP {status}: {message}" if status else f"call error: {message}", status=status)
