"""The report's figure: reward with its CI and the three dimensions per model, one row of plots per judge panel.

It uses matplotlib's object API (`Figure`, rendered by Agg when saved), so it never needs a display and never
touches pyplot's global state. Models run down the y axis so long names stay horizontal and are wrapped
instead of overlapping. The control runs are drawn as lines (ceiling and floor), not as models, and a panel
whose judges cannot tell the clinician's plan from another patient's says so in its title.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.audit import PADDED, REFERENCE, SHUFFLED, TRUNCATED
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.ties import rounded_for_ranks


def wrap_name(name: str, width: int = 28) -> str:
    """Break long model/panel names after "/", "-", "_", "+" or a space (textwrap alone would cut "org/model")."""
    lines = [""]
    for piece in re.split(r"(?<=[/\-_+ ])", name):
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines.append("")
        lines[-1] += piece
    return "\n".join(textwrap.fill(line, width) for line in lines)


CONTROL_STYLE = {
    REFERENCE: ("tab:green", "-", "ceiling: reference"),
    SHUFFLED: ("tab:red", "-", "floor: shuffled"),
    TRUNCATED: ("tab:orange", ":", "truncated"),
    PADDED: ("tab:purple", ":", "padded"),
}


def _draw_controls(left: Axes, controls: pd.DataFrame) -> None:
    """The panel's control runs as vertical lines, the models between them: ceiling and floor with their CI band."""
    drawn = 0
    for model, reward, low, high in controls[["model", "reward", "reward_ci_low", "reward_ci_high"]].itertuples(
        index=False
    ):
        if pd.isna(reward):
            continue
        drawn += 1
        color, style, label = CONTROL_STYLE[control_kind(model)]
        left.axvline(reward, color=color, linestyle=style, linewidth=1.5, label=f"{label} {reward:.3f}")
        if style == "-" and not (pd.isna(low) or pd.isna(high)):
            left.axvspan(low, high, color=color, alpha=0.12, linewidth=0)
    if drawn:  # controls nobody judged draw nothing, and an empty legend is a matplotlib warning
        left.legend(loc="best", fontsize=7, title="control runs", title_fontsize=7)


BLIND_TITLE = "judges cannot tell the clinician's plan from another patient's (AUROC {auroc:.2f}): ranking not evidence"
ABOVE_CEILING = "above the clinician's own plan"


def _mark_above_ceiling(left: Axes, rows: pd.DataFrame, controls: pd.DataFrame, y: np.ndarray) -> None:
    """A model scored above the panel's reference control is flagged on its row: to these judges it beats the
    clinician's own plan, which says more about the judges than about the model."""
    ceiling = controls.loc[controls["model"].map(control_kind) == REFERENCE, "reward"].dropna()
    if ceiling.empty:
        return
    for reward, pos in zip(rows["reward"].to_numpy(dtype=float), y, strict=True):
        if not np.isnan(reward) and rounded_for_ranks(reward) > rounded_for_ranks(float(ceiling.max())):
            left.plot([reward], [pos], marker="o", markersize=11, markerfacecolor="none", color="tab:red")
            left.annotate(ABOVE_CEILING, (reward, pos), xytext=(0, -13), textcoords="offset points", ha="center",
                          fontsize=8, color="tab:red", fontweight="bold")  # fmt: skip


def _draw_panel(left: Axes, right: Axes, rows: pd.DataFrame, panel: str, auroc: float | None = None) -> None:
    """One judge panel: reward points with CI bars on the left, the three mean dimension scores on the right.
    ``auroc`` is given for a panel whose judges fail discrimination: its title then says so, in red."""
    kinds = rows["model"].map(control_kind)
    controls, rows = rows[kinds != ""], rows[kinds == ""].reset_index(drop=True)
    if rows.empty:  # a suite of controls only: show them as models
        rows, controls = controls.reset_index(drop=True), controls.iloc[:0]
    y = np.arange(len(rows))[::-1]  # best model on top
    reward = rows["reward"].to_numpy(dtype=float)
    has = ~np.isnan(reward)
    low = np.nan_to_num(reward - rows["reward_ci_low"].to_numpy(dtype=float)).clip(min=0)
    high = np.nan_to_num(rows["reward_ci_high"].to_numpy(dtype=float) - reward).clip(min=0)
    left.errorbar(reward[has], y[has], xerr=[low[has], high[has]], fmt="o", color="tab:blue", capsize=4)
    for value, pos in zip(reward[has], y[has], strict=True):
        left.annotate(f"{value:.3f}", (value, pos), xytext=(0, 7), textcoords="offset points", ha="center", fontsize=8)
    for pos in y[~has]:
        left.text(0.02, pos, "no valid judgement (reward missing)", va="center", color="tab:red", fontsize=9)
    _draw_controls(left, controls)
    _mark_above_ceiling(left, rows, controls, y)
    left.set_xlim(0, 1)
    left.set_xlabel("Reward (0-1), 95% bootstrap CI over notes")
    left.set_yticks(y, [wrap_name(m) for m in rows["model"]])
    left.set_ylim(-0.7, len(rows) - 0.3)
    title = f"Judge panel: {wrap_name(panel, 60)}"
    if auroc is None:
        left.set_title(title, loc="left", fontsize=10)
    else:
        left.set_title(f"{title}\nWARNING: {BLIND_TITLE.format(auroc=auroc)}", loc="left", fontsize=10, color="tab:red")
    left.grid(axis="x", alpha=0.3)
    for k, (dim, marker) in enumerate(zip(DIMENSIONS, ("o", "s", "^"), strict=True)):
        right.scatter(rows[dim].to_numpy(dtype=float), y + (1 - k) * 0.18, marker=marker, label=dim.capitalize())
    right.set_xlim(0.8, 5.2)
    right.set_xticks([1, 2, 3, 4, 5])
    right.set_xlabel("Mean judge score (1-5)")
    right.grid(axis="x", alpha=0.3)
    right.tick_params(labelleft=False)


def write_figure(board: pd.DataFrame, path: Path, suite: str, blind: dict[str, float] | None = None) -> None:
    """Reward with its CI (left) and the three dimensions (right) per model, one row of plots per judge panel;
    ``blind`` maps the panels whose judges fail discrimination to their AUROC (audit_warnings.blind_panels)."""
    panels = list(dict.fromkeys(board["panel"]))
    heights = [max(2.0, 0.55 * int((board["panel"] == p).sum()) + 1.2) for p in panels]
    fig = Figure(figsize=(12, sum(heights) + 1.0), layout="constrained")
    axes = fig.subplots(len(panels), 2, squeeze=False, gridspec_kw={"height_ratios": heights}, sharey="row")
    for (left, right), panel in zip(axes, panels, strict=True):
        rows = board[board["panel"] == panel].reset_index(drop=True)
        _draw_panel(left, right, rows, panel, (blind or {}).get(panel))
    handles, labels = axes[0][1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=3, title="Mean judge score per dimension")
    fig.suptitle(f"MTSamples Procedures, suite {suite}")
    fig.savefig(path, dpi=120)
