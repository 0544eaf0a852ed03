"""Where the real-data tests (HELM's 131 instances, the shipped manifest, the documented section counts)
find the 429 pinned notes: as a user finds them.

In order: ``MTSAMPLES_PROCEDURES_BASE_URL`` when it is set (a mirror URL, a ``file://`` URL or a directory),
else ``../shared`` beside the checkout (CI and developers), else GitHub after a bounded reachability check.
Every source but ``../shared`` goes through the package's own downloader into a fresh directory, so the
tests read exactly the 429 verified notes. When none can be reached the answer is one line saying how
to supply them; the fixture skips with it (fails under ``CI=true``, so CI always checks the real data).
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from helm_mtsamples_ext.data.notes import (
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    PINNED_COMMIT,
    DataError,
    NoteHostUnreachable,
    ensure_notes,
    load_manifest,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_NOTES = REPO_ROOT.parent / "shared" / "data" / "mtsamples_procedures" / PINNED_COMMIT
PROBE_SECONDS = 5.0
"""How long GitHub may take to accept a connection (name lookup included) before it counts as unreachable."""


class NotesUnavailable(Exception):
    """No source of the pinned notes can be reached; the message is the one line a test run shows."""


def how_to_supply(why: str) -> str:
    return (
        f"real-data test skipped: {why}; set {BASE_URL_ENV} to a mirror URL, a file:// URL or a directory holding "
        f"the 429 pinned notes, or put them in {SHARED_NOTES}/"
    )


def locate_pinned_notes(cache: Path) -> Path:
    """A directory holding exactly the pinned notes, verified; NotesUnavailable when none can be reached, and
    DataError when a source answers with notes that are not the pinned ones (that is a failure, not a skip)."""
    base = os.environ.get(BASE_URL_ENV)
    if base:
        if urlparse(base).scheme not in ("http", "https") and not _local_dir(base).is_dir():
            raise NotesUnavailable(how_to_supply(f"{BASE_URL_ENV}={base} is no directory"))
        return _download(base, cache, f"{BASE_URL_ENV}={base} cannot be reached")
    if SHARED_NOTES.is_dir():
        return SHARED_NOTES
    host = urlparse(DEFAULT_BASE_URL).netloc
    why = f"{BASE_URL_ENV} is not set, {SHARED_NOTES} is missing and {host} cannot be reached"
    if not reachable(host, 443, PROBE_SECONDS):
        raise NotesUnavailable(how_to_supply(why))
    return _download(DEFAULT_BASE_URL, cache, why)


def reachable(host: str, port: int, seconds: float) -> bool:
    """Whether ``host`` accepts a TCP connection within ``seconds``, name lookup included (getaddrinfo takes no
    timeout, so the attempt runs in a daemon thread that is given up on)."""
    result: list[bool] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=seconds):
                result.append(True)
        except OSError:
            result.append(False)

    thread = threading.Thread(target=attempt, name="reachability-probe", daemon=True)
    thread.start()
    thread.join(seconds + 1)
    return bool(result and result[0])


def _local_dir(base: str) -> Path:
    parsed = urlparse(base)
    return Path(url2pathname(parsed.path)) if parsed.scheme == "file" else Path(base).expanduser()


def _download(base: str, cache: Path, unreachable: str) -> Path:
    try:
        ensure_notes(cache, base_url=base, manifest=load_manifest(), progress=False)
    except NoteHostUnreachable:
        raise NotesUnavailable(how_to_supply(unreachable)) from None
    except DataError as e:
        first = next(iter(e.failures.items()), None)
        example = f", e.g. {first[0]!r}: {first[1]}" if first else ""
        raise DataError(
            f"{len(e.failures)} of the 429 pinned notes from {base} are missing or not intact{example}; "
            f"point {BASE_URL_ENV} at the pinned notes"
        ) from None
    return cache
