"""Pure numpy: each judge's own-family lean from one two-way fixed-effects fit, and its spread over models.

Why a fit and not "a judge minus the mean of the others": in that difference the others' mean holds the other
judges' own leanings, so one judge's taste for its vendor leaks into every other judge's figure (with two
judges both figures are one number). The fit reads every judge's lean at once from

    reward[answer, judge] = answer + judge + lean[judge] * (the answer's model is of the judge's family)

with the answer's effect absorbed (every column demeaned within its answer), so how hard the note was and how
good the answer was cancel, and a lean belongs to the judge that has it. A lean the data cannot separate from
the others' (two judges and no model of a third family: only the sum of their leanings is seen) is reported as
not identifiable, never as a number.

Why resample models, not answers: the answers of one model share that model, and a judge that merely likes a
model (not its family) lifts all of its answers. The spread that matters is over models, so the interval
resamples models within each family, one family at a time (every resample one weighted least-squares solve from
per-model sums, no loop over resamples). A family is one to three models, and a bootstrap over n clusters
underestimates their variance by (n - 1) / n, so each family's share is scaled back by that factor and the
interval is the fit ± Student's t with Satterthwaite's degrees of freedom times their summed standard error:
a Welch test over models, not over answers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

TOLERANCE = 1e-8


@dataclass(frozen=True)
class Answers:
    """One row per (answer, judge) with a valid reward; codes are 0-based integers."""

    answer: np.ndarray
    model: np.ndarray
    judge: np.ndarray
    own: np.ndarray
    reward: np.ndarray
    model_family: np.ndarray
    """Per model code: its family code (resampling keeps each family's size)."""
    n_judges: int


@dataclass(frozen=True)
class Leans:
    """Per judge: the fitted lean (NaN when not identifiable), whether it is, and its interval."""

    lean: np.ndarray
    identifiable: np.ndarray
    low: np.ndarray
    high: np.ndarray


def _design(data: Answers) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) demeaned within each answer: judge dummies, then one own-family column per judge."""
    k, rows = data.n_judges, len(data.reward)
    x = np.zeros((rows, 2 * k))
    x[np.arange(rows), data.judge] = 1.0
    x[np.arange(rows), k + data.judge] = data.own.astype(float)
    y = data.reward.astype(float)
    sizes = np.bincount(data.answer).astype(float)
    means_x = np.stack([np.bincount(data.answer, x[:, c], len(sizes)) for c in range(2 * k)], axis=1) / sizes[:, None]
    means_y = np.bincount(data.answer, y, len(sizes)) / sizes
    return x - means_x[data.answer], y - means_y[data.answer]


def _per_model(data: Answers, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each model's X'X and X'y: a resample's normal equations are their count-weighted sums."""
    n_models = int(data.model_family.size)
    xtx = np.zeros((n_models, x.shape[1], x.shape[1]))
    np.add.at(xtx, data.model, x[:, :, None] * x[:, None, :])
    xty = np.zeros((n_models, x.shape[1]))
    np.add.at(xty, data.model, x * y[:, None])
    return xtx, xty


def model_counts(model_family: np.ndarray, family: int, n_resamples: int, seed: int) -> np.ndarray:
    """(n_resamples, models): how many times each resample draws each model; the models of ``family`` drawn with
    replacement among themselves, every other model once."""
    rng = np.random.default_rng([seed, family])
    counts = np.ones((n_resamples, model_family.size))
    members = np.flatnonzero(model_family == family)
    counts[:, members] = 0.0
    drawn = members[rng.integers(0, members.size, (n_resamples, members.size))]
    np.add.at(counts, (np.repeat(np.arange(n_resamples), members.size), drawn.ravel()), 1.0)
    return counts


def _solve(counts: np.ndarray, xtx: np.ndarray, xty: np.ndarray) -> np.ndarray:
    """(n_resamples, parameters): each resample's least-squares fit from the count-weighted per-model sums."""
    return (np.linalg.pinv(np.einsum("bm,mij->bij", counts, xtx)) @ (counts @ xty)[:, :, None])[:, :, 0]


def fit(data: Answers, n_resamples: int, seed: int, confidence: float) -> Leans:
    """Every judge's lean, whether the data identify it, and its interval over models (NaN when no spread)."""
    k = data.n_judges
    x, y = _design(data)
    xtx, xty = _per_model(data, x, y)
    total = xtx.sum(axis=0)
    inverse = np.linalg.pinv(total)
    theta = inverse @ xty.sum(axis=0)
    # A lean is identifiable when its unit vector lies in the row space of X: e' pinv(X'X) X'X = e'.
    projector = inverse @ total
    unit = np.eye(2 * k)
    identifiable = np.array([np.abs(projector[k + j] - unit[k + j]).max() < TOLERANCE for j in range(k)])
    lean = np.where(identifiable, theta[k:], np.nan)
    # Each family's share of the variance, from resampling its models alone; scaled by n / (n - 1) (a bootstrap
    # over n clusters underestimates their variance by that factor) and combined with Satterthwaite's degrees of
    # freedom, as a Welch test over models would.
    sizes = np.bincount(data.model_family)
    variance, df_terms = np.zeros(k), np.zeros(k)
    for family in np.flatnonzero(sizes > 1):
        n = int(sizes[family])
        part = _solve(model_counts(data.model_family, int(family), n_resamples, seed), xtx, xty)[:, k:].var(axis=0)
        part = part * n / (n - 1)
        variance += part
        df_terms += part**2 / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = np.where(df_terms > 0, variance**2 / df_terms, np.nan)
    half = stats.t.ppf(0.5 + confidence / 2, df) * np.sqrt(variance)
    has_spread = identifiable & (np.sqrt(variance) > TOLERANCE)
    return Leans(
        lean, identifiable, np.where(has_spread, lean - half, np.nan), np.where(has_spread, lean + half, np.nan)
    )
