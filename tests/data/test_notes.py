"""data.py: the pinned notes verified and cached, exercised end to end against a loopback mirror
(tests/servers/mirror.py). How one note's bytes are fetched and retried is tests/data/test_download.py's."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from helm_mtsamples_ext.data import notes as data
from helm_mtsamples_ext.data.download import RetryPolicy
from helm_mtsamples_ext.data.notes import (
    BASE_URL_ENV,
    CACHE_DIR_ENV,
    DEFAULT_BASE_URL,
    PINNED_COMMIT,
    DataError,
    ManifestEntry,
    NoteHostUnreachable,
    ensure_notes,
    load_manifest,
    parse_manifest,
    resolve_base_url,
    resolve_cache_dir,
)
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.helm

FAST = RetryPolicy(attempts=3, wait_initial=0.0, wait_max=0.0, timeout=5.0)
Source = tuple[Path, list[ManifestEntry]]
NOTES = {
    "Plain Note.txt": "PROCEDURE: Plain.\nPLAN: Rest.\n",
    "Dental Surgery Sample Report #2.txt": "FINDINGS: Caries.\n",
    "Angiogram & Angioplasty.txt": "SUMMARY: Stent placed.\n",
    "Carpal Tunnel & de Quervain's Release.txt": "PLAN: Splint.\r\nFollow-up in 2 weeks.\r\n",
    "Café résumé – ü.txt": "PLAN: Résumé naïve café.\n",
}


def _entry(name: str, payload: bytes) -> ManifestEntry:
    return ManifestEntry(name=name, size=len(payload), sha256=hashlib.sha256(payload).hexdigest())


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BASE_URL_ENV, raising=False)
    monkeypatch.delenv(CACHE_DIR_ENV, raising=False)


@pytest.fixture
def source(tmp_path: Path) -> Source:
    """A directory of small notes with awkward names, and their manifest."""
    src = tmp_path / "source dir é"
    src.mkdir()
    manifest = []
    for name, text in NOTES.items():
        payload = text.encode("utf-8")
        (src / name).write_bytes(payload)
        manifest.append(_entry(name, payload))
    return src, manifest


@pytest.fixture
def mirror(source: Source) -> Iterator[NoteMirror]:
    with NoteMirror(source[0]) as m:
        yield m


def _fetch(cache: Path, mirror: NoteMirror, manifest: list[ManifestEntry]) -> dict[str, Path]:
    return ensure_notes(cache, base_url=mirror.base_url, manifest=manifest, retry=FAST, progress=False)


def _leftovers(cache: Path, manifest: list[ManifestEntry]) -> set[str]:
    return {p.name for p in cache.iterdir()} - {e.name for e in manifest}


def test_cold_download_caches_every_note_byte_for_byte(tmp_path: Path, source: Source, mirror: NoteMirror) -> None:
    """Cold cache: one request per note, each cached under its original name with its exact bytes
    (CRLF and UTF-8 kept), returned in manifest order; names with #, &, ', spaces and non-ASCII are
    URL-quoted so the server receives the whole name (HELM's `#` bug)."""
    src, manifest = source
    cache = tmp_path / "cache"
    paths = _fetch(cache, mirror, manifest)
    assert list(paths) == [e.name for e in manifest]
    for entry in manifest:
        assert paths[entry.name] == cache / entry.name
        assert paths[entry.name].read_bytes() == (src / entry.name).read_bytes()
    assert sorted(mirror.requested_paths) == sorted(NOTES)
    assert _leftovers(cache, manifest) == set()


def test_warm_cache_makes_no_request_even_with_the_mirror_stopped(
    tmp_path: Path, source: Source, mirror: NoteMirror
) -> None:
    """A verified cache is served locally: zero requests, and it works when the network is gone."""
    _, manifest = source
    cache = tmp_path / "cache"
    _fetch(cache, mirror, manifest)
    mirror.reset_counts()
    assert _fetch(cache, mirror, manifest) and mirror.request_count == 0
    mirror.stop()
    paths = _fetch(cache, mirror, manifest)
    assert all(p.is_file() for p in paths.values())


def test_stale_cached_file_is_fetched_again_with_a_warning(
    tmp_path: Path, source: Source, mirror: NoteMirror, caplog: pytest.LogCaptureFixture
) -> None:
    """A cached note whose checksum no longer matches is re-fetched (only that one) and named in a warning."""
    src, manifest = source
    cache = tmp_path / "cache"
    _fetch(cache, mirror, manifest)
    stale = "Angiogram & Angioplasty.txt"
    (cache / stale).write_bytes(b"SUMMARY: edited by hand\n")
    mirror.reset_counts()
    with caplog.at_level(logging.WARNING, logger="helm"):
        _fetch(cache, mirror, manifest)
    assert mirror.requested_paths == [stale]
    assert (cache / stale).read_bytes() == (src / stale).read_bytes()
    assert any(stale in r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)
    (cache / stale).write_bytes(b"SUMMARY: edited again\n")
    mirror.corrupt(stale)
    with pytest.raises(DataError, match="Angiogram"):
        _fetch(cache, mirror, manifest)
    assert not (cache / stale).exists()  # a known-bad copy is not kept under the note's name


def test_failed_write_leaves_no_temp_file(
    tmp_path: Path, source: Source, mirror: NoteMirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the final rename fails (disk full, permissions), the temp file is removed and the note is reported."""
    _, manifest = source
    cache = tmp_path / "cache"

    def refuse(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(data.os, "replace", refuse)
    with pytest.raises(DataError) as info:
        _fetch(cache, mirror, manifest)
    assert set(info.value.failures) == set(NOTES) and "No space" in str(info.value)
    assert list(cache.iterdir()) == []


def test_checksum_mismatch_fails_that_file_only_and_leaves_nothing_behind(
    tmp_path: Path, source: Source, mirror: NoteMirror
) -> None:
    """A corrupted download raises DataError naming the file, leaves no file of that name and no temp
    file in the cache, and every other note is still cached."""
    _, manifest = source
    bad = "Dental Surgery Sample Report #2.txt"
    mirror.corrupt(bad)
    cache = tmp_path / "cache"
    with pytest.raises(DataError) as info:
        _fetch(cache, mirror, manifest)
    assert list(info.value.failures) == [bad]
    assert "sha256" in info.value.failures[bad] and bad in str(info.value)
    assert not (cache / bad).exists()
    assert _leftovers(cache, manifest) == set()
    assert {p.name for p in cache.iterdir()} == set(NOTES) - {bad}


def test_truncated_download_is_an_error_and_every_failure_is_listed(
    tmp_path: Path, source: Source, mirror: NoteMirror
) -> None:
    """A short body is caught by the size check; one DataError lists every failed file with its reason."""
    _, manifest = source
    short, missing = "Plain Note.txt", "Café résumé – ü.txt"
    mirror.truncate(short)
    mirror.not_found(missing)
    cache = tmp_path / "cache"
    with pytest.raises(DataError) as info:
        _fetch(cache, mirror, manifest)
    assert set(info.value.failures) == {short, missing}
    assert "expected" in info.value.failures[short] and "404" in info.value.failures[missing]
    assert short in str(info.value) and missing in str(info.value)
    assert not (cache / short).exists() and not (cache / missing).exists()
    assert len(list(cache.iterdir())) == len(NOTES) - 2


def test_an_unreachable_mirror_fails_at_once_with_one_line_naming_the_base_url_variable(
    tmp_path: Path, source: Source, mirror: NoteMirror
) -> None:
    """Connection refused on a cold cache: no retries of every note, one line saying how to use a mirror,
    no partial files."""
    _, manifest = source
    mirror.stop()
    cache = tmp_path / "cache"
    with pytest.raises(NoteHostUnreachable) as info:
        _fetch(cache, mirror, manifest)
    message = str(info.value)
    assert "\n" not in message and "connection refused" in message
    assert "MTSAMPLES_PROCEDURES_BASE_URL" in message and "file://" in message
    assert list(cache.iterdir()) == []


@pytest.mark.parametrize("as_uri", [True, False], ids=["file-url", "plain-dir"])
def test_local_directory_base_for_air_gapped_use(tmp_path: Path, source: Source, as_uri: bool) -> None:
    """A file:// URL or a plain directory path (here with a space and non-ASCII) serves as the mirror,
    with the same verification: a corrupted local copy is refused."""
    src, manifest = source
    base = src.as_uri() if as_uri else str(src)
    cache = tmp_path / "cache"
    paths = ensure_notes(cache, base_url=base, manifest=manifest, progress=False)
    assert {n: p.read_bytes() for n, p in paths.items()} == {e.name: (src / e.name).read_bytes() for e in manifest}
    (src / "Plain Note.txt").write_bytes(b"tampered")
    with pytest.raises(DataError, match="Plain Note.txt"):
        ensure_notes(tmp_path / "cache2", base_url=base, manifest=manifest, progress=False)


def test_environment_overrides_are_read_at_call_time(
    tmp_path: Path, source: Source, mirror: NoteMirror, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MTSAMPLES_PROCEDURES_BASE_URL and _CACHE_DIR set after import take effect; explicit > env > default."""
    _, manifest = source
    assert resolve_base_url() == DEFAULT_BASE_URL and PINNED_COMMIT in DEFAULT_BASE_URL
    monkeypatch.setenv(BASE_URL_ENV, mirror.base_url.rstrip("/"))
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "env cache"))
    assert resolve_base_url() == mirror.base_url
    assert resolve_base_url("http://example.invalid/x") == "http://example.invalid/x/"
    cache = resolve_cache_dir(tmp_path / "helm output")
    assert cache == tmp_path / "env cache"
    ensure_notes(cache, manifest=manifest, retry=FAST, progress=False)
    assert mirror.request_count == len(NOTES)
    assert {p.name for p in cache.iterdir()} == set(NOTES)
    monkeypatch.delenv(CACHE_DIR_ENV)
    assert resolve_cache_dir(tmp_path / "helm output") == tmp_path / "helm output"


def test_manifest_parsing_is_strict(tmp_path: Path) -> None:
    """A manifest with a wrong header or a malformed row is rejected, not half-used."""
    with pytest.raises(DataError):
        parse_manifest("filename\tsize\thash\n")
    with pytest.raises(DataError):
        parse_manifest("name\tbytes\tsha256\nx.txt\tten\t" + "0" * 64 + "\n")
    with pytest.raises(DataError, match="unsafe"):
        ensure_notes(tmp_path / "cache", base_url="/nowhere", manifest=[ManifestEntry("../x.txt", 1, "0" * 64)])


def test_shipped_manifest_matches_the_pinned_snapshot(pinned_notes_dir: Path) -> None:
    """The packaged manifest lists the 429 pinned .txt notes with their true sizes and sha256s."""
    manifest = load_manifest()
    assert len(manifest) == 429 == len({e.name for e in manifest})
    assert sum("#" in e.name for e in manifest) == 7
    on_disk = {
        p.name: (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in pinned_notes_dir.iterdir()
        if p.name.endswith(".txt")
    }
    assert {e.name: (e.size, e.sha256) for e in manifest} == on_disk
    shared = pinned_notes_dir / "MANIFEST.tsv"
    if shared.is_file():  # the shared snapshot's own manifest (header "filename"), row for row
        rows = shared.read_text(encoding="utf-8").splitlines()[1:]
        assert rows == [f"{e.name}\t{e.size}\t{e.sha256}" for e in manifest]


def test_all_429_pinned_notes_through_a_mirror(tmp_path: Path, pinned_notes_dir: Path) -> None:
    """Integration: the real snapshot served over HTTP is fetched and verified in full (429 requests),
    then a second call is served from the cache alone (0 requests)."""
    with NoteMirror(pinned_notes_dir) as m:
        paths = ensure_notes(tmp_path / "cache", base_url=m.base_url, retry=FAST, progress=False)
        assert m.request_count == 429 and len(paths) == 429
        assert sorted(m.requested_paths) == sorted(e.name for e in load_manifest())
        m.reset_counts()
        assert ensure_notes(tmp_path / "cache", base_url=m.base_url, retry=FAST, progress=False) == paths
        assert m.request_count == 0
