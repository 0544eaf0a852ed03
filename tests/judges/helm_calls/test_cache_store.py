"""HELM's SQLite cache through one open connection per file (judges/helm_calls/cache_store.py): what it writes HELM
reads and
the other way round, every reply is committed before its call returns however many write at once, a key the file
never held is a miss without a lookup, and a file replaced at the same path is read anew."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helm.common.cache import Cache, SqliteCacheConfig

from helm_mtsamples_ext.judges.helm_calls.cache_store import SharedStore, shared_store

pytestmark = pytest.mark.helm


class Missing(Exception):
    pass


def missing() -> dict[str, Any]:
    raise Missing()


def reply(i: int) -> dict[str, Any]:
    return {"choices": [{"message": {"role": "assistant", "content": f"verdict {i}"}}], "usage": {"total_tokens": i}}


def rows(path: Path) -> int:
    with sqlite3.connect(path) as connection:
        return int(connection.execute('SELECT count(*) FROM "unnamed"').fetchone()[0])


def test_what_it_writes_helm_reads_and_what_helm_wrote_it_reads(tmp_path: Path) -> None:
    ours_path, helms_path = str(tmp_path / "ours.sqlite"), str(tmp_path / "helm.sqlite")
    request = {"model": "judge", "messages": [{"role": "user", "content": "Rate this plan ✓"}], "temperature": 0.0}
    assert SharedStore(ours_path).get(request, lambda: reply(1)) == (reply(1), False)
    assert Cache(SqliteCacheConfig(ours_path)).get(request, missing) == (reply(1), True)

    Cache(SqliteCacheConfig(helms_path)).get(request, lambda: reply(2))
    store = SharedStore(helms_path)
    assert store.may_hold(request)
    assert store.get(request, missing) == (reply(2), True)


def test_a_key_the_file_never_held_is_a_miss_until_it_is_stored(tmp_path: Path) -> None:
    store = SharedStore(str(tmp_path / "c.sqlite"))
    request = {"prompt": "never asked"}
    assert not store.may_hold(request)
    with pytest.raises(Missing):
        store.get(request, missing)
    store.get(request, lambda: reply(3))
    assert store.may_hold(request) and store.get(request, missing) == (reply(3), True)


def test_every_reply_is_committed_before_its_call_returns_however_many_write_at_once(tmp_path: Path) -> None:
    path = tmp_path / "many.sqlite"
    store = SharedStore(str(path))

    def write(i: int) -> int:
        store.get({"prompt": f"note {i}"}, lambda: reply(i))
        with sqlite3.connect(path) as connection:  # another connection sees it: committed, not only queued
            found = connection.execute('SELECT count(*) FROM "unnamed" WHERE key = ?', (f'{{"prompt": "note {i}"}}',))
            return int(found.fetchone()[0])

    with ThreadPoolExecutor(max_workers=32) as pool:
        seen = list(pool.map(write, range(200)))
    assert seen == [1] * 200
    assert rows(path) == 200


def test_a_cache_file_replaced_at_the_same_path_is_read_anew(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    request = {"prompt": "same"}
    SharedStore(str(path)).get(request, lambda: reply(1))
    path.unlink()
    Cache(SqliteCacheConfig(str(path))).get(request, lambda: reply(2))
    assert SharedStore(str(path)).get(request, missing) == (reply(2), True)


def test_a_cache_that_is_not_sqlite_is_left_to_helm() -> None:
    class Other:
        config = object()

    assert shared_store(Other()) is None
