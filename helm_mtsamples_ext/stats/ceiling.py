"""The human ceiling of judge_human_agreement.csv: how well clinicians agree with each other, whatever their names.

Over the answers two or more raters rated, each rater is compared with the mean of the OTHER raters of the same
answers (leave-one-out), and each statistic (Spearman, ICC(3,1), kappa per dimension) is averaged over raters; its
interval resamples answers and recomputes that average. No rater is "first", so renaming raters changes nothing.
A rater who gave one reward to every shared answer (or whose others did) has no information and is left out of
the average, and named. MedHELM's own baseline, over every pair of raters, is medhelm_pairs.py's.

Like for like: a judge is held to the ceiling by `in_place`, the judge put in each rater's place, against the very
same mean of the other raters over the same answers, averaged over the same raters. Against the mean of ALL raters
the judge would face a less noisy reference (one rater more) than any rater does, and look better than the ceiling
by construction. Both are drawn on the same resamples, so their difference has an interval of its own.

Every rater at once (leave_one_out.py): time linear in ratings, 2,000 raters within seconds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.stats import evidence
from helm_mtsamples_ext.stats import leave_one_out as loo
from helm_mtsamples_ext.stats.agreement import percentile_interval, resample_counts, round_half_up
from helm_mtsamples_ext.stats.intervals import BootstrapSettings


@dataclass(frozen=True)
class Drawn:
    """A statistic and its value on each resample (NaN where undefined; none when no interval is drawn)."""

    value: float
    values: np.ndarray

    def interval(self, settings: BootstrapSettings) -> tuple[float, float, float]:
        return (self.value, *percentile_interval(self.value, self.values, settings))

    def minus(self, other: Drawn) -> Drawn:
        """The paired difference, resample by resample (both drawn on the same resamples)."""
        if not self.values.size or not other.values.size:
            return Drawn(self.value - other.value, np.array([]))
        return Drawn(self.value - other.value, self.values - other.values)


class Ceiling:
    """The shared answers' reward matrix (answers x raters, NaN: not rated), ready to draw any rater statistic."""

    def __init__(self, matrix: np.ndarray, settings: BootstrapSettings) -> None:
        self.n = len(matrix)
        self.pairs = loo.pairs(matrix)
        self.mine_ranks = loo.Ranks(self.pairs.rater, self.pairs.mine)
        self.others_ranks = loo.Ranks(self.pairs.rater, self.pairs.others)
        self.counts = resample_counts(self.n, settings) if self.n >= 2 else np.zeros((0, self.n), dtype=int)

    def _informative(self, weights: np.ndarray) -> np.ndarray:
        """Raters counted in the average: two or more drawn answers, neither they nor their others constant."""
        p, r = self.pairs, self.pairs.n_raters
        n = np.bincount(p.rater, weights=weights, minlength=r)
        return (n >= 2) & self.mine_ranks.varies(weights, r) & self.others_ranks.varies(weights, r)

    def _icc(self, weights: np.ndarray) -> float:
        p = self.pairs
        values = loo.icc(p.rater, p.mine, p.others, weights, p.n_raters)
        return loo.mean_defined(np.where(self._informative(weights), values, np.nan))

    def _spearman(self, weights: np.ndarray) -> float:
        p = self.pairs
        mine, others = self.mine_ranks.of(weights), self.others_ranks.of(weights)
        values = loo.pearson(p.rater, mine, others, weights, p.n_raters)
        return loo.mean_defined(np.where(self._informative(weights), values, np.nan))

    def _in_place(self, judge: np.ndarray, judge_ranks: loo.Ranks, weights: np.ndarray) -> float:
        p, r = self.pairs, self.pairs.n_raters
        theirs = judge[p.answer]
        scored = np.where(np.isnan(theirs), 0.0, weights)
        theirs = np.nan_to_num(theirs)
        n_scored = np.bincount(p.rater, weights=scored, minlength=r)
        usable = self._informative(weights) & (n_scored >= 2)
        usable &= judge_ranks.varies(scored, r) & self.others_ranks.varies(scored, r)
        values = loo.icc(p.rater, theirs, p.others, scored, r)
        return loo.mean_defined(np.where(usable, values, np.nan))

    def _draw(self, of: Callable[[np.ndarray], float]) -> Drawn:
        """`of` (a function of a weight per rating) on all answers and on each resample."""
        value = of(np.ones(self.pairs.answer.size))
        if np.isnan(value) or self.n < 2:
            return Drawn(value, np.array([]))
        return Drawn(value, np.array([of(counts[self.pairs.answer].astype(float)) for counts in self.counts]))

    def icc(self) -> Drawn:
        """ICC(3,1) of each rater against the others' mean, averaged over raters."""
        return self._draw(self._icc)

    def spearman(self) -> Drawn:
        return self._draw(self._spearman)

    def in_place(self, judge: np.ndarray) -> Drawn:
        """ICC(3,1) of the judge (its reward per row, NaN where none) in each rater's place, averaged likewise."""
        ranks = loo.Ranks(self.pairs.rater, np.nan_to_num(judge[self.pairs.answer]))
        return self._draw(lambda weights: self._in_place(judge, ranks, weights))


def averaged_kappa(matrix: np.ndarray) -> float:
    """Quadratic kappa of each rater's scores against the others' rounded mean, averaged over informative raters."""
    p = loo.pairs(matrix)
    weights = np.ones(p.mine.size)
    n = np.bincount(p.rater, minlength=p.n_raters)
    usable = (n >= 2) & loo.varies(p.rater, p.mine, weights, p.n_raters)
    usable &= loo.varies(p.rater, p.others, weights, p.n_raters)
    kappas = loo.kappa(p.rater, np.trunc(p.mine), round_half_up(p.others), p.n_raters)  # as agreement.quadratic_kappa
    return loo.mean_defined(np.where(usable, kappas, np.nan))


def shared_rewards(shared: pd.DataFrame) -> pd.DataFrame:
    """Rewards of the answers two or more raters rated: one row per (run, instance_id), one column per rater."""
    return shared.pivot_table(index=["run", "instance_id"], columns="rater", values="human_reward", aggfunc="mean")


def uninformative(matrix: np.ndarray, raters: list[str]) -> list[str]:
    """What to say of each rater who gave one reward to every shared answer they rated: they are left out."""
    p = loo.pairs(matrix)
    weights = np.ones(p.mine.size)
    n = np.bincount(p.rater, minlength=p.n_raters)
    flat = (n >= 2) & ~loo.varies(p.rater, p.mine, weights, p.n_raters)
    return [str(evidence.constant(f"rater {raters[r]}", [0.0])) for r in np.flatnonzero(flat)]


def ceiling_stats(shared: pd.DataFrame, settings: BootstrapSettings) -> dict[str, object]:
    """Spearman and ICC(3,1) with intervals, kappas and notes, from ratings of shared answers.

    `_icc_drawn` is the ceiling's ICC on each resample, for a judge's paired difference against it.
    """
    answers = ["run", "instance_id"]
    rewards = shared_rewards(shared)
    raters = [str(name) for name in rewards.columns]
    reward_matrix = rewards.to_numpy(dtype=float)
    ceiling = Ceiling(reward_matrix, settings)
    icc = ceiling.icc()
    row: dict[str, object] = {"n": len(reward_matrix)}
    spearman = ceiling.spearman().interval(settings)
    row.update(zip(["spearman", "spearman_ci_low", "spearman_ci_high"], spearman, strict=True))
    row.update(zip(["icc", "icc_ci_low", "icc_ci_high"], icc.interval(settings), strict=True))
    for d in DIMENSIONS:
        scores = shared.pivot_table(index=answers, columns="rater", values=d, aggfunc="mean")
        row[f"kappa_{d}"] = averaged_kappa(scores.reindex(index=rewards.index, columns=rewards.columns).to_numpy(float))
    row["uninformative"] = uninformative(reward_matrix, raters)
    row["_ceiling"] = ceiling
    row["_icc_drawn"] = icc
    return row
