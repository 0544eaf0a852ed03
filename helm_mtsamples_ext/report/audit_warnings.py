"""What the judge audit means for the leaderboard, said where people look.

A verdict inside report.md alone is missed: the leaderboard, the figure and stdout can show a model answering "re"
ranked first, above the clinician's own plan, with tight intervals, from a panel that cannot tell plans apart. A
ranking is only as good as the panel behind it, so the report puts the audit beside it: each panel's verdict on
stdout and at the top of report.md, the panel's AUROC beside each model in leaderboard.csv, and every model scored
above its panel's ceiling (the reference control: the clinician's own plan) named. Pure pandas on the report's
tables.
"""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.report.audit import PANEL, REFERENCE, shown_blind
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

PANEL_AUROC = "panel_auroc"
"""leaderboard.csv's column: the AUROC of the model's panel (its `(panel)` row in judge_audit.csv)."""


def _extractions(instances: pd.DataFrame) -> pd.DataFrame:
    """(panel, model, extraction) of each leaderboard row; a model's run has one extraction mode."""
    return instances.groupby(["panel", "model"], as_index=False, sort=False)["extraction"].first()


def with_panel_auroc(board: pd.DataFrame, audit: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard with its panel's AUROC beside each model when the suite has control runs (else as is)."""
    if audit.empty:
        return board
    panel_rows = audit.loc[audit["judge"] == PANEL, ["panel", "extraction", "auroc"]]
    keyed = _extractions(instances).merge(panel_rows, on=["panel", "extraction"], how="left")
    merged = board.merge(keyed[["panel", "model", "auroc"]], on=["panel", "model"], how="left")
    return board.assign(**{PANEL_AUROC: merged["auroc"].to_numpy()})


def blind_panels(audit: pd.DataFrame) -> dict[str, float]:
    """Panels whose own reward cannot tell the clinician's plan from another patient's: {panel: lowest AUROC}."""
    if audit.empty:
        return {}
    rows = audit[(audit["judge"] == PANEL) & audit.apply(shown_blind, axis=1).astype(bool)]
    return {str(panel): float(value) for panel, value in rows.groupby("panel", sort=False)["auroc"].min().items()}


def above_ceiling(board: pd.DataFrame, instances: pd.DataFrame) -> pd.DataFrame:
    """Models (not controls) whose reward is above their panel's reference control, in the same extraction mode:
    to these judges, better than the clinician's own plan. Columns panel, model, reward, ceiling."""
    rows = board.merge(_extractions(instances), on=["panel", "model"], how="left")
    kinds = rows["model"].map(control_kind)
    ceilings = rows.loc[kinds == REFERENCE, ["panel", "extraction", "reward"]].rename(columns={"reward": "ceiling"})
    models = rows.loc[kinds == "", ["panel", "extraction", "model", "reward"]]
    joined = models.merge(ceilings.dropna(), on=["panel", "extraction"])
    found = joined[rounded_for_ranks(joined["reward"]) > rounded_for_ranks(joined["ceiling"])]
    return found[["panel", "model", "reward", "ceiling"]].reset_index(drop=True)


def panels_with_controls(board: pd.DataFrame) -> set[str]:
    """Panels that have control runs in the suite, judged or not."""
    return set(board.loc[board["model"].map(control_kind) != "", "panel"])


def verdict_lines(
    audit: pd.DataFrame, above: pd.DataFrame, panels: list[str], with_controls: set[str] | None = None
) -> list[str]:
    """One line per panel (its audit verdict, or why it has none), then one per model above its ceiling.
    ``with_controls``: the panels with control runs; one of them without an audit row scored none of their notes."""
    lines = []
    audited = audit[audit["judge"] == PANEL] if not audit.empty else audit
    for panel in panels:
        rows = audited[audited["panel"] == panel] if not audited.empty else audited
        if rows.empty and panel in (with_controls or set()):
            lines.append(
                f"WARNING: Judge panel {panel}: not audited: its judges scored no note of the control runs "
                "(see judge failures), so its ranking is unchecked"
            )
            continue
        if rows.empty:
            lines.append(f"Judge panel {panel}: not audited (no control runs under it), so its ranking is unchecked")
            continue
        several = rows["extraction"].nunique() > 1
        for row in rows.itertuples(index=False):
            setting = f" ({row.extraction} extraction)" if several else ""
            warning = "WARNING: " if shown_blind(row._asdict()) else ""
            lines.append(f"{warning}Judge panel {panel}{setting}: {row.verdict}")
    for row in above.itertuples(index=False):
        lines.append(
            f"WARNING: {row.model} scores above the clinician's own plan under panel {row.panel} "
            f"({row.reward:.3f} > reference {row.ceiling:.3f}): these judges do not rank by plan quality"
        )
    return lines
