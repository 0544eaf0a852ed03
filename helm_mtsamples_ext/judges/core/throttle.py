"""Pacing calls to judge endpoints the way providers ask, and giving up on a dead judge quickly.

Why each piece exists (measured against real servers):
- ``Retry-After``: a hosted API under load answers 429 and says when to come back; retrying sooner
  only earns more 429s, and giving up after a few quick tries loses judgments waiting would have saved.
- One wait per endpoint: a 429 is about the endpoint (the key's quota), not the call that got it, so
  every call to that endpoint waits, not just the one that was told.
- Adaptive concurrency (as Inspect's adaptive connections): halve the calls in flight on a 429, grow
  by one after a run of successes, never above the configured maximum.
- ``judge_rpm``: when the limit is known, a client-side limiter (pyrate-limiter) keeps under it, so
  there is no 429 at all.
- The breaker: a judge that never answers would cost a timeout on every call of every note; after a
  few timeouts in a row (or calls ending in server errors) its calls fail at once, and one probe now
  and then tests it again.
- Readable waits: a 429 that moves the endpoint's wait is one warning line, and while calls wait for
  it a line at least every ``NOTICE_EVERY`` seconds says for how much longer.
- Capacity: a server that takes fewer calls at once than we would send queues the rest, and the queued
  ones time out while it works (llama-cpp-python's server takes one at a time). Its capacity, when the
  server tells it (``capacity.py``), caps the gate; otherwise a timeout while the same judge answered other
  calls is overload, not a dead judge: the gate halves its calls in flight, once per round of calls.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from pyrate_limiter import Duration, Limiter, Rate

NOTICE_EVERY = 30.0
"""Seconds between two "still waiting" lines while calls wait for an endpoint."""
MAX_RETRY_AFTER = 3600.0
"""A Retry-After beyond an hour is taken as an hour (the call's own deadline still applies)."""


def parse_retry_after(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    lower = {str(k).lower(): str(v) for k, v in headers.items()}
    seconds: float | None = None
    if "retry-after-ms" in lower:
        try:
            seconds = float(lower["retry-after-ms"]) / 1000
        except ValueError:
            seconds = None
    if seconds is None and "retry-after" in lower:
        value = lower["retry-after"].strip()
        try:
            seconds = float(value)
        except ValueError:
            try:
                when = parsedate_to_datetime(value)
            except (TypeError, ValueError, IndexError):
                return None
            seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds is None or seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def backoff(attempt: int, base: float, cap: float = 60.0) -> float:
    """Full-jitter exponential backoff for the ``attempt``-th retry (1-based)."""
    return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))


class GateTimeout(Exception):
    """The endpoint will not take a call before the caller's deadline."""


class EndpointGate:
    """Admission to one endpoint: waits out a 429's Retry-After, bounds calls in flight adaptively,
    and keeps under a declared requests-per-minute limit."""

    def __init__(
        self,
        max_concurrency: int,
        rpm: float | None = None,
        grow_after: int = 8,
        clock: Callable[[], float] = time.monotonic,
        name: str = "the endpoint",
        notice: Callable[[str], None] | None = None,
    ) -> None:
        self.max_concurrency = max(1, int(max_concurrency))
        self.limit = self.max_concurrency
        self.in_flight = 0
        self.blocked_until = 0.0
        self.rate_limited = 0
        self._grow_after = grow_after
        self._successes = 0
        self._clock = clock
        self._cond = threading.Condition()
        self._limiter = Limiter(Rate(max(1, int(rpm)), Duration.MINUTE)) if rpm else None
        self.name = name
        self.notice = notice
        self._noticed = clock()
        self.capacity_source = ""  # who set max_concurrency below the configured one (for the progress bar)
        self.generation = 0  # bumped when overload lowers the limit: calls sent before are one round
        self.overloads = 0

    def acquire(self, deadline: float) -> None:
        """Wait for a slot; raises GateTimeout if none comes before ``deadline`` (a clock() value)."""
        with self._cond:
            while True:
                now = self._clock()
                if self.blocked_until > deadline:
                    raise GateTimeout(f"the endpoint asked to wait {self.blocked_until - now:.0f} s")
                if now >= self.blocked_until and self.in_flight < self.limit:
                    self.in_flight += 1
                    break
                if now >= deadline:
                    raise GateTimeout("no free slot before the deadline")
                wake = self.blocked_until if now < self.blocked_until else deadline  # blocked_until <= deadline here
                if now < self.blocked_until and now - self._noticed >= NOTICE_EVERY and self.notice is not None:
                    self._noticed = now
                    self.notice(
                        f"{self.name}: calls still waiting {self.blocked_until - now:.0f} s as the server asked"
                    )
                self._cond.wait(timeout=max(0.001, min(wake, now + NOTICE_EVERY) - now))
        if self._limiter is not None:
            remaining = max(0.0, deadline - self._clock())
            if not self._limiter.try_acquire("endpoint", blocking=True, timeout=remaining):
                self.release()
                raise GateTimeout("the declared judge_rpm leaves no room before the deadline")

    def release(self) -> None:
        with self._cond:
            self.in_flight -= 1
            self._cond.notify_all()

    def succeeded(self) -> None:
        with self._cond:
            self._successes += 1
            if self._successes >= self._grow_after and self.limit < self.max_concurrency:
                self.limit += 1
                self._successes = 0
                self._cond.notify_all()

    def learned(self, capacity: int, source: str) -> bool:
        """The server said how many calls it takes at once: never send more. True when that lowered the limit."""
        with self._cond:
            if capacity >= self.max_concurrency:
                return False
            self.max_concurrency = max(1, int(capacity))
            self.limit = min(self.limit, self.max_concurrency)
            self.capacity_source = source
            return True

    def overloaded(self, generation: int) -> int | None:
        """A call sent in round ``generation`` timed out while the server answered others: it queues what it
        cannot take. Halve the limit once per round (the calls of one round time out together); the new limit
        when this call lowered it, None when its round was already counted or the limit is 1."""
        with self._cond:
            self.overloads += 1
            self._successes = 0
            if generation != self.generation or self.limit <= 1:
                return None
            self.limit = max(1, self.limit // 2)
            self.generation += 1
            return self.limit

    def throttled(self, retry_after: float | None, fallback_wait: float) -> float | None:
        """A 429: everyone waits ``retry_after`` (or ``fallback_wait``), and fewer calls go at once. Returns
        the wait when this 429 set the endpoint's wait (worth a line), None when one already covered it."""
        with self._cond:
            self.rate_limited += 1
            self._successes = 0
            wait = retry_after if retry_after is not None else fallback_wait
            now = self._clock()
            moved = now + wait > self.blocked_until + 1.0
            self.blocked_until = max(self.blocked_until, now + wait)
            self.limit = max(1, min(self.limit, self.in_flight) // 2)
            if moved:
                self._noticed = now
            self._cond.notify_all()
            return wait if moved else None


@dataclass
class BreakerState:
    failures: int = 0
    open_until: float = 0.0
    probing: bool = False
    last_error: str = ""
    prompts: set[int] = field(default_factory=set)  # hashes of the prompts counted in ``failures``


class Breaker:
    """A judge's circuit breaker: timeouts or connection failures on ``threshold`` different prompts in a row
    open it for ``cooldown`` seconds; then exactly one call goes through as a probe while the rest still fail fast.

    Hand-written rather than pybreaker: only unanswered calls may count (an HTTP error means the judge
    is alive), and the half-open state must admit a single probe among concurrent callers. A prompt's retries
    count once: a judge that answers other prompts but never one long prompt is alive, and opening the breaker on
    that prompt's retries would fail the judgments it was still giving."""

    def __init__(self, threshold: int = 3, cooldown: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.threshold = threshold
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._state = BreakerState()
        self.answers = 0  # calls answered so far: a timeout while this grew was overload (attempts.py)

    def admit(self) -> tuple[bool, str]:
        """(may this call go, the last error when not)."""
        with self._lock:
            state = self._state
            if state.failures < self.threshold:
                return True, ""
            if state.probing or self._clock() < state.open_until:
                return False, state.last_error
            state.probing = True
            return True, ""

    def answered(self) -> None:
        with self._lock:
            self._state = BreakerState()
            self.answers += 1

    def unanswered(self, error: str, prompt: str | None = None) -> None:
        """An unanswered call; ``prompt`` (any key of it) makes its retries count once (None: a new prompt)."""
        with self._lock:
            state = self._state
            key = None if prompt is None else hash(prompt)
            if key is not None and key in state.prompts and state.failures < self.threshold:
                state.last_error = error
                return
            if key is not None:
                state.prompts.add(key)
            state.failures += 1
            state.last_error = error
            state.probing = False
            if state.failures >= self.threshold:
                state.open_until = self._clock() + self.cooldown

    def released(self) -> None:
        """A call admitted as the probe ended without telling anything (e.g. a deadline): let another probe."""
        with self._lock:
            self._state.probing = False
