"""report.md's "Bad references" section: each model's reward with and without the notes raters flagged, and the
flagged notes (the figures are stats/flagged_references.py's, in flagged_references.csv). Only with ratings that
flag at least one reference."""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.common.outside_text import markdown
from helm_mtsamples_ext.report.report_text import markdown_table, num
from helm_mtsamples_ext.stats.evidence import too_few


def _difference(row: pd.Series) -> str:
    if pd.isna(row["difference"]):
        return "n/a (every note flagged)"
    if int(row["n_flagged_notes"]) == 0:
        return "0 (no note flagged)"
    figure = f"{row['difference']:+.3f}"
    if pd.isna(row["ci_low"]):
        why = too_few(int(row["n_notes"])) or too_few(int(row["n_unflagged_notes"]), "unflagged notes")
        return f"{figure} ({why or 'most bootstrap resamples tie: no interval'})"
    return f"{figure} [{row['ci_low']:+.3f}, {row['ci_high']:+.3f}]"


def _display(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "panel": table["panel"],
            "model": table["model"],
            "reward (all notes)": table["reward"].map(num),
            "reward (unflagged)": table["reward_unflagged"].map(num),
            "unflagged - all, 95% CI": [_difference(row) for _, row in table.iterrows()],
            "flagged notes": table["n_flagged_notes"].astype(str) + "/" + table["n_notes"].astype(str),
        }
    )


def _note(row: pd.Series) -> str:
    raters = "rater" if int(row["n_raters"]) == 1 else "raters"
    return f"{markdown(str(row['note']))} ({int(row['n_raters_flagged'])} of {int(row['n_raters'])} {raters})"


def flagged_markdown(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The section, or nothing when no rater flagged a reference."""
    rewards, notes = tables.get("flagged_references"), tables.get("flagged_notes")
    if rewards is None or notes is None or notes.empty:
        return []
    return [
        "## Bad references",
        "",
        f"Raters flagged {len(notes)} note(s) whose reference is not a good plan; the judges score answers against "
        "that reference, so they may mislead them. A flag counts for the note whichever model's answer the rater saw. "
        "Each model's reward on every judged note and on the notes no rater flagged, and the difference with its 95% "
        "bootstrap interval over notes (both means on the same resampled notes; `flagged_references.csv`).",
        "",
        markdown_table(_display(rewards)),
        "",
        "Flagged notes (raters who flagged it, of those who rated an answer of it): "
        + ", ".join(_note(row) for _, row in notes.iterrows())
        + ".",
        "",
    ]
