"""The clinicians' baseline as MedHELM computes it, over every pair of raters instead of one, with its interval.

MedHELM sets its jury's ICC beside the ICC of two clinicians (agreement.icc_medhelm: each side z-scored, ICC(3,2)).
One pair of raters is a noisy baseline (0.55-0.94 across rating draws of one truth), so the report averages that
statistic over every pair of raters with two or more answers in common, each pair weighted by its overlap (the
answers it shares), and resamples answers for an interval. On z-scored sides ICC(3,2) is 2r / (1 + r) with r
Pearson's correlation of the pair's common answers, so each pair costs a few weighted sums (leave_one_out.pearson).

Pairs grow with the square of the raters, so beyond MAX_PAIRS co-ratings (an answer's pair of raters) the average
is estimated from MAX_PAIRS co-ratings drawn at random (seeded): a pair is then drawn in proportion to its overlap,
which is the weighting of the exact average.
"""

from __future__ import annotations

import itertools

import numpy as np

from helm_mtsamples_ext.stats import leave_one_out as loo
from helm_mtsamples_ext.stats.agreement import percentile_interval, resample_counts
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

MAX_PAIRS = 5000
"""Co-ratings (an answer and two of its raters) beyond which the pairs are sampled rather than all taken."""


def rater_pairs(matrix: np.ndarray, seed: int) -> dict[tuple[int, int], float]:
    """{(rater a, rater b): weight}: every pair with its overlap, or a sample of co-ratings when they are many."""
    rated = ~np.isnan(matrix)
    counts = rated.sum(axis=1)
    per_answer = counts * (counts - 1) // 2
    weights: dict[tuple[int, int], float] = {}
    if per_answer.sum() <= MAX_PAIRS:
        for row in np.flatnonzero(counts >= 2):
            for pair in itertools.combinations(np.flatnonzero(rated[row]).tolist(), 2):
                weights[pair] = weights.get(pair, 0.0) + 1.0
        return weights
    rng = np.random.default_rng(seed)
    rows = rng.choice(len(matrix), size=MAX_PAIRS, p=per_answer / per_answer.sum())
    for row in rows:
        a, b = sorted(rng.choice(np.flatnonzero(rated[row]), size=2, replace=False).tolist())
        weights[(a, b)] = weights.get((a, b), 0.0) + 1.0
    return weights


def medhelm_baseline(matrix: np.ndarray, settings: BootstrapSettings) -> tuple[float, float, float]:
    """(value, CI low, CI high): icc_medhelm averaged over rater pairs, weighted by overlap, resampling answers."""
    weights = rater_pairs(matrix, settings.seed)
    if not weights:
        return (np.nan, np.nan, np.nan)
    rated = ~np.isnan(matrix)
    pair_ids, answers, x, y = [], [], [], []
    for k, (a, b) in enumerate(weights):
        common = np.flatnonzero(rated[:, a] & rated[:, b])
        pair_ids.append(np.full(common.size, k))
        answers.append(common)
        x.append(matrix[common, a])
        y.append(matrix[common, b])
    pair, answer = np.concatenate(pair_ids), np.concatenate(answers)
    xs, ys = np.concatenate(x), np.concatenate(y)
    pair_weight = np.array(list(weights.values()))
    x_ranks, y_ranks = loo.Ranks(pair, xs), loo.Ranks(pair, ys)

    def of(drawn: np.ndarray) -> float:
        r = loo.pearson(pair, xs, ys, drawn, len(weights))
        usable = x_ranks.varies(drawn, len(weights)) & y_ranks.varies(drawn, len(weights))
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(usable & (r > -1 + 1e-12), 2 * r / (1 + r), np.nan)
        defined = ~np.isnan(value)
        return float(np.average(value[defined], weights=pair_weight[defined])) if defined.any() else np.nan

    value = of(np.ones(answer.size))
    if np.isnan(value) or len(matrix) < 2:
        return (value, np.nan, np.nan)
    draws = np.array([of(counts[answer].astype(float)) for counts in resample_counts(len(matrix), settings)])
    return (value, *percentile_interval(value, draws, settings))
