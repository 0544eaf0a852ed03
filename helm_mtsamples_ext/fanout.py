"""A whole run's judge calls at each endpoint's own pace, not at ``--num-threads`` × judges.

HELM annotates a run with ``parallel_map`` over notes at ``--num-threads`` (4 by default), so an
annotator that judges one note at a time has at most threads × judges calls in flight, whatever the
endpoint could take. When an annotator says ``use_global_metric``, HELM (0.5.16 and medhelm 0.8 alike)
hands it all of a run's request states at once (``Annotator.annotate_all``); ``FanOut`` then keeps
every endpoint busy up to its own limit (the endpoint's gate in ``throttle.py`` still decides, adapting
down on 429): one pool per endpoint, so a slow or rate-limited endpoint never holds the threads another
one needs.

Memory stays bounded: a note's calls are only made (its prompt built) when it enters a window of at most
``window`` notes in flight, and a note leaves it as soon as its last judge answered.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Generic, TypeVar

N = TypeVar("N")
T = TypeVar("T")

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


def status_line(waits: Iterable[EndpointWait]) -> str:
    """The progress bar's postfix: each endpoint that holds calls back, and why (empty when none does)."""
    parts = []
    for w in waits:
        if w.waiting >= 0.5:
            parts.append(f"{w.endpoint} asked to wait {w.waiting:.0f} s")
        elif w.limit < w.max_concurrency:
            parts.append(f"{w.endpoint} at {w.limit}/{w.max_concurrency} calls after 429")
    return "; ".join(parts)


@dataclass
class FanOut:
    """Per-endpoint pools of ``max_concurrency`` threads; ``run`` judges notes through them. Thread-safe:
    several ``run`` may share the pools (HELM's per-note path calls ``annotate`` from several threads)."""

    endpoints: Iterable[str]
    max_concurrency: int
    window: int = 0
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
        pending: dict[Future[T], tuple[int, int]] = {}
        in_flight: dict[int, _Note[N, T]] = {}
        source = iter(notes)
        exhausted, slot = False, 0
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
                        pending[self._pools[endpoint].submit(call)] = (slot, position)
                if not pending:
                    return
                done, _ = wait(list(pending), timeout=tick_seconds, return_when=FIRST_COMPLETED)
                tick()
                for future in done:
                    key, position = pending.pop(future)
                    entry = in_flight[key]
                    entry.results[position] = future.result()
                    entry.remaining -= 1
                    if entry.remaining == 0:
                        del in_flight[key]
                        yield entry.note, [r for r in entry.results if r is not None]
        finally:
            for future in pending:
                future.cancel()
