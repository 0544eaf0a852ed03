"""The leaderboard's ranks: on the notes every model was judged on, with a rank interval from the pairs' draw.

Why not rank on each model's own mean: a model whose judge failed on its hardest notes has a mean over easier
notes, ranks above a model it loses to note for note, and its pair rows (which compare the notes judged for
both) say the opposite. Here a panel is ranked on `pairwise.ranking_notes` (the notes judged for every model under
test of the panel), the notes its pairs are compared on; `reward` stays each model's mean over all its judged
notes, and `ranked_reward` / `n_ranked_notes` say what the rank reads. With every model judged on every note,
the two rewards are one.

Why a rank interval: a rank is a point, and equal models are ranked 1 to 16 by noise. Each resample of the
pairs' draw (`pairwise.resample_counts`, the same seed, so the same resampled notes) ranks the models again;
`rank_low` and `rank_high` are the percentile interval of a model's rank over the resamples. Equal models show
overlapping ranks; below the evidence minimum, or for a model (a control) not judged on every ranking note,
there is none.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.pairwise import ranking_notes, resample_counts
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

RANK_COLUMNS = ["rank_low", "rank_high", "ranked_reward", "n_ranked_notes"]


def _rank_interval(rewards: np.ndarray, settings: BootstrapSettings) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) per column of ``rewards`` (notes x models, complete): competition ranks (1 + models strictly
    ahead) in every resample of the shared draw, their percentile interval."""
    n = rewards.shape[0]
    means = rounded_for_ranks(resample_counts(n, settings.n_resamples, settings.seed) @ rewards / n)
    ranks = 1 + (means[:, None, :] > means[:, :, None]).sum(axis=2)
    alpha = (1 - settings.confidence) / 2
    low, high = np.quantile(ranks, [alpha, 1 - alpha], axis=0, method="inverted_cdf")
    return low, high


def _panel(rows: pd.DataFrame, notes: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    models = rows["model"].tolist()
    judged = notes[notes["reward"].notna()]
    wide = judged.pivot(index="note", columns="model", values="reward").reindex(columns=models)
    wide = wide.loc[ranking_notes(wide)]
    ranked = wide.mean(axis=0)
    rows = rows.assign(ranked_reward=ranked.reindex(models).to_numpy(), n_ranked_notes=len(wide))
    rows = rows.assign(_settled=rounded_for_ranks(rows["ranked_reward"]))
    rows = rows.sort_values(["_settled", "model"], ascending=[False, True], na_position="last").drop(columns="_settled")
    rows = rows.assign(rank=np.arange(1, len(rows) + 1), rank_low=np.nan, rank_high=np.nan)
    complete = [m for m in rows["model"] if wide[m].notna().all()] if len(wide) else []
    if len(wide) >= max(2, MINIMUMS.notes_for_verdict) and complete:
        low, high = _rank_interval(wide[complete].to_numpy(dtype=float), settings)
        where = rows["model"].isin(complete).to_numpy()
        order = {m: i for i, m in enumerate(complete)}
        picks = [order[m] for m in rows.loc[where, "model"]]
        rows.loc[where, "rank_low"] = low[picks]
        rows.loc[where, "rank_high"] = high[picks]
    return rows


def with_ranks(board: pd.DataFrame, notes: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """``board`` ranked on each panel's ranking notes, with the rank interval and what the rank reads; the panels
    in their order, the models by rank."""
    frames = [
        _panel(rows, notes[notes["panel"] == panel], settings) for panel, rows in board.groupby("panel", sort=False)
    ]
    ranked = pd.concat(frames, ignore_index=True) if frames else board.assign(**{c: np.nan for c in RANK_COLUMNS})
    columns = list(board.columns)
    at = columns.index("rank") + 1
    columns = [*columns[:at], "rank_low", "rank_high", *columns[at:], "ranked_reward", "n_ranked_notes"]
    return ranked[columns]
