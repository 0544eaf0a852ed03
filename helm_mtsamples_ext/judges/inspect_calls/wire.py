"""The Inspect door's judges behind an HTTP client that masks every key in what their servers send back.

Why at the wire: Inspect keeps each model call's reply and error in its log (and its realtime buffer) before our
scorer sees them, so a judge server that repeats the key it was sent (in a verdict's explanation, in an error's
text, in a header) would put it in a file the user shares. Masked as the response arrives, no key reaches Inspect.
The client is the OpenAI SDK's own (``DefaultAsyncHttpxClient``, in whichever httpx flavour the SDK builds on)
with Inspect's transport settings where Inspect exposes them; only the transport is wrapped.

The wire is also where a judge's 200 is first seen whole, so it keeps two more promises of every door there:
- a 200 on the chat route that holds no text to read (an ``error`` object alone or beside the choices, an HTML
  page, a choice without a message, a refusal, ...) fails the call as ``NamedReply``, in ``completion_failure``'s
  words, before Inspect parses it in its own (a ``TypeError``, a ``ValidationError``, an ``OpenAIResponseError``);
- a reply over ``REPLY_CAP`` reaches Inspect clipped to ``REPLY_CAP + 1`` characters (so Inspect's log and
  memory never keep it whole, and the core still sees it is over the cap), its true length told to the turn
  through ``CLIPPED``; a body past ``BODY_CEILING`` bytes is not read further and fails as ``reply too long``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from helm_mtsamples_ext.common.failure_kinds import reply_too_long
from helm_mtsamples_ext.common.secrets import mask
from helm_mtsamples_ext.judges.core.reply.shape import completion_failure
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP
from helm_mtsamples_ext.judges.inspect_calls.errors import NamedReply

REBUILT_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as sent: the body handed on is decoded and may have changed length."""
BODY_CEILING = 16 * 1024 * 1024
"""Bytes of one response body the wire reads at most: a judge streaming an endless body cannot fill memory (a
verdict is a few hundred characters; ``REPLY_CAP`` is 64 KiB)."""
CLIPPED: ContextVar[list[int] | None] = ContextVar("CLIPPED", default=None)
"""The current turn's list of true reply lengths the wire clipped (set per turn by judges/inspect_calls/judge.py)."""


def mask_bytes(body: bytes, keys: tuple[str, ...]) -> bytes:
    """``body`` with each key masked; bytes that are not UTF-8 pass through unchanged."""
    return mask(body.decode("utf-8", "surrogateescape"), keys).encode("utf-8", "surrogateescape")


class MaskingTransport:
    """An httpx async transport (of the SDK's flavour) that reads each response (up to ``BODY_CEILING`` bytes) and
    masks ``keys`` in its body and headers; a 200 chat completion is then checked and clipped
    (``checked_completion``). Reading the body here costs nothing more: the SDK reads the whole body anyway."""

    def __init__(self, inner: Any, keys: Iterable[str]) -> None:
        self.inner = inner
        self.keys = tuple(keys)

    async def handle_async_request(self, request: Any) -> Any:
        response = await self.inner.handle_async_request(request)
        try:
            body = mask_bytes(await read_bounded(response, BODY_CEILING), self.keys)
        finally:
            await response.aclose()
        if response.status_code == 200 and _chat_route(request) and not _streamed(response):
            body = checked_completion(body, lambda text: mask(text, self.keys))
        headers = [
            (name, mask(value, self.keys))
            for name, value in response.headers.items()
            if name.lower() not in REBUILT_HEADERS
        ]
        return type(response)(
            response.status_code,
            headers=headers,
            content=body,
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


async def read_bounded(response: Any, ceiling: int) -> bytes:
    """The response's body, decoded, read up to ``ceiling`` bytes; past it the call fails as ``reply too long``
    (NamedReply) without reading on. Why: httpx reads a body whole, and a judge streaming without end would fill
    memory before any cap could be checked."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > ceiling:
            raise NamedReply(f"{reply_too_long(size, REPLY_CAP)}: the body passed {ceiling} bytes and was not read on")
        chunks.append(chunk)
    return b"".join(chunks)


def checked_completion(body: bytes, scrub: Callable[[str], str]) -> bytes:
    """A judge's 200 on the chat route as Inspect may see it: the body, its reply clipped to ``REPLY_CAP + 1``
    characters (the true length appended to ``CLIPPED``); a body holding no text to read raises ``NamedReply`` in
    ``completion_failure``'s words (the same at every door)."""
    try:
        parsed = json.loads(body)
    except ValueError:  # not JSON (an HTML page), or not UTF-8
        parsed = None
    failure = completion_failure(parsed, scrub)
    if failure is not None:
        raise NamedReply(failure)
    message = parsed["choices"][0]["message"]  # completion_failure found a first choice with a message
    content = message.get("content")
    if not isinstance(content, str) or len(content) <= REPLY_CAP:
        return body
    lengths = CLIPPED.get()
    if lengths is not None:
        lengths.append(len(content))
    message["content"] = content[: REPLY_CAP + 1]
    return json.dumps(parsed).encode("utf-8", "surrogateescape")


def _chat_route(request: Any) -> bool:
    return str(request.url.path).rstrip("/").endswith("/chat/completions")


def _streamed(response: Any) -> bool:
    return "event-stream" in str(response.headers.get("content-type", ""))


def masking_client(keys: Iterable[str]) -> Any:
    """The SDK's async HTTP client with Inspect's defaults (timeouts, limits, proxies), each transport masking
    ``keys``."""
    from openai import DefaultAsyncHttpxClient

    try:  # Inspect's own settings for SDK clients (connect timeout, keep-alive, loop-scoped transport, proxies)
        from inspect_ai._util.http_defaults_httpx2 import default_client_kwargs

        kwargs: dict[str, Any] = default_client_kwargs()
    except ImportError:  # an Inspect without them: the SDK's defaults
        kwargs = {}
    keys = tuple(keys)
    if "transport" not in kwargs:
        kwargs["transport"] = _sdk_transport_type()()
    kwargs["transport"] = MaskingTransport(kwargs["transport"], keys)
    if kwargs.get("mounts"):
        kwargs["mounts"] = {
            pattern: None if t is None else MaskingTransport(t, keys) for pattern, t in kwargs["mounts"].items()
        }
    return DefaultAsyncHttpxClient(**kwargs)


def _sdk_transport_type() -> Any:
    """``AsyncHTTPTransport`` of the httpx flavour the SDK's client is built on."""
    import importlib

    from openai import DefaultAsyncHttpxClient

    base = next(c for c in DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.split(".")[0]).AsyncHTTPTransport


__all__ = ["BODY_CEILING", "CLIPPED", "MaskingTransport", "checked_completion", "mask_bytes", "masking_client"]
