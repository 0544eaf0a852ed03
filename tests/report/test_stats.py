"""Rank statistics see equal rewards as equal, and no interval or win share comes from too few notes
(stats/intervals.py with stats/ties.py and stats/evidence.py).

Two models answer the same notes; on each note judge-one and judge-two give `acme/b-split` 0.8 and 0.4 and
`acme/a-even` 0.6 and 0.6. Both note rewards are 0.6 on paper, but (0.8 + 0.4) / 2 is 0.6000000000000001 in floats:
unsettled, b-split would rank first and win every resample.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, mean_ci, paired_difference, reward_ci
from tests.report.suites import JUDGES, NOTES, Run, build_suite, ok, read, row

J1, J2 = JUDGES
SPLIT, EVEN = "acme/b-split", "acme/a-even"
SETTINGS = BootstrapSettings(n_resamples=200)


def _report(tmp_path: Path, n_notes: int, vary: bool = False) -> Path:
    """Report of the split/even suite over the first ``n_notes`` notes; ``vary`` makes a-even better on some."""
    notes = [note.filename for note in NOTES[:n_notes]]
    split = Run(SPLIT, JUDGES, {n: {J1: ok(4, 4, 4), J2: ok(2, 2, 2)} for n in notes})
    even = {n: {J1: ok(3, 3, 3), J2: ok(3, 3, 3)} for n in notes}
    if vary:
        even |= {n: {J1: ok(5, 5, 5), J2: ok(4, 4, 4)} for n in notes[::2]}
    build_suite(tmp_path, [split, Run(EVEN, JUDGES, even)], notes=NOTES[:n_notes])
    out = tmp_path / "r"
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(out), "--bootstrap", "200"]) == 0
    return out


def test_equal_rewards_reached_in_different_orders_tie_in_the_ranking_and_pairwise(tmp_path: Path) -> None:
    out = _report(tmp_path, 6)
    board = read(out, "leaderboard")
    assert (0.8 + 0.4) / 2 != 0.6  # the float noise this test is about
    # Tied rewards: the name breaks the tie, not the last float bit.
    assert board["model"].tolist() == [EVEN, SPLIT]
    pair = row(read(out, "pairwise"), model_a=EVEN, model_b=SPLIT)
    assert pair["n_notes"] == 6 and pair["difference"] == 0.0
    assert pair["share_resamples_a_ahead"] == 0.5  # every resample a tie, counted half
    # Every resample ties: no interval, never [0, 0].
    assert math.isnan(pair["ci_low"]) and math.isnan(pair["ci_high"])
    md = [line for line in (out / "report.md").read_text().splitlines() if f"| {EVEN} | {SPLIT} |" in line]
    assert md and "most bootstrap resamples tie: no interval" in md[0] and "50.0%" in md[0]


def test_enough_notes_give_an_interval_and_a_win_share(tmp_path: Path) -> None:
    out = _report(tmp_path, MINIMUMS.notes_for_verdict + 1, vary=True)
    pair = row(read(out, "pairwise"), model_a=EVEN, model_b=SPLIT)
    assert pair["ci_low"] <= pair["difference"] <= pair["ci_high"]
    assert 0.5 < pair["share_resamples_a_ahead"] <= 1.0
    board = read(out, "leaderboard")
    assert row(board, model=EVEN)["reward_ci_low"] < row(board, model=EVEN)["reward"]
    # b-split's note reward is 0.6 on every note: every resample ties, so no interval rather than [0.6, 0.6].
    assert math.isnan(row(board, model=SPLIT)["reward_ci_low"])


def test_two_notes_are_too_few_for_an_interval_or_a_win_share(tmp_path: Path) -> None:
    out = _report(tmp_path, 2, vary=True)
    pair = row(read(out, "pairwise"), model_a=EVEN, model_b=SPLIT)
    # The CSV keeps the numbers (n_notes, rewards, difference) and leaves the interval and the share blank.
    assert pair["n_notes"] == 2 and pair["difference"] == pytest.approx(0.15)
    assert math.isnan(pair["ci_low"]) and math.isnan(pair["share_resamples_a_ahead"])
    board = read(out, "leaderboard")
    assert board["reward_ci_low"].isna().all() and board["reward"].notna().all()
    md = (out / "report.md").read_text()
    pairwise_rows = [line for line in md.splitlines() if f"| {EVEN} | {SPLIT} |" in line]
    assert pairwise_rows and "too few notes (2) to tell" in pairwise_rows[0]
    assert "%" not in pairwise_rows[0]


def test_the_win_share_counts_a_tied_resample_half() -> None:
    mean, low, high, share = paired_difference(np.zeros(6), SETTINGS)
    assert (mean, share) == (0.0, 0.5) and math.isnan(low) and math.isnan(high)


def test_below_the_minimum_of_notes_there_is_no_reward_interval() -> None:
    values = np.array([0.2, 0.8, 0.4, 0.6, 1.0, 0.0])
    assert all(math.isnan(v) for v in reward_ci(values[: MINIMUMS.notes_for_verdict - 1], SETTINGS))
    low, high = reward_ci(values, SETTINGS)
    assert low < values.mean() < high


def test_a_bootstrap_whose_resamples_all_tie_gives_no_interval() -> None:
    assert all(math.isnan(v) for v in mean_ci(np.full(10, 0.6), SETTINGS))


@pytest.mark.parametrize(("n", "at_least"), [(5, 0.89), (10, 0.92)])
def test_a_reward_interval_over_few_notes_covers_the_true_mean_as_it_says(n: int, at_least: float) -> None:
    """Seeded rewards from a skewed distribution with a known mean: the plain percentile interval covered about 86%
    at 5 notes and 91% at 10 for a stated 95%; the expanded one (stats.expansion) about 92% and 95%."""
    rng = np.random.default_rng(7)
    a, b = 2.0, 1.2
    truth = a / (a + b)
    settings = BootstrapSettings(n_resamples=500, seed=3)
    draws = 400
    covered = 0
    for _ in range(draws):
        low, high = reward_ci(rng.beta(a, b, n), settings)
        covered += bool(low <= truth <= high)
    assert covered / draws >= at_least


def test_the_expansion_fades_with_notes() -> None:
    """Many notes: the interval is the percentile interval, or near it."""
    from helm_mtsamples_ext.stats.intervals import expansion

    assert expansion(5, 0.95) > 1.5 and 1.0 < expansion(131, 0.95) < 1.02
