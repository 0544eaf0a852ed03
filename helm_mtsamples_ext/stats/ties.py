"""Equal rewards are equal: every rank statistic sees rewards rounded to 9 places first.

A reward is a mean of `score/5` terms, and the same reward reached in two orders differs in the last
float bits (0.30000000000000004 and 0.3). A rank statistic (Spearman, Kendall, AUROC, win shares, the
ranking) would order those two apart, and a tie would become a win. Nine places keep every real
difference a 1-5 scale can make and drop only that noise.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import pandas as pd

PLACES = 9

T = TypeVar("T", float, "pd.Series[float]", "np.ndarray[tuple[int, ...], np.dtype[np.float64]]")


def rounded_for_ranks(values: T) -> T:
    """``values`` rounded to PLACES: what every rank statistic compares."""
    if isinstance(values, pd.Series):
        return values.round(PLACES)
    if isinstance(values, np.ndarray):
        return np.round(values, PLACES)
    return round(float(values), PLACES)
