"""The MTSamples Procedures notes: pinned, checksummed, fetched in parallel, cached, offline-capable.

HELM's built-in scenario lists the notes through the GitHub API (rate-limited, unpinned), fetches
them one by one from ``main`` without quoting (``#`` in seven names becomes a URL fragment), never
checks what it got, and re-encodes the text. Here the file list, sizes and sha256s of the pinned
commit ship inside the package (``manifest.tsv``), so no listing call is ever made, every byte is
verified, and a warm cache is read without touching the network at all. Getting each note's bytes (retries,
mirrors, a host that cannot be reached) is download.py's; here the manifest, the checks and the cache.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from tqdm import tqdm

from helm_mtsamples_ext.common.log import hlog, hwarn
from helm_mtsamples_ext.data.download import DEFAULT_RETRY, Fetcher, FetchError, HostUnreachable, RetryPolicy, is_http

PINNED_COMMIT = "c4c252443fa9c52afb6960f53e51be278639bea2"
DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/raulista1997/benchmarkdata/{PINNED_COMMIT}/mtsample_procedure/"
BASE_URL_ENV = "MTSAMPLES_PROCEDURES_BASE_URL"
CACHE_DIR_ENV = "MTSAMPLES_PROCEDURES_CACHE_DIR"
DOOR_CACHE_DIR = "~/.cache/helm_mtsamples_ext/notes"
"""Where the doors without HELM (Inspect, verifiers) keep the notes between runs, unless ``cache_dir`` or
``MTSAMPLES_PROCEDURES_CACHE_DIR`` says (HELM's path keeps them in its scenario's output path)."""
MANIFEST_RESOURCE = "manifest.tsv"
_MANIFEST_HEADER = ["name", "bytes", "sha256"]
_TEMP_SUFFIX = ".part"


@dataclass(frozen=True)
class ManifestEntry:
    name: str
    size: int
    sha256: str


class DataError(Exception):
    """Some notes could not be obtained intact; `failures` maps each file name to the reason."""

    def __init__(self, message: str, failures: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.failures: dict[str, str] = dict(failures or {})


class NoteHostUnreachable(DataError):
    """The note host cannot be reached at all (offline, unknown host, refused): no retry can help, and the
    fix is a mirror, so this fails within seconds naming ``MTSAMPLES_PROCEDURES_BASE_URL``."""


@lru_cache(maxsize=1)
def _shipped_manifest() -> tuple[ManifestEntry, ...]:
    text = resources.files("helm_mtsamples_ext").joinpath(MANIFEST_RESOURCE).read_text(encoding="utf-8")
    return tuple(parse_manifest(text))


def parse_manifest(text: str) -> list[ManifestEntry]:
    """Parse a name/bytes/sha256 TSV; strict, because a bad manifest would make every check meaningless."""
    rows = list(csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows or rows[0] != _MANIFEST_HEADER:
        raise DataError(f"manifest header must be {_MANIFEST_HEADER}, got {rows[0] if rows else 'nothing'}")
    entries = []
    for row in rows[1:]:
        if len(row) != 3 or not row[1].isdigit() or len(row[2]) != 64:
            raise DataError(f"malformed manifest row: {row!r}")
        entries.append(ManifestEntry(name=row[0], size=int(row[1]), sha256=row[2].lower()))
    return entries


def load_manifest() -> list[ManifestEntry]:
    """The 429 notes of the pinned commit, in a fixed (sorted) order, as shipped in the package."""
    return list(_shipped_manifest())


def resolve_base_url(explicit: str | None = None) -> str:
    """Explicit argument > `MTSAMPLES_PROCEDURES_BASE_URL` (read now, not at import) > the pinned GitHub URL."""
    base = explicit or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    if is_http(base) and not base.endswith("/"):
        base += "/"
    return base


def resolve_cache_dir(default: str | Path) -> Path:
    """`MTSAMPLES_PROCEDURES_CACHE_DIR` (read now) > the caller's default (HELM's scenario output path)."""
    return Path(os.environ.get(CACHE_DIR_ENV) or default).expanduser()


def door_cache_dir(cache_dir: str | None) -> Path:
    """Where a door without HELM keeps the notes: its ``cache_dir`` argument > ``MTSAMPLES_PROCEDURES_CACHE_DIR`` >
    ``DOOR_CACHE_DIR``."""
    return Path(cache_dir).expanduser() if cache_dir else resolve_cache_dir(DOOR_CACHE_DIR)


_verified_lock = threading.Lock()
_verified_dir: Path | None = None


def remember_verified_dir(path: Path) -> None:
    """Where this process last verified the notes (the scenario calls it once the notes are in place)."""
    global _verified_dir
    with _verified_lock:
        _verified_dir = path


def verified_notes_dir() -> Path | None:
    """Where this process last verified the notes, or None before any run loaded them.

    Why a process-wide place: the control models answer from the notes, and HELM hands a client only the
    request, never the run's output path; the scenario runs before any request of its run."""
    with _verified_lock:
        return _verified_dir


def _integrity_problem(data: bytes, entry: ManifestEntry) -> str | None:
    if len(data) != entry.size:
        return f"got {len(data)} bytes, expected {entry.size} (truncated or altered)"
    digest = hashlib.sha256(data).hexdigest()
    if digest != entry.sha256:
        return f"sha256 {digest} does not match the pinned {entry.sha256}"
    return None


def _cached_ok(path: Path, entry: ManifestEntry) -> bool:
    """Size first (a stat), then the hash; hashing 429 notes of a few KB takes milliseconds."""
    try:
        if path.stat().st_size != entry.size:
            return False
        return hashlib.sha256(path.read_bytes()).hexdigest() == entry.sha256
    except OSError:
        return False


def _write_atomically(path: Path, data: bytes) -> None:
    """Temp file in the same directory + os.replace: the final name only ever holds verified bytes."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=_TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_name(name: str) -> None:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise DataError(f"unsafe note file name in manifest: {name!r}")


def _fetch_verified(fetcher: Fetcher, entry: ManifestEntry, path: Path, first: bool = False) -> None:
    data = fetcher.fetch(entry.name, first)
    problem = _integrity_problem(data, entry)
    if problem is not None:
        raise FetchError(problem)
    _write_atomically(path, data)


def ensure_notes(
    cache_dir: str | Path,
    base_url: str | None = None,
    manifest: list[ManifestEntry] | None = None,
    max_workers: int = 32,
    retry: RetryPolicy = DEFAULT_RETRY,
    progress: bool = True,
) -> dict[str, Path]:
    """Make every manifest note present and verified in `cache_dir`; {file name: path}, in manifest order.

    Cached files are checked locally (size + sha256), so a warm cache makes no request at all. Missing or
    stale files are fetched in parallel. Every failure is collected rather than aborting the batch, so the
    good files are cached either way; then one DataError names each failed file and why.
    """
    entries = load_manifest() if manifest is None else list(manifest)
    base = resolve_base_url(base_url)
    cache = Path(cache_dir).expanduser()
    cache.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    to_fetch: list[ManifestEntry] = []
    for entry in entries:
        _check_name(entry.name)
        path = cache / entry.name
        paths[entry.name] = path
        if _cached_ok(path, entry):
            continue
        if path.exists():
            hwarn(f"Cached note {entry.name!r} in {cache} does not match its pinned size/sha256; fetching it again")
            path.unlink()
        to_fetch.append(entry)
    if not to_fetch:
        return paths

    hlog(f"Fetching {len(to_fetch)} of {len(entries)} MTSamples Procedures notes from {base} into {cache}")
    failures: dict[str, str] = {}
    with closing(Fetcher(base, retry)) as fetcher:
        first = to_fetch[0]
        try:  # alone first: an unreachable host fails here (NoteHostUnreachable), not 429 times
            _fetch_verified(fetcher, first, paths[first.name], first=True)
        except HostUnreachable as e:
            raise NoteHostUnreachable(
                f"{e}. Offline? Set {BASE_URL_ENV} to a mirror URL, a file:// URL or a directory holding the notes"
            ) from None
        except (FetchError, OSError) as e:
            failures[first.name] = str(e) or type(e).__name__
        _fetch_all(fetcher, to_fetch[1:], paths, failures, max_workers, progress)
    if failures:
        ordered = {e.name: failures[e.name] for e in to_fetch if e.name in failures}
        lines = "\n".join(f"  {name}: {reason}" for name, reason in ordered.items())
        raise DataError(
            f"{len(ordered)} of {len(entries)} MTSamples Procedures notes could not be fetched intact from "
            f"{base} (the other notes are cached in {cache}):\n{lines}",
            ordered,
        )
    return paths


def _fetch_all(
    fetcher: Fetcher,
    to_fetch: list[ManifestEntry],
    paths: dict[str, Path],
    failures: dict[str, str],
    max_workers: int,
    progress: bool,
) -> None:
    if not to_fetch:
        return
    with (
        ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(to_fetch)))) as pool,
        tqdm(total=len(to_fetch), desc="MTSamples notes", unit="file", disable=not progress) as bar,
    ):
        futures = {pool.submit(_fetch_verified, fetcher, e, paths[e.name]): e for e in to_fetch}
        for future in as_completed(futures):
            error = future.exception()
            if error is not None:
                failures[futures[future].name] = str(error) or type(error).__name__
            bar.update(1)
