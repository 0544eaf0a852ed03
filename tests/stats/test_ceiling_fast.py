"""The ceiling from per-rater sums (ceiling.Ceiling) equals the rater-by-rater computation it replaced.

tests/report/ceiling_reference.py is that computation (checked against pingouin in test_ceiling.py); on small
seeded matrices with gaps, ties, a constant rater and a judge with missing rewards, every number and every
interval (the same resamples) must agree.
"""

from __future__ import annotations

import numpy as np
import pytest

from helm_mtsamples_ext.stats.agreement import icc_3_1, quadratic_kappa, resampled, spearman
from helm_mtsamples_ext.stats.ceiling import Ceiling, averaged_kappa, uninformative
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from tests.report import ceiling_reference as reference

SETTINGS = BootstrapSettings(n_resamples=200, seed=3)


def matrix(seed: int, answers: int = 9, raters: int = 4) -> np.ndarray:
    """Rewards on the 1-5 grid (ties galore) from a shared truth, a third of the cells unrated."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(size=(answers, 1))
    values = np.clip(np.round(3 + truth + rng.normal(scale=0.8, size=(answers, raters))), 1, 5) / 5
    values[rng.random(values.shape) < 0.33] = np.nan
    if seed % 3 == 0:
        values[:, 0] = np.where(np.isnan(values[:, 0]), np.nan, 0.6)  # a constant rater
    return values


def approx(found: tuple[float, ...], expected: tuple[float, ...]) -> None:
    assert found == pytest.approx(expected, rel=1e-9, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("seed", range(12))
def test_icc_and_spearman_with_their_intervals_equal_the_rater_by_rater_computation(seed: int) -> None:
    values = matrix(seed)
    ceiling = Ceiling(values, SETTINGS)
    for fast, statistic in ((ceiling.icc(), icc_3_1), (ceiling.spearman(), spearman)):

        def slow_statistic(pick: np.ndarray, s: reference.Statistic = statistic) -> float:
            return reference.averaged(s, values[pick])

        slow = resampled(slow_statistic, len(values), SETTINGS)
        approx(fast.interval(SETTINGS), slow)


@pytest.mark.parametrize("seed", range(12))
def test_a_judge_in_each_raters_place_equals_the_rater_by_rater_computation(seed: int) -> None:
    values = matrix(seed)
    rng = np.random.default_rng(100 + seed)
    judge = np.clip(np.nanmean(np.where(np.isnan(values), 0.6, values), axis=1) + rng.normal(0, 0.1, len(values)), 0, 1)
    judge[rng.random(len(values)) < 0.2] = np.nan  # answers the judge did not score
    fast = Ceiling(values, SETTINGS).in_place(judge).interval(SETTINGS)
    approx(fast, reference.in_place_icc(judge, values, SETTINGS))


@pytest.mark.parametrize("seed", range(12))
def test_kappa_and_the_raters_left_out_equal_the_rater_by_rater_computation(seed: int) -> None:
    scores = np.round(matrix(seed, answers=12, raters=5) * 5)
    scores[0, 1] = 3.5 if not np.isnan(scores[0, 1]) else scores[0, 1]  # a rater's mean of two ratings
    approx((averaged_kappa(scores),), (reference.averaged(quadratic_kappa, scores, rounded=True),))
    names = [f"r{k}" for k in range(scores.shape[1])]
    assert uninformative(scores, names) == reference.uninformative(scores, names)


def test_many_raters_of_few_answers_give_the_same_ceiling() -> None:
    """The shape that was slow (many raters, each of the same few answers), small enough for the old code."""
    rng = np.random.default_rng(7)
    truth = rng.normal(size=(4, 1))
    values = np.clip(np.round(3 + truth + rng.normal(scale=0.7, size=(4, 60))), 1, 5) / 5
    ceiling = Ceiling(values, SETTINGS)
    slow = resampled(lambda pick: reference.averaged(icc_3_1, values[pick]), len(values), SETTINGS)
    approx(ceiling.icc().interval(SETTINGS), slow)
