"""HELM's SQLite cache of judge replies, read and written through one open connection per file.

Why: HELM's ``Cache.get`` opens its SQLite file for every lookup (``SqliteKeyValueStore``: a new ``SqliteDict``,
which starts a thread, connects, and walks the caller's stack, reading source files, for every statement) and
closes it again. A judge call looks its reply up once per response format it may have been stored under before
going live, so at a fast endpoint those opens, not the calls, set the pace: the fan-out took 1.75x the bare
OpenAI SDK's time for the same calls. Here each cache file is opened once per process and kept, with the same
table, keys (HELM's ``request_to_key``) and values as HELM's store, so HELM and older releases read what is
written here and it reads theirs. A file removed or replaced since (a test's fresh cache at the same path) is
opened anew. A cache that is not SQLite (MongoDB, none) is left to HELM.

The keys a file holds are read once when it is opened, so a lookup that cannot hit (every call of a fresh run)
asks nothing of SQLite; a row another process writes to the same file meanwhile is not seen, and that call is
made again (its reply stored over the other). Writers share commits (``_File.put``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Mapping
from contextlib import closing
from typing import Any

from helm.common.cache import SqliteCacheConfig, cache_stats
from helm.common.hierarchical_logger import hlog
from helm.common.key_value_store import request_to_key
from sqlitedict import SqliteDict


class _File:
    """One open cache file: its connection (``SqliteDict``'s one thread), and commits shared by concurrent writers.

    Group commit: a writer queues its row, then waits for a commit that covers it; one writer commits for all the
    rows queued so far while the others wait for it. Every reply is on disk before its call returns, as with
    HELM's store, but 48 concurrent writers cost a few commits (an fsync each, ~4 ms here), not 48 in a row."""

    def __init__(self, path: str) -> None:
        self.store = SqliteDict(path, outer_stack=False)  # HELM's table and encoding; no stack walk per statement
        # held open so the file's inode cannot be reused by a new file at the same path while this one is in use
        self._fd = os.open(path, os.O_RDONLY)
        self.inode = os.fstat(self._fd).st_ino
        self._keys = _stored_keys(path)
        self._cond = threading.Condition()
        self._queued = 0  # rows queued so far (a writer's ticket)
        self._committed = 0  # rows covered by a finished commit
        self._committing = False

    def close(self) -> None:
        self.store.close(do_log=False, force=True)
        os.close(self._fd)

    def holds(self, key: str) -> bool:
        return _digest(key) in self._keys

    def get(self, key: str) -> Any:
        """The value stored under ``key``, or None; a key this file never held is answered without asking SQLite
        (a miss, the common case of a fresh run, would otherwise wait behind every queued write)."""
        return self.store.get(key) if _digest(key) in self._keys else None

    def put(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``; returns once a commit covering it is done."""
        with self._cond:
            self.store[key] = value  # queued on the connection's thread, in ticket order
            self._keys.add(_digest(key))
            self._queued += 1
            ticket = self._queued
            while self._committed < ticket:
                if self._committing:
                    self._cond.wait()
                    continue
                self._committing = True
                covered = self._queued
                self._cond.release()
                try:
                    self.store.commit()
                finally:
                    self._cond.acquire()
                    self._committing = False
                    self._committed = max(self._committed, covered)
                    self._cond.notify_all()


def _digest(key: str) -> bytes:
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _stored_keys(path: str) -> set[bytes]:
    """Digests of the keys ``path`` holds (read once, when it is opened): which lookups can hit."""
    keys: set[bytes] = set()
    with closing(sqlite3.connect(path, timeout=30)) as connection:
        tables = connection.execute("SELECT name FROM sqlite_master WHERE type='table' AND name='unnamed'").fetchall()
        if tables:
            for (key,) in connection.execute('SELECT key FROM "unnamed"'):
                keys.add(_digest(str(key)))
    return keys


_OPEN: dict[str, _File] = {}
_LOCK = threading.Lock()


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _file(path: str) -> _File:
    """The open file at ``path``: opened at the first use, again when the file was removed or replaced."""
    opened = _OPEN.get(path)
    if opened is not None and opened.inode == _inode(path):
        return opened
    with _LOCK:
        opened = _OPEN.get(path)
        if opened is not None and opened.inode == _inode(path):
            return opened
        if opened is not None:
            opened.close()
        _OPEN[path] = _File(path)
        return _OPEN[path]


class SharedStore:
    """One HELM cache file, as HELM's ``Cache`` uses it (lookup, then compute and store on a miss)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def get(self, request: Mapping[str, Any], compute: Any) -> tuple[dict[str, Any], bool]:
        """What ``Cache.get`` returns: (the response, whether it came from the cache); ``compute`` on a miss."""
        cache_stats.increment_query(self.path)
        key = request_to_key(request)
        file = _file(self.path)
        found = file.get(key)
        if found:
            return found, True
        cache_stats.increment_compute(self.path)
        response = compute()
        try:
            file.put(key, response)
        except Exception as e:  # as HELM: a reply that cannot be stored is still this call's reply
            hlog(f"Error when writing to cache: {e}")
        return response, False

    def may_hold(self, request: Mapping[str, Any]) -> bool:
        """Whether a lookup of ``request`` can hit (False: the file holds no such key, and SQLite is not asked)."""
        return _file(self.path).holds(request_to_key(request))


def shared_store(cache: Any) -> SharedStore | None:
    """The shared store of a HELM ``Cache`` backed by SQLite; None for any other (HELM's own get is used)."""
    config = getattr(cache, "config", None)
    return SharedStore(config.path) if isinstance(config, SqliteCacheConfig) else None
