"""``judge_timeout`` as a bound on the whole HTTP exchange with a judge, not on the gap between two bytes.

Why: the OpenAI SDK (and httpx under it) applies its timeout to each socket read, so a server that sends
its headers at once and then one byte every 2 s never times out: with ``judge_timeout=5`` one call took
205 s. This transport arms an alarm when the response starts (one watchdog thread holds them all); at the
deadline it shuts the socket down, which ends a blocked read at once, and the body's reader turns that into
``httpx.ReadTimeout`` (the SDK's ``APITimeoutError``, a timeout like any other for the retry policy and the
breaker). The headers themselves stay under httpx's per-read timeout (also ``judge_timeout``).

A caller may give one exchange another limit (``exchange_limit``: a one-slot server's pace, ``pace.py``); it then
bounds the wait for the headers and the whole body alike. Either way the connection is closed when the client
gives up, which is how a server that checks its connection (llama.cpp) learns to stop working on the call.
"""

from __future__ import annotations

import heapq
import itertools
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx

_EXCHANGE_LIMIT: ContextVar[float | None] = ContextVar("judge_exchange_limit", default=None)


@contextmanager
def exchange_limit(seconds: float | None) -> Iterator[None]:
    """Within it (this thread), each judge exchange is bounded by ``seconds`` instead of the client's limit."""
    token = _EXCHANGE_LIMIT.set(seconds)
    try:
        yield
    finally:
        _EXCHANGE_LIMIT.reset(token)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed: the exchange ended in time
        pass


class _Alarm:
    """One exchange's socket, to be shut down at its deadline unless ``cancel`` came first."""

    __slots__ = ("sock", "cancelled")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class _Watchdog:
    """One thread shutting down each exchange's socket at its deadline, for every judge client of the process.

    Why one thread: a ``threading.Timer`` per exchange started a thread per judge call, and ``Thread.start`` waits
    until the new thread has run, a hand-off per call that competed for the GIL with the calls themselves."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """No alarm and no thread yet (also in a forked child, which has neither the thread nor a usable lock)."""
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, _Alarm]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, sock: socket.socket) -> _Alarm:
        """Shut ``sock`` down at ``deadline`` (a ``time.monotonic()`` value) unless the alarm is cancelled first."""
        alarm = _Alarm(sock)
        with self._cond:
            if len(self._heap) > 1024 and sum(a.cancelled for _, _, a in self._heap) > len(self._heap) // 2:
                self._heap = [entry for entry in self._heap if not entry[2].cancelled]  # ended exchanges
                heapq.heapify(self._heap)
            heapq.heappush(self._heap, (deadline, next(self._order), alarm))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="judge-exchange-deadlines", daemon=True)
                self._thread.start()
            if self._heap[0][2] is alarm:  # the earliest deadline now: the thread must wake sooner
                self._cond.notify()
        return alarm

    def _run(self) -> None:
        while True:
            due: list[_Alarm] = []
            with self._cond:
                while not due:
                    now = time.monotonic()
                    while self._heap and (self._heap[0][2].cancelled or self._heap[0][0] <= now):
                        alarm = heapq.heappop(self._heap)[2]
                        if not alarm.cancelled:
                            due.append(alarm)
                    if not due:
                        self._cond.wait(self._heap[0][0] - now if self._heap else None)
            for alarm in due:
                if not alarm.cancelled:
                    _shut(alarm.sock)


_WATCHDOG = _Watchdog()
os.register_at_fork(after_in_child=_WATCHDOG.reset)


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that must be read whole before ``deadline`` (a ``time.monotonic()`` value)."""

    def __init__(self, inner: Any, deadline: float, limit: float, timer: _Alarm | None) -> None:
        self._inner = inner
        self._deadline = deadline
        self._limit = limit
        self._timer = timer

    def _late(self) -> httpx.ReadTimeout:
        return httpx.ReadTimeout(f"no whole reply within {self._limit:g} s (judge_timeout or the server's pace)")

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self._inner:
                if time.monotonic() > self._deadline:
                    raise self._late()
                yield chunk
        except (httpx.TransportError, OSError) as e:
            if time.monotonic() >= self._deadline and not isinstance(e, httpx.TimeoutException):
                raise self._late() from None
            raise

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._inner.close()


class WholeCallTransport(httpx.HTTPTransport):
    """httpx's transport, with every response body due within ``limit`` seconds of the request."""

    def __init__(self, limit: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.limit = float(limit)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        limit = _EXCHANGE_LIMIT.get() or self.limit
        if limit != self.limit:  # the headers' wait follows the exchange's limit too
            request.extensions = {**request.extensions, "timeout": httpx.Timeout(limit).as_dict()}
        deadline = time.monotonic() + limit
        response = super().handle_request(request)
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        timer = _WATCHDOG.arm(deadline, sock) if isinstance(sock, socket.socket) else None
        response.stream = _DeadlineStream(response.stream, deadline, limit, timer)
        return response


def whole_call_http_client(limit: float) -> httpx.Client:
    """An httpx client for the OpenAI SDK whose every call ends within ``limit`` seconds, slow drip included."""
    return httpx.Client(transport=WholeCallTransport(limit), timeout=limit, follow_redirects=True)
