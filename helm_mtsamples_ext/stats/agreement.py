"""Pure statistics of agreement between two raters of the same answers (a judge and the clinicians, or two clinicians).

MedHELM justified its LLM jury by agreement with clinicians (jury-clinician ICC 0.47 against clinician-clinician
0.43), computed by hand-written scripts; these are the same statistics as functions of two score vectors, so the
report can put every judge beside the clinicians' own agreement. No I/O and no pandas: arrays in, numbers out.

- Spearman's rho (scipy) and Kendall's tau (scipy) rank, on rewards settled to 9 places (ties.py) so that one
  reward reached in two orders ties; a constant vector has no rank order, so they are NaN.
- Quadratic-weighted kappa on the fixed 1-5 scale: scikit-learn's `cohen_kappa_score` (crfm-helm requires
  scikit-learn, so it costs no new install).
- ICC(3,1) (two-way mixed, consistency, single rater; Shrout & Fleiss 1979): our primary, with an interval.
- `icc_medhelm`: what MedHELM's released script computes and calls ICC: each side z-scored (within rater), then
  ICC(3,k) with k = 2 (pingouin's ICC3k, the reliability of the two raters' mean). It is the number to put beside
  MedHELM's 0.47/0.43; it is higher than ICC(3,1) for the same data (Spearman-Brown: 2r / (1 + r)).
  No maintained package we already depend on has either (pingouin would bring its own stack), so both are computed
  here from the two-way ANOVA mean squares; tests check them against pingouin.
- A side that gave one value to every answer carries no information: every statistic here is NaN on it.
Confidence intervals are percentile bootstraps over answers (the same resampled answers feed both vectors), seeded
by the report's --seed; the bias's is stats.mean_ci, as for the reward.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from helm_mtsamples_ext.common.rubric import MAX_SCORE, MIN_SCORE
from helm_mtsamples_ext.stats import evidence
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, mean_ci
from helm_mtsamples_ext.stats.ties import rounded_for_ranks


def _quiet(statistic: Callable[[np.ndarray, np.ndarray], float]) -> Callable[[np.ndarray, np.ndarray], float]:
    """scipy warns on constant input and returns NaN; NaN is the answer we want, the warning is noise."""

    def wrapped(x: np.ndarray, y: np.ndarray) -> float:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return statistic(np.asarray(x, dtype=float), np.asarray(y, dtype=float))

    return wrapped


@_quiet
def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation; NaN below two answers or when either side is constant."""
    if x.size < 2:
        return np.nan
    return float(stats.spearmanr(rounded_for_ranks(x), rounded_for_ranks(y)).statistic)


@_quiet
def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-b between two rankings (of models); NaN below two items or when either side is constant."""
    if x.size < 2:
        return np.nan
    return float(stats.kendalltau(rounded_for_ranks(x), rounded_for_ranks(y)).statistic)


@_quiet
def quadratic_kappa(x: np.ndarray, y: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights on the 1-5 scale (scikit-learn's): 1 - sum(W*observed) / sum(W*chance).

    W = (i - j)^2 / (K - 1)^2, so a 5 against a 4 costs 1/16 of a 5 against a 1. NaN when chance disagreement is
    0 (both sides gave one and the same score throughout): kappa is 0/0 there.
    """
    if x.size == 0:
        return np.nan
    labels = list(range(MIN_SCORE, MAX_SCORE + 1))
    value = cohen_kappa_score(x.astype(int), y.astype(int), labels=labels, weights="quadratic")
    return float(value) if np.isfinite(value) else np.nan


def constant(values: np.ndarray) -> bool:
    """One value (to 9 places) for every answer: nothing to agree or disagree about."""
    values = rounded_for_ranks(np.asarray(values, dtype=float))
    return bool(values.size == 0 or np.all(values == values[0]))


def _mean_squares(x: np.ndarray, y: np.ndarray) -> tuple[float, float] | None:
    """(MSR, MSE) of the two-way ANOVA of answers x raters; None below two answers or when either side is constant."""
    data = np.column_stack([np.asarray(x, dtype=float), np.asarray(y, dtype=float)])
    n, k = data.shape
    if n < 2 or constant(data[:, 0]) or constant(data[:, 1]):
        return None
    grand = data.mean()
    ss_rows = k * float(((data.mean(axis=1) - grand) ** 2).sum())
    ss_cols = n * float(((data.mean(axis=0) - grand) ** 2).sum())
    ss_error = float(((data - grand) ** 2).sum()) - ss_rows - ss_cols
    return ss_rows / (n - 1), ss_error / ((n - 1) * (k - 1))


def icc_3_1(x: np.ndarray, y: np.ndarray) -> float:
    """ICC(3,1) of two raters over the same answers: (MSR - MSE) / (MSR + (k - 1) MSE) with k = 2.

    Consistency, not absolute agreement: a judge that is uniformly 0.1 stricter than the clinicians still has ICC 1
    (the bias column measures that offset). NaN below two answers or when either side is constant (a constant
    rater would give exactly 0, and every resample 0 too: a zero-width interval out of no information).
    """
    squares = _mean_squares(x, y)
    if squares is None:
        return np.nan
    ms_rows, ms_error = squares
    denominator = ms_rows + ms_error
    return np.nan if denominator <= 1e-12 else (ms_rows - ms_error) / denominator


def icc_3_k(x: np.ndarray, y: np.ndarray) -> float:
    """ICC(3,k), k = 2: (MSR - MSE) / MSR, the consistency of the two raters' mean (pingouin's ICC3k)."""
    squares = _mean_squares(x, y)
    if squares is None or squares[0] <= 1e-12:
        return np.nan
    return (squares[0] - squares[1]) / squares[0]


def zscored(values: np.ndarray) -> np.ndarray:
    """(values - mean) / standard deviation: one rater's scores on a common scale, as MedHELM's script puts them."""
    values = np.asarray(values, dtype=float)
    return (values - values.mean()) / values.std()


def icc_medhelm(x: np.ndarray, y: np.ndarray) -> float:
    """MedHELM's statistic: ICC(3,k) with k = 2 on each side z-scored. NaN where ICC(3,k) is."""
    if _mean_squares(x, y) is None:
        return np.nan
    return icc_3_k(zscored(x), zscored(y))


UNDEFINED_SHARE = 0.1
"""Most resamples that may have an undefined statistic before the interval is called undefined too."""


def with_ci(
    statistic: Callable[[np.ndarray, np.ndarray], float], x: np.ndarray, y: np.ndarray, settings: BootstrapSettings
) -> tuple[float, float, float]:
    """(value, CI low, CI high): the statistic and its percentile bootstrap interval, resampling answers (pairs)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    return resampled(lambda pick: statistic(x[pick], y[pick]), x.size, settings)


def resampled(
    statistic_of: Callable[[np.ndarray], float], n: int, settings: BootstrapSettings
) -> tuple[float, float, float]:
    """(value, CI low, CI high) of a statistic of n answers, given as a function of the answers' indices.

    A rank statistic is undefined on a resample whose answers all tie; scipy's bootstrap would then return no
    interval at all. Those resamples are left out, and the interval is NaN when they pass UNDEFINED_SHARE (too few
    distinct answers to say anything), when most of the others equal the statistic itself (evidence.mostly_tied: a
    zero-width interval that reads as certainty), or below two answers.
    """
    value = statistic_of(np.arange(n))
    if np.isnan(value) or n < 2:
        return (value, np.nan, np.nan)
    picks = np.random.default_rng(settings.seed).integers(0, n, size=(settings.n_resamples, n))
    return (value, *percentile_interval(value, np.array([statistic_of(pick) for pick in picks]), settings))


def resample_counts(n: int, settings: BootstrapSettings) -> np.ndarray:
    """How many times each of n answers is drawn in each resample: the very resamples `resampled` draws."""
    picks = np.random.default_rng(settings.seed).integers(0, n, size=(settings.n_resamples, n))
    flat = (picks + n * np.arange(settings.n_resamples)[:, None]).ravel()
    return np.bincount(flat, minlength=settings.n_resamples * n).reshape(settings.n_resamples, n)


def percentile_interval(value: float, values: np.ndarray, settings: BootstrapSettings) -> tuple[float, float]:
    """The percentile interval of resampled values, NaN by `resampled`'s rules (undefined or mostly tied)."""
    if np.isnan(value) or values.size == 0:
        return (np.nan, np.nan)
    defined = values[~np.isnan(values)]
    if defined.size < (1 - UNDEFINED_SHARE) * values.size or evidence.mostly_tied(list(defined), value):
        return (np.nan, np.nan)
    tail = (1 - settings.confidence) / 2 * 100
    low, high = np.percentile(defined, [tail, 100 - tail])
    return (float(low), float(high))


def bias(x: np.ndarray, y: np.ndarray, settings: BootstrapSettings) -> tuple[float, float, float]:
    """Mean of x - y with its bootstrap interval: how much more generous x is than y, on the reward's 0-1 scale."""
    diffs = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    if diffs.size == 0:
        return (np.nan, np.nan, np.nan)
    low, high = mean_ci(diffs, settings)
    return (float(diffs.mean()), low, high)


def round_half_up(values: np.ndarray) -> np.ndarray:
    """Mean scores to the nearest integer, halves up (3.5 -> 4), as a rater would read "3 or 4" generously.

    numpy's round sends halves to the even neighbour (2.5 -> 2, 3.5 -> 4), which would make the rule depend on
    the score's parity.
    """
    return np.floor(np.asarray(values, dtype=float) + 0.5)
