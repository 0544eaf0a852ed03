"""The pacing rules of throttle.py: Retry-After, backoff, the per-endpoint gate and the breaker."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from email.utils import formatdate

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helm_mtsamples_ext.judges.core import throttle
from helm_mtsamples_ext.judges.core.throttle import (
    MAX_RETRY_AFTER,
    Breaker,
    EndpointGate,
    GateTimeout,
    backoff,
    parse_retry_after,
)

NOW = 1_700_000_000.0


class FakeClock:
    """A clock that moves only when a test moves it."""

    def __init__(self, start: float = 0.0) -> None:
        self.now = [start]
        self.calls = 0

    def __call__(self) -> float:
        self.calls += 1
        return self.now[0]

    def advance(self, seconds: float) -> None:
        self.now[0] += seconds


# ---------------------------------------------------------------- Retry-After


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "55"}, 55.0),
        ({"Retry-After": " 1.5 "}, 1.5),
        ({"retry-after-ms": "2500"}, 2.5),
        ({"Retry-After": "55", "retry-after-ms": "250"}, 0.25),
        ({"RETRY-AFTER": "9"}, 9.0),
        ({"Retry-After-Ms": "9000"}, 9.0),
        ({"retry-after-ms": "soon", "Retry-After": "4"}, 4.0),
        ({"Retry-After": "0"}, 0.0),
    ],
    ids=["seconds", "fraction", "ms", "ms-wins", "upper-case", "ms-mixed-case", "bad-ms-falls-back", "zero"],
)
def test_retry_after_in_seconds_or_milliseconds_is_seconds_to_wait(headers: dict[str, str], expected: float) -> None:
    """``retry-after-ms`` wins over ``Retry-After``; header names are matched case-insensitively."""
    assert parse_retry_after(headers) == pytest.approx(expected)


def test_retry_after_as_an_http_date_is_seconds_from_now() -> None:
    """An HTTP date means "come back then": the wait is the time from ``now`` to that date."""
    headers = {"Retry-After": formatdate(NOW + 30, usegmt=True)}
    assert parse_retry_after(headers, now=NOW) == pytest.approx(30.0, abs=1.0)


def test_retry_after_as_an_http_date_in_the_past_is_no_wait() -> None:
    """A date already past asks for no wait, never a negative one."""
    headers = {"Retry-After": formatdate(NOW - 120, usegmt=True)}
    assert parse_retry_after(headers, now=NOW) == 0.0


@pytest.mark.parametrize(
    "headers",
    [
        None,
        {},
        {"Content-Type": "application/json"},
        {"Retry-After": "soon"},
        {"Retry-After": ""},
        {"Retry-After": "nan"},
    ],
    ids=["none", "empty", "absent", "garbage", "blank", "nan"],
)
def test_absent_or_unreadable_retry_after_is_none(headers: dict[str, str] | None) -> None:
    """Without a readable Retry-After there is no server-given wait (the caller falls back to backoff)."""
    assert parse_retry_after(headers, now=NOW) is None


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Retry-After": "-5"}, 0.0),
        ({"retry-after-ms": "-100"}, 0.0),
        ({"Retry-After": "999999"}, MAX_RETRY_AFTER),
        ({"retry-after-ms": "1e12"}, MAX_RETRY_AFTER),
        ({"Retry-After": "inf"}, MAX_RETRY_AFTER),
    ],
    ids=["negative", "negative-ms", "huge", "huge-ms", "infinite"],
)
def test_retry_after_is_clamped_between_zero_and_the_maximum(headers: dict[str, str], expected: float) -> None:
    """A negative wait is no wait; a wait beyond MAX_RETRY_AFTER is MAX_RETRY_AFTER."""
    assert parse_retry_after(headers, now=NOW) == expected


# ---------------------------------------------------------------- backoff


@settings(max_examples=200, deadline=None)
@given(
    attempt=st.integers(min_value=1, max_value=60),
    base=st.floats(min_value=0.0, max_value=30.0),
    cap=st.floats(min_value=0.0, max_value=120.0),
)
def test_backoff_is_within_zero_and_the_capped_exponential(attempt: int, base: float, cap: float) -> None:
    """Full jitter: a retry waits anywhere from 0 to min(cap, base * 2**(attempt-1))."""
    assert 0.0 <= backoff(attempt, base, cap) <= min(cap, base * 2 ** (attempt - 1))


@pytest.mark.parametrize(
    ("attempt", "base", "cap", "ceiling"),
    [(1, 0.5, 60.0, 0.5), (2, 0.5, 60.0, 1.0), (4, 0.5, 60.0, 4.0), (8, 0.5, 60.0, 60.0), (3, 2.0, 5.0, 5.0)],
)
def test_backoff_ceiling_doubles_per_attempt_up_to_the_cap(
    monkeypatch: pytest.MonkeyPatch, attempt: int, base: float, cap: float, ceiling: float
) -> None:
    """The jitter's upper bound is base doubled per earlier attempt, never above ``cap``."""
    monkeypatch.setattr(throttle.random, "uniform", lambda low, high: high)
    assert backoff(attempt, base, cap) == ceiling


def test_backoff_is_jittered_not_fixed() -> None:
    """Retries of many callers spread out: draws of one attempt are not all the same."""
    draws = {backoff(5, 1.0) for _ in range(50)}
    assert len(draws) > 1 and min(draws) < 8.0


# ---------------------------------------------------------------- breaker


def opened(clock: FakeClock, threshold: int = 3, cooldown: float = 60.0) -> Breaker:
    breaker = Breaker(threshold=threshold, cooldown=cooldown, clock=clock)
    for n in range(threshold):
        breaker.unanswered(f"timed out #{n + 1}")
    return breaker


def test_a_closed_breaker_admits_every_call() -> None:
    """Below the threshold every call goes, however many callers ask."""
    breaker = Breaker(threshold=3, clock=FakeClock())
    breaker.unanswered("timed out")
    breaker.unanswered("timed out")
    assert [breaker.admit() for _ in range(5)] == [(True, "")] * 5


def test_threshold_unanswered_calls_in_a_row_open_the_breaker() -> None:
    """After ``threshold`` timeouts in a row, calls fail at once with the last error."""
    breaker = opened(FakeClock())
    assert breaker.admit() == (False, "timed out #3")
    assert breaker.admit() == (False, "timed out #3")


def test_an_answer_resets_the_count_of_unanswered_calls() -> None:
    """Only unanswered calls IN A ROW open it: an answer in between starts the count again."""
    breaker = Breaker(threshold=3, clock=FakeClock())
    breaker.unanswered("timed out")
    breaker.unanswered("timed out")
    breaker.answered()
    breaker.unanswered("timed out")
    breaker.unanswered("timed out")
    assert breaker.admit() == (True, "")


def test_an_open_breaker_refuses_until_the_cooldown_ends() -> None:
    """During the cooldown no call goes, not even a probe."""
    clock = FakeClock()
    breaker = opened(clock, cooldown=60.0)
    clock.advance(59.9)
    assert breaker.admit() == (False, "timed out #3")


def test_after_the_cooldown_exactly_one_caller_is_admitted_as_probe() -> None:
    """Half-open: the first caller probes the judge, the others still fail fast."""
    clock = FakeClock()
    breaker = opened(clock, cooldown=60.0)
    clock.advance(60.0)
    assert [breaker.admit() for _ in range(3)] == [(True, ""), (False, "timed out #3"), (False, "timed out #3")]


def test_concurrent_callers_after_the_cooldown_admit_a_single_probe() -> None:
    """Among callers racing in the half-open state, exactly one is admitted."""
    clock = FakeClock()
    breaker = opened(clock)
    clock.advance(60.0)
    callers = 8
    barrier = threading.Barrier(callers)
    results: list[bool] = []
    lock = threading.Lock()

    def call() -> None:
        barrier.wait(timeout=10)
        admitted, _ = breaker.admit()
        with lock:
            results.append(admitted)

    threads = [threading.Thread(target=call) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert sorted(results) == [False] * (callers - 1) + [True]


def test_a_failed_probe_reopens_the_breaker_for_another_cooldown() -> None:
    """A probe that times out again keeps the judge off for a full cooldown from then."""
    clock = FakeClock()
    breaker = opened(clock, cooldown=60.0)
    clock.advance(60.0)
    assert breaker.admit() == (True, "")
    breaker.unanswered("still timing out")
    assert breaker.admit() == (False, "still timing out")
    clock.advance(59.0)
    assert breaker.admit() == (False, "still timing out")
    clock.advance(1.0)
    assert breaker.admit() == (True, "")


def test_a_successful_probe_closes_the_breaker() -> None:
    """A probe that is answered lets every caller through again."""
    clock = FakeClock()
    breaker = opened(clock)
    clock.advance(60.0)
    assert breaker.admit() == (True, "")
    breaker.answered()
    assert [breaker.admit() for _ in range(4)] == [(True, "")] * 4


def test_a_released_probe_lets_another_probe_in() -> None:
    """A probe that ended without telling anything (a deadline) frees the probe slot for one other caller."""
    clock = FakeClock()
    breaker = opened(clock)
    clock.advance(60.0)
    assert breaker.admit() == (True, "")
    assert breaker.admit()[0] is False
    breaker.released()
    assert [breaker.admit()[0] for _ in range(2)] == [True, False]


# ---------------------------------------------------------------- endpoint gate


def holding(gate: EndpointGate, calls: int, deadline: float = 1e9) -> EndpointGate:
    for _ in range(calls):
        gate.acquire(deadline)
    return gate


@pytest.mark.parametrize(
    ("max_concurrency", "in_flight", "limit_after"),
    [(8, 8, 4), (8, 6, 3), (8, 3, 1), (8, 1, 1), (8, 0, 1), (16, 10, 5)],
)
def test_a_429_halves_the_limit_relative_to_the_calls_in_flight(
    max_concurrency: int, in_flight: int, limit_after: int
) -> None:
    """Adaptive concurrency: after a 429 half as many calls as were in flight may go at once (at least one)."""
    gate = holding(EndpointGate(max_concurrency, clock=FakeClock()), in_flight)
    gate.throttled(retry_after=1.0, fallback_wait=5.0)
    assert (gate.limit, gate.rate_limited) == (limit_after, 1)


def test_a_429_never_raises_the_limit() -> None:
    """A second 429 with more calls in flight than the lowered limit still lowers it, never raises it."""
    gate = holding(EndpointGate(8, clock=FakeClock()), 8)
    gate.throttled(None, 1.0)
    gate.throttled(None, 1.0)
    assert gate.limit == 2


@pytest.mark.parametrize(
    ("retry_after", "fallback", "blocked_until"),
    [(30.0, 5.0, 130.0), (None, 5.0, 105.0), (0.0, 5.0, 100.0)],
    ids=["retry-after", "fallback", "retry-after-zero"],
)
def test_a_429_blocks_the_endpoint_for_retry_after_or_the_fallback(
    retry_after: float | None, fallback: float, blocked_until: float
) -> None:
    """Everyone waits what the server said, or the fallback when it said nothing."""
    gate = EndpointGate(4, clock=FakeClock(100.0))
    gate.throttled(retry_after, fallback)
    assert gate.blocked_until == blocked_until


def test_a_shorter_retry_after_never_shortens_a_block() -> None:
    """A later 429 asking for less does not lift the wait an earlier one asked for."""
    gate = EndpointGate(4, clock=FakeClock(100.0))
    gate.throttled(60.0, 1.0)
    gate.throttled(5.0, 1.0)
    assert gate.blocked_until == 160.0


def test_successes_grow_the_limit_by_one_per_run_and_never_above_the_maximum() -> None:
    """After ``grow_after`` successes the limit rises by one, up to max_concurrency and no further."""
    gate = holding(EndpointGate(4, grow_after=3, clock=FakeClock()), 4)
    gate.throttled(None, 0.0)
    assert gate.limit == 2
    limits = []
    for _ in range(12):
        gate.succeeded()
        limits.append(gate.limit)
    assert limits == [2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4]


def test_a_429_restarts_the_run_of_successes() -> None:
    """Successes before a 429 do not count towards growing the limit after it."""
    gate = holding(EndpointGate(8, grow_after=3, clock=FakeClock()), 8)
    gate.throttled(None, 0.0)
    gate.succeeded()
    gate.succeeded()
    gate.throttled(None, 0.0)
    assert gate.limit == 2
    limits = []
    for _ in range(3):
        gate.succeeded()
        limits.append(gate.limit)
    assert limits == [2, 2, 3]


def test_a_capacity_the_server_states_caps_the_limit_for_good() -> None:
    """The server said it takes 2 at once: the limit comes down to 2 and successes never grow it past that."""
    gate = EndpointGate(16, grow_after=1, clock=FakeClock())
    assert gate.learned(2, "llama.cpp") and (gate.limit, gate.max_concurrency) == (2, 2)
    for _ in range(5):
        gate.succeeded()
    assert gate.limit == 2 and gate.capacity_source == "llama.cpp"


def test_a_capacity_above_the_configured_one_changes_nothing() -> None:
    gate = EndpointGate(4, clock=FakeClock())
    assert not gate.learned(8, "llama.cpp") and (gate.limit, gate.max_concurrency, gate.capacity_source) == (4, 4, "")


def test_overload_halves_the_limit_once_per_round_of_calls() -> None:
    """Calls sent together time out together: the first of a round halves the limit, the rest of it do not; a
    call of the next round halves it again, never below one."""
    gate = EndpointGate(16, clock=FakeClock())
    round_0 = gate.generation
    assert [gate.overloaded(round_0) for _ in range(3)] == [8, None, None]
    lowered = [gate.overloaded(gate.generation) for _ in range(5)]
    assert lowered == [4, 2, 1, None, None] and gate.limit == 1


def test_successes_after_overload_grow_the_limit_again() -> None:
    gate = EndpointGate(4, grow_after=2, clock=FakeClock())
    gate.overloaded(gate.generation)
    for _ in range(2):
        gate.succeeded()
    assert gate.limit == 3


def test_a_breaker_counts_the_answers_it_is_told_of() -> None:
    breaker = Breaker(3, 60.0, clock=FakeClock())
    breaker.answered()
    breaker.unanswered("timed out")
    breaker.answered()
    assert breaker.answers == 2


@pytest.mark.timeout(10)
def test_a_block_beyond_the_deadline_times_out_at_once() -> None:
    """When the endpoint asked to wait past the caller's deadline, acquire gives up without waiting."""
    clock = FakeClock(0.0)
    gate = EndpointGate(4, clock=clock)
    gate.throttled(30.0, 1.0)
    clock.calls = 0
    with pytest.raises(GateTimeout, match="asked to wait 30 s"):
        gate.acquire(deadline=10.0)
    assert clock.calls == 1 and gate.in_flight == 0


@pytest.mark.timeout(10)
def test_acquire_beyond_the_limit_with_a_deadline_past_times_out() -> None:
    """With every slot taken and no time left, acquire fails instead of over-running the limit."""
    clock = FakeClock(100.0)
    gate = holding(EndpointGate(2, clock=clock), 2)
    with pytest.raises(GateTimeout, match="no free slot"):
        gate.acquire(deadline=99.0)
    assert gate.in_flight == 2


@pytest.mark.timeout(10)
def test_a_caller_goes_once_the_block_has_passed() -> None:
    """A block shorter than the deadline is waited out, then the call goes."""
    ticks: Iterator[float] = iter([0.0, 0.0, 1.0, 1.0, 1.0])
    gate = EndpointGate(4, clock=lambda: next(ticks))
    gate.throttled(0.01, 1.0)
    gate.acquire(deadline=10.0)
    assert gate.in_flight == 1


class SignallingClock:
    """time.monotonic that sets ``reading`` each time it is read (the gate reads it just before waiting)."""

    def __init__(self) -> None:
        self.reading = threading.Event()

    def __call__(self) -> float:
        self.reading.set()
        return time.monotonic()


def run_in_thread(target: Callable[[], None]) -> tuple[threading.Thread, list[BaseException | None]]:
    outcome: list[BaseException | None] = []

    def body() -> None:
        try:
            target()
            outcome.append(None)
        except BaseException as e:  # handed back to the test
            outcome.append(e)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, outcome


@pytest.mark.timeout(20)
def test_a_release_wakes_a_caller_waiting_for_a_slot() -> None:
    """A caller waiting at the limit gets the slot as soon as another call ends, long before its deadline."""
    clock = SignallingClock()
    gate = holding(EndpointGate(1, clock=clock), 1)
    clock.reading.clear()
    thread, outcome = run_in_thread(lambda: gate.acquire(time.monotonic() + 60.0))
    assert clock.reading.wait(timeout=10)
    gate.release()  # takes the gate's lock, so the waiter is already inside its wait
    thread.join(timeout=10)
    assert outcome == [None] and gate.in_flight == 1


@pytest.mark.timeout(20)
def test_a_grown_limit_wakes_a_caller_waiting_for_a_slot() -> None:
    """When successes raise the limit, a caller waiting for a slot goes at once."""
    clock = SignallingClock()
    gate = holding(EndpointGate(2, grow_after=1, clock=clock), 2)
    gate.throttled(0.0, 0.0)
    assert gate.limit == 1
    clock.reading.clear()
    thread, outcome = run_in_thread(lambda: gate.acquire(time.monotonic() + 60.0))
    assert clock.reading.wait(timeout=10)
    gate.release()  # in flight 1 = limit 1: the waiter still waits
    gate.succeeded()  # limit 2: room for it
    thread.join(timeout=10)
    assert outcome == [None] and gate.in_flight == 2


@pytest.mark.timeout(20)
def test_a_declared_rpm_refuses_a_call_it_has_no_room_for_before_the_deadline() -> None:
    """judge_rpm=2: two calls go, a third within the minute times out and gives its slot back."""
    gate = EndpointGate(4, rpm=2)
    gate.acquire(time.monotonic() + 5.0)
    gate.acquire(time.monotonic() + 5.0)
    with pytest.raises(GateTimeout, match="judge_rpm"):
        gate.acquire(time.monotonic() + 0.2)
    assert gate.in_flight == 2
    gate.release()
    gate.release()
    assert gate.in_flight == 0


@pytest.mark.parametrize(
    ("waits", "told"),
    [([55.0], [55.0]), ([55.0, 55.0], [55.0, None]), ([5.0, 60.0], [5.0, 60.0]), ([60.0, 5.0], [60.0, None])],
    ids=["one 429", "the same wait again", "a longer wait", "a shorter wait"],
)
def test_only_a_429_that_moves_the_endpoints_wait_is_worth_a_line(waits: list[float], told: list[float | None]) -> None:
    """Sixteen calls told the same Retry-After make one line, not sixteen."""
    gate = EndpointGate(4, clock=FakeClock(100.0))
    assert [gate.throttled(wait, 1.0) for wait in waits] == told


def test_calls_waiting_for_the_endpoint_hear_how_long_at_least_every_notice_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(throttle, "NOTICE_EVERY", 0.05)
    lines: list[str] = []
    gate = EndpointGate(4, name="judge endpoint http://x/v1", notice=lines.append)
    gate.throttled(0.3, 1.0)
    gate.acquire(time.monotonic() + 5.0)
    gate.release()
    assert lines and all(line.startswith("judge endpoint http://x/v1: calls still waiting") for line in lines)


def test_one_prompts_retries_count_once_so_a_judge_answering_others_stays_admitted() -> None:
    """A judge that never answers one long prompt but answers the rest is alive: that prompt's timeouts and
    retries count as one unanswered prompt, and only different prompts unanswered in a row open the breaker."""
    breaker = Breaker(threshold=3, clock=FakeClock())
    for _ in range(5):
        breaker.unanswered("timed out", "the long prompt")
    breaker.unanswered("timed out", "another silent prompt")
    assert breaker.admit() == (True, "")
    breaker.unanswered("timed out", "a third")
    assert breaker.admit() == (False, "timed out")


def test_a_probe_for_the_same_prompt_that_times_out_again_reopens_the_breaker() -> None:
    """Once open, a probe is counted whatever its prompt: a dead judge stays refused for another cooldown."""
    clock = FakeClock()
    breaker = Breaker(threshold=2, cooldown=60.0, clock=clock)
    breaker.unanswered("timed out", "p1")
    breaker.unanswered("timed out", "p2")
    clock.now[0] += 61
    assert breaker.admit() == (True, "")
    breaker.unanswered("timed out again", "p2")
    assert breaker.admit() == (False, "timed out again")
