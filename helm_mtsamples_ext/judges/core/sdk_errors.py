"""What waiting can do about an error an OpenAI-compatible SDK raised, read by its class names and `status_code`.

Both doors without HELM (the OpenAI SDK's async client, Inspect's model API over the same SDK) classify the same
errors the same way, and duck typing keeps the core free of the SDK: no import of `openai` here.
"""

from __future__ import annotations

RETRIED_STATUS = (408, 409)
"""Client-error statuses that waiting can fix (the SDK retries them too); 429 and 5xx besides."""


def _named(error: BaseException, name: str) -> bool:
    return any(cls.__name__ == name for cls in type(error).__mro__)


def status_of(error: BaseException) -> int | None:
    status = getattr(error, "status_code", None)
    return status if isinstance(status, int) else None


def kind_of(error: BaseException) -> str:
    """What waiting can do about ``error``: ``timeout``, ``connection``, ``rate_limited``, ``server`` (retried)
    or ``final``."""
    if isinstance(error, TimeoutError) or _named(error, "APITimeoutError"):
        return "timeout"
    if _named(error, "APIConnectionError"):
        return "connection"
    status = status_of(error)
    if status == 429:
        return "rate_limited"
    if status is not None and (status >= 500 or status in RETRIED_STATUS):
        return "server"
    return "final"


__all__ = ["RETRIED_STATUS", "kind_of", "status_of"]
