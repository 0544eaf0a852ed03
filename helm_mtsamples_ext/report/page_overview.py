"""What report.html opens on: the leaderboard, the audit's verdict and the figure, before the per-note review.

A newcomer opening the page used to find answers and explanations but no ranking at all. So the page's first tab
is each panel's leaderboard (reward with its interval and rank interval; with clinicians' ratings, the
clinician-scale reward with its interval, the rated answers and the calibration used), the audit's verdict lines
(tables.audit_lines: the same lines the terminal prints) and leaderboard.png, embedded as a data: URI so the page
still fetches nothing. Every cell is text, rendered by review.py's Jinja2 with autoescaping on. Pure: tables in,
strings out.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import pandas as pd

from helm_mtsamples_ext.report.report_text import intervals, num, percent

CLINICIAN_SENTENCE = (
    "Clinician scale: the judges' reward on every judged answer, corrected by the clinicians' ratings of the rated "
    "ones (a prediction-powered mean weighted by each rated answer's inclusion probability), so it estimates the "
    "clinicians' mean reward whatever the judges' errors; blank below the floor of rated answers."
)


@dataclass(frozen=True)
class Overview:
    """The report's tables the first tab shows: leaderboard.csv's rows, the audit's verdict lines, the figure."""

    leaderboard: pd.DataFrame
    verdicts: list[str]
    figure: bytes
    """leaderboard.png's bytes."""


@dataclass(frozen=True)
class PanelBoard:
    """One panel's leaderboard as text cells."""

    panel: str
    columns: list[str]
    rows: list[list[str]]


def _rank(low: float, high: float) -> str:
    if pd.isna(low):
        return "n/a"
    return f"{int(low)}" if low == high else f"{int(low)}-{int(high)}"


def has_clinician_scale(board: pd.DataFrame) -> bool:
    return "clinician_reward" in board.columns


def panel_boards(board: pd.DataFrame) -> list[PanelBoard]:
    """Each panel's leaderboard, rows in leaderboard.csv's order (by rank)."""
    clinician = has_clinician_scale(board)
    columns = ["#", "rank 95%", "model", "reward", "95% CI", "judged", "judge failures"]
    if clinician:
        columns += ["clinician scale", "clinician 95% CI", "rated", "calibration"]
    boards = []
    for panel, rows in board.groupby("panel", sort=False):
        reward_ci = intervals(rows["reward_ci_low"], rows["reward_ci_high"], rows["n_judged"])
        cells = []
        for k, row in enumerate(rows.to_dict("records")):
            line = [
                str(row["rank"]), _rank(row["rank_low"], row["rank_high"]), str(row["model"]), num(row["reward"]),
                reward_ci[k], f"{row['n_judged']}/{row['n_notes']}", percent(row["judge_failure_rate"]),
            ]  # fmt: skip
            if clinician:
                rated = row.get("n_rated")
                line += [
                    num(row["clinician_reward"], missing="-"),
                    "-" if pd.isna(row["clinician_ci_low"])
                    else f"[{row['clinician_ci_low']:.3f}, {row['clinician_ci_high']:.3f}]",
                    "0" if rated is None or pd.isna(rated) else str(int(rated)),
                    "" if pd.isna(row.get("calibration")) else str(row.get("calibration")),
                ]  # fmt: skip
            cells.append(line)
        boards.append(PanelBoard(str(panel), columns, cells))
    return boards


def figure_uri(png: bytes) -> str:
    """The figure as a data: URI: inside the page, so it opens from disk and fetches nothing."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
