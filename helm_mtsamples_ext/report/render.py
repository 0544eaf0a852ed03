"""How the report reads as text: the terminal leaderboard and report.md.

Numbers become strings in report_text.py, so the terminal and report.md show the same rounding; the pairwise
section is pairwise_render.py's, the figure figure.py's. Nothing here computes a figure: each is read from the
tables tables.py built.
"""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.common.outside_text import markdown
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.agreement_render import agreement_markdown
from helm_mtsamples_ext.report.answer_failures import BOUNDED
from helm_mtsamples_ext.report.audit import CONTROL_KINDS, delta_text
from helm_mtsamples_ext.report.clinician_render import clinician_markdown
from helm_mtsamples_ext.report.dropout_render import dropout_markdown
from helm_mtsamples_ext.report.flagged_render import flagged_markdown
from helm_mtsamples_ext.report.medmarks_readme import EXPORT_TABLE, export_markdown
from helm_mtsamples_ext.report.pairwise_render import pairwise_markdown
from helm_mtsamples_ext.report.report_text import MISSING, intervals, markdown_table, num, percent
from helm_mtsamples_ext.stats.evidence import MINIMUMS
from helm_mtsamples_ext.stats.panel_alpha import panel_alpha_markdown
from helm_mtsamples_ext.stats.self_preference import self_preference_markdown


def display_leaderboard(board: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard as strings, one row per (panel, model), for the terminal and markdown."""
    return pd.DataFrame(
        {
            "panel": board["panel"],
            "#": board["rank"],
            "rank 95%": [
                "n/a" if pd.isna(lo) else f"{int(lo)}-{int(hi)}" if lo != hi else f"{int(lo)}"
                for lo, hi in zip(board["rank_low"], board["rank_high"], strict=True)
            ],
            "model": board["model"],
            "reward": board["reward"].map(num),
            "failed at min": board[BOUNDED].map(num) if BOUNDED in board else MISSING,
            "95% CI": intervals(board["reward_ci_low"], board["reward_ci_high"], board["n_judged"]),
            **{dim: board[dim].map(lambda v: num(v, 2)) for dim in DIMENSIONS},
            "judged": board["n_judged"].astype(str) + "/" + board["n_notes"].astype(str),
            "judge failures": board["judge_failure_rate"].map(percent),
            "alpha within model (acc/comp/clar)": board[[f"alpha_{d}" for d in DIMENSIONS]].apply(
                lambda row: " / ".join(num(v, 2, "n/a") for v in row), axis=1
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


def _specialty_display(specialty: pd.DataFrame) -> pd.DataFrame:
    cells = specialty.assign(
        cell=[f"{num(r)} (n={n})" for r, n in zip(specialty["reward"], specialty["n"], strict=True)]
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
            **{kind: audit[f"reward_{kind}"].map(lambda v: num(v, 2, "n/a")) for kind in CONTROL_KINDS},
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
        *([f"> {markdown(line)}  " for line in verdicts] + [""] if verdicts else []),
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
        *clinician_markdown(board, pairs),
        *panel_alpha_markdown(board, tables.get("panel_alpha")),
        *dropout_markdown(tables.get("judge_dropout")),
        *(cost or []),
        *pairwise_markdown(pairs, board),
    ]
    if audit is not None:
        lines += ["", *audit_markdown(audit)]
    preference = tables.get("judge_self_preference")
    if preference is not None and not preference.empty:
        lines += ["", *self_preference_markdown(preference)]
    if "judge_human_agreement" in tables:
        lines += ["", *agreement_markdown(tables)]
    flagged = flagged_markdown(tables)  # only with ratings that flag a reference
    lines += ["", *flagged] if flagged else []
    lines += ["", "## Reward by specialty", "", markdown_table(_specialty_display(tables["by_specialty"])), ""]
    if problems:
        lines += ["## Runs that could not be read", ""] + [f"- {markdown(p)}" for p in problems] + [""]
    lines += export_markdown(tables.get(EXPORT_TABLE))  # with --export medmarks
    lines += [
        "## How these numbers are made",
        "",
        "- A judge's reward is the mean of score/5 over its valid dimensions (integer scores 1-5); a note's reward "
        "is the mean over the judges with at least one valid dimension. A judge that failed counts for nothing, "
        "never as a low score; a note no judge could score is *unjudged* and left out (reward `missing`, not 0). "
        "An empty answer scores 0. *Failed at min* is the reward with the model's failed judgments scored 1 on "
        "every dimension (1/5): what no lost judgment can take the model below; a model whose answers make a "
        "judge fail more than the other models' answers do is named in a WARNING above.",
        f"- Reward intervals: expanded percentile bootstrap over notes ({settings_text}). Ranks (#) and pairs read "
        "the notes judged for every model of the panel (`ranked_reward`, `n_ranked_notes` in `leaderboard.csv`); "
        "*rank 95%* is the percentile interval of each model's rank over the same resamples as the pairs. Pairwise: "
        "the same resampled notes for both models; *resamples with A ahead* is the share of resamples where A's mean "
        "reward is higher, a tie counting half (not the probability that A is better); *separated (Holm)* corrects "
        "for the panel's many pairs. Below "
        f"{MINIMUMS.notes_for_verdict} notes there is no interval and no share (*too few notes (N) to tell*), and "
        'when most resamples tie there is no interval (see docs/report.md, "How much evidence a verdict needs").',
        "- Judge failures: failed judge calls / judge calls made. Alpha: Krippendorff's alpha (ordinal) between "
        "the panel's judges over one model's answers, per dimension (the panel's across all its answers is under the "
        "leaderboard); n/a when undefined (one judge, no note scored twice, no variation).",
        "- Files: `instances.csv` (one row per model x note x judge), `leaderboard.csv`, `pairwise.csv`, "
        "`by_specialty.csv`.",
        "",
    ]
    return "\n".join(lines)
