"""``judge_timeout`` as a bound on the whole HTTP exchange with a judge, not on the gap between two bytes.

Why: the OpenAI SDK (and httpx under it) applies its timeout to each socket read, so a server that sends
its headers at once and then one byte every 2 s never times out: with ``judge_timeout=5`` one call took
205 s. This transport arms a timer when the response starts; at the deadline it shuts the socket down,
which ends a blocked read at once, and the body's reader turns that into ``httpx.ReadTimeout`` (the SDK's
``APITimeoutError``, a timeout like any other for the retry policy and the breaker). The headers
themselves stay under httpx's per-read timeout (also ``judge_timeout``).

A caller may give one exchange another limit (``exchange_limit``: a one-slot server's pace, ``pace.py``); it then
bounds the wait for the headers and the whole body alike. Either way the connection is closed when the client
gives up, which is how a server that checks its connection (llama.cpp) learns to stop working on the call.
"""

from __future__ import annotations

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


class _DeadlineStream(httpx.SyncByteStream):
    """A response body that must be read whole before ``deadline`` (a ``time.monotonic()`` value)."""

    def __init__(self, inner: Any, deadline: float, limit: float, timer: threading.Timer | None) -> None:
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
        timer = None
        if isinstance(sock, socket.socket):
            timer = threading.Timer(max(0.0, deadline - time.monotonic()), _shut, (sock,))
            timer.daemon = True
            timer.start()
        response.stream = _DeadlineStream(response.stream, deadline, limit, timer)
        return response


def whole_call_http_client(limit: float) -> httpx.Client:
    """An httpx client for the OpenAI SDK whose every call ends within ``limit`` seconds, slow drip included."""
    return httpx.Client(transport=WholeCallTransport(limit), timeout=limit, follow_redirects=True)
