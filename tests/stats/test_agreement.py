"""The agreement statistics (agreement.py), each against values computed by hand in the comments.

Spearman, x = 1 2 3 4 5, y = 2 1 4 3 5: d = -1 1 -1 1 0, rho = 1 - 6*4 / (5*24) = 0.8.
Spearman, x = 1 2 3, y = 1 3 2: d = 0 -1 1, rho = 1 - 6*2 / (3*8) = 0.5.
QWK, x = 1 2 3 4 5, y = 2 1 4 3 5: four cells off by one, sum(W*O) = 4/16; uniform margins, expected
  sum(W*E) = (1/5)(1/16) * sum over the 5x5 grid of (i-j)^2 = (1/80)(8*1 + 6*4 + 4*9 + 2*16) = 100/80; 1 - .25/1.25 = .8
QWK, x = 5 5 1, y = 5 4 1: sum(W*O) = 1/16; margins x {1:1, 5:2}, y {1:1, 4:1, 5:1}, sum(W*E) = (1/3)(9/16 + 1 +
  2*1 + 2/16) = 59/48; kappa = 1 - (1/16)/(59/48) = 56/59
ICC(3,1), x = 1 2 3 4 5, y = 2 1 4 3 5: row means 1.5 1.5 3.5 3.5 5, grand 3; SSR = 2*9 = 18, SSC = 0, SST = 20,
  SSE = 2; MSR = 18/4, MSE = 2/4; (4.5 - .5) / (4.5 + .5) = .8
ICC(3,1), x = 1 2 3, y = 1 3 2: SSR = 2*(1 + .25 + .25) = 3, SSC = 0, SST = 4, SSE = 1; MSR = 1.5, MSE = .5; 1/2 = .5
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from helm_mtsamples_ext.stats.agreement import (
    bias,
    icc_3_1,
    icc_3_k,
    icc_medhelm,
    kendall,
    quadratic_kappa,
    round_half_up,
    spearman,
    with_ci,
)
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from tests.report.rated import pingouin_icc, zscore

SETTINGS = BootstrapSettings(n_resamples=200, seed=0)


def arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=float)


@pytest.mark.parametrize(
    "x, y, expected",
    [
        (arr(1, 2, 3, 4, 5), arr(2, 1, 4, 3, 5), 0.8),
        (arr(1, 2, 3), arr(1, 3, 2), 0.5),
        (arr(0.2, 0.4, 0.6), arr(0.3, 0.5, 0.9), 1.0),  # ranks only: any increasing relation is 1
        (arr(1, 2, 3), arr(3, 2, 1), -1.0),
    ],
)
def test_spearman_is_the_rank_correlation(x: np.ndarray, y: np.ndarray, expected: float) -> None:
    assert spearman(x, y) == pytest.approx(expected)


@pytest.mark.parametrize("x, y", [(arr(3, 3, 3), arr(1, 2, 3)), (arr(1), arr(1)), (arr(), arr())])
def test_spearman_is_undefined_without_two_orderable_answers(x: np.ndarray, y: np.ndarray) -> None:
    assert math.isnan(spearman(x, y))


@pytest.mark.parametrize(
    "x, y, expected",
    [
        (arr(1, 2, 3, 4, 5), arr(2, 1, 4, 3, 5), 0.8),
        (arr(5, 5, 1), arr(5, 4, 1), 56 / 59),
        (arr(1, 2, 3, 4, 5), arr(1, 2, 3, 4, 5), 1.0),
        (arr(1, 5), arr(5, 1), -1.0),  # all disagreement at the far ends
    ],
)
def test_quadratic_kappa_weights_disagreement_by_its_square(x: np.ndarray, y: np.ndarray, expected: float) -> None:
    assert quadratic_kappa(x, y) == pytest.approx(expected)


def test_quadratic_kappa_is_undefined_when_both_gave_one_score_throughout() -> None:
    assert math.isnan(quadratic_kappa(arr(4, 4, 4), arr(4, 4, 4)))


@pytest.mark.parametrize(
    "x, y, expected",
    [
        (arr(1, 2, 3, 4, 5), arr(2, 1, 4, 3, 5), 0.8),
        (arr(1, 2, 3), arr(1, 3, 2), 0.5),
        (arr(0.2, 0.4, 0.6), arr(0.3, 0.5, 0.7), 1.0),  # consistency: a constant offset is bias, not disagreement
        (arr(0.2, 0.4, 0.6, 0.8, 1.0), arr(0.4, 0.2, 0.8, 0.6, 1.0), 0.8),  # scale-free: the first case / 5
    ],
)
def test_icc_3_1_is_the_two_way_mixed_consistency_icc(x: np.ndarray, y: np.ndarray, expected: float) -> None:
    assert icc_3_1(x, y) == pytest.approx(expected)


@pytest.mark.parametrize("x, y", [(arr(0.5), arr(0.5)), (arr(0.5, 0.5), arr(0.5, 0.5))])
def test_icc_is_undefined_without_two_varying_answers(x: np.ndarray, y: np.ndarray) -> None:
    assert math.isnan(icc_3_1(x, y))


@pytest.mark.parametrize(
    "x, y, expected",
    [
        (arr(0.9, 0.5, 0.7), arr(0.8, 0.4, 0.6), 1.0),
        (arr(0.9, 0.5, 0.7), arr(0.4, 0.8, 0.6), -1.0),
        (arr(1, 2, 3), arr(1, 3, 2), 1 / 3),  # 2 concordant pairs, 1 discordant, of 3
    ],
)
def test_kendall_tau_compares_two_rankings(x: np.ndarray, y: np.ndarray, expected: float) -> None:
    assert kendall(x, y) == pytest.approx(expected)


def test_bias_is_the_mean_difference_with_an_interval_around_it() -> None:
    value, low, high = bias(arr(0.8, 0.6, 1.0, 0.4), arr(0.6, 0.6, 0.8, 0.4), SETTINGS)
    assert value == pytest.approx(0.1)  # (.2 + 0 + .2 + 0) / 4
    assert 0.0 <= low <= value <= high <= 0.2 + 1e-12  # within what the notes hold, {0, .2} (0.8 - 0.6 in floats)


def test_an_interval_surrounds_the_statistic_it_belongs_to() -> None:
    rng = np.random.default_rng(1)
    x = rng.random(40)
    y = x + rng.normal(0, 0.1, 40)
    value, low, high = with_ci(spearman, x, y, SETTINGS)
    assert low < value < high <= 1.0


def test_an_interval_needs_two_answers() -> None:
    assert with_ci(spearman, arr(0.5), arr(0.5), SETTINGS)[1:] == pytest.approx((math.nan, math.nan), nan_ok=True)


def test_an_interval_is_undefined_when_many_resamples_are_all_ties() -> None:
    """x = 1 1 1 2: a resample of four is constant about a third of the time ((3/4)^4 + (1/4)^4), above 10%."""
    value, low, high = with_ci(spearman, arr(1, 1, 1, 2), arr(1, 2, 3, 4), SETTINGS)
    assert not math.isnan(value) and math.isnan(low) and math.isnan(high)


@pytest.mark.parametrize("mean, rounded", [(2.5, 3), (3.5, 4), (1.49, 1), (4.5, 5), (4.0, 4)])
def test_mean_scores_round_half_up(mean: float, rounded: int) -> None:
    assert round_half_up(arr(mean))[0] == rounded


@pytest.mark.parametrize("seed", range(5))
def test_icc_3_1_and_icc_3_k_are_pingouins(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.random(12)
    y = 0.7 * x + rng.normal(0, 0.2, 12) + 0.1
    assert icc_3_1(x, y) == pytest.approx(pingouin_icc(x, y, "ICC3"))
    assert icc_3_k(x, y) == pytest.approx(pingouin_icc(x, y, "ICC3k"))


@pytest.mark.parametrize("seed", range(5))
def test_icc_medhelm_is_pingouins_icc3k_on_z_scored_raters(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 6, 15) / 5
    y = x * 0.5 + rng.normal(0, 0.15, 15)  # another scale: z-scoring is what makes the two comparable
    assert icc_medhelm(x, y) == pytest.approx(pingouin_icc(zscore(x), zscore(y), "ICC3k"))
    assert icc_medhelm(x, y) != pytest.approx(icc_3_k(x, y))


@pytest.mark.parametrize("statistic", [icc_3_1, icc_3_k, icc_medhelm, spearman])
def test_a_constant_side_has_no_statistic_and_no_interval(statistic: object) -> None:
    """pingouin says 0 for ICC(3,1) here, with every resample 0 too: a zero-width interval out of no information."""
    x, y = arr(0.6, 0.6, 0.6, 0.6, 0.6, 0.6), arr(0.2, 0.4, 0.6, 0.8, 1.0, 0.4)
    assert all(math.isnan(v) for v in with_ci(statistic, x, y, SETTINGS))  # type: ignore[arg-type]
    assert all(math.isnan(v) for v in with_ci(statistic, y, x, SETTINGS))  # type: ignore[arg-type]


def test_rank_statistics_see_one_reward_reached_in_two_orders_as_a_tie() -> None:
    """(2,4,3) and (3,3,3) both average to 0.6, one as 0.6000000000000001: they must tie."""
    noisy = arr(sum(s / 5 for s in (2, 4, 3)) / 3, sum(s / 5 for s in (3, 3, 3)) / 3, 0.2, 1.0)
    assert noisy[0] != noisy[1]
    human = arr(0.7, 0.5, 0.2, 1.0)
    assert spearman(noisy, human) == pytest.approx(stats.spearmanr(noisy.round(9), human).statistic)
    assert spearman(noisy, human) != pytest.approx(stats.spearmanr(noisy, human).statistic)
    assert kendall(noisy, human) == pytest.approx(stats.kendalltau(noisy.round(9), human).statistic)


def test_an_interval_is_undefined_when_most_resamples_equal_the_statistic() -> None:
    """A perfectly ordered pair: every resample's rho is 1, so an interval [1, 1] would be certainty from ties."""
    assert with_ci(spearman, arr(1, 2, 3, 4, 5, 6), arr(2, 3, 4, 5, 6, 7), SETTINGS)[1:] == pytest.approx(
        (math.nan, math.nan), nan_ok=True
    )
