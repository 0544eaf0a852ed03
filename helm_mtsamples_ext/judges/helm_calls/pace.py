"""How long one exchange may take at a server that serves one call at a time: its observed pace, not a fixed limit.

Why: a one-slot server (llama-cpp-python's, a ``llama-server`` with one slot) works on our call alone while we
wait, so a call still running at ``judge_timeout`` is not lost, only slow: the server has slowed down (a busy
machine read 21 prompt tokens/s where it read 240 at rest). Giving up then throws the work away (llama-cpp-python
finishes it anyway and the retry waits behind it; llama.cpp cancels it when the connection closes, and the retry
starts over). So at such a server an exchange may take ``PACE_FACTOR`` times the slowest of its recent answered
exchanges when that is longer than ``judge_timeout``, and a retry after a timeout twice what the timed-out attempt
had; never past the call's own deadline (``judge_max_wait``). A server taking several calls at once keeps
``judge_timeout``: there a long wait is as likely a queue as work.
"""

from __future__ import annotations

import threading
from collections import deque

PACE_FACTOR = 3.0
"""An exchange at a one-slot server may take this many times the slowest of its recent answered exchanges."""
PACE_WINDOW = 8
"""The answered exchanges the pace is read from (the most recent ones: a server's pace drifts with its load)."""


class Pace:
    """The recent answered exchanges' durations at one endpoint (thread-safe)."""

    def __init__(self, window: int = PACE_WINDOW, factor: float = PACE_FACTOR) -> None:
        self._durations: deque[float] = deque(maxlen=max(1, int(window)))
        self._factor = float(factor)
        self._lock = threading.Lock()

    def answered(self, seconds: float) -> None:
        """An exchange was answered after ``seconds``."""
        if seconds == seconds and seconds >= 0:  # not NaN
            with self._lock:
                self._durations.append(float(seconds))

    def slowest(self) -> float | None:
        with self._lock:
            return max(self._durations) if self._durations else None

    def limit(self, timeout: float, one_slot: bool, timed_out: float | None = None) -> float:
        """Seconds the next exchange may take: ``timeout`` (judge_timeout), or at a one-slot server the longer of
        that, ``PACE_FACTOR`` times the slowest recent exchange, and twice ``timed_out`` (the limit of this call's
        attempt that timed out, if any)."""
        if not one_slot:
            return timeout
        slowest = self.slowest()
        paced = self._factor * slowest if slowest is not None else 0.0
        retried = 2.0 * timed_out if timed_out is not None else 0.0
        return max(timeout, paced, retried)
