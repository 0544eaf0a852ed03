"""The ceiling as first written, one rater at a time (quadratic in raters): what the fast one must equal.

Kept for the tests only; stats/ceiling.py computes the same numbers from per-rater sums.

Over the answers two or more raters rated, each rater is compared with the mean of the OTHER raters of the same
answers (leave-one-out), and each statistic (Spearman, ICC(3,1), kappa per dimension) is averaged over raters; its
interval resamples answers and recomputes that average. No rater is "first", so renaming raters changes nothing.
A rater who gave one reward to every shared answer (or whose others did) has no information and is left out of
the average, and named. `icc_medhelm` is MedHELM's own baseline: MedHELM's statistic (agreement.icc_medhelm) for
the pair of raters with the most answers in common (averaged over pairs that tie for most, again name-free).

Like for like: a judge is held to the ceiling by `in_place`, the judge put in each rater's place, against the very
same mean of the other raters over the same answers, averaged over the same raters. Against the mean of ALL raters
the judge would face a less noisy reference (one rater more) than any rater does, and look better than the ceiling
by construction.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.stats import evidence
from helm_mtsamples_ext.stats.agreement import (
    constant,
    icc_3_1,
    icc_medhelm,
    quadratic_kappa,
    resampled,
    round_half_up,
    spearman,
)
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

Statistic = Callable[[np.ndarray, np.ndarray], float]


def _left_out(matrix: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """(rater, their values, the mean of the other raters, which answers) over answers they and another rated."""
    for rater in range(matrix.shape[1]):
        others = np.delete(matrix, rater, axis=1)
        keep = ~np.isnan(matrix[:, rater]) & (~np.isnan(others)).any(axis=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # all-NaN rows are not kept
            yield rater, matrix[keep, rater], np.nanmean(others[keep], axis=1), keep


def averaged(statistic: Statistic, matrix: np.ndarray, *, rounded: bool = False) -> float:
    """The statistic of each rater against the others' mean, averaged over raters where it is defined."""
    values = []
    for _, mine, others, _ in _left_out(matrix):
        if mine.size >= 2 and not constant(mine) and not constant(others):
            values.append(statistic(mine, round_half_up(others) if rounded else others))
    defined = [v for v in values if not np.isnan(v)]
    return float(np.mean(defined)) if defined else np.nan


def in_place(statistic: Statistic, judge: np.ndarray, matrix: np.ndarray) -> float:
    """The judge in each rater's place, against the others' mean that rater faces, averaged like `averaged`.

    `judge` holds the judge's reward for each row of `matrix` (NaN where it gave none). A rater whose own column
    or whose others are constant is left out of the ceiling's average, and so of this one.
    """
    values = []
    for _, mine, others, keep in _left_out(matrix):
        theirs = judge[keep]
        scored = ~np.isnan(theirs)
        if mine.size < 2 or constant(mine) or constant(others) or scored.sum() < 2:
            continue
        if constant(theirs[scored]) or constant(others[scored]):
            continue
        values.append(statistic(theirs[scored], others[scored]))
    defined = [v for v in values if not np.isnan(v)]
    return float(np.mean(defined)) if defined else np.nan


def in_place_icc(judge: np.ndarray, matrix: np.ndarray, settings: BootstrapSettings) -> tuple[float, float, float]:
    """ICC(3,1) of the judge in each rater's place, with the interval the ceiling's own ICC gets."""
    return resampled(lambda pick: in_place(icc_3_1, judge[pick], matrix[pick]), len(matrix), settings)


def shared_rewards(shared: pd.DataFrame) -> pd.DataFrame:
    """Rewards of the answers two or more raters rated: one row per (run, instance_id), one column per rater."""
    return shared.pivot_table(index=["run", "instance_id"], columns="rater", values="human_reward", aggfunc="mean")


def uninformative(matrix: np.ndarray, raters: list[str]) -> list[str]:
    """What to say of each rater who gave one reward to every shared answer they rated: they are left out."""
    said = (evidence.constant(f"rater {raters[r]}", mine) for r, mine, _, _ in _left_out(matrix) if mine.size >= 2)
    return [text for text in said if text]


def medhelm_pair(matrix: np.ndarray) -> float:
    """MedHELM's baseline: icc_medhelm of the pair of raters with the most answers in common (mean over ties)."""
    common: dict[tuple[int, int], np.ndarray] = {}
    for a, b in itertools.combinations(range(matrix.shape[1]), 2):
        common[(a, b)] = ~np.isnan(matrix[:, a]) & ~np.isnan(matrix[:, b])
    if not common:
        return np.nan
    most = max(int(both.sum()) for both in common.values())
    values = [icc_medhelm(matrix[both, a], matrix[both, b]) for (a, b), both in common.items() if both.sum() == most]
    defined = [v for v in values if not np.isnan(v)]
    return float(np.mean(defined)) if defined else np.nan


def ceiling_stats(shared: pd.DataFrame, settings: BootstrapSettings) -> dict[str, object]:
    """Spearman and ICC(3,1) with intervals, kappas, icc_medhelm and notes, from ratings of shared answers."""
    answers = ["run", "instance_id"]
    rewards = shared_rewards(shared)
    raters = [str(name) for name in rewards.columns]
    reward_matrix = rewards.to_numpy(dtype=float)
    scores = {
        d: shared.pivot_table(index=answers, columns="rater", values=d, aggfunc="mean")
        .reindex(index=rewards.index, columns=rewards.columns)
        .to_numpy(dtype=float)
        for d in DIMENSIONS
    }

    def interval(statistic: Statistic) -> tuple[float, float, float]:
        return resampled(lambda pick: averaged(statistic, reward_matrix[pick]), len(reward_matrix), settings)

    row: dict[str, object] = {"n": len(reward_matrix)}
    row.update(zip(["spearman", "spearman_ci_low", "spearman_ci_high"], interval(spearman), strict=True))
    row.update(zip(["icc", "icc_ci_low", "icc_ci_high"], interval(icc_3_1), strict=True))
    for d in DIMENSIONS:
        row[f"kappa_{d}"] = averaged(quadratic_kappa, scores[d], rounded=True)
    row["icc_medhelm"] = medhelm_pair(reward_matrix)
    row["uninformative"] = uninformative(reward_matrix, raters)
    return row
