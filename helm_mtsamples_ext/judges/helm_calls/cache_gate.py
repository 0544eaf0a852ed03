"""The one gate to HELM's cache for judge replies: it sees what HELM drops and decides what is stored.

HELM's clients turn an SDK exception into an error string and drop the response's headers and ``usage``;
the gate (``install_gate``) stands in for a client's HELM cache to see both (the 429's Retry-After, the
tokens spent), for outcome.py to name each exchange, and what the server said it ran (``model``,
``system_fingerprint``: served_model.py), read from the reply as sent or as stored, so a replay tells it too.
Being the gate, it decides what is stored there:
- only chat completions: a 200 holding an HTML page or an error body is no answer, and stored it would be
  replayed as one forever;
- only replies up to ``REPLY_CAP`` characters (a runaway server once filled 210 MB of cache);
- never a key: a server may echo the Authorization header back, so what is stored is scrubbed first;
- only what HELM can read back: a completion without text is stored readable and replays as the named
  failure it was live (``reply_shape.py``), so a refusal neither crashes a run nor every re-run;
- and it can answer from the cache alone (``replay_only``), so a re-run needs no server.
It reads and writes HELM's SQLite cache through one open connection per file (``cache_store.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from helm_mtsamples_ext.common.failure_kinds import reply_too_long
from helm_mtsamples_ext.common.outside_text import strings_mapped
from helm_mtsamples_ext.judges.core.reply.served_model import LOADED_KEY, NOT_REPORTED, ServedModel, served_model
from helm_mtsamples_ext.judges.core.reply.shape import NoText, error_beside, readable, reply_shape, unreadable
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP, STORED_REPLY_CAP
from helm_mtsamples_ext.judges.helm_calls.cache_store import shared_store


class NotCached(Exception):
    """A replay-only lookup found nothing in HELM's cache (the server was not called)."""


class NotACompletion(Exception):
    """The server answered, but not with a chat completion (an HTML page, an error body with status 200)."""


class ReplyTooLong(Exception):
    """The reply is longer than ``REPLY_CAP``; ``head`` keeps its first ``STORED_REPLY_CAP`` characters."""

    def __init__(self, length: int, head: str) -> None:
        super().__init__(reply_too_long(length, REPLY_CAP))
        self.length = length
        self.head = head


def clip(text: str, cap: int = STORED_REPLY_CAP) -> str:
    """At most ``cap`` characters of ``text``, saying its full length when cut."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}… [cut: {len(text)} characters in all]"


def completion_problem(response: Any, scrub: Callable[[str], str]) -> Exception | None:
    """Why ``response`` (the SDK's reply as HELM caches it) is no chat completion to store, or None."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = response.get("error") if isinstance(response, dict) else None
        said = error.get("message", error) if isinstance(error, dict) else error
        detail = f": the body is an error: {clip(scrub(str(said)), 200)}" if said else ""
        return NotACompletion(f"the endpoint answered 200 but not with a chat completion{detail}")
    beside = error_beside(response)
    if beside is not None:  # raised, so never stored: a proxy's failure is not the judge's answer
        return NoText(clip(scrub(beside), 300))
    no_text = unreadable(response)
    if no_text is not None:
        return no_text
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str) and len(content) > REPLY_CAP:
        return ReplyTooLong(len(content), content[:STORED_REPLY_CAP])
    return None


class CacheGate:
    """Stands in for a client's HELM cache to see what HELM drops: ``usage`` tokens in the cached response,
    and the SDK exception (status, Retry-After headers, timeout) that HELM turns into an error string."""

    def __init__(self, cache: Any, scrub: Callable[[str], str] = str) -> None:
        self._cache = cache
        self._store = shared_store(cache)
        self._scrub = scrub
        self._local = threading.local()
        self.loaded_model: str | None = None  # what the server said it loaded, stored with each live reply

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    def may_hold(self, key: Any) -> bool:
        """Whether HELM's cache may hold a reply under ``key`` (HELM's cache key): False only when it surely
        does not, so a replay that must miss costs no HELM request and no SQLite lookup."""
        return self._store is None or self._store.may_hold(key)

    @contextmanager
    def replay_only(self) -> Iterator[None]:
        """Within it, a request HELM's cache cannot answer raises NotCached instead of reaching the server."""
        self._local.replay_only = True
        try:
            yield
        finally:
            self._local.replay_only = False

    def get(self, request: Any, compute: Callable[[], Any]) -> Any:
        def tapped() -> Any:
            if getattr(self._local, "replay_only", False):
                raise NotCached()
            try:
                response = compute()
            except Exception as e:
                self._local.error = e
                raise
            problem = completion_problem(response, self._scrub)
            if problem is not None:  # raised, so HELM stores nothing
                self._local.error = problem
                raise problem
            stored = strings_mapped(readable(response), self._scrub)
            if isinstance(stored, dict):
                stored.pop(LOADED_KEY, None)  # only what our own probe learned, never what a reply claims
                if self.loaded_model is not None:
                    stored[LOADED_KEY] = self.loaded_model
            return stored

        response, cached = (self._store or self._cache).get(request, tapped)
        self._local.shape = reply_shape(response)  # live or replayed, and caches written before reply_shape.py
        self._local.served = served_model(response)
        usage = response.get("usage") if isinstance(response, dict) else None
        self._local.tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        self._local.split = (
            (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
            if isinstance(usage, dict)
            else (None, None)
        )
        return response, cached

    def take(self) -> tuple[int | None, BaseException | None]:
        tokens, error = getattr(self._local, "tokens", None), getattr(self._local, "error", None)
        self._local.tokens = self._local.error = None
        return (tokens if isinstance(tokens, int) else None), error

    def take_shape(self) -> str | None:
        """The named failure of the last reply on this thread that held no text (``reply_shape``), or None."""
        shape = getattr(self._local, "shape", None)
        self._local.shape = None
        return shape

    def take_served(self) -> ServedModel:
        """The model and fingerprint the last reply on this thread reported (NOT_REPORTED when none)."""
        served = getattr(self._local, "served", NOT_REPORTED)
        self._local.served = NOT_REPORTED
        return served

    def take_split(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens of the last exchange on this thread, for what judging cost."""
        split = getattr(self._local, "split", (None, None))
        self._local.split = (None, None)
        return split


def install_gate(client: Any, scrub: Callable[[str], str]) -> CacheGate | None:
    """Put a CacheGate in front of a HELM ``CachingClient``'s cache (idempotent); None for a client without one."""
    cache = getattr(client, "cache", None)
    if cache is None:
        return None
    if not isinstance(cache, CacheGate):
        cache = CacheGate(cache, scrub)
        setattr(client, "cache", cache)  # noqa: B010 - CachingClient.cache, not on Client
    return cache


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
