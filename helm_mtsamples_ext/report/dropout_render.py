"""report.md's judge-dropout lines: per panel of three or more judges, whether the ranking holds without any one
of them, in one line (the figures are stats/judge_dropout.py's, in judge_dropout.csv)."""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.common.outside_text import markdown
from helm_mtsamples_ext.stats.evidence import too_few
from helm_mtsamples_ext.stats.judge_dropout import HOLDS, lowest_tau

MOVES_SHOWN = 5
"""Models whose rank moves named on a panel's line at most; the rest are in judge_dropout.csv."""


def _tau_text(row: pd.Series) -> str:
    interval = (
        f" [{row['tau_ci_low']:.2f}, {row['tau_ci_high']:.2f}]"
        if pd.notna(row["tau_ci_low"])
        else f" ({too_few(int(row['n_tau_notes'])) or 'no interval'})"
    )
    return f"tau {row['tau']:.2f}{interval}"


def _moves(table: pd.DataFrame, panel: str, judge: str) -> str:
    rows = table[(table["panel"] == panel) & (table["judge_dropped"] == judge) & table["rank"].notna()]
    moved = rows[rows["rank"] != rows["rank_without"]].sort_values("rank")
    shown = [f"{markdown(str(r.model))} {int(r.rank)} -> {int(r.rank_without)}" for r in moved.itertuples()]
    more = f" and {len(shown) - MOVES_SHOWN} more" if len(shown) > MOVES_SHOWN else ""
    return ", ".join(shown[:MOVES_SHOWN]) + more


def panel_line(table: pd.DataFrame, panel: str, lowest: pd.Series) -> str:
    """One panel's line: the ranking holds without any one judge (lowest tau at least ``HOLDS``), or which judge it
    depends on and which models move, or why there is no tau."""
    judge = markdown(str(lowest["judge_dropped"]))
    name = markdown(panel)
    if int(lowest["n_tau_models"]) < 2:
        return (
            f"- Panel {name}: fewer than two models under test, no ranking to compare (rewards without each judge: "
            "`judge_dropout.csv`)."
        )
    if pd.isna(lowest["tau"]):
        return f"- Panel {name}: no notes judged for every model without each judge, no ranking to compare."
    if lowest["tau"] >= HOLDS:
        judges = table[table["panel"] == panel].drop_duplicates("judge_dropped")
        untold = [markdown(str(j)) for j in judges.loc[judges["tau"].isna(), "judge_dropped"]]
        told = [markdown(str(j)) for j in judges.loc[judges["tau"].notna(), "judge_dropped"]]
        which = f"without judge {' or '.join(told)}" if untold else "without any one judge"
        unless = f"; without judge {', '.join(untold)}, no tau (no note judged for every model, or all tied)"
        return (
            f"- Panel {name}: {which} the ranking holds: tau >= {HOLDS:.1f} (lowest: without judge {judge}, "
            f"{_tau_text(lowest)}){unless if untold else ''}."
        )
    moves = _moves(table, panel, str(lowest["judge_dropped"]))
    return (
        f"- Panel {name}: the ranking depends on judge {judge}: without it, {_tau_text(lowest)}, below {HOLDS:.1f}"
        f"{f'; moves: {moves}' if moves else ''}."
    )


def dropout_markdown(table: pd.DataFrame | None) -> list[str]:
    """report.md's "Judge dropout" lines, one per panel of three or more judges; nothing without such a panel."""
    if table is None or table.empty:
        return []
    lines = [
        "**Judge dropout**: each model ranked again without each judge of the panel (the reward over the remaining "
        "judges; a note only that judge scored is unjudged), and Kendall's tau between that ranking and the full "
        "panel's (1: the same order; 95% bootstrap interval over notes in brackets). Every model's reward and rank "
        "without each judge: `judge_dropout.csv`.",
        "",
    ]
    lines += [panel_line(table, str(panel), row) for panel, row in lowest_tau(table).iterrows()]
    return [*lines, ""]
