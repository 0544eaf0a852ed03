"""What HELM shows for each stat the metric emits: its display name, description, group and direction.

HELM asks the metric for this (``Metric.get_metadata``) when ``helm-summarize --auto-generate-schema`` writes
the leaderboard's schema, and ``schema.py`` copies it into the static schema, so both label our stats with
the same words. Kept apart from the metric's arithmetic: these are texts for readers, not rules. A plain
dataclass with the fields of HELM's ``MetricMetadata`` (metric.py converts), so the texts need no HELM.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
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


Texts = tuple[str, str, str, str]
"""One stat's name, display name, short display name and description, in that order."""

_REWARD: Texts = (
    REWARD,
    "Reward (0-1)",
    "Reward",
    "Mean over judges of the mean of score/5 over Accuracy, Completeness and Clarity; "
    "notes no judge could score are left out (see Unjudged), empty answers score 0.",
)
_JURY_SCORE: Texts = (
    JURY_SCORE,
    "Jury score (1-5, as MedHELM)",
    "Jury Score",
    "MedHELM's number for this scenario: the mean of every valid 1-5 score over judges and "
    "dimensions (HELM's LLM jury mean, without its int() truncation); notes no judge could score are left "
    "out, empty answers score 1.",
)
_JUDGE_HEALTH: tuple[Texts, ...] = (
    (
        JUDGE_FAILURES,
        "Judge failures per note",
        "Judge failures",
        "Mean number of judges per note whose call failed or whose reply had no valid score.",
    ),
    (
        JUDGE_FAILURE_RATE,
        "Judge failure rate",
        "Failure rate",
        "Share of judge calls that failed or gave no valid score.",
    ),
    (
        SAME_VERDICT_RATE,
        "Same verdict for different answers",
        "Same verdict",
        "Share of judge verdicts that the judge gave, scores and explanations alike, to three or "
        "more different answers in the run (a judge not reading the answer) and that count for nothing, as "
        "voiding them does not raise the run's reward (they are among the judge failures).",
    ),
    (UNJUDGED, "Unjudged notes", "Unjudged", "Share of notes that no judge could score; they have no reward."),
)
_EMPTY_ANSWER: Texts = (
    EMPTY_ANSWER,
    "Empty answers",
    "Empty",
    "Share of notes where the model's answer was empty (after removing <think> blocks); they score 0.",
)


def _in_group(group: str, lower_is_better: bool | None, rows: Iterable[Texts]) -> list[MetricMetadata]:
    """The rows as stats of ``group`` that share one direction (None: neither way is better)."""
    return [
        MetricMetadata(
            name=name,
            display_name=display_name,
            short_display_name=short_display_name,
            description=description,
            lower_is_better=lower_is_better,
            group=group,
        )
        for name, display_name, short_display_name, description in rows
    ]


def metric_metadata(judge_names: Sequence[str]) -> list[MetricMetadata]:
    """Display metadata of every stat the metric can emit for this panel (the schema copies it)."""
    dims: list[Texts] = [
        (
            dimension_stat_name(d),
            f"Judge {d} (1-5)",
            d.capitalize(),
            f"Mean {d} score (1-5) given by the judges with a valid {d} score for the note.",
        )
        for d in DIMENSIONS
    ]
    judges: list[Texts] = [
        (
            stat_name,
            f"Reward by {j}",
            f"Reward ({j})",
            f"Reward (0-1) given by judge {j} alone, over the notes it scored "
            "(0 for empty answers); notes it failed on are left out.",
        )
        for j, stat_name in judge_reward_stat_names(judge_names).items()
    ]
    alphas: list[Texts] = [
        (
            alpha_stat_name(d),
            f"Judge agreement on {d} within this model's answers (Krippendorff's alpha)",
            f"Alpha {d} (within model)",
            f"Krippendorff's alpha (ordinal) of the judges' {d} scores over this model's answers only "
            "(the run's notes), not the panel's reliability; one model's answers vary little, so it sits near 0 "
            "even when the judges agree well across models; the panel's alpha over every model's answers is in "
            "helm-mtsamples-report's leaderboard. 1 is perfect agreement, 0 is chance. Absent when undefined "
            "(one judge, no variation).",
        )
        for d in DIMENSIONS
    ]
    return [
        *_in_group(REWARD_GROUP, False, [_REWARD, *dims, _JURY_SCORE]),
        *_in_group(PER_JUDGE_GROUP, False, judges),
        *_in_group(RELIABILITY_GROUP, None, _JUDGE_HEALTH),
        # An empty answer is the model's doing, not the judges': fewer is better.
        *_in_group(RELIABILITY_GROUP, True, [_EMPTY_ANSWER]),
        *_in_group(RELIABILITY_GROUP, None, alphas),
    ]
