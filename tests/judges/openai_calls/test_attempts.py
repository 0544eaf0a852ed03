"""The rules of judges/openai_calls/attempts.py: which of the SDK's errors are retried, how often, and for how long,
on a clock
and a sleep of the test's own (no test waits out a backoff)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import openai
import pytest

from helm_mtsamples_ext.common.failure_kinds import (
    CONNECTION_FAILED,
    GAVE_UP_WAITING,
    JUDGE_UNAVAILABLE,
    RATE_LIMITED,
    REQUEST_REFUSED,
    SERVER_ERROR_REPEATS,
    TIMED_OUT,
    failure_kind,
)
from helm_mtsamples_ext.judges.core.throttle import Breaker
from helm_mtsamples_ext.judges.openai_calls.attempts import Budget, Failure, attempt
from tests.judges.sdk_errors import http_request, status_error

REPLY = {"choices": [{"message": {"role": "assistant", "content": "{}"}, "finish_reason": "stop"}]}


def timeout() -> openai.APITimeoutError:
    return openai.APITimeoutError(request=http_request())


def connection() -> openai.APIConnectionError:
    return openai.APIConnectionError(message="Connection refused", request=http_request())


@dataclass
class Server:
    """What the server answers, call by call (the last answer repeats), on a clock only its sleeps move."""

    answers: list[BaseException | dict[str, Any]]
    calls: int = 0
    now: float = 0.0
    slept: list[float] = field(default_factory=list)

    async def create(self) -> dict[str, Any]:
        answer = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def run(self, max_wait: float = 20.0, timeout: float = 2.0) -> Any:
        budget = Budget(timeout=timeout, deadline=self.now + max_wait)
        return asyncio.run(attempt(self.create, budget, clock=lambda: self.now, sleep=self.sleep))


def test_a_timeout_is_retried_once_then_fails_as_timed_out() -> None:
    server = Server([timeout()])
    assert server.run() == Failure(TIMED_OUT) and server.calls == 2
    again = Server([timeout(), REPLY])
    assert again.run() == REPLY and again.calls == 2


def test_judge_timeout_bounds_the_whole_exchange() -> None:
    """A reply that never comes is cut at judge_timeout by the door itself, whatever the client's own timeouts."""
    never = asyncio.Event()

    async def create() -> None:
        await never.wait()

    async def no_wait(seconds: float) -> None:
        pass

    assert asyncio.run(attempt(create, Budget(timeout=0.01, deadline=1e9), sleep=no_wait)) == Failure(TIMED_OUT)


def test_an_exchange_begun_near_the_deadline_is_cut_there_as_the_deadlines_failure() -> None:
    """judge_timeout is 5 s but 0.1 s is left of judge_max_wait: the exchange ends at the deadline, failed as the
    deadline's (not the judge's timeout), and the judge's breaker is told nothing (it had less than its timeout)."""
    never = asyncio.Event()

    async def create() -> None:
        await never.wait()

    breaker = Breaker(threshold=1, cooldown=60.0)
    start = time.monotonic()
    budget = Budget(timeout=5.0, deadline=start + 0.1)
    failed = asyncio.run(attempt(create, budget, breaker=breaker, prompt="p"))
    assert failed == Failure(f"{GAVE_UP_WAITING} within judge_max_wait: no verdict by then")
    assert time.monotonic() - start < 2.0
    assert breaker.admit() == (True, "")


def test_no_exchange_begins_past_the_deadline() -> None:
    server = Server([REPLY], now=30.0)
    failed = asyncio.run(attempt(server.create, Budget(2.0, deadline=20.0), clock=lambda: server.now))
    assert failed == Failure(f"{GAVE_UP_WAITING} within judge_max_wait: no verdict by then") and server.calls == 0


def test_a_timeout_is_retried_without_a_backoff() -> None:
    server = Server([timeout(), REPLY])
    assert server.run() == REPLY and server.slept == [0.0]


def test_a_429_waits_as_retry_after_asks() -> None:
    server = Server([status_error(429, {"Retry-After": "7"}), REPLY])
    assert server.run() == REPLY and server.slept == [7.0]


def test_a_429_asking_past_judge_max_wait_gives_up_at_once() -> None:
    server = Server([status_error(429, {"Retry-After": "60"})])
    failed = server.run(max_wait=20.0)
    assert isinstance(failed, Failure) and failed.status == 429
    assert failed.text.startswith(f"{GAVE_UP_WAITING} within judge_max_wait: {RATE_LIMITED} (HTTP 429)")
    assert server.calls == 1 and server.slept == []


def test_server_errors_are_retried_until_judge_max_wait() -> None:
    """Different 5xx each time (never the same one three times): retried, no wait begun past the deadline."""
    server = Server([status_error(500 + i % 4, body=f"error {i}") for i in range(200)])
    failed = server.run(max_wait=20.0)
    assert isinstance(failed, Failure) and failure_kind(failed.text) == JUDGE_UNAVAILABLE
    assert server.calls > 3 and sum(server.slept) <= 20.0


def test_the_same_server_error_three_times_ends_the_request() -> None:
    server = Server([status_error(500, body="cannot fit the prompt")])
    failed = server.run()
    assert isinstance(failed, Failure) and failed.status == 500 and server.calls == 3
    assert failed.text.startswith(f"{SERVER_ERROR_REPEATS}: {JUDGE_UNAVAILABLE}: HTTP 500")


def test_a_connection_error_is_retried() -> None:
    server = Server([connection(), REPLY])
    assert server.run() == REPLY and server.calls == 2
    down = Server([connection()])
    failed = down.run(max_wait=5.0)
    assert isinstance(failed, Failure) and failure_kind(failed.text) == CONNECTION_FAILED


def test_a_client_error_is_not_retried_and_keeps_its_status() -> None:
    """A 400 (a refused response_format among them) ends the request at once; the caller reads its status."""
    server = Server([status_error(400, body="response_format not supported")])
    failed = server.run()
    assert isinstance(failed, Failure) and failed.status == 400 and server.calls == 1
    assert failed.text.startswith(f"{REQUEST_REFUSED}: HTTP 400")


def test_a_key_the_error_repeats_is_scrubbed() -> None:
    server = Server([status_error(401, body="Incorrect API key provided: sk-secret-key")])
    scrub: Callable[[str], str] = lambda text: text.replace("sk-secret-key", "***")  # noqa: E731
    create: Callable[[], Awaitable[Any]] = server.create
    budget = Budget(timeout=2.0, deadline=20.0)  # on the server's clock, as every judgment's deadline is on its own
    failed = asyncio.run(attempt(create, budget, scrub, clock=lambda: server.now, sleep=server.sleep))
    assert isinstance(failed, Failure) and "sk-secret-key" not in failed.text and "***" in failed.text


@dataclass
class Judge:
    """One judge's server and its breaker, on the server's clock: each prompt is one ``attempt``."""

    server: Server
    breaker: Breaker = field(init=False)

    def __post_init__(self) -> None:
        self.breaker = Breaker(threshold=3, cooldown=10.0, clock=lambda: self.server.now)

    def ask(self, prompt: str, max_wait: float = 5.0) -> Any:
        budget = Budget(timeout=2.0, deadline=self.server.now + max_wait)
        clock, sleep = (lambda: self.server.now), self.server.sleep
        return asyncio.run(
            attempt(self.server.create, budget, clock=clock, sleep=sleep, breaker=self.breaker, prompt=prompt)
        )


def test_a_judge_that_died_fails_its_next_prompts_at_once_until_a_probe_gets_through() -> None:
    """Three prompts in a row lost (connections refused to the end): the fourth sends nothing and fails at once as
    the judge unavailable, naming the last error; after the cooldown one probe goes, and its reply closes it."""
    judge = Judge(Server([connection()]))
    for prompt in ("one", "two", "three"):
        assert CONNECTION_FAILED in judge.ask(prompt).text  # the third's retry already meets the open breaker
    sent = judge.server.calls
    refused = judge.ask("four")
    assert isinstance(refused, Failure) and judge.server.calls == sent
    assert refused.text.startswith(f"{JUDGE_UNAVAILABLE}: {CONNECTION_FAILED}")
    judge.server.answers.append(REPLY)  # the server is back
    judge.server.now += 10.0
    assert judge.ask("five") == REPLY and judge.ask("six") == REPLY


def test_one_prompts_retries_count_once_and_an_http_answer_means_alive() -> None:
    """A judge that answers others but never one prompt stays open to the others; a 4xx is an answer."""
    judge = Judge(Server([connection()]))
    assert isinstance(judge.ask("long", max_wait=20.0), Failure) and judge.server.calls > 3
    judge.server.answers[:] = [status_error(400, body="no")]
    judge.server.calls = 0
    for prompt in ("a", "b", "c", "d"):
        assert isinstance(judge.ask(prompt), Failure)
    assert judge.server.calls == 4, "every prompt was sent: a refusal is no sign of a dead judge"


def test_the_probe_retrying_a_server_error_is_not_refused_by_its_own_breaker() -> None:
    judge = Judge(Server([connection()]))
    for prompt in ("one", "two", "three"):
        judge.ask(prompt)
    judge.server.now += 10.0
    judge.server.answers[:] = [status_error(503, body="warming up"), REPLY]
    judge.server.calls = 0
    assert judge.ask("probe") == REPLY and judge.server.calls == 2


def test_a_cancelled_probe_lets_the_next_call_probe() -> None:
    """A note cancelled while it was the probe (the harness stopping a rollout) must not leave the judge closed."""
    never = asyncio.Event()
    judge = Judge(Server([connection()]))
    for prompt in ("one", "two", "three"):
        judge.ask(prompt)
    judge.server.now += 10.0

    async def hang() -> None:
        await never.wait()

    async def cancelled_probe() -> None:
        task = asyncio.create_task(attempt(hang, Budget(2.0, 1e9), breaker=judge.breaker, prompt="p"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_probe())
    judge.server.answers[:] = [REPLY]
    assert judge.ask("next") == REPLY
