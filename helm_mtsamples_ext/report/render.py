"""How the report looks: the terminal leaderboard, the figure and report.md.

The figure uses matplotlib's object API (`Figure`, rendered by Agg when saved), so it never needs a display
and never touches pyplot's global state. Models run down the y axis so long names stay horizontal and are
wrapped instead of overlapping.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from helm_mtsamples_ext.report.agreement_render import agreement_markdown
from helm_mtsamples_ext.report.audit import (
    CONTROL_KINDS,
    PADDED,
    REFERENCE,
    SHUFFLED,
    TRUNCATED,
    control_kind,
    delta_text,
)
from helm_mtsamples_ext.rubric import DIMENSIONS

MISSING = "missing"
"""Shown where a number is absent: a model no judge could score has no reward, which is not a reward of 0."""


def _num(value: float, digits: int = 3, missing: str = MISSING) -> str:
    return missing if pd.isna(value) else f"{value:.{digits}f}"


def _ci(low: float, high: float) -> str:
    return "n/a" if pd.isna(low) or pd.isna(high) else f"[{low:.3f}, {high:.3f}]"


def _percent(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{100 * value:.1f}%"


def display_leaderboard(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as strings, one row per (panel, model), for the terminal and markdown."""
    return pd.DataFrame(
        {
            "panel": board["panel"],
            "#": board["rank"],
            "model": board["model"],
            "reward": board["reward"].map(_num),
            "95% CI": [_ci(lo, hi) for lo, hi in zip(board["reward_ci_low"], board["reward_ci_high"], strict=True)],
            **{dim: board[dim].map(lambda v: _num(v, 2)) for dim in DIMENSIONS},
            "judged": board["n_judged"].astype(str) + "/" + board["n_notes"].astype(str),
            "judge failures": board["judge_failure_rate"].map(_percent),
            "alpha (acc/comp/clar)": board[[f"alpha_{d}" for d in DIMENSIONS]].apply(
                lambda row: " / ".join(_num(v, 2, "n/a") for v in row), axis=1
            ),
        }
    )


def terminal_leaderboard(board: pd.DataFrame) -> str:
    """One block per judge panel, so the (long) panel id is printed once instead of on every row."""
    table = display_leaderboard(board)
    width = int(table["model"].str.len().max())
    # to_string right-aligns text; padding names and header to one width reads as a left-aligned column
    table = table.assign(model=table["model"].str.ljust(width)).rename(columns={"model": "model".ljust(width)})
    return "\n\n".join(
        f"Judge panel: {panel}\n" + rows.drop(columns="panel").to_string(index=False)
        for panel, rows in table.groupby("panel", sort=False)
    )


def markdown_table(table: pd.DataFrame) -> str:
    """A GitHub markdown table (pandas' to_markdown needs tabulate, which is not a dependency)."""
    cells = table.astype(str).map(lambda text: text.replace("|", "\\|"))
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    lines += ["| " + " | ".join(row) + " |" for row in cells.itertuples(index=False)]
    return "\n".join(lines)


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
        if not np.isnan(reward) and round(reward, 9) > round(float(ceiling.max()), 9):
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


def _pairwise_display(pairs: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "panel": pairs["panel"],
            "A": pairs["model_a"],
            "B": pairs["model_b"],
            "notes": pairs["n_notes"],
            "A - B": pairs["difference"].map(_num),
            "95% CI": [_ci(lo, hi) for lo, hi in zip(pairs["ci_low"], pairs["ci_high"], strict=True)],
            "A wins in": pairs["share_a_wins"].map(_percent),
        }
    )


def _specialty_display(specialty: pd.DataFrame) -> pd.DataFrame:
    cells = specialty.assign(
        cell=[f"{_num(r)} (n={n})" for r, n in zip(specialty["reward"], specialty["n"], strict=True)]
    )
    wide = cells.pivot(index=["panel", "specialty"], columns="model", values="cell").fillna("")
    return wide[list(dict.fromkeys(specialty["model"]))].reset_index()


def _audit_display(audit: pd.DataFrame) -> pd.DataFrame:
    def column(value: str, low: str, high: str, signed: bool = True) -> list[str]:
        return [delta_text(v, lo, hi, signed) for v, lo, hi in audit[[value, low, high]].to_numpy(dtype=float)]

    display = pd.DataFrame(
        {
            "panel": audit["panel"],
            "judge": audit["judge"],
            **{kind: audit[f"reward_{kind}"].map(lambda v: _num(v, 2, "n/a")) for kind in CONTROL_KINDS},
            "AUROC": column("auroc", "auroc_ci_low", "auroc_ci_high", signed=False),
            "padded - reference": column("verbosity_bias", "verbosity_ci_low", "verbosity_ci_high"),
            "truncated - reference": column("completeness_sensitivity", "completeness_ci_low", "completeness_ci_high"),
        }
    )
    if audit["extraction"].nunique() > 1:
        display.insert(1, "extraction", audit["extraction"])
    return display


def audit_markdown(audit: pd.DataFrame) -> list[str]:
    """report.md's "Judge audit" section: the table, then one plain verdict per judge (rules in audit.py)."""
    lines = ["## Judge audit", ""]
    if audit.empty:
        return [
            *lines,
            "No control runs in this suite, so the judges were not audited: add runs of "
            "`mtsamples-control/reference`, `/shuffled`, `/truncated` and `/padded` under the same judges.",
            "",
        ]
    lines += [
        "Control answers built from each note: *reference* (the clinician's own section: the ceiling), *shuffled* "
        "(another patient's: the floor), *truncated* (its first third), *padded* (plus generic filler). Mean reward "
        "per control; AUROC: the chance that a reference plan outscores a shuffled one, ties half (0.5: cannot "
        "tell); the deltas are per note, paired by instance id. 95% bootstrap intervals over notes in brackets. "
        "Full numbers in `judge_audit.csv`.",
        "",
        markdown_table(_audit_display(audit)),
        "",
    ]
    several = audit["extraction"].nunique() > 1
    for row in audit.itertuples(index=False):
        setting = f", {row.extraction} extraction" if several else ""
        lines.append(f"- **{row.judge}** (panel `{row.panel}`{setting}): {row.verdict}.")
    return [*lines, ""]


def markdown_report(
    suite: str,
    tables: dict[str, pd.DataFrame],
    figure_name: str,
    problems: list[str],
    settings_text: str,
    audit: pd.DataFrame | None = None,
    verdicts: list[str] | None = None,
    cost: list[str] | None = None,
) -> str:
    """report.md: the audit's verdicts first (a ranking is only as good as its judges), then the figure, the
    leaderboard, pairwise comparisons and specialties, then how they were made."""
    board, pairs = tables["leaderboard"], tables["pairwise"]
    n_panels = board["panel"].nunique()
    lines = [
        f"# MTSamples Procedures: suite `{suite}`",
        "",
        *([f"> {line}  " for line in verdicts] + [""] if verdicts else []),
        f"{board['model'].nunique()} model(s), {n_panels} judge panel(s), "
        f"{int(board['n_notes'].max()) if len(board) else 0} notes at most per model. "
        "Results of different judge panels are reported apart and never averaged together.",
        "",
        f"![Reward with 95% CI and mean judge scores per model]({figure_name})",
        "",
        "## Leaderboard",
        "",
        markdown_table(display_leaderboard(board)),
        "",
        *(cost or []),
        "## Pairwise comparisons",
        "",
    ]
    if pairs.empty:
        lines.append("No pair of models shares a judge panel, so there is nothing to compare.")
    else:
        lines.append(markdown_table(_pairwise_display(pairs)))
    if audit is not None:
        lines += ["", *audit_markdown(audit)]
    if "judge_human_agreement" in tables:
        lines += ["", *agreement_markdown(tables)]
    lines += ["", "## Reward by specialty", "", markdown_table(_specialty_display(tables["by_specialty"])), ""]
    if problems:
        lines += ["## Runs that could not be read", ""] + [f"- {p}" for p in problems] + [""]
    lines += [
        "## How these numbers are made",
        "",
        "- A judge's reward is the mean of score/5 over its valid dimensions (integer scores 1-5); a note's reward "
        "is the mean over the judges with at least one valid dimension. A judge that failed counts for nothing, "
        "never as a low score; a note no judge could score is *unjudged* and left out (reward `missing`, not 0). "
        "An empty answer scores 0.",
        f"- Reward intervals: percentile bootstrap over notes ({settings_text}). Pairwise: the same resampled notes "
        "for both models, over the notes judged for both; *A wins in* is the share of resamples where A's mean "
        "reward is strictly higher.",
        "- Judge failures: failed judge calls / judge calls made. Alpha: Krippendorff's alpha (ordinal) between "
        "the panel's judges per dimension; n/a when undefined (one judge, no note scored twice, no variation).",
        "- Files: `instances.csv` (one row per model x note x judge), `leaderboard.csv`, `pairwise.csv`, "
        "`by_specialty.csv`.",
        "",
    ]
    return "\n".join(lines)
