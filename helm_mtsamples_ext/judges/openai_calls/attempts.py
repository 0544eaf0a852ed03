"""One request to a judge over an async OpenAI-compatible client, retried by HELM's path's rules, not the SDK's.

Why: the SDK's own retries (``max_retries``) count attempts whatever the fault: a judge that never answers cost
four timeouts and three backoffs per note, ``judge_max_wait`` bounded nothing, and a 429 got three tries
whatever its Retry-After said. The rules here are docs/judging.md's, as ``attempts.py`` applies them on HELM's
path: ``judge_timeout`` bounds each exchange whole (a reply dripping in is cut at it too), and so does the
judgment's deadline (an exchange begun just before it is cut there, and fails as the deadline's, not as the judge's
timeout); a timeout is retried ``timeout_retries`` times, at once (the timeout was the wait); a 429 (its
Retry-After honoured), a 5xx, a 408/409 and a connection error are retried with backoff until the judgment's
deadline (``judge_max_wait`` from its start), and a wait that would end past it is not begun; the same server error
``repeat_limit`` times in a row ends the request; any other error ends it at once. With a ``Breaker`` (throttle.py,
HELM's path's), a judge that left ``threshold`` prompts in a row unanswered (timeouts, lost connections, server
errors to the end) fails its next calls at once until one probe gets through,
so a judge that died mid-run costs seconds per note, not ``judge_max_wait``; a timeout while the judge answered
other calls is its load, never counted. The client is made with ``max_retries=0``. Duck-typed, so no SDK is
imported: an error is read by its class names and ``status_code``. Each failure begins with its kind
(common/failure_kinds.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from helm_mtsamples_ext.common.failure_kinds import (
    CONNECTION_FAILED,
    GAVE_UP_WAITING,
    JUDGE_UNAVAILABLE,
    SERVER_ERROR_REPEATS,
    TIMED_OUT,
    http_failure,
)
from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.judges.core.health import JudgeHealth
from helm_mtsamples_ext.judges.core.sdk_errors import kind_of, status_of
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.core.throttle import Breaker, backoff, parse_retry_after

RATE_LIMIT_BASE, RATE_LIMIT_CAP = 1.0, 30.0
"""Backoff after a 429 without Retry-After, as ``attempts.py`` waits on HELM's path."""


@dataclass(frozen=True)
class Budget:
    """How long one judgment may take: each exchange, and all its waits (``deadline`` on ``clock``'s scale)."""

    timeout: float
    deadline: float
    timeout_retries: int = CallSettings.timeout_retries
    repeat_limit: int = CallSettings.repeat_limit
    retry_base: float = CallSettings.retry_base
    max_wait: float | None = None  # judge_max_wait, named in the failure of a judgment its deadline ended

    def past_deadline(self) -> str:
        """The failure of a judgment whose deadline came before a reply (an exchange cut there, or none begun)."""
        bound = f" ({self.max_wait:g} s)" if self.max_wait is not None else ""
        return f"{GAVE_UP_WAITING} within judge_max_wait{bound}: no verdict by then"


@dataclass(frozen=True)
class Failure:
    """Why a request got no reply: the recorded failure, and the last HTTP status (a format refusal reads it)."""

    text: str
    status: int | None = None


def failure_of(error: BaseException, scrub: Callable[[str], str]) -> str:
    """The recorded failure for an exception the client raised (a key it repeats is scrubbed)."""
    kind, status = kind_of(error), status_of(error)
    said = scrub(str(error)).strip()[:200]
    if kind == "timeout":
        return TIMED_OUT
    if kind == "connection":
        return f"{CONNECTION_FAILED}: {said}"
    return http_failure(status, said) if status else f"{JUDGE_UNAVAILABLE}: {type(error).__name__}: {said}"


def _retry_after(error: BaseException) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    return parse_retry_after(dict(headers)) if headers is not None else None


async def attempt(
    create: Callable[[], Awaitable[Any]],
    budget: Budget,
    scrub: Callable[[str], str] = str,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    name: str = "?",
    final_if: Callable[[str], bool] | None = None,
    breaker: Breaker | None = None,
    prompt: str | None = None,
) -> Any:
    """``create()``'s reply, retried through what waiting fixes within ``budget``; a ``Failure`` when none came.
    Each wait is one warning line naming the judge (``name``), as on HELM's path. An error whose words
    ``final_if`` accepts is not retried (a refusal of the request's format: the caller asks in another).
    ``breaker`` is the judge's, told of every exchange; ``prompt`` makes one prompt's retries count once."""
    health = JudgeHealth(breaker, prompt)
    timeouts, retries, repeats = 0, 0, 0
    last: tuple[int | None, str] | None = None
    while True:
        closed = health.admit()
        if closed is not None:
            return Failure(closed)
        limit = min(budget.timeout, budget.deadline - clock())  # judge_timeout, or what is left of the judgment
        if limit <= 0:
            health.released()
            return Failure(budget.past_deadline())
        try:
            reply = await asyncio.wait_for(create(), limit)
        except asyncio.CancelledError:
            health.released()
            raise
        except Exception as error:  # every fault is a named failure or a retry, never a crash
            fault = error
        else:
            health.answered()
            return reply
        kind, status, failure = kind_of(fault), status_of(fault), failure_of(fault, scrub)
        if kind == "timeout" and limit < budget.timeout:
            # The judgment's deadline cut the exchange, not judge_timeout: its failure, and no word on the judge's
            # health (it had less than judge_timeout to answer).
            health.released()
            return Failure(budget.past_deadline())
        health.told(kind, failure)
        if kind == "final" or (final_if is not None and status is not None and final_if(str(fault))):
            return Failure(failure, status)
        timeouts += kind == "timeout"
        if kind == "timeout" and timeouts > budget.timeout_retries:
            return Failure(failure, status)
        if kind == "server":
            repeats = repeats + 1 if (status, failure) == last else 1
            last = (status, failure)
            if repeats >= budget.repeat_limit:
                ended = f"{SERVER_ERROR_REPEATS}: {failure}"
                health.ended(ended)
                return Failure(ended, status)
        retries += 1
        asked = _retry_after(fault) if kind == "rate_limited" else None
        if asked is not None:
            wait = asked
        elif kind == "rate_limited":
            wait = backoff(retries, RATE_LIMIT_BASE, cap=RATE_LIMIT_CAP)
        elif kind == "timeout":
            wait = 0.0  # the timeout was the wait: the server had judge_timeout to answer
        else:
            wait = backoff(retries, budget.retry_base)
        if clock() + wait > budget.deadline:
            if kind == "rate_limited":
                failure = f"{GAVE_UP_WAITING} within judge_max_wait: {failure}"
            if kind == "server":
                health.ended(failure)
            return Failure(failure, status)
        hwarn(f"judge {name}: {failure[:160]}; retrying in {wait:.1f} s (attempt {retries + 1}, up to judge_max_wait)")
        await sleep(wait)


__all__ = ["Budget", "Failure", "attempt", "failure_of"]
