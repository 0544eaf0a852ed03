"""The rubric is written once (common/rubric.py): every piece that names a dimension or the scale is built from it.

A copy of the rubric with ``completeness`` renamed ``thoroughness`` changes every judge prompt of ours (``ours``,
``prefix``), the repair turn, the verdict schema (plain, capped and OpenAI's body) and the ratings header, and in
each the old name is gone; built from the rubric in use, each is byte for byte what it was (suites replay from
HELM's cache keyed by the prompt, tests/e2e/test_prompt_styles.py). HELM's own template (``helm``, ``helm_fenced``)
asks what HELM wrote, so it is not ours to follow.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from helm_mtsamples_ext.common.rubric import DIMENSIONS, QUESTIONS, RUBRIC, Rubric
from helm_mtsamples_ext.judges.core.prefix_prompt import FIXED_PART, fixed_part
from helm_mtsamples_ext.judges.core.prompt import REPAIR_INSTRUCTION, build_prompt, repair_instruction
from helm_mtsamples_ext.judges.core.reply.verdict_schema import VERDICT_SCHEMA, openai_json_schema, verdict_schema
from helm_mtsamples_ext.report.ratings import COLUMNS, header

pytestmark = pytest.mark.helm  # prompt.py reads HELM's template for the helm style

OLD, NEW = "completeness", "thoroughness"
RENAMED = replace(RUBRIC, questions={(NEW if dim == OLD else dim): q for dim, q in QUESTIONS.items()})
TEXTS = ("The operative note.", "The candidate plan.", "The reference plan.")


def renamed(text: str) -> str:
    """``text`` with the dimension's name replaced wherever it is written."""
    assert OLD in text
    return text.replace(OLD, NEW)


def test_the_rubric_in_use_is_the_one_written_in_rubric_py() -> None:
    assert RUBRIC.dimensions == DIMENSIONS == ("accuracy", "completeness", "clarity")
    assert RENAMED.dimensions == ("accuracy", NEW, "clarity")


def test_every_prompt_style_of_ours_follows_a_renamed_dimension() -> None:
    for style in ("ours", "prefix"):
        before, after = build_prompt(*TEXTS, style), build_prompt(*TEXTS, style, RENAMED)
        assert after == renamed(before) and OLD not in after, style
    assert fixed_part(RENAMED) == renamed(FIXED_PART)
    assert fixed_part(RUBRIC) == FIXED_PART


def test_the_repair_turn_follows_a_renamed_dimension() -> None:
    assert repair_instruction(RENAMED) == renamed(REPAIR_INSTRUCTION)
    assert repair_instruction(RUBRIC) == REPAIR_INSTRUCTION


def test_the_verdict_schema_follows_a_renamed_dimension() -> None:
    for cap in (None, 300):
        before, after = json.dumps(verdict_schema(cap)), json.dumps(verdict_schema(cap, RENAMED))
        assert after == renamed(before), cap
        assert json.dumps(openai_json_schema(cap, RENAMED)) == renamed(json.dumps(openai_json_schema(cap)))
    assert verdict_schema(None, RENAMED)["required"] == list(RENAMED.dimensions)
    assert verdict_schema() is VERDICT_SCHEMA


def test_the_ratings_header_follows_a_renamed_dimension() -> None:
    assert header(RENAMED) == tuple(NEW if column == OLD else column for column in COLUMNS)
    assert header(RUBRIC) == COLUMNS


def test_a_fourth_dimension_and_another_scale_reach_the_words_too() -> None:
    """The count of dimensions and the scale's ends are the rubric's as well, never typed in a prompt."""
    wider = Rubric({**QUESTIONS, "safety": "is it safe?"}, 0, 10)
    prompt = build_prompt(*TEXTS, "prefix", wider)
    assert "on four dimensions" in prompt and "from 0 (very poor) to 10 (excellent)" in prompt
    assert '"completeness", "clarity" and "safety"' in prompt
    assert '"safety": {"score": <integer 0-10>' in build_prompt(*TEXTS, "ours", wider)
    assert 'score" from 0 to 10' in repair_instruction(wider)
    assert verdict_schema(None, wider)["properties"]["safety"]["properties"]["score"]["enum"] == list(range(11))
