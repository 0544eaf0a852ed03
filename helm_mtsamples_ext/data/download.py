"""Getting one note's bytes: from an HTTP mirror with bounded, jittered retries, or from a directory on disk.

Only what the network or the server may do better next time is retried (429, 5xx, a dropped or timed-out
connection), never a 404 or a missing local file. A host that takes no connection at all is told apart
(``HostUnreachable``) on the first note, so an offline machine learns within seconds that it needs a mirror
instead of retrying every note for minutes. Checking the bytes and caching them is data.py's.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlparse
from urllib.request import url2pathname

import requests
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential, wait_random


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try one file. Waits are parameters so tests can run with zero backoff."""

    attempts: int = 5
    wait_initial: float = 0.5
    wait_max: float = 8.0
    timeout: float = 30.0


DEFAULT_RETRY = RetryPolicy()


CONNECT_TIMEOUT = 5.0
"""Seconds a request may take to connect (a host that drops packets is unreachable within it)."""


class _TransientHTTPError(Exception):
    """A status worth retrying (429, 5xx): the server may answer properly next time."""


class FetchError(Exception):
    """A failure that retrying cannot fix (other 4xx, missing local file, checksum mismatch)."""


# Worth another try: the network or the server may do better next time. A checksum mismatch is not.
_RETRYABLE = (
    _TransientHTTPError,
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)


class HostUnreachable(Exception):
    """No connection to the note host could be made at all (offline, unknown host, refused): ``host`` and
    ``reason`` name it, for data.py to say where a mirror goes."""

    def __init__(self, host: str, reason: str) -> None:
        super().__init__(f"the note host {host} cannot be reached ({reason})")
        self.host = host
        self.reason = reason


def note_url(base_url: str, name: str) -> str:
    """Quote the name: `#`, `&`, spaces and non-ASCII must reach the server as part of the path."""
    return base_url + quote(name)


def is_http(base: str) -> bool:
    return urlparse(base).scheme in ("http", "https")


def local_dir(base: str) -> Path:
    """A `file://` URL or a plain directory path, for mirrors on disk (air-gapped machines)."""
    parsed = urlparse(base)
    if parsed.scheme == "file":
        return Path(url2pathname(parsed.path))
    return Path(base).expanduser()


class Fetcher:
    """Gets one note's bytes from an HTTP mirror (one requests.Session per worker thread) or a local dir."""

    def __init__(self, base: str, retry: RetryPolicy) -> None:
        self.base = base
        self.retry = retry
        self.http = is_http(base)
        self.local_dir = None if self.http else local_dir(base)
        self._local = threading.local()
        self._sessions: list[requests.Session] = []
        self._lock = threading.Lock()

    def _session(self) -> requests.Session:
        session: requests.Session | None = getattr(self._local, "session", None)
        if session is None:
            session = requests.Session()
            self._local.session = session
            with self._lock:
                self._sessions.append(session)
        return session

    def close(self) -> None:
        with self._lock:
            for session in self._sessions:
                session.close()
            self._sessions.clear()

    def _get_once(self, name: str) -> bytes:
        timeout = (min(CONNECT_TIMEOUT, self.retry.timeout), self.retry.timeout)
        response = self._session().get(note_url(self.base, name), timeout=timeout)
        with response:
            if response.status_code == 429 or response.status_code >= 500:
                raise _TransientHTTPError(f"HTTP {response.status_code}")
            if response.status_code != 200:
                raise FetchError(f"HTTP {response.status_code} for {response.url}")
            return response.content

    def fetch(self, name: str, first: bool = False) -> bytes:
        """The note's bytes. For the ``first`` note of a batch, a host that takes no connection at all is
        HostUnreachable at once: retrying 429 files against it cost two minutes offline."""
        if self.local_dir is not None:
            try:
                return (self.local_dir / name).read_bytes()
            except OSError as e:
                raise FetchError(f"cannot read {self.local_dir / name}: {e}") from e

        def worth_retrying(error: BaseException) -> bool:
            unreachable = first and isinstance(error, requests.RequestException) and _no_connection(error)
            return isinstance(error, _RETRYABLE) and not unreachable

        retrying = Retrying(
            stop=stop_after_attempt(self.retry.attempts),
            # jittered exponential backoff, so 16 workers hitting a 429 do not retry in lockstep
            wait=wait_exponential(multiplier=self.retry.wait_initial, max=self.retry.wait_max)
            + wait_random(0, self.retry.wait_initial),
            retry=retry_if_exception(worth_retrying),
            reraise=True,
        )
        try:
            return retrying(self._get_once, name)
        except (_TransientHTTPError, requests.RequestException) as e:
            if first and isinstance(e, requests.RequestException) and _no_connection(e):
                raise HostUnreachable(urlparse(self.base).netloc, _reason(e)) from None
            what = str(e) if isinstance(e, _TransientHTTPError) else f"{type(e).__name__}: {e}"
            raise FetchError(f"{what} (gave up after {self.retry.attempts} attempts)") from e


def _no_connection(error: requests.RequestException) -> bool:
    """No connection could be made at all (unknown host, refused, unroutable, connect timeout)."""
    if isinstance(error, requests.ConnectTimeout):
        return True
    text = str(error)
    return isinstance(error, requests.ConnectionError) and any(
        marker in text
        for marker in ("Failed to establish a new connection", "NameResolutionError", "Failed to resolve")
    )


def _reason(error: Exception) -> str:
    text = str(error)
    for marker in ("Name or service not known", "Temporary failure in name resolution", "Connection refused",
                   "Network is unreachable", "No route to host", "timed out"):  # fmt: skip
        if marker.lower() in text.lower():
            return marker.lower()
    return type(error).__name__
