"""common/answer.py: a request state's answer, read one way from HELM's objects and from scenario_state.json, its
reasoning cut off where a reasoning model puts it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from helm_mtsamples_ext.common.answer import answer_text, first_completion, strip_think


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<think>plan A?</think>Plan B.", "Plan B."),
        ("<think>a</think>One.<think>b</think> Two.", "One.<think>b</think> Two."),
        ("Answer.<think>not where reasoning goes", "Answer.<think>not where reasoning goes"),
        ("  <think>a</think>\nPlan E.", "Plan E."),
        ("reasoning whose opening tag was in the prompt</think>\nPlan C.", "Plan C."),
        ("<THINK>x</Think>Plan D.", "Plan D."),
        ("No thinking here.", "No thinking here."),
        ("<think>only thoughts</think>", ""),
        ("<think>never closed", ""),
    ],
    ids=[
        "closed", "later-block-is-text", "later-tag-is-text", "leading-after-space", "leading-close", "case", "none",
        "only-think", "only-dangling",
    ],
)  # fmt: skip
def test_strip_think(text: str, expected: str) -> None:
    """Reasoning is removed where a reasoning model puts it, first; a tag anywhere else is text."""
    assert strip_think(text) == expected


def test_the_first_completion_reads_helms_objects_and_stored_mappings_alike() -> None:
    assert first_completion([SimpleNamespace(text="Plan."), SimpleNamespace(text="other")]) == "Plan."
    assert first_completion([{"text": "Plan."}]) == "Plan."
    assert first_completion([{"text": None}]) == first_completion([]) == first_completion(None) == ""


def test_the_answer_the_judges_read_drops_its_reasoning_only_with_use_think() -> None:
    completions = [{"text": "<think>draft</think>Rest."}]
    assert answer_text(completions, use_think=True) == "Rest."
    assert answer_text(completions, use_think=False) == "<think>draft</think>Rest."
