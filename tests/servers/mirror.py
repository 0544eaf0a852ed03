"""A loopback HTTP mirror of a directory of notes, for tests and the benchmark.

It stands in for raw.githubusercontent.com: 127.0.0.1 only, an ephemeral port, a serve loop that
ends when the context manager exits or after `max_lifetime` seconds, whichever comes first. It
counts every request (thread-safe), can add a per-request latency (to make the benchmark's
network cost visible), and can be told to misbehave for given file names.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

from tests.servers.loopback import Loopback


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like a real CDN
    timeout = 10  # an idle keep-alive connection does not hold its thread forever
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's delayed ACK
    # (~40 ms on Linux) on every kept-alive request, a cost no real CDN adds.
    disable_nagle_algorithm = True
    mirror: NoteMirror

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        mirror = self.mirror
        if not mirror.running:  # stopped: a kept-alive connection must not keep serving
            self.close_connection = True
            return
        name = unquote(urlsplit(self.path).path).lstrip("/")
        action = mirror._record(name)
        if mirror.latency > 0:
            time.sleep(mirror.latency)  # simulated network round trip, not test synchronisation
        if action == "404":
            self._send(404, b"not found")
            return
        if action == "500":
            self._send(500, b"try again")
            return
        path = (mirror.directory / name).resolve()
        if not name or not path.is_file() or mirror.directory not in path.parents:
            self._send(404, b"not found")
            return
        data = path.read_bytes()
        if action == "truncate":
            data = data[: len(data) // 2]
        elif action == "corrupt":
            data = bytes([data[0] ^ 0x20]) + data[1:] if data else b"x"
        elif action == "drop":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.close_connection = True
            return
        self._send(200, data)

    def _send(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class NoteMirror:
    """Serve `directory` at `base_url` (ends in "/"); file names are URL-decoded, so `#`, `&`, etc. work."""

    def __init__(
        self, directory: str | Path, latency: float = 0.0, max_lifetime: float = 300.0, manifest: Path | None = None
    ) -> None:
        self.directory = Path(directory).resolve()
        self.manifest = manifest  # None: the notes are the pinned ones, checked against the shipped manifest
        self.latency = latency
        self.max_lifetime = max_lifetime
        self.requested_paths: list[str] = []  # decoded file names, in arrival order
        self._lock = threading.Lock()
        self._truncate: set[str] = set()
        self._corrupt: set[str] = set()
        self._missing: set[str] = set()
        self._failures_left: dict[str, int] = {}
        self._drops_left: dict[str, int] = {}
        self._loop = Loopback(type("Handler", (_Handler,), {"mirror": self}), max_lifetime, name="note-mirror")
        self.base_url = ""

    # --- misbehaviour hooks -------------------------------------------------------------------
    def truncate(self, name: str) -> None:
        """Serve the first half of the file, with a consistent Content-Length (a short but valid reply)."""
        with self._lock:
            self._truncate.add(name)

    def corrupt(self, name: str) -> None:
        """Serve the right number of bytes with the first one altered."""
        with self._lock:
            self._corrupt.add(name)

    def not_found(self, name: str) -> None:
        """Answer 404 for this file every time."""
        with self._lock:
            self._missing.add(name)

    def fail(self, name: str, times: int) -> None:
        """Answer 500 for the next `times` requests of this file, then serve it."""
        with self._lock:
            self._failures_left[name] = times

    def drop(self, name: str, times: int) -> None:
        """For the next `times` requests, promise the full length, send half and close the connection."""
        with self._lock:
            self._drops_left[name] = times

    # --- bookkeeping --------------------------------------------------------------------------
    def _record(self, name: str) -> str:
        with self._lock:
            self.requested_paths.append(name)
            if name in self._missing:
                return "404"
            if self._failures_left.get(name, 0) > 0:
                self._failures_left[name] -= 1
                return "500"
            if self._drops_left.get(name, 0) > 0:
                self._drops_left[name] -= 1
                return "drop"
            if name in self._truncate:
                return "truncate"
            if name in self._corrupt:
                return "corrupt"
            return "serve"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requested_paths)

    def requests_for(self, name: str) -> int:
        with self._lock:
            return self.requested_paths.count(name)

    def reset_counts(self) -> None:
        with self._lock:
            self.requested_paths.clear()

    # --- lifecycle ----------------------------------------------------------------------------
    def start(self) -> NoteMirror:
        self._loop.start()
        self.base_url = f"http://127.0.0.1:{self._loop.port}/"
        return self

    def stop(self) -> None:
        """Stop serving and close the socket; later connections are refused. Idempotent."""
        self._loop.stop()

    @property
    def env(self) -> dict[str, str]:
        """The variables that point the package here (and to the notes' manifest when they are not the pinned ones)."""
        env = {"MTSAMPLES_PROCEDURES_BASE_URL": self.base_url}
        if self.manifest is not None:
            env["MTSAMPLES_PROCEDURES_MANIFEST"] = str(self.manifest)
        return env

    @property
    def running(self) -> bool:
        return self._loop.running

    def __enter__(self) -> NoteMirror:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
