"""A whole run's judge calls at each endpoint's own pace, not at ``--num-threads`` × judges.

HELM annotates a run with ``parallel_map`` over notes at ``--num-threads`` (4 by default), so an
annotator that judges one note at a time has at most threads × judges calls in flight, whatever the
endpoint could take. When an annotator says ``use_global_metric``, HELM (0.5.16 and medhelm 0.8 alike)
hands it all of a run's request states at once (``Annotator.annotate_all``); ``FanOut`` then keeps
every endpoint busy up to its own limit (the endpoint's gate in ``throttle.py`` still decides, adapting
down on 429): one pool per endpoint, so a slow or rate-limited endpoint never holds the threads another
one needs.

Calls start only while their endpoint has room (``limit_of``: the gate's limit, which a server's own
capacity caps, ``capacity.py``): a call waiting for a slot waits here, before its deadline starts, so a
server taking one call at a time judges every note at its own pace instead of timing the queue out.

Memory stays bounded: a note's calls are only made (its prompt built) when it enters a window of at most
``window`` notes in flight, and a note leaves it as soon as its last judge answered.
"""

from __future__ import annotations

import sys
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from queue import Empty, SimpleQueue
from typing import Generic, TypeVar

N = TypeVar("N")
T = TypeVar("T")

HELD_POLL = 0.05
"""Seconds between looks at the limits while one holds calls back: a limit can rise with no call ending (an
endpoint's first check answered), and its calls should start then, not at the next call's end."""

Call = tuple[str, Callable[[], T]]
"""(endpoint, the call): the endpoint picks the pool."""


@dataclass
class _Note(Generic[N, T]):
    note: N
    results: list[T | None]
    remaining: int


@dataclass(frozen=True)
class EndpointWait:
    """What the progress bar says about one endpoint: seconds it asked everyone to wait, calls at once."""

    endpoint: str
    waiting: float
    limit: int
    max_concurrency: int
    capacity: str = ""  # who capped the endpoint below the configured concurrency (its server), if anyone
    overloaded: bool = False  # the limit came down after calls timed out while the server answered others


def status_line(waits: Iterable[EndpointWait]) -> str:
    """The progress bar's postfix: each endpoint that holds calls back, and why (empty when none does)."""
    parts = []
    for w in waits:
        if w.waiting >= 0.5:
            parts.append(f"{w.endpoint} asked to wait {w.waiting:.0f} s")
        elif w.limit < w.max_concurrency:
            why = "calls timed out in its queue" if w.overloaded else "429"
            parts.append(f"{w.endpoint} at {w.limit}/{w.max_concurrency} calls after {why}")
        elif w.capacity:
            parts.append(f"{w.endpoint} takes {w.max_concurrency} call(s) at once")
    return "; ".join(parts)


@dataclass
class FanOut:
    """Per-endpoint pools of ``max_concurrency`` threads; ``run`` judges notes through them. Thread-safe:
    several ``run`` may share the pools (HELM's per-note path calls ``annotate`` from several threads)."""

    endpoints: Iterable[str]
    max_concurrency: int
    window: int = 0
    limit_of: Callable[[str], int] | None = None
    """Calls an endpoint may have started now (read again as calls end and at every tick); None: the pool size."""
    _pools: dict[str, ThreadPoolExecutor] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)

    def __post_init__(self) -> None:
        names = list(dict.fromkeys(self.endpoints))
        size = max(1, int(self.max_concurrency))
        for n, endpoint in enumerate(names):
            self._pools[endpoint] = ThreadPoolExecutor(max_workers=size, thread_name_prefix=f"mtsjudge{n}")
        if self.window <= 0:
            self.window = 2 * size * max(1, len(names))

    def run(
        self,
        notes: Iterable[N],
        calls_of: Callable[[N], list[Call[T]]],
        tick: Callable[[], None] = lambda: None,
        tick_seconds: float = 1.0,
    ) -> Iterator[tuple[N, list[T]]]:
        """Yield (note, its calls' results in order) as each note finishes, at most ``window`` notes in
        flight. ``tick`` runs at least every ``tick_seconds`` (the progress bar). A call that raises stops
        everything: calls not started are cancelled and the exception propagates."""
        pending: dict[Future[T], tuple[int, int, str]] = {}
        # Each call's future puts itself here when done: a wake-up costs one queue read, where waiting on every
        # pending future (concurrent.futures.wait) installed and removed a waiter on each of them per call ended.
        finished: SimpleQueue[Future[T]] = SimpleQueue()
        in_flight: dict[int, _Note[N, T]] = {}
        queued: dict[str, deque[tuple[int, int, Callable[[], T]]]] = {e: deque() for e in self._pools}
        started: Counter[str] = Counter()
        source = iter(notes)
        exhausted, slot = False, 0

        def start_what_fits() -> bool:
            """Start what each endpoint's limit allows; True when a limit below the pool holds calls back (it may
            rise without a call ending: the endpoint's first check answered, a 429's wait is over)."""
            held = False
            for endpoint, waiting in queued.items():
                room = self.limit_of(endpoint) if self.limit_of is not None else sys.maxsize
                while waiting and started[endpoint] < max(1, room):
                    key, position, call = waiting.popleft()
                    future = self._pools[endpoint].submit(call)
                    pending[future] = (key, position, endpoint)
                    future.add_done_callback(finished.put)
                    started[endpoint] += 1
                held = held or (bool(waiting) and room < self.max_concurrency)
            return held

        try:
            while True:
                while not exhausted and len(in_flight) < self.window:
                    try:
                        note = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    calls = calls_of(note)
                    if not calls:
                        yield note, []
                        continue
                    slot += 1
                    in_flight[slot] = _Note(note, [None] * len(calls), len(calls))
                    for position, (endpoint, call) in enumerate(calls):
                        queued[endpoint].append((slot, position, call))
                held = start_what_fits()
                if not pending:
                    return
                timeout = min(tick_seconds, HELD_POLL) if held else tick_seconds
                done = _ended(finished, timeout)
                tick()
                for future in done:
                    key, position, endpoint = pending.pop(future)
                    started[endpoint] -= 1
                    entry = in_flight[key]
                    entry.results[position] = future.result()
                    entry.remaining -= 1
                    if entry.remaining == 0:
                        del in_flight[key]
                        yield entry.note, [r for r in entry.results if r is not None]
        finally:
            for future in pending:
                future.cancel()


def _ended(finished: SimpleQueue[Future[T]], timeout: float) -> list[Future[T]]:
    """The calls ended so far: the first within ``timeout`` (none when it passes), then every other already ended."""
    try:
        done = [finished.get(timeout=timeout)]
    except Empty:
        return []
    while True:
        try:
            done.append(finished.get_nowait())
        except Empty:
            return done
