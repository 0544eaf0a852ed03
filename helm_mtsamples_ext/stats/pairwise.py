"""Every pair of a panel's models compared at once: one bootstrap draw shared by all pairs, no loop over resamples.

Why not a bootstrap per pair: a panel of 64 models has 2,016 pairs, and a `scipy.stats.bootstrap` call per pair
(plus a Python pass over its 2,000 resamples for the ties) made the pairwise table most of the report's time.
A pair's resampled mean difference is `counts @ diffs / n`, where row r of `counts` says how many times resample
r drew each of the pair's n notes. scipy draws its resample from a fresh generator seeded with the report's seed
(`rng.integers(0, n, (n_resamples, n))`), so every pair over n notes already shared that draw: here it is made
once per note count and multiplied with every such pair's differences in one matrix product. The numbers are
`stats.paired_difference`'s, pair by pair, up to the order of float sums (tests/report/test_pairwise.py checks
that): the mean difference on rewards rounded for ranks, the expanded percentile interval (stats.expansion), the
win share with a tied resample counting half, and evidence.py's minimums (no interval nor share below
`notes_for_verdict` notes, no interval when more than `max_tied_resample_share` of the resamples tie).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, widened
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

PAIR_KEYS = ["panel", "model_a", "model_b"]
COLUMNS = [*PAIR_KEYS, "n_notes", "reward_a", "reward_b", "difference", "ci_low", "ci_high"]
COLUMNS += ["share_resamples_a_ahead", "p_value", "p_holm", "separated", "separated_holm"]
CONTROL = "not counted (control)"
"""separated_holm of a pair with a control: controls are checks on the judges, not models in the comparison."""
PAIRS_PER_PRODUCT = 1024
"""Pairs multiplied at once: bounds the resampled means held in memory (2,000 x 1,024 floats, 16 MB)."""


@lru_cache(maxsize=8)
def resample_counts(n: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, n): how many times each resample draws each of n notes, from scipy's own draw."""
    drawn = np.random.default_rng(seed).integers(0, n, (n_resamples, n))
    rows = np.repeat(np.arange(n_resamples) * n, n)
    counts = np.bincount(rows + drawn.ravel(), minlength=n_resamples * n).reshape(n_resamples, n).astype(float)
    counts.flags.writeable = False  # cached: shared by every caller
    return counts


def ranking_notes(wide: pd.DataFrame) -> pd.Index:
    """The notes judged for every model under test in ``wide`` (notes x models rewards): what a panel
    is ranked and compared on. Controls, and models judged on fewer notes than a verdict needs (nothing could be
    said of them anyway), do not narrow it: one model whose judge failed everywhere would leave every pair of its
    panel without notes."""
    judged = wide.notna()
    counted = judged.sum(axis=0) >= max(1, MINIMUMS.notes_for_verdict)
    counted &= np.array([not control_kind(m) for m in wide.columns], dtype=bool)
    if not counted.any():
        return wide.index
    return wide.index[judged.loc[:, counted].all(axis=1).to_numpy()]


def bootstrap_differences(
    diffs: np.ndarray, n_resamples: int, seed: int, confidence: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(CI low, CI high, share of resamples with A ahead, mostly tied, resampled standard deviation) per column of
    ``diffs`` (notes x pairs, every pair on the same notes), all pairs from one resample draw."""
    n = diffs.shape[0]
    counts = resample_counts(n, n_resamples, seed)
    raw_points = diffs.mean(axis=0)
    points = rounded_for_ranks(raw_points)
    alpha = (1 - confidence) / 2
    parts = []
    for start in range(0, diffs.shape[1], PAIRS_PER_PRODUCT):
        means = counts @ diffs[:, start : start + PAIRS_PER_PRODUCT] / n
        low, high = np.quantile(means, [alpha, 1 - alpha], axis=0)
        chunk = diffs[:, start : start + PAIRS_PER_PRODUCT]
        low, high = widened(raw_points[start : start + PAIRS_PER_PRODUCT], low, high, n, confidence)
        low, high = np.maximum(low, chunk.min(axis=0)), np.minimum(high, chunk.max(axis=0))  # as stats.mean_ci
        spread = means.std(axis=0, ddof=1)
        means = rounded_for_ranks(means)
        share = ((means > 0) + 0.5 * (means == 0)).mean(axis=0)
        tied = (means == points[start : start + PAIRS_PER_PRODUCT]).mean(axis=0) > MINIMUMS.max_tied_resample_share
        parts.append((low, high, share, tied, spread))
    low, high, share, tied, spread = (np.concatenate(column) for column in zip(*parts, strict=True))
    return low, high, share, tied, spread


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN stays NaN, and is not counted among the comparisons)."""
    adjusted = np.full(p_values.shape, np.nan)
    present = np.flatnonzero(~np.isnan(p_values))
    order = present[np.argsort(p_values[present], kind="stable")]
    m = order.size
    steps = (m - np.arange(m)) * p_values[order]
    adjusted[order] = np.minimum(np.maximum.accumulate(steps), 1.0)
    return adjusted


def _verdicts(table: pd.DataFrame, confidence: float) -> pd.DataFrame:
    """``separated`` (the pair's own interval excludes 0) and, over the pairs of models under test only,
    ``p_holm`` and ``separated_holm``; "" where a pair has no interval."""
    has = table["ci_low"].notna() & table["ci_high"].notna()
    apart = (table["ci_low"] > 0) | (table["ci_high"] < 0)
    control = (table["model_a"].map(control_kind) != "") | (table["model_b"].map(control_kind) != "")
    p_holm = holm(np.where(has & ~control, table["p_value"], np.nan))
    corrected = np.where(p_holm < 1 - confidence, "yes", "no")
    return table.assign(
        separated=np.where(has, np.where(apart, "yes", "no"), ""),
        p_holm=p_holm,
        separated_holm=np.where(control, CONTROL, np.where(has, corrected, "")),
    )


def _panel_pairs(panel: str, models: list[str], rewards: np.ndarray, settings: BootstrapSettings) -> pd.DataFrame:
    """Every pair of ``models`` (best rank first) from their rewards (notes x models, NaN where unjudged)."""
    a, b = np.triu_indices(len(models), k=1)
    both = ~np.isnan(rewards[:, a]) & ~np.isnan(rewards[:, b])
    n_notes = both.sum(axis=0)
    counted = np.where(n_notes > 0, n_notes, np.nan)
    steady = rounded_for_ranks(np.nan_to_num(rewards))
    diffs = np.where(both, steady[:, a] - steady[:, b], 0.0)
    table = pd.DataFrame(
        {
            "panel": panel,
            "model_a": np.asarray(models, dtype=object)[a],
            "model_b": np.asarray(models, dtype=object)[b],
            "n_notes": n_notes,
            "reward_a": np.where(both, np.nan_to_num(rewards[:, a]), 0.0).sum(axis=0) / counted,
            "reward_b": np.where(both, np.nan_to_num(rewards[:, b]), 0.0).sum(axis=0) / counted,
            "difference": diffs.sum(axis=0) / counted,
            "ci_low": np.nan,
            "ci_high": np.nan,
            "share_resamples_a_ahead": np.nan,
            "p_value": np.nan,
        }
    )
    enough = n_notes >= max(2, MINIMUMS.notes_for_verdict)
    if not enough.any():
        return table
    # Pairs judged on the same notes share a resample draw: group them by which notes they have.
    masks, group = np.unique(both[:, enough].T, axis=0, return_inverse=True)
    columns = np.flatnonzero(enough)
    for g, mask in enumerate(masks):
        pairs = columns[group.ravel() == g]
        low, high, share, tied, spread = bootstrap_differences(
            diffs[np.ix_(mask, pairs)],
            settings.n_resamples,
            settings.seed,
            settings.confidence,
        )
        table.loc[pairs, "ci_low"] = np.where(tied, np.nan, low)
        table.loc[pairs, "ci_high"] = np.where(tied, np.nan, high)
        table.loc[pairs, "share_resamples_a_ahead"] = share
        with np.errstate(divide="ignore", invalid="ignore"):
            # The resampled spread, widened as the intervals are, read against Student's t: few notes, wider.
            n = int(mask.sum())
            scale = spread * np.sqrt(n / (n - 1))
            p = 2 * stats.t.sf(np.abs(table.loc[pairs, "difference"].to_numpy(float)) / scale, n - 1)
        table.loc[pairs, "p_value"] = np.where(tied | (spread == 0), np.nan, p)
    return table


def pairwise(notes: pd.DataFrame, board: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """Every pair of models within a panel (A ranked above B), compared on the notes judged for both among the
    panel's ranking notes; the panels in the leaderboard's order, the pairs by A's rank, then B's."""
    frames = []
    for panel, ranks in board.groupby("panel", sort=False):
        models = ranks.sort_values("rank")["model"].tolist()
        if len(models) < 2:
            continue
        judged = notes.loc[(notes["panel"] == panel) & notes["reward"].notna()]
        wide = judged.pivot(index="note", columns="model", values="reward").reindex(columns=models)
        wide = wide.loc[ranking_notes(wide)]
        frames.append(
            _verdicts(_panel_pairs(str(panel), models, wide.to_numpy(dtype=float), settings), settings.confidence)
        )
    if not frames:
        text = {*PAIR_KEYS, "separated", "separated_holm"}
        return pd.DataFrame({c: pd.Series(dtype=object if c in text else float) for c in COLUMNS})
    return pd.concat(frames, ignore_index=True)[COLUMNS]
