"""The rules of fanout.py: calls go to their endpoint's pool, few notes are open at once, a failure stops all."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from helm_mtsamples_ext.judges.helm_calls.fanout import EndpointWait, FanOut, status_line


def test_each_note_gets_its_calls_results_in_order() -> None:
    fanout = FanOut(["a", "b"], max_concurrency=2)
    calls: Callable[[int], list[tuple[str, Callable[[], str]]]] = lambda n: [  # noqa: E731
        ("a", lambda: f"{n}-a"),
        ("b", lambda: f"{n}-b"),
    ]
    assert sorted(fanout.run(range(5), calls)) == [(n, [f"{n}-a", f"{n}-b"]) for n in range(5)]


def test_a_note_without_calls_is_done_at_once() -> None:
    assert list(FanOut(["a"], max_concurrency=1).run([7], lambda n: [])) == [(7, [])]


def test_no_more_than_window_notes_are_open_at_once() -> None:
    """A note's calls (and its prompt) are only made when it enters the window, so memory stays bounded."""
    opened, closed, most_open = [0], [0], [0]

    def calls(n: int) -> list[tuple[str, Callable[[], int]]]:
        opened[0] += 1
        most_open[0] = max(most_open[0], opened[0] - closed[0])
        return [("a", lambda: n)]

    for _ in FanOut(["a"], max_concurrency=4, window=3).run(range(50), calls):
        closed[0] += 1
    assert (closed[0], most_open[0]) == (50, 3)


def test_calls_in_flight_per_endpoint_reach_its_limit_and_no_more() -> None:
    """Eight calls to endpoint a with a limit of 4: four run at once (a barrier of 4 is passed), never five."""
    barrier = threading.Barrier(4, timeout=5)
    lock, running, most = threading.Lock(), [0], [0]

    def call() -> int:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        barrier.wait()
        with lock:
            running[0] -= 1
        return 1

    results = list(FanOut(["a"], max_concurrency=4).run(range(8), lambda n: [("a", call)]))
    assert (len(results), most[0]) == (8, 4)


def test_a_blocked_endpoint_does_not_hold_back_another() -> None:
    """Endpoint a's only thread is stuck; every note's call to b still completes."""
    release = threading.Event()
    fanout = FanOut(["a", "b"], max_concurrency=1, window=10)
    done_b: list[int] = []

    def b_call(n: int) -> Callable[[], int]:
        def call() -> int:
            done_b.append(n)
            if len(done_b) == 5:
                release.set()
            return n

        return call

    calls: Callable[[int], list[tuple[str, Callable[[], object]]]] = lambda n: [  # noqa: E731
        ("a", lambda: release.wait(5)),
        ("b", b_call(n)),
    ]
    results = list(fanout.run(range(5), calls))
    assert sorted(done_b) == list(range(5)) and len(results) == 5
    assert all(r[1][0] is True for r in results), "a waited for b's calls, not for a timeout"


def test_a_raising_call_stops_the_run_and_cancels_the_calls_not_started() -> None:
    """Call 0 raises; every later call holds its thread until the run has stopped, so at most the one call the
    worker took meanwhile can start. Without the cancel, the 98 queued calls would run once the gate opens."""
    started: list[int] = []
    gate = threading.Event()

    def call(n: int) -> Callable[[], int]:
        def run() -> int:
            started.append(n)
            if n == 0:
                raise RuntimeError("refused key")
            gate.wait(5)
            return n

        return run

    fanout = FanOut(["a"], max_concurrency=1, window=100)
    with pytest.raises(RuntimeError, match="refused key"):
        list(fanout.run(range(100), lambda n: [("a", call(n))]))
    gate.set()
    for pool in fanout._pools.values():
        pool.shutdown(wait=True)
    assert set(started) <= {0, 1}


def test_the_tick_runs_while_calls_are_pending() -> None:
    """The progress bar is refreshed while nothing finishes (an endpoint waiting out a Retry-After)."""
    ticks = threading.Event()
    fanout = FanOut(["a"], max_concurrency=1)
    results = list(fanout.run([1], lambda n: [("a", lambda: ticks.wait(5))], tick=ticks.set, tick_seconds=0.01))
    assert results == [(1, [True])]


@pytest.mark.parametrize(
    ("waits", "line"),
    [
        ([], ""),
        ([EndpointWait("127.0.0.1:8000", 0.0, 16, 16)], ""),
        ([EndpointWait("127.0.0.1:8000", 12.3, 16, 16)], "127.0.0.1:8000 asked to wait 12 s"),
        ([EndpointWait("api.openai.com", 0.0, 4, 16)], "api.openai.com at 4/16 calls after 429"),
        (
            [EndpointWait("a", 3.0, 2, 16), EndpointWait("b", 0.0, 16, 16), EndpointWait("c", 0.0, 8, 16)],
            "a asked to wait 3 s; c at 8/16 calls after 429",
        ),
    ],
    ids=["none", "idle", "waiting", "lowered", "several"],
)
def test_the_progress_line_names_each_endpoint_holding_calls_back(waits: list[EndpointWait], line: str) -> None:
    assert status_line(waits) == line


def test_an_endpoint_taking_one_call_at_a_time_never_has_two_started() -> None:
    """While the first call is held, the others wait in the fan-out (not in a thread, their deadline running)."""
    release = threading.Event()
    started: list[int] = []
    seen: list[int] = []

    def call(n: int) -> Callable[[], int]:
        def run() -> int:
            started.append(n)
            if n == 0:
                release.wait(5)
            return n

        return run

    def tick() -> None:
        if started and not release.is_set():
            seen.append(len(started))
            if len(seen) == 3:
                release.set()

    fanout = FanOut(["a"], max_concurrency=8, limit_of=lambda endpoint: 1)
    results = list(fanout.run(range(6), lambda n: [("a", call(n))], tick=tick, tick_seconds=0.01))
    assert len(results) == 6 and seen == [1, 1, 1] and started == list(range(6))


def test_an_endpoints_limit_is_read_again_as_calls_end() -> None:
    """One call at first; then the limit is 2 and the other four go two at once (a barrier of 2 is passed)."""
    limit = [1]
    barrier = threading.Barrier(2, timeout=5)

    def call(n: int) -> Callable[[], int]:
        def run() -> int:
            if n == 0:
                limit[0] = 2
            else:
                barrier.wait()
            return n

        return run

    fanout = FanOut(["a"], max_concurrency=8, limit_of=lambda endpoint: limit[0])
    assert sorted(n for n, _ in fanout.run(range(5), lambda n: [("a", call(n))])) == list(range(5))


def test_a_limit_that_rises_with_no_call_ending_starts_the_held_calls() -> None:
    """An endpoint's first check answered (its limit goes from 1 to its pool) while its first call still runs: the
    calls held back start then, not when that call ends (here it ends only once they have started)."""
    raised, second_started, release = threading.Event(), threading.Event(), threading.Event()

    def first() -> str:
        raised.set()  # the check answered: the limit rises while this call still runs
        release.wait(timeout=60)
        return "first"

    def second() -> str:
        second_started.set()
        return "second"

    def calls(n: int) -> list[tuple[str, Callable[[], str]]]:
        return [("a", first if n == 0 else second)]

    fanout = FanOut(["a"], max_concurrency=4, limit_of=lambda endpoint: 4 if raised.is_set() else 1)
    done: list[tuple[int, list[str]]] = []
    runner = threading.Thread(target=lambda: done.extend(fanout.run(range(2), calls, tick_seconds=60.0)))
    runner.start()
    try:
        assert second_started.wait(timeout=20), "the held call waited for the running one to end"
    finally:
        release.set()
        runner.join(timeout=60)
    assert sorted(done) == [(0, ["first"]), (1, ["second"])]
