"""The panel's judge agreement over all its answers, beside the leaderboard's within-one-model alpha.

The leaderboard's `alpha_<dim>` (and HELM's per-run alpha stat) is computed over one model's answers: they vary
little, so it sits near 0 even when the judges agree well on which answers are good. Readers take an alpha for
the panel's reliability, so the board also gives that: `panel_alpha_<dim>`, Krippendorff's alpha (ordinal,
`scoring.ordinal_alpha`) over every answer (model x note) of the panel's models under test. Control runs are left
out, so the number is about real answers; a shuffled or reference control would make agreement look easy.
HELM cannot hold this figure: its stats belong to one run, and this one spans runs. tables.py computes it once
(``panel_alpha_table``); the leaderboard's columns and report.md's lines are read from that table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.scoring.reward import AlphaResult, ordinal_alpha, ratings_matrix
from helm_mtsamples_ext.stats.controls import control_kind

PANEL_ALPHA_COLUMNS = [f"panel_alpha_{dim}" for dim in DIMENSIONS]
ANSWERS_COLUMN = "panel_alpha_answers"
"""Answers (model x note, models under test) that two or more judges scored: what the panel's alpha is over."""

NO_REAL_ANSWERS = "no judged answer of a model under test (control runs are left out)"
TABLE_COLUMNS = ["panel", "dimension", "alpha", "answers", "reason"]
"""One row per (panel, dimension): the alpha (NaN when undefined), the answers it is over, why it is undefined."""


def panel_alphas(instances: pd.DataFrame) -> dict[str, dict[str, AlphaResult]]:
    """{panel: {dimension: alpha over all the panel's answers of models under test}}; an answer is (model, note)."""
    real = instances[(instances["model"].map(control_kind) == "") & (instances["status"] == "ok")]
    result = {}
    for panel in dict.fromkeys(instances["panel"]):
        rows = real[real["panel"] == panel]
        answers = list(zip(rows["model"], rows["note"], strict=True))
        if rows.empty:
            result[panel] = {dim: AlphaResult(None, NO_REAL_ANSWERS) for dim in DIMENSIONS}
            continue
        result[panel] = {
            dim: ordinal_alpha(ratings_matrix(zip(rows["judge"], answers, rows[dim], strict=True))[1])
            for dim in DIMENSIONS
        }
    return result


def panel_alpha_table(instances: pd.DataFrame) -> pd.DataFrame:
    """``panel_alphas`` as a table (TABLE_COLUMNS), the one computation the leaderboard and report.md read."""
    rows = [
        (panel, dim, np.nan if a.value is None else a.value, a.pairable_notes, a.reason if a.value is None else "")
        for panel, by_dim in panel_alphas(instances).items()
        for dim, a in by_dim.items()
    ]
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def with_panel_alpha(board: pd.DataFrame, alphas: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard with `panel_alpha_<dim>` and `panel_alpha_answers` right after its within-model alphas; every
    row of a panel (its controls too) shows the same panel figure. ``alphas``: ``panel_alpha_table``'s."""
    keyed = zip(alphas["panel"], alphas["dimension"], alphas["alpha"], strict=True)
    by_key = {(str(p), str(d)): float(a) for p, d, a in keyed}
    most = alphas.groupby("panel")["answers"].max().to_dict() if not alphas.empty else {}

    def value(panel: str, dim: str) -> float:
        return by_key.get((str(panel), dim), np.nan)

    def answers(panel: str) -> int:
        return int(most.get(panel, 0))

    added = {f"panel_alpha_{dim}": [value(p, dim) for p in board["panel"]] for dim in DIMENSIONS}
    added[ANSWERS_COLUMN] = [answers(p) for p in board["panel"]]
    board = board.drop(columns=[c for c in added if c in board])
    last = f"alpha_{DIMENSIONS[-1]}"
    at = list(board.columns).index(last) + 1 if last in board else len(board.columns)
    left, right = board.iloc[:, :at], board.iloc[:, at:]
    return pd.concat([left, pd.DataFrame(added, index=board.index), right], axis=1)


def _alpha_text(value: float) -> str:
    return "n/a" if pd.isna(value) else f"{value:.2f}"


def _within_text(values: pd.Series) -> str:
    known = values.dropna()
    if known.empty:
        return "n/a"
    low, high = known.min(), known.max()
    return _alpha_text(low) if np.isclose(low, high) else f"{low:.2f} to {high:.2f}"


def panel_alpha_markdown(board: pd.DataFrame, alphas: pd.DataFrame | None = None) -> list[str]:
    """report.md's judge-agreement lines under the leaderboard: per panel, alpha across its answers, and the range of
    the within-one-model figure the leaderboard shows, each named for what it is. With ``panel_alpha_table``'s
    table, an undefined panel alpha says why."""
    if ANSWERS_COLUMN not in board or board.empty:
        return []
    reasons: dict[str, set[str]] = {}
    for panel, reason in zip(alphas["panel"], alphas["reason"], strict=True) if alphas is not None else ():
        if reason:
            reasons.setdefault(str(panel), set()).add(str(reason))
    lines = [
        "**Judge agreement** (Krippendorff's alpha, ordinal; 1 is perfect agreement, 0 is chance). *Across the "
        "panel's answers*: every answer of the models under test (controls left out), the panel's reliability "
        "(`panel_alpha_<dim>` in `leaderboard.csv`). *Within one model's answers*: the leaderboard's alpha column "
        "(`alpha_<dim>`, as in HELM's per-run stat); one model's answers vary little, so it can sit near 0 even when "
        "the judges agree across models.",
        "",
    ]
    for panel, rows in board.groupby("panel", sort=False):
        first = rows.iloc[0]
        across = ", ".join(f"{dim} {_alpha_text(first[f'panel_alpha_{dim}'])}" for dim in DIMENSIONS)
        real = rows[rows["model"].map(control_kind) == ""]
        within = ", ".join(f"{dim} {_within_text(real[f'alpha_{dim}'])}" for dim in DIMENSIONS)
        why = sorted(reasons.get(str(panel), set()))
        because = f" (n/a: {'; '.join(why)})" if why else ""
        lines.append(
            f"- Panel `{panel}`: across the panel's {int(first[ANSWERS_COLUMN])} answers: {across}{because}; "
            f"within one model's answers ({len(real)} model(s)): {within} (per model: see the leaderboard)."
        )
    return [*lines, ""]
