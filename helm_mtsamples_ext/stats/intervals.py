"""The report's statistics: rewards, bootstrap intervals, a pair's paired difference, judge agreement.

Pure pandas on the per-judge table that `report.py` reads from a suite; no I/O. Scores, judge and note rewards
and failures arrive already decided by `scoring.score_note` (the metric's own rules), and judge agreement is
`scoring.ordinal_alpha`, so report.md and HELM's stats cannot drift apart; this module only aggregates.
Uncertainty is about the notes, so bootstraps resample notes, never individual judge calls. Below
`evidence.MINIMUMS.notes_for_verdict` notes, or when most resamples tie, an interval is NaN (no interval), never a
zero-width one; rank statistics (the ranking, win shares) compare rewards through `ties.rounded_for_ranks`. The table of
every pair of models is pairwise.py's, which computes `paired_difference` for all pairs at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.scoring.reward import ordinal_alpha, ratings_matrix
from helm_mtsamples_ext.stats.evidence import MINIMUMS, mostly_tied
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

KEYS = ["panel", "model"]
"""A leaderboard row: results of different judge panels are never pooled."""


@dataclass(frozen=True)
class BootstrapSettings:
    n_resamples: int = 2000
    seed: int = 0
    confidence: float = 0.95


def note_table(instances: pd.DataFrame) -> pd.DataFrame:
    """One row per (panel, model, note): the panel's reward and mean dimension scores for that note."""
    flagged = instances.assign(
        judge_ok=instances["status"] == "ok",
        judge_failed=instances["status"] == "failed",
    )
    return flagged.groupby([*KEYS, "note"], sort=False, as_index=False).agg(
        run=("run", "first"),
        specialty=("specialty", "first"),
        extracted_section=("extracted_section", "first"),
        reward=("note_reward", "first"),
        **{dim: (dim, "mean") for dim in DIMENSIONS},
        valid_judges=("judge_ok", "sum"),
        failed_judges=("judge_failed", "sum"),
        empty_answer=("empty_answer", "any"),
        output_words=("output_words", "first"),
    )


def _bootstrap(
    samples: tuple[np.ndarray, ...], statistic: Callable[..., Any], settings: BootstrapSettings, vectorized: bool
) -> Any:
    """scipy's percentile bootstrap (BCa breaks on degenerate data), seeded; several samples share resampled notes."""
    return stats.bootstrap(
        samples,
        statistic,
        paired=len(samples) > 1,
        n_resamples=settings.n_resamples,
        confidence_level=settings.confidence,
        method="percentile",
        vectorized=vectorized,
        rng=np.random.default_rng(settings.seed),
    )


def expansion(n: int | np.ndarray, confidence: float) -> Any:
    """How much wider the percentile bootstrap interval of a mean over ``n`` notes is drawn around its point:
    t(n-1) / z times sqrt(n / (n-1)), Hesterberg's expanded percentile interval. The plain one is too narrow at few
    notes (on simulated rewards it covers about 86% at 5 notes and 91% at 10 for a stated 95%); widened, about 92%
    and 95% (tests/report/test_stats.py). It tends to 1: 1.01 at 131 notes."""
    q = (1 + confidence) / 2
    n = np.asarray(n, dtype=float)
    return stats.t.ppf(q, n - 1) / stats.norm.ppf(q) * np.sqrt(n / (n - 1))


def widened(point: Any, low: Any, high: Any, n: int | np.ndarray, confidence: float) -> tuple[Any, Any]:
    """A percentile interval of a mean over ``n`` notes, expanded about ``point`` (see `expansion`)."""
    factor = expansion(n, confidence)
    return point - factor * (point - low), point + factor * (high - point)


def _bootstrap_mean(values: np.ndarray, settings: BootstrapSettings) -> tuple[float, float, np.ndarray]:
    """(CI low, CI high, resampled means): the expanded percentile interval of the mean."""
    result = _bootstrap((values,), np.mean, settings, vectorized=True)
    interval = result.confidence_interval
    low, high = widened(float(values.mean()), interval.low, interval.high, values.size, settings.confidence)
    # Never past what the notes hold: a mean of rewards in [0, 1] has no interval below 0.
    return (max(float(low), float(values.min())), min(float(high), float(values.max())), result.bootstrap_distribution)


def paired_ci(
    samples: tuple[np.ndarray, ...],
    statistic: Callable[..., Any],
    settings: BootstrapSettings,
    vectorized: bool = False,
) -> tuple[float, float]:
    """Bootstrap interval of any statistic of per-note paired samples; NaN below the minimum of notes.

    The same resampled notes feed every sample, as in `paired_difference`; for statistics such as the judge
    audit's AUROC that are not a mean of per-note values. ``vectorized``: the statistic takes resamples along
    its last axis (scipy's `axis=-1`), so all of them are computed at once.
    """
    if samples[0].size < max(2, MINIMUMS.notes_for_verdict):
        return (np.nan, np.nan)
    result = _bootstrap(samples, statistic, settings, vectorized=vectorized)
    if mostly_tied(result.bootstrap_distribution, point=statistic(*samples)):
        return (np.nan, np.nan)
    interval = result.confidence_interval
    return (float(interval.low), float(interval.high))


def mean_ci(values: np.ndarray, settings: BootstrapSettings, minimum: int = 2) -> tuple[float, float]:
    """Bootstrap interval of the mean; NaN below ``minimum`` values or when most resamples tie."""
    if values.size < max(2, minimum):
        return (np.nan, np.nan)
    low, high, means = _bootstrap_mean(values, settings)
    if mostly_tied(means, point=float(values.mean())):
        return (np.nan, np.nan)
    return (low, high)


def reward_ci(values: np.ndarray, settings: BootstrapSettings) -> tuple[float, float]:
    """The leaderboard's reward interval: `mean_ci` over notes, none below `evidence.MINIMUMS.notes_for_verdict`
    (over 2 notes a bootstrap interval is merely their range)."""
    return mean_ci(values, settings, minimum=MINIMUMS.notes_for_verdict)


def paired_difference(diffs: np.ndarray, settings: BootstrapSettings) -> tuple[float, float, float, float]:
    """(mean difference, CI low, CI high, share of resamples where A beats B) from per-note differences A-B.

    Resampling the notes once for both models and differencing is the same as resampling the differences. A
    resample whose mean difference is 0 (after `ties.rounded_for_ranks`) is a tie and counts half to each model, so two
    models with equal rewards reached in different float orders share 50%. Below the minimum of notes there is
    no interval and no share (a verdict from 2 notes would be a coin toss read as a finding); when most
    resamples tie there is no interval, but the share (then near 50%) stays.
    """
    mean = float(diffs.mean()) if diffs.size else np.nan
    if diffs.size < max(2, MINIMUMS.notes_for_verdict):
        return (mean, np.nan, np.nan, np.nan)
    low, high, means = _bootstrap_mean(diffs, settings)
    means = rounded_for_ranks(means)
    share = float(np.mean((means > 0) + 0.5 * (means == 0)))
    if mostly_tied(means, point=mean):
        return (mean, np.nan, np.nan, share)
    return (mean, low, high, share)


def judge_agreement(rows: pd.DataFrame, dim: str) -> float:
    """Krippendorff's alpha (ordinal) between the judges on one dimension over the given rows (the leaderboard's
    `alpha_<dim>`: one model's answers; the panel's across all answers is panel_alpha.py's); NaN when undefined."""
    ratings = zip(rows["judge"], rows["note"], rows[dim], strict=True)
    value = ordinal_alpha(ratings_matrix(ratings)[1]).value
    return np.nan if value is None else value


def _empty(keys: list[str], columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({**{k: pd.Series(dtype=object) for k in keys}, **{c: pd.Series(dtype=float) for c in columns}})


def _split(tuples: pd.Series, keys: list[str], columns: list[str]) -> pd.DataFrame:
    """Spread a groupby-apply result of tuples into columns (also when there were no groups at all)."""
    if tuples.empty:
        return _empty(keys, columns)
    return pd.DataFrame(tuples.tolist(), index=tuples.index, columns=columns).reset_index()


def leaderboard(instances: pd.DataFrame, notes: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """One row per (panel, model), best reward first within each panel; a model nobody judged has reward NaN."""
    board = notes.groupby(KEYS, as_index=False).agg(
        run=("run", "first"),
        reward=("reward", "mean"),
        **{dim: (dim, "mean") for dim in DIMENSIONS},
        n_notes=("note", "size"),
        n_judged=("reward", "count"),
        n_empty_answers=("empty_answer", "sum"),
        mean_output_words=("output_words", "mean"),
    )
    board["n_unjudged"] = board["n_notes"] - board["n_judged"]
    ci = notes.dropna(subset=["reward"]).groupby(KEYS)["reward"].apply(lambda s: reward_ci(s.to_numpy(), settings))
    board = board.merge(_split(ci, KEYS, ["reward_ci_low", "reward_ci_high"]), on=KEYS, how="left")

    # Share of the judge calls made (an empty answer calls no judge). The metric's per-note failures / panel size
    # averaged over notes counts an empty answer's uncalled judges as successes, so it is kept for HELM's stats only.
    calls = instances[instances["status"] != "empty_answer"].assign(failed=lambda t: t["status"] == "failed")
    failures = calls.groupby(KEYS, as_index=False).agg(judge_calls=("failed", "size"), judge_failures=("failed", "sum"))
    board = board.merge(failures, on=KEYS, how="left")
    board[["judge_calls", "judge_failures"]] = board[["judge_calls", "judge_failures"]].fillna(0).astype(int)
    board["judge_failure_rate"] = board["judge_failures"] / board["judge_calls"].where(board["judge_calls"] > 0)

    alphas = instances.groupby(KEYS).apply(
        lambda rows: tuple(judge_agreement(rows, dim) for dim in DIMENSIONS), include_groups=False
    )
    board = board.merge(_split(alphas, KEYS, [f"alpha_{dim}" for dim in DIMENSIONS]), on=KEYS, how="left")

    # Ranked on rounded rewards: equal rewards reached in different float orders tie, and the name breaks the tie.
    board = board.assign(_settled=rounded_for_ranks(board["reward"]))
    board = board.sort_values(["panel", "_settled", "model"], ascending=[True, False, True], na_position="last")
    board["rank"] = board.groupby("panel").cumcount() + 1
    columns = ["panel", "rank", "model", "reward", "reward_ci_low", "reward_ci_high", *DIMENSIONS]
    columns += ["n_notes", "n_judged", "n_unjudged", "n_empty_answers", "judge_calls", "judge_failures"]
    columns += ["judge_failure_rate", *(f"alpha_{dim}" for dim in DIMENSIONS), "mean_output_words", "run"]
    return board[columns].reset_index(drop=True)


def by_specialty(notes: pd.DataFrame, board: pd.DataFrame) -> pd.DataFrame:
    """Reward per model per specialty, with the number of notes judged (n) and seen."""
    table = notes.groupby([*KEYS, "specialty"], as_index=False).agg(
        reward=("reward", "mean"), n=("reward", "count"), n_notes=("note", "size")
    )
    table = table.merge(board[[*KEYS, "rank"]], on=KEYS).sort_values(["panel", "rank", "specialty"])
    return table.drop(columns="rank").reset_index(drop=True)
