"""download.py: how one note's bytes are fetched, against a loopback mirror (tests/servers/mirror.py): what is
retried and what is not, a host that takes no connection, and a directory on disk as the mirror."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helm_mtsamples_ext.data.download import Fetcher, FetchError, HostUnreachable, RetryPolicy, note_url
from tests.servers.mirror import NoteMirror

FAST = RetryPolicy(attempts=3, wait_initial=0.0, wait_max=0.0, timeout=5.0)
NOTES = {"Plain Note.txt": b"PROCEDURE: Plain.\nPLAN: Rest.\n", "Angiogram & Angioplasty.txt": b"SUMMARY: Stent.\n"}


@pytest.fixture
def source(tmp_path: Path) -> Path:
    src = tmp_path / "source"
    src.mkdir()
    for name, payload in NOTES.items():
        (src / name).write_bytes(payload)
    return src


@pytest.fixture
def mirror(source: Path) -> Iterator[NoteMirror]:
    with NoteMirror(source) as m:
        yield m


@pytest.fixture
def fetcher(mirror: NoteMirror) -> Iterator[Fetcher]:
    fetcher = Fetcher(mirror.base_url, FAST)
    try:
        yield fetcher
    finally:
        fetcher.close()


def test_a_name_reaches_the_server_whole() -> None:
    """`#`, `&`, spaces and non-ASCII are quoted into the path (HELM's `#` bug cut names at the fragment)."""
    assert note_url("http://h/notes/", "Report #2 & é.txt") == "http://h/notes/Report%20%232%20%26%20%C3%A9.txt"


def test_server_errors_are_retried_until_success(mirror: NoteMirror, fetcher: Fetcher) -> None:
    """500 twice then 200: three requests for that note, and its bytes."""
    name = "Angiogram & Angioplasty.txt"
    mirror.fail(name, times=2)
    assert fetcher.fetch(name) == NOTES[name]
    assert mirror.requests_for(name) == 3


def test_dropped_connection_is_retried(mirror: NoteMirror, fetcher: Fetcher) -> None:
    """A body cut short below its Content-Length (connection dropped) is retried."""
    name = "Plain Note.txt"
    mirror.drop(name, times=1)
    assert fetcher.fetch(name) == NOTES[name]
    assert mirror.requests_for(name) == 2


def test_persistent_server_error_gives_up_after_the_attempt_budget(mirror: NoteMirror, fetcher: Fetcher) -> None:
    """A note that keeps failing with 500 is tried exactly `attempts` times, then reported as such."""
    name = "Plain Note.txt"
    mirror.fail(name, times=100)
    with pytest.raises(FetchError, match=f"gave up after {FAST.attempts} attempts"):
        fetcher.fetch(name)
    assert mirror.requests_for(name) == FAST.attempts


def test_not_found_is_not_retried(mirror: NoteMirror, fetcher: Fetcher) -> None:
    """404 is permanent: exactly one request for that note."""
    name = "Angiogram & Angioplasty.txt"
    mirror.not_found(name)
    with pytest.raises(FetchError, match="404"):
        fetcher.fetch(name)
    assert mirror.requests_for(name) == 1


def test_a_host_taking_no_connection_is_unreachable_at_once_on_the_first_note(
    mirror: NoteMirror, fetcher: Fetcher
) -> None:
    """Connection refused on the first note: no retry, the host and the reason named (data.py adds the fix)."""
    host = mirror.base_url.split("/")[2]
    mirror.stop()
    with pytest.raises(HostUnreachable) as info:
        fetcher.fetch("Plain Note.txt", first=True)
    assert (info.value.host, info.value.reason) == (host, "connection refused")
    with pytest.raises(FetchError, match=f"gave up after {FAST.attempts} attempts"):  # a later note: retried
        fetcher.fetch("Plain Note.txt")


@pytest.mark.parametrize("as_uri", [True, False], ids=["file-url", "plain-dir"])
def test_a_directory_serves_as_the_mirror(source: Path, as_uri: bool) -> None:
    """A file:// URL or a plain directory path is read from disk; a missing file is not retried."""
    fetcher = Fetcher(source.as_uri() if as_uri else str(source), FAST)
    assert fetcher.fetch("Plain Note.txt") == NOTES["Plain Note.txt"]
    with pytest.raises(FetchError, match="cannot read"):
        fetcher.fetch("Missing.txt")
