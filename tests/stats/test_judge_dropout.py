"""Judge dropout (stats/judge_dropout.py): rewards without a judge follow the reward's rule, and Kendall's tau between
the full panel's ranking and each leave-one-judge-out ranking finds the judge the ranking depends on (seeded
simulations with known truth)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helm_mtsamples_ext.stats.intervals import BootstrapSettings, note_table
from helm_mtsamples_ext.stats.judge_dropout import HOLDS, judge_dropout, kendall_tau_b, lowest_tau, tau_interval

SETTINGS = BootstrapSettings(n_resamples=500, seed=0)
PANEL = "a+b+c"
QUALITY = {"m1": 0.80, "m2": 0.76, "m3": 0.72, "m4": 0.68, "m5": 0.64, "m6": 0.60}
"""True rewards, 0.04 apart: the full panel of agreeing judges ranks them m1 > ... > m6."""


def row(judge: str, model: str, note: str, reward: float | None, status: str = "ok") -> dict[str, object]:
    return {
        "panel": PANEL,
        "model": model,
        "note": note,
        "judge": judge,
        "judge_reward": reward,
        "status": status,
        "empty_answer": status == "empty_answer",
    }


def simulate(seed: int, scrambler: str | None = None, notes: int = 50) -> pd.DataFrame:
    """Judges a, b, c score each answer at its model's quality plus the note's difficulty (shared) plus their own
    noise (sd 0.05); ``scrambler``, when given, scores m1's answers at random (uniform 0-0.6) instead."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0, 0.1, notes)
    rows = []
    for model, quality in QUALITY.items():
        for n in range(notes):
            for judge in ("a", "b", "c"):
                reward = quality + difficulty[n] + rng.normal(0, 0.05)
                if judge == scrambler and model == "m1":
                    reward = rng.uniform(0, 0.6)
                rows.append(row(judge, model, f"n{n}", float(np.clip(reward, 0, 1))))
    return pd.DataFrame(rows)


def test_tau_b_is_scipys_on_every_row_with_ties() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.integers(0, 4, (200, 6)).astype(float), rng.integers(0, 4, (200, 6)).astype(float)
    expected = [stats.kendalltau(x, y).statistic for x, y in zip(a, b, strict=True)]
    assert kendall_tau_b(a, b) == pytest.approx(expected, nan_ok=True)
    assert math.isnan(float(kendall_tau_b(np.ones(4), np.arange(4.0))))  # one side all tied: undefined


@pytest.mark.parametrize("seed", range(8))
def test_a_judge_that_scrambles_one_model_is_the_one_the_ranking_depends_on(seed: int) -> None:
    """Judge c scrambles m1: the full panel drags m1 from first to about fifth ((0.8 + 0.8 + 0.3) / 3); without c
    it is first again, a ranking far from the full panel's (3-4 of 15 pairs reversed: tau 0.6 or less). Without a or
    b, c's weight grows and m1 drops one or two places further (tau 0.73-0.87)."""
    table = judge_dropout(simulate(seed, scrambler="c"), SETTINGS)
    taus = table.drop_duplicates("judge_dropped").set_index("judge_dropped")
    assert taus.loc["c", "tau"] < HOLDS
    assert taus.loc["c", "tau"] < min(taus.loc["a", "tau"], taus.loc["b", "tau"])
    assert taus.loc["c", "tau_ci_high"] < 1  # the interval says so too: not one resample in 40 gives the same order
    assert lowest_tau(table).loc[PANEL, "judge_dropped"] == "c"
    m1 = table[(table["judge_dropped"] == "c") & (table["model"] == "m1")].iloc[0]
    assert m1["rank_without"] == 1 and m1["rank"] > 2
    assert m1["change"] > 0.1  # the scrambled scores pulled m1 down by about 0.17


def test_a_panel_of_agreeing_judges_keeps_its_ranking_without_any_of_them() -> None:
    taus = []
    for seed in range(8):
        table = judge_dropout(simulate(seed), SETTINGS).drop_duplicates("judge_dropped")
        taus += table["tau"].tolist()
        assert (table["tau_ci_low"] >= 0.6).all()
    assert min(taus) >= HOLDS
    assert np.mean(taus) > 0.95


def test_a_note_whose_only_scoring_judge_is_left_out_becomes_unjudged_not_zero() -> None:
    rows = [
        row("a", "m1", "n1", 0.8), row("b", "m1", "n1", 0.6), row("c", "m1", "n1", 1.0),
        row("a", "m1", "n2", 0.4), row("b", "m1", "n2", None, "failed"), row("c", "m1", "n2", None, "failed"),
        row("a", "m1", "n3", 0.0, "empty_answer"), row("b", "m1", "n3", 0.0, "empty_answer"),
        row("c", "m1", "n3", 0.0, "empty_answer"),
    ]  # fmt: skip
    instances = pd.DataFrame(rows)
    table = judge_dropout(instances, SETTINGS).set_index("judge_dropped")
    # Full panel: n1 0.8, n2 0.4 (a alone), n3 0 (empty answer): the leaderboard's reward.
    notes = note_table(instances.assign(note_reward=[0.8] * 3 + [0.4] * 3 + [0.0] * 3, run="r", specialty="s",
                                        extracted_section="PLAN", output_words=1, accuracy=1, completeness=1,
                                        clarity=1))  # fmt: skip
    assert table.loc["a", "reward"] == pytest.approx(notes["reward"].mean()) == pytest.approx(0.4)
    # Without a: n1 is (0.6 + 1.0) / 2, n2 is unjudged (left out, not 0), n3 still 0.
    assert table.loc["a", "reward_without"] == pytest.approx((0.8 + 0.0) / 2)
    assert (table.loc["a", "n_judged"], table.loc["a", "n_judged_without"]) == (3, 2)
    assert table.loc["b", "reward_without"] == pytest.approx((0.9 + 0.4 + 0.0) / 3)
    assert math.isnan(table.loc["a", "tau"])  # one model: no ranking to compare


def test_panels_of_fewer_than_three_judges_and_controls() -> None:
    """A two-judge panel has no dropout rows; a control keeps its rewards but is not ranked."""
    instances = simulate(0)
    two = instances[instances["judge"] != "c"].assign(panel="a+b")
    control = instances[instances["model"] == "m6"].assign(model="mtsamples-control/reference")
    table = judge_dropout(pd.concat([two, instances, control], ignore_index=True), SETTINGS)
    assert set(table["panel"]) == {PANEL}
    assert list(table["judge_dropped"].unique()) == ["a", "b", "c"]
    reference = table[table["model"] == "mtsamples-control/reference"]
    assert len(reference) == 3 and reference["rank"].isna().all() and reference["reward"].notna().all()
    assert (table["n_tau_models"] == len(QUALITY)).all()
    assert judge_dropout(two, SETTINGS).empty


def test_taus_computed_in_blocks_of_resamples_are_the_same_as_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    full = rng.uniform(size=(30, 12))
    without = full + rng.normal(0, 0.05, full.shape)
    blocks = tau_interval(full, without, BootstrapSettings(n_resamples=1000))
    monkeypatch.setattr("helm_mtsamples_ext.stats.judge_dropout.RESAMPLES_PER_BLOCK", 10**6)
    assert tau_interval(full, without, BootstrapSettings(n_resamples=1000)) == blocks
