"""Numbers and tables as report text, in one place: the terminal, report.md's sections and the pairwise listing
show the same rounding, and a missing reward reads "missing", never 0.
"""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.common.outside_text import terminal
from helm_mtsamples_ext.stats.evidence import mostly_tied, too_few

MISSING = "missing"
"""Shown where a number is absent: a model no judge could score has no reward, which is not a reward of 0."""


def num(value: float, digits: int = 3, missing: str = MISSING) -> str:
    return missing if pd.isna(value) else f"{value:.{digits}f}"


def interval(low: float, high: float) -> str:
    return "n/a" if pd.isna(low) or pd.isna(high) else f"[{low:.3f}, {high:.3f}]"


def percent(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{100 * value:.1f}%"


def _blank_ci(n: int) -> str:
    """Why the CSV's interval is blank: too few notes, or (with enough) a bootstrap whose resamples mostly tie."""
    return too_few(n) or mostly_tied([]) or "n/a"


def intervals(lows: pd.Series, highs: pd.Series, counts: pd.Series) -> list[str]:
    """Intervals as text; a blank one says why (evidence.py's words), never a zero-width interval."""
    return [
        _blank_ci(int(n)) if pd.isna(lo) or pd.isna(hi) else interval(lo, hi)
        for lo, hi, n in zip(lows, highs, counts, strict=True)
    ]


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub markdown table (pandas' to_markdown needs tabulate, which is not a dependency)."""
    cells = table.astype(str).map(lambda text: terminal(text).replace("<", "&lt;").replace("|", "\\|"))
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)
