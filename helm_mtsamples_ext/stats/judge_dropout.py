"""Judge dropout: would the ranking hold without any one judge of the panel?

A panel's ranking is only as robust as its least replaceable judge: if leaving one judge out reorders the models,
the ranking is that judge's taste more than the panel's verdict. MedHELM published such leave-one-judge-out
tables (`som-shahlab/medhelm`, `judge_ablations/`: each model's score with one judge excluded, side by side);
here, for every panel of ``MIN_JUDGES`` or more, each model's reward and rank without each judge, and Kendall's
tau between the full panel's ranking and the ranking without that judge, with a bootstrap interval over notes.

The reward without a judge is the reward's own rule (scoring/reward.py) on the remaining judges: a note's reward
is the mean over the remaining judges that scored it, an empty answer still scores 0, and a note whose only scoring
judge is left out becomes unjudged (left out, never 0), as `intervals.note_table` has it. Ranks are read as the
leaderboard reads them (ranks.py): on the notes judged for every model under test (`pairwise.ranking_notes`), here
under both the full panel and the panel without the judge so both rankings read the same notes; rewards compared
through `ties.rounded_for_ranks`, the name breaking a tie; controls (`controls.control_kind`) are not ranked.
Tau is tau-b (ties count as neither concordant nor discordant, as scipy's `kendalltau`); its interval resamples
the notes with the pairwise table's draw (`pairwise.resample_counts`, the report's seed), none below
`evidence.MINIMUMS.notes_for_verdict` notes or with fewer than two ranked models.

One evidence rule is not applied: "no interval when most resamples tie" (`evidence.mostly_tied`). It is for
statistics whose resamples tie with the point only when the data are degenerate (a mean over two notes). Tau
over k models takes at most k(k-1)/2 + 1 values, so most resamples repeating the point is its nature, not a sign
of too little data: [1.00, 1.00] says that in at least 97.5% of the resampled note sets the ranking without the
judge is the full panel's, and is kept.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.pairwise import ranking_notes, resample_counts
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

MIN_JUDGES = 3
"""Panels of fewer judges get no dropout table: without one of two judges the "panel" is a single judge, whose
ranking is that judge's alone (the audit and self-preference already look at single judges)."""

HOLDS = 0.8
"""The tau from which report.md says the ranking holds without a judge: at 0.8, at most one pair in ten is
reversed (tau = 1 - 2 x the share of discordant pairs)."""

RESAMPLES_PER_BLOCK = 250
"""Resamples whose taus are computed at once: 64 models have 2,016 pairs, and a block's signs of every pair
(resamples x pairs, twice) stay near 8 MB."""

COLUMNS = [
    "panel", "judge_dropped", "model", "reward", "reward_without", "change", "rank", "rank_without",
    "n_judged", "n_judged_without", "tau", "tau_ci_low", "tau_ci_high", "n_tau_notes", "n_tau_models",
]  # fmt: skip


def kendall_tau_b(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between ``a`` and ``b`` along the last axis (any leading axes: one tau per row of
    resamples); NaN where either side has no untied pair. Equals scipy.stats.kendalltau (variant b)."""
    i, j = np.triu_indices(a.shape[-1], k=1)
    sa = np.sign(a[..., j] - a[..., i])
    sb = np.sign(b[..., j] - b[..., i])
    with np.errstate(divide="ignore", invalid="ignore"):
        tau = (sa * sb).sum(axis=-1) / np.sqrt((sa * sa).sum(axis=-1) * (sb * sb).sum(axis=-1))
    return np.asarray(tau, dtype=float)


def judge_matrix(rows: pd.DataFrame, judges: list[str]) -> tuple[pd.DataFrame, pd.Series]:
    """((model, note) x judge rewards, NaN where the judge gave none; whether the answer was empty) for a panel."""
    scored = rows.assign(_value=rows["judge_reward"].where(rows["status"] == "ok"))
    keys = ["model", "note"]
    wide = scored.groupby([*keys, "judge"], sort=False)["_value"].first().unstack("judge").reindex(columns=judges)
    empty = scored.groupby(keys, sort=False)["empty_answer"].any().reindex(wide.index)
    return wide, empty


def rewards_without(wide: pd.DataFrame, empty: pd.Series, judge: str | None) -> pd.Series:
    """Each (model, note)'s reward by the panel without ``judge`` (None: the whole panel): the mean over the
    remaining judges that scored it, 0 for an empty answer, NaN (unjudged) when none of them did."""
    kept = wide if judge is None else wide.drop(columns=judge)
    reward = kept.mean(axis=1, skipna=True)
    return reward.mask(empty.astype(bool), 0.0)


def _ranks(means: pd.Series) -> pd.Series:
    """1 = best, on rounded rewards, the name breaking a tie (as the leaderboard ranks)."""
    order = pd.DataFrame({"model": means.index, "settled": rounded_for_ranks(means.to_numpy(dtype=float))})
    order = order.sort_values(["settled", "model"], ascending=[False, True])
    return pd.Series(np.arange(1, len(order) + 1), index=order["model"].to_numpy())


def tau_interval(full: np.ndarray, without: np.ndarray, settings: BootstrapSettings) -> tuple[float, float, float]:
    """(tau, CI low, CI high) between the rankings of two notes x models reward tables on the same notes: the point
    on the notes' means, the interval over the report's resamples of notes; no interval below the minimum of notes,
    (see the module's note on ties)."""
    n = full.shape[0]
    tau = float(kendall_tau_b(rounded_for_ranks(full.mean(axis=0)), rounded_for_ranks(without.mean(axis=0))))
    if n < max(2, MINIMUMS.notes_for_verdict) or full.shape[1] < 2 or np.isnan(tau):
        return tau, np.nan, np.nan
    counts = resample_counts(n, settings.n_resamples, settings.seed)
    taus = np.concatenate(
        [
            kendall_tau_b(rounded_for_ranks(block @ full / n), rounded_for_ranks(block @ without / n))
            for block in np.array_split(counts, max(1, counts.shape[0] // RESAMPLES_PER_BLOCK))
        ]
    )
    taus = taus[~np.isnan(taus)]
    if not taus.size:
        return tau, np.nan, np.nan
    alpha = (1 - settings.confidence) / 2
    low, high = np.quantile(taus, [alpha, 1 - alpha])
    return tau, float(low), float(high)


def _dropped(
    panel: str, judge: str, full: pd.Series, without: pd.Series, settings: BootstrapSettings
) -> list[dict[str, object]]:
    """The rows of one left-out judge: every model's reward with and without it, the ranks both rankings give the
    models under test on their common notes, and the tau between them."""
    frame = pd.DataFrame({"full": full, "without": without})
    models = list(dict.fromkeys(frame.index.get_level_values("model")))
    tested = [m for m in models if not control_kind(m)]
    wide_full = frame["full"].unstack("model").reindex(columns=tested)
    wide_without = frame["without"].unstack("model").reindex(columns=tested)
    both = wide_full.where(wide_without.notna())
    common = ranking_notes(both) if tested else both.index
    on = both.loc[common]
    ranked = [m for m in tested if on[m].notna().all()] if len(on) else []
    a = on[ranked].to_numpy(dtype=float)
    b = wide_without.loc[common, ranked].to_numpy(dtype=float)
    tau, low, high = tau_interval(a, b, settings) if ranked else (np.nan, np.nan, np.nan)
    rank = _ranks(pd.Series(a.mean(axis=0), index=ranked)) if ranked else pd.Series(dtype=float)
    rank_without = _ranks(pd.Series(b.mean(axis=0), index=ranked)) if ranked else pd.Series(dtype=float)
    per_model = frame.groupby(level="model", sort=False).agg(
        reward=("full", "mean"), reward_without=("without", "mean"), n_judged=("full", "count"),
        n_judged_without=("without", "count"),
    )  # fmt: skip
    return [
        {
            "panel": panel,
            "judge_dropped": judge,
            "model": model,
            "reward": row.reward,
            "reward_without": row.reward_without,
            "change": row.reward_without - row.reward,
            "rank": rank.get(model, np.nan),
            "rank_without": rank_without.get(model, np.nan),
            "n_judged": int(row.n_judged),
            "n_judged_without": int(row.n_judged_without),
            "tau": tau,
            "tau_ci_low": low,
            "tau_ci_high": high,
            "n_tau_notes": len(common) if ranked else 0,
            "n_tau_models": len(ranked),
        }
        for model, row in per_model.reindex(models).iterrows()
    ]


def judge_dropout(instances: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """judge_dropout.csv: one row per (panel of ``MIN_JUDGES`` or more, judge left out, model), panels and judges
    in the suite's order; empty (with the columns) when no panel has that many judges."""
    rows: list[dict[str, object]] = []
    for panel, panel_rows in instances.groupby("panel", sort=False):
        judges = list(dict.fromkeys(panel_rows["judge"]))
        if len(judges) < MIN_JUDGES:
            continue
        wide, empty = judge_matrix(panel_rows, judges)
        full = rewards_without(wide, empty, None)
        for judge in judges:
            rows += _dropped(str(panel), judge, full, rewards_without(wide, empty, judge), settings)
    table = pd.DataFrame(rows, columns=COLUMNS)
    return table.astype({"rank": float, "rank_without": float}) if not table.empty else table


def lowest_tau(table: pd.DataFrame) -> pd.DataFrame:
    """Per panel, the row of the judge whose leaving out changes the ranking most (lowest tau; NaN taus last)."""
    judges = table.drop_duplicates(["panel", "judge_dropped"])
    ordered = judges.sort_values("tau", na_position="last", kind="stable")
    return ordered.drop_duplicates("panel").set_index("panel").reindex(list(dict.fromkeys(table["panel"])))
