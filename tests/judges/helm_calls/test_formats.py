"""The rules of formats.py: the verdict's JSON schema and which structured-output modes a judge tries.

jsonschema is not installed in this environment, so a verdict is checked against the schema by a small
validator covering exactly the keywords the schema uses (type, enum, properties, required,
additionalProperties); a test pins that the schema uses no others.
"""

from __future__ import annotations

from typing import Any

import pytest
from helm.common.response_format import ResponseFormat

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.helm_calls.formats import (
    FALLBACK_ORDER,
    VERDICT_SCHEMA,
    FormatMemory,
    JudgeResponseFormat,
    json_object_format,
    modes_to_try,
    response_format,
    verdict_schema,
)

pytestmark = pytest.mark.helm

KNOWN_KEYWORDS = {"type", "enum", "properties", "required", "additionalProperties"}
JSON_TYPES: dict[str, Any] = {"object": dict, "string": str}


def violations(instance: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Where ``instance`` breaks ``schema`` (empty when it conforms), for the keywords the verdict uses."""
    kind = schema.get("type")
    if kind == "integer":
        if isinstance(instance, bool) or not isinstance(instance, int):
            return [f"{path}: not an integer"]
    elif kind is not None and not isinstance(instance, JSON_TYPES[kind]):
        return [f"{path}: not a {kind}"]
    found: list[str] = []
    if "enum" in schema and instance not in schema["enum"]:
        found.append(f"{path}: {instance!r} not in enum")
    if isinstance(instance, dict):
        properties = schema.get("properties", {})
        found += [f"{path}.{key}: missing" for key in schema.get("required", []) if key not in instance]
        if schema.get("additionalProperties") is False:
            found += [f"{path}.{key}: not allowed" for key in instance if key not in properties]
        for key, value in instance.items():
            if key in properties:
                found += violations(value, properties[key], f"{path}.{key}")
    return found


def keywords(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    found = set(schema)
    for sub in schema.get("properties", {}).values():
        found |= keywords(sub)
    return found


def good_verdict() -> dict[str, Any]:
    return {dim: {"score": 4, "explanation": f"{dim} is fine"} for dim in DIMENSIONS}


# ---------------------------------------------------------------- the schema


def test_the_schema_uses_only_keywords_the_test_validator_checks() -> None:
    """Guards the validator below: a keyword it does not know would go unchecked."""
    assert keywords(VERDICT_SCHEMA) <= KNOWN_KEYWORDS


def test_the_verdict_is_a_closed_object_requiring_the_three_dimensions() -> None:
    """Every dimension is required and nothing else is allowed (OpenAI's strict mode demands both)."""
    assert VERDICT_SCHEMA["type"] == "object"
    assert list(VERDICT_SCHEMA["properties"]) == list(DIMENSIONS)
    assert VERDICT_SCHEMA["required"] == list(DIMENSIONS)
    assert VERDICT_SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_each_dimension_is_a_closed_object_with_an_integer_score_1_to_5_and_a_string_explanation(
    dimension: str,
) -> None:
    """score: integer enum 1..5; explanation: string; both required, nothing else."""
    assert VERDICT_SCHEMA["properties"][dimension] == {
        "type": "object",
        "properties": {
            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
            "explanation": {"type": "string"},
        },
        "required": ["score", "explanation"],
        "additionalProperties": False,
    }


def test_a_complete_verdict_conforms() -> None:
    """The verdict a judge should send passes the schema."""
    assert violations(good_verdict(), VERDICT_SCHEMA) == []


DELETE = object()


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("accuracy", "score"), 4.5),
        (("accuracy", "score"), 6),
        (("clarity", "score"), 0),
        (("accuracy", "score"), "4"),
        (("accuracy", "score"), True),
        (("completeness", "explanation"), DELETE),
        (("completeness", "score"), DELETE),
        (("clarity", "explanation"), 4),
        (("accuracy", "confidence"), 0.9),
        (("overall",), {"score": 4, "explanation": "x"}),
        (("clarity",), DELETE),
        (("accuracy",), 4),
    ],
    ids=[
        "fraction",
        "six",
        "zero",
        "string-score",
        "boolean-score",
        "no-explanation",
        "no-score",
        "number-explanation",
        "extra-dimension-key",
        "extra-top-level-key",
        "missing-dimension",
        "flat-form",
    ],
)
def test_a_verdict_breaking_the_rules_is_rejected_where_it_breaks(path: tuple[str, ...], value: object) -> None:
    """A 4.5, a 6, a missing explanation, an extra key... each fails the schema, at its own place."""
    verdict = good_verdict()
    parent = verdict
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    found = violations(verdict, VERDICT_SCHEMA)
    assert len(found) == 1 and found[0].startswith("$." + ".".join(path) + ":")


# ---------------------------------------------------------------- modes


@pytest.mark.parametrize(
    ("setting", "supported", "expected"),
    [
        ("auto", FALLBACK_ORDER, ("json_schema", "json_object", "off")),
        ("auto", ("json_schema", "off"), ("json_schema", "off")),
        ("auto", ("json_object",), ("json_object", "off")),
        ("auto", (), ("off",)),
        ("json_schema", FALLBACK_ORDER, ("json_schema",)),
        ("json_object", FALLBACK_ORDER, ("json_object",)),
        ("off", FALLBACK_ORDER, ("off",)),
        ("json_object", ("json_schema", "off"), ("json_object",)),
    ],
    ids=[
        "auto-walks-the-fallback-order",
        "auto-skips-json-object-when-unsupported",
        "auto-skips-json-schema-when-unsupported",
        "auto-always-ends-with-off",
        "fixed-json-schema-alone",
        "fixed-json-object-alone",
        "fixed-off-alone",
        "fixed-setting-ignores-supported",
    ],
)
def test_modes_to_try(setting: str, supported: tuple[str, ...], expected: tuple[str, ...]) -> None:
    """``auto`` tries json_schema, json_object, off (skipping what the client cannot send); a fixed setting is alone."""
    assert modes_to_try(setting, supported) == expected


@pytest.mark.parametrize("setting", ["json", "JSON_SCHEMA", "", "on"])
def test_an_unknown_setting_is_rejected_naming_judge_structured(setting: str) -> None:
    """A typo in judge_structured fails loudly, saying which setting is wrong."""
    with pytest.raises(ValueError, match="judge_structured"):
        modes_to_try(setting)


# ---------------------------------------------------------------- the request's response_format


def test_off_sends_no_response_format() -> None:
    """``off`` leaves the request unconstrained."""
    assert response_format("off") is None


@pytest.mark.parametrize("mode", ["json_schema", "json_object"])
def test_a_concrete_mode_carries_the_verdict_schema_and_its_mode(mode: str) -> None:
    """The format is a HELM ResponseFormat holding the verdict schema, and says how to send it."""
    fmt = response_format(mode)
    assert isinstance(fmt, JudgeResponseFormat) and isinstance(fmt, ResponseFormat)
    assert (fmt.mode, fmt.json_schema) == (mode, VERDICT_SCHEMA)


@pytest.mark.parametrize("mode", ["auto", "json", ""])
def test_response_format_refuses_a_mode_that_is_not_concrete(mode: str) -> None:
    """``auto`` is a strategy, not something to send; unknown modes are errors."""
    with pytest.raises(ValueError, match="structured-output mode"):
        response_format(mode)


def test_the_json_object_body_is_the_llama_cpp_form() -> None:
    """llama.cpp's server takes ``{"type": "json_object", "schema": ...}``."""
    assert json_object_format(VERDICT_SCHEMA) == {"type": "json_object", "schema": VERDICT_SCHEMA}


# ---------------------------------------------------------------- the format memory

REFUSED_500 = "HTTP 500: could not broadcast input array"
NAMED = "HTTP 500: response_format.type Input should be 'text' or 'json_object'"


@pytest.mark.parametrize(
    ("refusals", "current"),
    [
        ([("json_schema", 500, NAMED, "p1")], "json_object"),
        ([("json_schema", 500, REFUSED_500, "p1")], "json_schema"),
        ([("json_schema", 500, REFUSED_500, "p1")] * 3, "json_schema"),
        ([("json_schema", 500, REFUSED_500, "p1"), ("json_schema", 500, REFUSED_500, "p2")], "json_object"),
        ([("json_schema", 429, NAMED, "p1")], "json_schema"),
        ([("json_schema", 400, NAMED, "p1"), ("json_object", 400, NAMED, "p1")], "off"),
        ([("off", 500, NAMED, "p1")], "json_schema"),
    ],
    ids=[
        "a refusal naming the format moves on",
        "one unexplained 500 is no evidence",
        "one prompt failing again and again is no evidence",
        "two prompts refused unexplained move on",
        "a 429 is never a refusal",
        "each refused format moves on once",
        "off is never refused",
    ],
)
def test_a_format_is_dropped_only_on_evidence(refusals: list[tuple[str, int, str, str]], current: str) -> None:
    memory = FormatMemory(FALLBACK_ORDER)
    for mode, status, error, prompt in refusals:
        memory.refused(mode, status, error, prompt)
    assert memory.current == current


def test_a_format_that_worked_is_never_dropped() -> None:
    memory = FormatMemory(FALLBACK_ORDER)
    memory.worked("json_object")
    retry = memory.refused("json_object", 500, NAMED, "p1")
    assert (memory.current, retry) == ("json_object", False)


def test_a_refusal_after_another_call_moved_on_retries_in_the_new_format() -> None:
    memory = FormatMemory(FALLBACK_ORDER)
    memory.refused("json_schema", 500, NAMED, "p1")
    assert memory.refused("json_schema", 500, REFUSED_500, "p2") is True
    assert memory.current == "json_object"


def test_until_a_format_has_worked_live_calls_go_one_at_a_time() -> None:
    memory = FormatMemory(FALLBACK_ORDER)
    with memory.first_live_call():
        assert memory._probe.locked(), "a second first call would wait here"
        memory.worked("json_object")
    assert not memory._probe.locked()
    with memory.first_live_call():
        assert not memory._probe.locked(), "once a format worked, calls go in parallel"


@pytest.mark.parametrize("modes", [("off",), ("json_schema",)], ids=["plain prompt", "one forced format"])
def test_a_judge_with_no_format_to_move_to_never_waits(modes: tuple[str, ...]) -> None:
    memory = FormatMemory(modes)
    with memory.first_live_call():
        assert not memory._probe.locked()


def test_an_explanation_cap_bounds_each_explanation_and_no_cap_keeps_the_stored_schema() -> None:
    """The schema is in HELM's cache key: without a cap it is byte-for-byte the schema stored suites sent."""
    assert verdict_schema() is VERDICT_SCHEMA
    capped = verdict_schema(200)
    for dim in DIMENSIONS:
        assert capped["properties"][dim]["properties"]["explanation"] == {"type": "string", "maxLength": 200}
        assert "maxLength" not in VERDICT_SCHEMA["properties"][dim]["properties"]["explanation"]
    assert response_format("json_object", 200).json_schema == capped  # type: ignore[union-attr]
