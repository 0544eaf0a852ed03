"""report.md's "Pairwise comparisons" section, from pairwise.py's table and the leaderboard's ranks."""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.report.report_text import intervals, markdown_table, num, percent
from helm_mtsamples_ext.stats.evidence import too_few
from helm_mtsamples_ext.stats.pairwise import CONTROL

PAIRWISE_READING = (
    "Each pair on the notes judged for every model of its panel (the notes the ranks read). *Separated (Holm)* is "
    "the verdict to read: a panel of many pairs has some 95% intervals excluding 0 by chance alone (16 equal models, "
    "120 pairs: some pair in 9 suites of 10), so each pair's normal p-value from the shared resamples is corrected "
    "by Holm's step-down method over the panel's pairs of models under test, controls left out. `pairwise.csv` has "
    "the pair's own verdict (`separated`) beside it. *Resamples with A ahead* is the share of bootstrap resamples in "
    "which A's mean is higher (a tie counting half): a description of the resampling, not the probability that A "
    "is better."
)

ALL_PAIRS_UP_TO = 8
"""report.md lists every pair of a panel up to this many models (28 pairs); past it, each model against the next
one down, and pairwise.csv keeps every pair. A reader asks "is #3 really above #4?"; 2,016 rows at 64 models
answer no question a reader asks (and made report.md 198 KB)."""


def _pairwise_display(pairs: pd.DataFrame) -> pd.DataFrame:
    """Pairs as strings; with rank_a and rank_b (adjacent ranks), a "ranks" column "#3 vs #4" after the panel."""
    display = pd.DataFrame(
        {
            "panel": pairs["panel"],
            "A": pairs["model_a"],
            "B": pairs["model_b"],
            "notes": pairs["n_notes"],
            "A - B": pairs["difference"].map(num),
            "95% CI": intervals(pairs["ci_low"], pairs["ci_high"], pairs["n_notes"]),
            "resamples with A ahead": [
                too_few(int(n)) or percent(share)
                for share, n in zip(pairs["share_resamples_a_ahead"], pairs["n_notes"], strict=True)
            ],
            "separated (Holm)": pairs["separated_holm"].replace("", "n/a"),
        }
    )
    if "rank_a" in pairs:
        display.insert(1, "ranks", [f"#{a} vs #{b}" for a, b in zip(pairs["rank_a"], pairs["rank_b"], strict=True)])
    return display


def _summary(panel: str, n_models: int, pairs: pd.DataFrame, adjacent: pd.DataFrame | None) -> str:
    """One line per panel: how many of its pairs of models under test are separated after Holm's correction, how
    many by their own interval alone, how many have none; controls out of every count."""
    counted = pairs[pairs["separated_holm"] != CONTROL]
    holm, own = int((counted["separated_holm"] == "yes").sum()), int((counted["separated"] == "yes").sum())
    blank = int((counted["separated"] == "").sum())
    line = (
        f"- Panel `{panel}`, {n_models} models: {len(pairs):,} pairs in `pairwise.csv`; of its {len(counted):,} "
        f"pairs of models under test (controls left out), {holm:,} separated after Holm's correction for "
        f"{len(counted) - blank:,} comparisons ({own:,} by their own 95% interval alone), {blank:,} without an "
        "interval."
    )
    if adjacent is not None:
        adjacent = adjacent[adjacent["separated_holm"] != CONTROL]
        apart = int((adjacent["separated_holm"] == "yes").sum())
        line += f" Adjacent ranks separated after correction: {apart} of {len(adjacent)}."
    return line


def pairwise_markdown(pairs: pd.DataFrame, board: pd.DataFrame) -> list[str]:
    """report.md's "Pairwise comparisons": every pair of a panel of up to ALL_PAIRS_UP_TO models; past that, a
    summary line and adjacent ranks only (is #3 really above #4?), so the section grows with the models, not with
    their square. pairwise.csv keeps every pair."""
    lines = ["## Pairwise comparisons", ""]
    if pairs.empty:
        return [*lines, "No pair of models shares a judge panel, so there is nothing to compare."]
    lines += [PAIRWISE_READING, ""]
    sizes = board.groupby("panel")["model"].size()
    if not (sizes > ALL_PAIRS_UP_TO).any():
        summaries = [_summary(str(p), int(sizes[p]), rows, None) for p, rows in pairs.groupby("panel", sort=False)]
        return [*lines, *summaries, "", markdown_table(_pairwise_display(pairs))]
    ranks = board[["panel", "model", "rank"]]
    for side in ("a", "b"):
        named = ranks.rename(columns={"model": f"model_{side}", "rank": f"rank_{side}"})
        pairs = pairs.merge(named, on=["panel", f"model_{side}"], how="left")
    large = pairs["panel"].map(sizes) > ALL_PAIRS_UP_TO
    adjacent = pairs["rank_b"] == pairs["rank_a"] + 1
    for panel, rows in pairs.groupby("panel", sort=False):
        next_down = rows[rows["rank_b"] == rows["rank_a"] + 1] if sizes[panel] > ALL_PAIRS_UP_TO else None
        lines.append(_summary(str(panel), int(sizes[panel]), rows, next_down))
    lines += [
        f"- Below: every pair of a panel of up to {ALL_PAIRS_UP_TO} models; in a larger panel, each model against the "
        "next one down.",
        "",
        markdown_table(_pairwise_display(pairs[~large | adjacent])),
    ]
    return lines
