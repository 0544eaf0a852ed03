"""What came back from a judge server, in the terms a retry decision needs.

HELM's clients turn an SDK exception into an error string and drop the response's headers and ``usage``;
the tap stands in for a client's HELM cache to see both (the 429's Retry-After, the tokens spent), and
``classify`` names each exchange so judge_call.py can decide: wait, retry, repair, give up, or stop the run.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai
from helm.common.request import RequestResult

from helm_mtsamples_ext.throttle import parse_retry_after


@dataclass
class Sent:
    """One exchange with the server, classified."""

    kind: str  # ok | rate_limited | timeout | connection | server | client | auth | filtered | unavailable
    text: str = ""
    finish: str | None = None
    error: str = ""
    status: int | None = None
    retry_after: float | None = None
    tokens: int | None = None
    tokens_in: int | None = None  # the server's usage: prompt_tokens
    tokens_out: int | None = None  # completion_tokens


class CacheTap:
    """Stands in for a client's HELM cache to see what HELM drops: ``usage`` tokens in the cached response,
    and the SDK exception (status, Retry-After headers, timeout) that HELM turns into an error string."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache
        self._local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def get(self, request: Any, compute: Callable[[], Any]) -> Any:
        def tapped() -> Any:
            try:
                return compute()
            except Exception as e:
                self._local.error = e
                raise

        response, cached = self._cache.get(request, tapped)
        usage = response.get("usage") if isinstance(response, dict) else None
        self._local.tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        self._local.split = (
            (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
            if isinstance(usage, dict)
            else (None, None)
        )
        return response, cached

    def take(self) -> tuple[int | None, BaseException | None]:
        tokens, error = getattr(self._local, "tokens", None), getattr(self._local, "error", None)
        self._local.tokens = self._local.error = None
        return (tokens if isinstance(tokens, int) else None), error

    def take_split(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens of the last exchange on this thread, for what judging cost."""
        split = getattr(self._local, "split", (None, None))
        self._local.split = (None, None)
        return split


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def classify(
    result: RequestResult,
    error: BaseException | None = None,
    tokens: int | None = None,
    split: tuple[int | None, int | None] = (None, None),
) -> Sent:
    """What an exchange was, from HELM's result and, when the tap saw it, the SDK's exception."""
    if result.success and result.completions:
        completion = result.completions[0]
        reason = (completion.finish_reason or {}).get("reason")
        return Sent("ok", text=completion.text, finish=reason, tokens=tokens, tokens_in=split[0], tokens_out=split[1])
    message = result.error or "no completion returned"
    if isinstance(error, openai.APITimeoutError):
        return Sent("timeout", error=f"timed out: {message}")
    if isinstance(error, openai.APIConnectionError):
        return Sent("connection", error=f"connection failed: {message}")
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    headers = dict(error.response.headers) if isinstance(error, openai.APIStatusError) else None
    if status is None and "Error code: " in message:
        code = message.split("Error code: ", 1)[1][:3]
        status = int(code) if code.isdigit() else None
    if "blocked" in message.lower() and "filter" in message.lower():
        return Sent("filtered", error=f"reply cut off (content filter): {message}", tokens=tokens)
    if status == 429:
        return Sent("rate_limited", error=f"rate limited (HTTP 429): {message}", status=429,
                     retry_after=parse_retry_after(headers), tokens=tokens)  # fmt: skip
    if status in (401, 403):
        return Sent("auth", error=f"HTTP {status}: {message}", status=status)
    if status is not None and 400 <= status < 500 and status not in (408, 409):
        return Sent("client", error=f"HTTP {status}: {message}", status=status)
    if status is None and result.error_flags is not None and result.error_flags.is_retriable is False:
        return Sent("client", error=message)
    return Sent("server", error=f"HTTP {status}: {message}" if status else f"call error: {message}", status=status)
