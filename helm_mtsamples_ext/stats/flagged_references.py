"""Bad references: each model's reward with and without the notes a clinician flagged as having a bad reference.

The judges score an answer against the note's reference section, so a reference that is not a good plan (MedHELM's
clinicians flagged 25 of this benchmark's 128) misleads them: a good answer that departs from it scores low, a
copy of it scores high. In rating mode a rater can flag a note's reference (`bad_reference` in ratings.csv). A
flag is about the note, not the answer: the rater saw one model's answer beside the reference, but the reference is
the same for every model, so a note flagged by any rater, on any model's answer, in any run, is flagged for all.

Per (panel, model): the reward on every judged note (the leaderboard's `reward`), on the notes no rater flagged,
and their difference (unflagged minus all), with a bootstrap interval paired over notes: each resample (the
pairwise table's draw, `pairwise.resample_counts`, the report's seed) draws notes and takes both means on the
same drawn notes. A resample that draws no unflagged note has no difference and is left out. The percentile
interval is expanded as the leaderboard's is (`intervals.expansion`: too narrow at few notes otherwise; on random
flags on a fifth of 40 notes it covers 0 in 93.3% of 1,000 simulated draws plain, 94.2% expanded). No interval
below `evidence.MINIMUMS.notes_for_verdict` notes (all, or unflagged), none when no note of the model is flagged (the
difference is then 0 by construction), none when most resamples tie.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.stats.evidence import MINIMUMS, mostly_tied
from helm_mtsamples_ext.stats.intervals import KEYS, BootstrapSettings, widened
from helm_mtsamples_ext.stats.pairwise import resample_counts

FLAG = "bad_reference"
"""The matched ratings' column: True where the rater said the note's reference is not a good plan."""

NOTE_COLUMNS = ["note", "instance_id", "n_raters_flagged", "n_raters"]
COLUMNS = [*KEYS, "reward", "reward_unflagged", "difference", "ci_low", "ci_high"]
COLUMNS += ["n_notes", "n_flagged_notes", "n_unflagged_notes"]


def has_flags(ratings: pd.DataFrame | None) -> bool:
    """Ratings that flag at least one reference (a file without the column, or with no flag, changes nothing)."""
    return ratings is not None and FLAG in ratings and bool(ratings[FLAG].eq(True).any())


def flagged_notes(ratings: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """One row per note some rater flagged: its name and instance id, how many raters flagged it and how many rated
    any answer of it; most flagged first, then by name."""
    flags = ratings.assign(_flag=ratings[FLAG].eq(True))
    per_note = flags.groupby("instance_id").agg(
        n_raters_flagged=("rater", lambda r: r[flags.loc[r.index, "_flag"]].nunique()),
        n_raters=("rater", "nunique"),
    )
    per_note = per_note[per_note["n_raters_flagged"] > 0].reset_index()
    names = instances[["note_id", "note"]].drop_duplicates("note_id").rename(columns={"note_id": "instance_id"})
    table = per_note.merge(names, on="instance_id", how="left")
    table["note"] = table["note"].fillna(table["instance_id"])
    table = table.sort_values(["n_raters_flagged", "note"], ascending=[False, True], kind="stable")
    return table[NOTE_COLUMNS].reset_index(drop=True)


def difference_interval(
    rewards: np.ndarray, unflagged: np.ndarray, settings: BootstrapSettings
) -> tuple[float, float, float]:
    """(unflagged mean minus mean of all, CI low, CI high) over notes with ``rewards``; ``unflagged`` a bool mask."""
    n, kept = rewards.size, int(unflagged.sum())
    if not kept:
        return np.nan, np.nan, np.nan
    point = float(rewards[unflagged].mean() - rewards.mean())
    if kept == n or n < max(2, MINIMUMS.notes_for_verdict) or kept < MINIMUMS.notes_for_verdict:
        return point, np.nan, np.nan
    counts = resample_counts(n, settings.n_resamples, settings.seed)
    drawn_unflagged = counts @ unflagged.astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        diffs = counts @ (rewards * unflagged) / drawn_unflagged - counts @ rewards / n
    diffs = diffs[drawn_unflagged > 0]
    if not diffs.size or mostly_tied(diffs, point=point):
        return point, np.nan, np.nan
    alpha = (1 - settings.confidence) / 2
    plain_low, plain_high = np.quantile(diffs, [alpha, 1 - alpha])
    low, high = widened(point, plain_low, plain_high, n, settings.confidence)
    return point, float(low), float(high)


def flagged_rewards(
    notes: pd.DataFrame,
    instances: pd.DataFrame,
    flagged: pd.DataFrame,
    settings: BootstrapSettings,
    board: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per (panel, model) with a judged note, in ``board``'s order (the leaderboard's) when given: the
    reward on all judged notes and on the unflagged ones, and the difference with its interval."""
    ids = instances[[*KEYS, "note", "note_id"]].drop_duplicates([*KEYS, "note"])
    judged = notes.dropna(subset=["reward"]).drop(columns="note_id", errors="ignore")
    judged = judged.merge(ids, on=[*KEYS, "note"], how="left")
    bad = set(flagged["instance_id"])
    rows = []
    for (panel, model), group in judged.groupby(KEYS, sort=False):
        rewards = group["reward"].to_numpy(dtype=float)
        unflagged = ~group["note_id"].isin(bad).to_numpy()
        difference, low, high = difference_interval(rewards, unflagged, settings)
        rows.append(
            {
                "panel": panel,
                "model": model,
                "reward": float(rewards.mean()),
                "reward_unflagged": float(rewards[unflagged].mean()) if unflagged.any() else np.nan,
                "difference": difference,
                "ci_low": low,
                "ci_high": high,
                "n_notes": rewards.size,
                "n_flagged_notes": int((~unflagged).sum()),
                "n_unflagged_notes": int(unflagged.sum()),
            }
        )
    table = pd.DataFrame(rows, columns=COLUMNS)
    if board is not None and not table.empty:
        table = board[KEYS].merge(table, on=KEYS, how="inner")
    return table.reset_index(drop=True)


def flagged_tables(
    notes: pd.DataFrame,
    instances: pd.DataFrame,
    ratings: pd.DataFrame | None,
    settings: BootstrapSettings,
    board: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """The report's `flagged_notes` and `flagged_references` tables; none without a flag in ``ratings``."""
    if ratings is None or not has_flags(ratings):
        return {}
    flagged = flagged_notes(ratings, instances)
    return {"flagged_notes": flagged, "flagged_references": flagged_rewards(notes, instances, flagged, settings, board)}
