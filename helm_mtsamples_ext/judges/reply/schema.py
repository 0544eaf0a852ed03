"""The verdict's JSON schema: what a judge's reply must look like, for every door's structured output.

Why apart from formats.py: that module speaks HELM's ``ResponseFormat``; the schema itself is pure data every
door sends its own way (HELM's request, Inspect's ``ResponseSchema``, a verifiers judge's ``response_format``),
so it lives where no HELM is needed. Every object is closed and every field required: OpenAI's strict mode
refuses a schema otherwise.
"""

from __future__ import annotations

from typing import Any

from helm_mtsamples_ext.common.rubric import DIMENSIONS, MAX_SCORE, MIN_SCORE

__all__ = ["VERDICT_SCHEMA", "verdict_schema"]


def _dimension_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "enum": list(range(MIN_SCORE, MAX_SCORE + 1))},
            "explanation": {"type": "string"},
        },
        "required": ["score", "explanation"],
        "additionalProperties": False,
    }


VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {dim: _dimension_schema() for dim in DIMENSIONS},
    "required": list(DIMENSIONS),
    "additionalProperties": False,
}
"""Every object closed and every field required: OpenAI's strict mode refuses a schema otherwise."""


def verdict_schema(explanation_cap: int | None = None) -> dict[str, Any]:
    """The verdict's schema; with ``explanation_cap``, each explanation at most that many characters.

    Why a cap: a small local judge constrained to the schema writes one explanation until ``max_tokens`` cuts
    it (SmolLM2-135M: 5,000 characters, then 10,000 on the longer retry, minutes a call on two cores). A
    llama.cpp grammar honours ``maxLength``, so the verdict closes in a few hundred tokens. Off by default:
    the schema is part of every request, hence of HELM's cache key, and OpenAI's strict mode refuses it."""
    if explanation_cap is None:
        return VERDICT_SCHEMA
    capped = _dimension_schema()
    capped["properties"]["explanation"]["maxLength"] = explanation_cap
    return {**VERDICT_SCHEMA, "properties": {dim: capped for dim in DIMENSIONS}}
