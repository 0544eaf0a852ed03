"""The Inspect door's reward interval (``bootstrap_ci``: ``ci_low``, ``ci_high``) on rewards of known truth: drawn,
seeded, from a known distribution of note rewards, the 95% interval must cover the true mean about 95% of the
time, and skip the notes with no reward."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import numpy as np
import pytest
from inspect_ai.scorer import SampleScore, Score

from helm_mtsamples_ext.inspect_scorer import bootstrap_ci

pytestmark = pytest.mark.inspect

LEVELS = np.arange(16) / 15
"""A note's reward over a panel of one: a mean of three 1-5 scores over 5, in fifteenths (0 for an empty answer)."""
WEIGHTS = np.array([1, 0, 0, 1, 1, 2, 3, 4, 6, 8, 9, 9, 8, 6, 4, 2], dtype=float)
"""A skewed distribution, as rewards are: most notes judged good, a tail of poor ones."""
TRUE_MEAN = float(LEVELS @ (WEIGHTS / WEIGHTS.sum()))
RUNS = 200
NOTES = 30


def interval(rewards: list[float]) -> tuple[float, float]:
    scores = [SampleScore(score=Score(value=r), sample_id=i) for i, r in enumerate(rewards)]
    compute = cast(Callable[[list[SampleScore]], Any], bootstrap_ci(resamples=1000))  # Inspect's Metric is a union
    value = compute(scores)
    assert isinstance(value, dict)
    return value["ci_low"], value["ci_high"]


def test_the_interval_covers_the_true_mean_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(2024)
    covered = 0
    for _ in range(RUNS):
        low, high = interval(list(rng.choice(LEVELS, size=NOTES, p=WEIGHTS / WEIGHTS.sum())))
        assert 0.0 <= low <= high <= 1.0
        covered += low <= TRUE_MEAN <= high
    assert 0.90 <= covered / RUNS <= 0.99, covered  # 95% give or take three binomial standard errors (1.5% each)


def test_a_note_without_a_reward_is_left_out_not_counted() -> None:
    rewards = [0.2, 0.4, 0.6, 0.8, 1.0, 0.5]
    assert interval([*rewards, math.nan]) == interval(rewards)


def test_too_few_notes_give_no_interval_rather_than_a_false_certainty() -> None:
    low, high = interval([0.2, 0.9, 0.5])
    assert math.isnan(low) and math.isnan(high)
