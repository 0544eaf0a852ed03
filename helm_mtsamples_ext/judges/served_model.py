"""The model a judge server says it ran: its ``model`` field and ``system_fingerprint``.

Why: a hosted judge changes behind a fixed name (``gpt-4o-mini`` today is not last year's weights). The
request names what was asked for; only the reply says what answered. Kept per verdict, a suite judged over
months shows when its verdicts came from more than one model. Servers differ: many send no fingerprint,
some no model, a few send a number or an empty string. Anything that is not a non-empty string is ``None``,
never a crash, so a reply of any shape (live, or replayed from HELM's cache) is read the same way.
Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_CHARS = 200
"""Longest value kept: a model name or fingerprint is short; anything longer is a server's junk, cut."""


@dataclass(frozen=True)
class ServedModel:
    """What a judge server reported having run for one reply; ``None`` where it said nothing usable."""

    reported_model: str | None
    system_fingerprint: str | None


NOT_REPORTED = ServedModel(None, None)


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value[:MAX_CHARS] if value else None


def served_model(response: Mapping[str, Any]) -> ServedModel:
    """The ``model`` and ``system_fingerprint`` of an OpenAI-compatible chat completion, of any shape."""
    if not isinstance(response, Mapping):
        return NOT_REPORTED
    return ServedModel(_text(response.get("model")), _text(response.get("system_fingerprint")))
