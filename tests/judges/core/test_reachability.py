"""The start check of a judge endpoint tells a busy server from a dead one (judges/core/reachability.py).

A one-slot server (llama-cpp-python's) answers ``/models`` only after the completion it is writing: the check
must wait for it, with one line saying so, and fail only on no connection, a server that stays silent past the
wait, or an answer that is not the API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler

from helm_mtsamples_ext.judges.core.reachability import check_endpoint
from tests.servers.loopback import Loopback, closed_port_url

MODELS = json.dumps({"object": "list", "data": [{"id": "judge", "owned_by": "me", "permissions": []}]}).encode()


@contextmanager
def busy_server(release: threading.Event) -> Iterator[str]:
    """A server that takes each connection at once but answers ``/models`` only once ``release`` is set (bounded
    by its lifetime), as a one-slot server finishing another client's completion."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            release.wait(30)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(MODELS)))
            self.end_headers()
            self.wfile.write(MODELS)

        def log_message(self, *args: object) -> None:
            pass

    server = Loopback(Handler, max_lifetime=60, before_stop=release.set).start()
    try:
        yield f"http://127.0.0.1:{server.port}/v1"
    finally:
        server.stop()


def test_a_busy_server_is_waited_for_with_one_line_and_passes() -> None:
    release = threading.Event()
    lines: list[str] = []

    def warn(line: str) -> None:  # the check says it waits: the server then finishes its other work
        lines.append(line)
        release.set()

    with busy_server(release) as url:
        problem = check_endpoint(url, None, timeout=0.3, busy_wait=30, warn=warn)
    assert problem is None
    assert len(lines) == 1 and "took the connection but has not answered" in lines[0] and "waiting up to 30" in lines[0]


def test_a_server_silent_past_the_wait_is_named_busy_or_hung_not_unreachable() -> None:
    release = threading.Event()
    with busy_server(release) as url:
        problem = check_endpoint(url, None, timeout=0.2, busy_wait=0.4, warn=lambda line: None)
    assert problem is not None
    assert "took the connection but did not answer in 0.4 s" in problem and "cannot be reached" not in problem


def test_a_closed_port_fails_at_once_as_unreachable_without_waiting() -> None:
    lines: list[str] = []
    problem = check_endpoint(closed_port_url(), None, timeout=0.5, busy_wait=30, warn=lines.append)
    assert problem is not None and "cannot be reached (connection refused)" in problem
    assert lines == [], "a refused connection is no busy server: nothing is waited for"
