"""What HELM shows for each stat the metric emits: its display name, description, group and direction.

HELM asks the metric for this (``Metric.get_metadata``) when ``helm-summarize --auto-generate-schema`` writes
the leaderboard's schema, and ``schema.py`` copies it into the static schema, so both label our stats with
the same words. Kept apart from the metric's arithmetic: these are texts for readers, not rules. A plain
dataclass with the fields of HELM's ``MetricMetadata`` (metric.py converts), so the texts need no HELM.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.scoring.reward import (
    EMPTY_ANSWER,
    JUDGE_FAILURE_RATE,
    JUDGE_FAILURES,
    JURY_SCORE,
    REWARD,
    SAME_VERDICT_RATE,
    UNJUDGED,
    alpha_stat_name,
    dimension_stat_name,
    judge_reward_stat_names,
)

REWARD_GROUP = "mtsamples_procedures_reward"
PER_JUDGE_GROUP = "mtsamples_procedures_per_judge"
RELIABILITY_GROUP = "mtsamples_procedures_judge_reliability"


@dataclass(frozen=True)
class MetricMetadata:
    """What HELM's ``MetricMetadata`` holds for one stat, field for field."""

    name: str
    display_name: str | None = None
    short_display_name: str | None = None
    description: str | None = None
    lower_is_better: bool | None = None
    group: str | None = None


def metric_metadata(judge_names: Sequence[str]) -> list[MetricMetadata]:
    """Display metadata of every stat the metric can emit for this panel (the schema copies it)."""
    dims = [
        MetricMetadata(
            name=dimension_stat_name(d),
            display_name=f"Judge {d} (1-5)",
            short_display_name=d.capitalize(),
            description=f"Mean {d} score (1-5) given by the judges with a valid {d} score for the note.",
            lower_is_better=False,
            group=REWARD_GROUP,
        )
        for d in DIMENSIONS
    ]
    judges = [
        MetricMetadata(
            name=stat_name,
            display_name=f"Reward by {j}",
            short_display_name=f"Reward ({j})",
            description=f"Reward (0-1) given by judge {j} alone, over the notes it scored "
            "(0 for empty answers); notes it failed on are left out.",
            lower_is_better=False,
            group=PER_JUDGE_GROUP,
        )
        for j, stat_name in judge_reward_stat_names(judge_names).items()
    ]
    alphas = [
        MetricMetadata(
            name=alpha_stat_name(d),
            display_name=f"Judge agreement on {d} within this model's answers (Krippendorff's alpha)",
            short_display_name=f"Alpha {d} (within model)",
            description=f"Krippendorff's alpha (ordinal) of the judges' {d} scores over this model's answers only "
            "(the run's notes), not the panel's reliability; one model's answers vary little, so it sits near 0 "
            "even when the judges agree well across models; the panel's alpha over every model's answers is in "
            "helm-mtsamples-report's leaderboard. 1 is perfect agreement, 0 is chance. Absent when undefined "
            "(one judge, no variation).",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        )
        for d in DIMENSIONS
    ]
    return [
        MetricMetadata(
            name=REWARD,
            display_name="Reward (0-1)",
            short_display_name="Reward",
            description="Mean over judges of the mean of score/5 over Accuracy, Completeness and Clarity; "
            "notes no judge could score are left out (see Unjudged), empty answers score 0.",
            lower_is_better=False,
            group=REWARD_GROUP,
        ),
        *dims,
        MetricMetadata(
            name=JURY_SCORE,
            display_name="Jury score (1-5, as MedHELM)",
            short_display_name="Jury Score",
            description="MedHELM's number for this scenario: the mean of every valid 1-5 score over judges and "
            "dimensions (HELM's LLM jury mean, without its int() truncation); notes no judge could score are left "
            "out, empty answers score 1.",
            lower_is_better=False,
            group=REWARD_GROUP,
        ),
        *judges,
        MetricMetadata(
            name=JUDGE_FAILURES,
            display_name="Judge failures per note",
            short_display_name="Judge failures",
            description="Mean number of judges per note whose call failed or whose reply had no valid score.",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=JUDGE_FAILURE_RATE,
            display_name="Judge failure rate",
            short_display_name="Failure rate",
            description="Share of judge calls that failed or gave no valid score.",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=SAME_VERDICT_RATE,
            display_name="Same verdict for different answers",
            short_display_name="Same verdict",
            description="Share of judge verdicts that the judge gave, scores and explanations alike, to three or "
            "more different answers in the run (a judge not reading the answer) and that count for nothing, as "
            "voiding them does not raise the run's reward (they are among the judge failures).",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=UNJUDGED,
            display_name="Unjudged notes",
            short_display_name="Unjudged",
            description="Share of notes that no judge could score; they have no reward.",
            lower_is_better=None,
            group=RELIABILITY_GROUP,
        ),
        MetricMetadata(
            name=EMPTY_ANSWER,
            display_name="Empty answers",
            short_display_name="Empty",
            description="Share of notes where the model's answer was empty (after removing <think> blocks); "
            "they score 0.",
            lower_is_better=True,
            group=RELIABILITY_GROUP,
        ),
        *alphas,
    ]
