"""report.md's "Agreement with clinicians" section, from human_agreement.py's tables."""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.human_agreement import CLINICIANS_ROW


def _num(value: float, digits: int = 2) -> str:
    return "n/a" if pd.isna(value) else f"{round(value, digits) + 0.0:.{digits}f}"  # + 0.0: no "-0.000"


def _with_ci(value: float, low: float, high: float, digits: int = 2) -> str:
    interval = "" if pd.isna(low) or pd.isna(high) else f" [{_num(low, digits)}, {_num(high, digits)}]"
    return _num(value, digits) + interval


def _table(table: pd.DataFrame) -> str:
    cells = table.astype(str).map(lambda text: text.replace("|", "\\|"))
    lines = ["| " + " | ".join(map(str, table.columns)) + " |", "|" + "---|" * len(table.columns)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in cells.itertuples(index=False)])


def _agreement_display(agreement: pd.DataFrame) -> pd.DataFrame:
    def column(name: str, digits: int = 2) -> list[str]:
        return [
            _with_ci(v, lo, hi, digits)
            for v, lo, hi in agreement[[name, f"{name}_ci_low", f"{name}_ci_high"]].to_numpy(dtype=float)
        ]

    return pd.DataFrame(
        {
            "panel": agreement["panel"],
            "judge": agreement["judge"],
            "answers": agreement["n"],
            "Spearman rho": column("spearman"),
            "bias (judge - human)": column("bias", 3),
            "kappa (acc/comp/clar)": agreement[[f"kappa_{d}" for d in DIMENSIONS]].apply(
                lambda row: " / ".join(_num(v) for v in row), axis=1
            ),
            "ICC(3,1)": column("icc"),
            "ICC(3,1) in a rater's place (vs ceiling)": column("icc_in_place"),
            "minus the clinicians' ICC (paired)": column("icc_vs_ceiling"),
            "MedHELM's ICC (z, 3k)": column("icc_medhelm"),
            "alpha between clinicians (acc/comp/clar)": agreement[[f"alpha_{d}" for d in DIMENSIONS]].apply(
                lambda row: "" if row.isna().all() else " / ".join(_num(v) for v in row), axis=1
            ),
        }
    )


def _human_board(board: pd.DataFrame) -> pd.DataFrame:
    rated = board[board["n_human"] > 0]
    return pd.DataFrame(
        {
            "panel": rated["panel"],
            "model": rated["model"],
            "judges' reward": [
                _with_ci(v, lo, hi, 3)
                for v, lo, hi in rated[["reward", "reward_ci_low", "reward_ci_high"]].to_numpy(dtype=float)
            ],
            "clinicians' reward": [
                _with_ci(v, lo, hi, 3)
                for v, lo, hi in rated[["human_reward", "human_reward_ci_low", "human_reward_ci_high"]].to_numpy(
                    dtype=float
                )
            ],
            "rated answers": rated["n_human"],
        }
    )


def agreement_markdown(tables: dict[str, pd.DataFrame]) -> list[str]:
    """The agreement table, one verdict per judge, then the models as clinicians rank them."""
    agreement, board, ranking = tables["judge_human_agreement"], tables["leaderboard"], tables["ranking_agreement"]
    lines = [
        "## Agreement with clinicians",
        "",
        "Each judge (and the panel's reward) against the mean clinician reward of the answers both scored; "
        f"`{CLINICIANS_ROW}` is the human ceiling, over answers two or more clinicians rated (each rater against "
        "the mean of the others, averaged over raters, so no name matters; alpha across all raters). Spearman's rho "
        "and ICC(3,1) on rewards, bias = mean judge reward minus mean human reward, quadratic-weighted kappa per "
        "dimension on the judge's score against the rounded mean human score. MedHELM's ICC is the statistic "
        "MedHELM's script reports (each side z-scored, ICC(3,k) with k = 2; for the clinicians, averaged over every "
        "pair of raters, weighted by the answers they share): the one to put beside MedHELM's 0.47 (jury) and 0.43 "
        "(clinicians). The verdict reads the judge's ICC in a rater's place minus the clinicians' ICC, drawn on the "
        'same resampled answers: "about as well" only when that difference\'s interval lies within '
        f"±{MINIMUMS.agreement_margin:g}. 95% bootstrap intervals over answers in brackets. Full numbers in "
        "`judge_human_agreement.csv`.",
        "",
        _table(_agreement_display(agreement)) if len(agreement) else "No rated answer belongs to a run of this suite.",
        "",
    ]
    for row in agreement.itertuples(index=False):
        if row.verdict and isinstance(row.verdict, str):
            lines.append(f"- **{row.judge}** (panel `{row.panel}`): {row.verdict}.")
    lines += ["", "### Models as clinicians rate them", ""]
    human = _human_board(board)
    lines += [_table(human) if len(human) else "No model has a rated answer.", ""]
    for row in ranking.itertuples(index=False):
        tau = (
            f"Kendall's tau between the two rankings: {_num(row.kendall_tau)} over {row.n_models} models"
            if row.n_models >= 2
            else f"fewer than two models rated ({row.n_models}), so no ranking to compare"
        )
        lines.append(f"- Panel `{row.panel}`: {tau}.")
    return [*lines, ""]
