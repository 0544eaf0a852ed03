"""What HELM shows for each stat: every stat the metric can emit is labelled once, in its group."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.scoring.reward import REWARD, alpha_stat_name, instance_stat_names, run_stat_names
from helm_mtsamples_ext.scoring.stat_metadata import PER_JUDGE_GROUP, RELIABILITY_GROUP, REWARD_GROUP, metric_metadata

PANELS = [
    pytest.param([], id="no panel"),
    pytest.param(["gpt-4o-mini"], id="one judge"),
    pytest.param(["gpt-4o-mini", "claude", "Llama 3.3"], id="three judges"),
    pytest.param(["a.b", "a-b"], id="judges whose slugs clash"),
]


@pytest.mark.parametrize("panel", PANELS)
def test_every_stat_the_metric_can_emit_is_labelled_exactly_once(panel: list[str]) -> None:
    names = [m.name for m in metric_metadata(panel)]
    assert len(names) == len(set(names))
    assert set(names) == set(instance_stat_names(panel)) | set(run_stat_names())


@pytest.mark.parametrize("panel", PANELS)
def test_every_stat_has_its_texts_and_a_group(panel: list[str]) -> None:
    """--auto-generate-schema and the static schema show these; an empty text is a blank column header."""
    for metadata in metric_metadata(panel):
        assert metadata.display_name and metadata.short_display_name and metadata.description, metadata.name
        assert metadata.group in (REWARD_GROUP, PER_JUDGE_GROUP, RELIABILITY_GROUP), metadata.name


def test_each_judge_has_its_own_reward_in_the_per_judge_group_named_after_it() -> None:
    per_judge = [m for m in metric_metadata(["a.b", "a-b"]) if m.group == PER_JUDGE_GROUP]
    assert [m.display_name for m in per_judge] == ["Reward by a.b", "Reward by a-b"]
    assert len({m.name for m in per_judge}) == 2, "clashing slugs must not merge two judges into one column"


def test_the_reward_comes_first_and_higher_is_better() -> None:
    """The leaderboard's first column is the reward; alphas have no better direction (agreement is not accuracy)."""
    metadata = metric_metadata(["A", "B"])
    assert metadata[0].name == REWARD and metadata[0].lower_is_better is False
    alphas = {m.name: m for m in metadata if m.group == RELIABILITY_GROUP and m.name.startswith(alpha_stat_name(""))}
    assert set(alphas) == {alpha_stat_name(d) for d in DIMENSIONS}
    assert all(m.lower_is_better is None for m in alphas.values())


def test_the_per_run_alpha_says_it_is_within_one_models_answers_not_the_panels_reliability() -> None:
    """A HELM stat belongs to one run, so its alpha is over one model's answers; a reader of HELM's web view must
    not take it for the panel's reliability, which only the report (over every model's answers) can give."""
    alphas = [m for m in metric_metadata(["A", "B"]) if m.name in {alpha_stat_name(d) for d in DIMENSIONS}]
    assert len(alphas) == len(DIMENSIONS)
    for metadata in alphas:
        assert "within this model's answers" in (metadata.display_name or ""), metadata.display_name
        assert "within model" in (metadata.short_display_name or ""), metadata.short_display_name
        description = metadata.description or ""
        assert "not the panel's reliability" in description and "helm-mtsamples-report" in description
