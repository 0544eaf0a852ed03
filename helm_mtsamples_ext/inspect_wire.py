"""The Inspect door's judges behind an HTTP client that masks every key in what their servers send back.

Why at the wire: Inspect keeps each model call's reply and error in its log (and its realtime buffer) before our
scorer sees them, so a judge server that repeats the key it was sent (in a verdict's explanation, in an error's
text, in a header) would put it in a file the user shares. Masked as the response arrives, no key reaches Inspect.
The client is the OpenAI SDK's own (``DefaultAsyncHttpxClient``, in whichever httpx flavour the SDK builds on)
with Inspect's transport settings where Inspect exposes them; only the transport is wrapped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from helm_mtsamples_ext.common.secrets import mask

REBUILT_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""Headers that describe the body as sent: the body handed on is decoded and may have changed length."""


def mask_bytes(body: bytes, keys: tuple[str, ...]) -> bytes:
    """``body`` with each key masked; bytes that are not UTF-8 pass through unchanged."""
    return mask(body.decode("utf-8", "surrogateescape"), keys).encode("utf-8", "surrogateescape")


class MaskingTransport:
    """An httpx async transport (of the SDK's flavour) that reads each response whole and masks ``keys`` in its
    body and headers. Bounded as the reply already is: the SDK reads the whole body anyway."""

    def __init__(self, inner: Any, keys: Iterable[str]) -> None:
        self.inner = inner
        self.keys = tuple(keys)

    async def handle_async_request(self, request: Any) -> Any:
        response = await self.inner.handle_async_request(request)
        try:
            body = await response.aread()
        finally:
            await response.aclose()
        headers = [
            (name, mask(value, self.keys))
            for name, value in response.headers.items()
            if name.lower() not in REBUILT_HEADERS
        ]
        return type(response)(
            response.status_code,
            headers=headers,
            content=mask_bytes(body, self.keys),
            request=request,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self.inner.aclose()


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


__all__ = ["MaskingTransport", "mask_bytes", "masking_client"]
