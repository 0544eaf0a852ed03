"""A table cell as strict JSON holds it, and the one way our exports write JSON: one home for both exports.

Why: Medmarks' records and Every Eval Ever's files are read by strict parsers (``jq``, pydantic), which reject
``NaN``; a missing number must be ``null``, and a line must stay one line whatever an answer holds. The report's
table carries missing values as NaN, None or pandas' NA, and texts that came back NaN from an all-None column.
"""

from __future__ import annotations

import json
import math
from typing import Any


def number(value: Any) -> float | None:
    """A finite number, None for a missing one (NaN, None, pandas' NA): strict JSON has no NaN."""
    if value is None or isinstance(value, bool):
        return None
    try:
        found = float(value)
    except (TypeError, ValueError):  # pandas' NA, a text
        return None
    return found if math.isfinite(found) else None


def text(value: Any) -> str | None:
    """A text cell, None for an empty or missing one (a column that was all None can come back NaN)."""
    return value if isinstance(value, str) and value else None


def strict_json(value: Any, **options: Any) -> str:
    """JSON every strict parser reads: a NaN or infinity raises here instead of being written as ``NaN``.
    Every control and non-ASCII character is escaped, so a line is one line whatever an answer holds (a U+2028 in
    an answer splits a line for some JSON readers)."""
    return json.dumps(value, ensure_ascii=True, allow_nan=False, **options)


__all__ = ["number", "strict_json", "text"]
