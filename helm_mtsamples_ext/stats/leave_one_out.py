"""Every clinician against the mean of the others at once, from per-rater sums: time linear in ratings.

The ceiling compares each rater with the mean of the OTHER raters of the same answers. That mean does not depend
on which answers a bootstrap resample draws (a drawn answer keeps its raters), so each rating is paired with its
others' mean once, in long form, and a resample is only a weight per answer (how many times it was drawn).
ICC(3,1) and quadratic kappa are functions of weighted sums (n, sum x, sum y, sum x^2, sum y^2, sum xy) and
Spearman's rho is Pearson's r on mid-ranks, which weighted cumulative sums give; so every rater's statistic comes
from a few `np.bincount`s over the ratings, never a loop over raters or a copy of the matrix per rater. A
weighted statistic equals the same statistic on the resample's rows (a row drawn twice is two tied rows).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from helm_mtsamples_ext.stats.ties import rounded_for_ranks


@dataclass(frozen=True)
class Pairs:
    """One row per rating whose answer another rater rated too: the rating, its others' mean, whose and which."""

    answer: np.ndarray
    rater: np.ndarray
    mine: np.ndarray
    others: np.ndarray
    n_raters: int


def pairs(matrix: np.ndarray) -> Pairs:
    """The long form of an answers x raters matrix (NaN: not rated): each rating beside the others' mean."""
    rated = ~np.isnan(matrix)
    counts = rated.sum(axis=1)
    totals = np.where(rated, matrix, 0.0).sum(axis=1)
    answer, rater = np.nonzero(rated)
    keep = counts[answer] >= 2
    answer, rater = answer[keep], rater[keep]
    mine = matrix[answer, rater]
    others = (totals[answer] - mine) / (counts[answer] - 1)
    return Pairs(answer, rater, mine, others, matrix.shape[1])


def _sums(rater: np.ndarray, weights: np.ndarray, n_raters: int, *values: np.ndarray) -> list[np.ndarray]:
    return [np.bincount(rater, weights=weights * value, minlength=n_raters) for value in values]


def varies(rater: np.ndarray, values: np.ndarray, weights: np.ndarray, n_raters: int) -> np.ndarray:
    """Per rater: more than one value (to 9 places) among the drawn ratings (agreement.constant's negation)."""
    return Ranks(rater, values).varies(weights, n_raters)


def icc(rater: np.ndarray, x: np.ndarray, y: np.ndarray, weights: np.ndarray, n_raters: int) -> np.ndarray:
    """ICC(3,1) of x against y per rater (agreement.icc_3_1 on each rater's weighted rows); NaN where undefined."""
    shift = float(np.mean(x)) if x.size else 0.0  # a common shift leaves the ICC alone and the sums small
    x, y = x - shift, y - shift
    n, sx, sy, sxx, syy, sxy = _sums(rater, weights, n_raters, np.ones_like(x), x, y, x * x, y * y, x * y)
    with np.errstate(divide="ignore", invalid="ignore"):
        grand = (sx + sy) / (2 * n)
        ss_total = sxx + syy - 2 * n * grand**2
        ss_rows = 0.5 * (sxx + 2 * sxy + syy) - 2 * n * grand**2
        ss_cols = n * ((sx / n - grand) ** 2 + (sy / n - grand) ** 2)
        ms_rows = ss_rows / (n - 1)
        ms_error = (ss_total - ss_rows - ss_cols) / (n - 1)
        denominator = ms_rows + ms_error
        value = (ms_rows - ms_error) / denominator
    return np.where((n >= 2) & (denominator > 1e-12), value, np.nan)


def _midranks(rater: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(tie group of each rating, rater of each group, first group of each group's rater): ranks per rater."""
    order = np.lexsort((values, rater))
    sorted_rater, sorted_values = rater[order], values[order]
    new = np.ones(order.size, dtype=bool)
    new[1:] = (sorted_rater[1:] != sorted_rater[:-1]) | (sorted_values[1:] != sorted_values[:-1])
    group_sorted = np.cumsum(new) - 1
    group = np.empty(order.size, dtype=int)
    group[order] = group_sorted
    group_rater = sorted_rater[new]
    first = np.ones(group_rater.size, dtype=bool)
    first[1:] = group_rater[1:] != group_rater[:-1]
    first_group = np.maximum.accumulate(np.where(first, np.arange(group_rater.size), 0))
    return group, group_rater, first_group


class Ranks:
    """Mid-ranks of each rater's values under any weights: scipy's ties-averaged ranks of the drawn rows."""

    def __init__(self, rater: np.ndarray, values: np.ndarray) -> None:
        self.group, self.group_rater, self.first_group = _midranks(rater, rounded_for_ranks(values))

    def varies(self, weights: np.ndarray, n_raters: int) -> np.ndarray:
        """Per rater: more than one value (to 9 places) among the drawn ratings (agreement.constant's negation)."""
        count = np.bincount(self.group, weights=weights, minlength=self.group_rater.size)
        return np.bincount(self.group_rater, weights=count > 0, minlength=n_raters) > 1

    def of(self, weights: np.ndarray) -> np.ndarray:
        count = np.bincount(self.group, weights=weights, minlength=self.group_rater.size)
        before = np.cumsum(count) - count
        below = before - before[self.first_group]
        return (below + (count + 1) / 2)[self.group]


def pearson(rater: np.ndarray, x: np.ndarray, y: np.ndarray, weights: np.ndarray, n_raters: int) -> np.ndarray:
    """Pearson's r per rater over weighted rows; NaN below two rows or when a side has no variance."""
    n, sx, sy, sxx, syy, sxy = _sums(rater, weights, n_raters, np.ones_like(x), x, y, x * x, y * y, x * y)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxy - sx * sy / n
        vx, vy = sxx - sx**2 / n, syy - sy**2 / n
        value = cov / np.sqrt(vx * vy)
    return np.where((n >= 2) & (vx > 1e-12) & (vy > 1e-12), value, np.nan)


def kappa(rater: np.ndarray, x: np.ndarray, y: np.ndarray, n_raters: int) -> np.ndarray:
    """Quadratic-weighted kappa on the 1-5 scale per rater, of whole scores (the caller rounds them).

    With weights (i - j)^2 / 16, sum(W * observed) / sum(W * chance) reduces to
    sum (x - y)^2 / (sum x^2 + sum y^2 - 2 sum x sum y / n): scikit-learn's kappa from sums.
    """
    ones = np.ones_like(x)
    n, sx, sy, sxx, syy, sdd = _sums(rater, ones, n_raters, ones, x, y, x * x, y * y, (x - y) ** 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = sxx + syy - 2 * sx * sy / n
        value = 1 - sdd / chance
    return np.where((n >= 1) & (chance > 0), value, np.nan)


def mean_defined(values: np.ndarray) -> float:
    """The mean over raters whose statistic is defined; NaN when none is."""
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else np.nan
