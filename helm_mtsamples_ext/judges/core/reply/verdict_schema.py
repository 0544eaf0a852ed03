"""The verdict's JSON schema: what a judge constrained by structured output must return.

Why apart from ``judges/helm_calls/formats.py`` (which sends it through HELM's ``ResponseFormat``): every front door
asks its judges for the same schema (HELM's clients, an Inspect model, a verifiers rubric's OpenAI client), and the
doors without HELM cannot import HELM's types. Pure: dicts only. Built from a ``Rubric`` (common/rubric.py).
"""

from __future__ import annotations

from typing import Any

from helm_mtsamples_ext.common.rubric import RUBRIC, Rubric


def _dimension_schema(rubric: Rubric, explanation_cap: int | None) -> dict[str, Any]:
    explanation: dict[str, Any] = {"type": "string"}
    if explanation_cap is not None:
        explanation["maxLength"] = explanation_cap
    return {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "enum": list(range(rubric.min_score, rubric.max_score + 1))},
            "explanation": explanation,
        },
        "required": ["score", "explanation"],
        "additionalProperties": False,
    }


def _schema(rubric: Rubric, explanation_cap: int | None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {dim: _dimension_schema(rubric, explanation_cap) for dim in rubric.dimensions},
        "required": list(rubric.dimensions),
        "additionalProperties": False,
    }


VERDICT_SCHEMA: dict[str, Any] = _schema(RUBRIC, None)
"""Every object closed and every field required: OpenAI's strict mode refuses a schema otherwise."""


def verdict_schema(explanation_cap: int | None = None, rubric: Rubric = RUBRIC) -> dict[str, Any]:
    """The verdict's schema; with ``explanation_cap``, each explanation at most that many characters.

    Why a cap: a small local judge constrained to the schema writes one explanation until ``max_tokens`` cuts
    it (SmolLM2-135M: 5,000 characters, then 10,000 on the longer retry, minutes a call on two cores). A
    llama.cpp grammar honours ``maxLength``, so the verdict closes in a few hundred tokens. Off by default:
    the schema is part of every request, hence of HELM's cache key, and OpenAI's strict mode refuses it.
    ``rubric``: the dimensions and scale it holds."""
    if explanation_cap is None and rubric is RUBRIC:
        return VERDICT_SCHEMA
    return _schema(rubric, explanation_cap)


def openai_json_schema(explanation_cap: int | None = None, rubric: Rubric = RUBRIC) -> dict[str, Any]:
    """The ``response_format`` body OpenAI's Chat Completions take, as HELM's ``OpenAIClient`` builds it (same
    name, description and strict flag), so a door without HELM asks its judges exactly what HELM asks."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": "response",
            "description": "",
            "schema": verdict_schema(explanation_cap, rubric),
            "strict": True,
        },
    }


__all__ = ["VERDICT_SCHEMA", "openai_json_schema", "verdict_schema"]
