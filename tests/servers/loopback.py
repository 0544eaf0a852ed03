"""The serve loop every loopback server of the tests shares: bound to 127.0.0.1 on a free port, served from a daemon
thread, stopped on context exit or after ``max_lifetime`` seconds, whichever comes first.

Why one: the note mirror, the judge and the model under test each wrote this loop, and a bound or a backlog fixed
in one was missed in another. Each server keeps its own handler and state; this holds only the loop's life.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when a whole panel (or 16 downloaders) connects at once; the client
    # then waits for a SYN retransmit (1 s) and may time out, which would look like the far side failing.
    request_queue_size = 256
    daemon_threads = True


class Loopback:
    """``Loopback(handler, max_lifetime).start()`` serves ``handler`` until ``stop()`` or the lifetime ends;
    ``before_stop`` runs first (to release waits the handlers hold)."""

    def __init__(
        self,
        handler: type[BaseHTTPRequestHandler],
        max_lifetime: float,
        before_stop: Callable[[], None] | None = None,
        name: str = "loopback",
    ) -> None:
        self.handler = handler
        self.max_lifetime = max_lifetime
        self.before_stop = before_stop
        self.name = name
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None
        self._stopped = False
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The port it serves on, and still names once stopped (a test may check what an error said of it)."""
        assert self._port is not None, "server not started"
        return self._port

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> Loopback:
        with self._lock:
            if self._server is not None or self._stopped:
                return self
            self._server = _Server(("127.0.0.1", 0), self.handler)
            self._port = int(self._server.server_address[1])
            self._thread = threading.Thread(
                target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name=self.name, daemon=True
            )
            self._timer = threading.Timer(self.max_lifetime, self.stop)  # the bound on the serve loop
            self._timer.daemon = True
        self._thread.start()
        self._timer.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; later connections are refused. Idempotent, and safe from the timer."""
        with self._lock:
            if self._stopped:
                return
            self._stopped = True
            server, self._server = self._server, None
            timer, thread = self._timer, self._thread
        if self.before_stop is not None:
            self.before_stop()
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)


def free_port() -> int:
    """A loopback port free a moment ago: bound, then let go (a tool under test binds it by number)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port_url(path: str = "/v1") -> str:
    """A loopback URL nothing listens on, for the tests of an endpoint out of reach."""
    return f"http://127.0.0.1:{free_port()}{path}"
