"""Judge failures a model's answers cause, charged to those answers.

A failed judgment counts for nothing, never as a low score: the right rule for a judge that timed out, and a
door for an answer that makes a judge fail. An answer carrying the words a judge writes for a low verdict can get
that verdict masked or refused; the low verdict disappears and the model's reward rises. No rule about which
failures to trust closes every such door, so the report makes every failure visible and bounded:

- **the share of failed judgments per judge and model**, in leaderboard.csv (``failed_share:<judge>``);
- **a test per judge and model**: the model's failures with that judge against the other models' pooled ones
  under the same panel, Fisher's exact test (one-sided: more failures on this model's answers), Holm-adjusted
  over every pair tested, each side with at least ``evidence.MINIMUMS.notes_for_verdict`` calls. A pair that
  holds is a WARNING naming the model and the judge, pointing at the answers (a larger judge does not help);
- **the reward with the model's failed judgments at the scale's minimum** (score 1 on every dimension, 1/5),
  beside the reward: what the model would score had every lost judgment been the lowest one. A lost judgment
  can raise the reward at most to the reward; this column is what it cannot go below.

Pure pandas and scipy on the report's per-judge table.
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import fisher_exact

from helm_mtsamples_ext.common.failure_kinds import CONTEXT_FAILURE, failure_kind
from helm_mtsamples_ext.scoring.reward import FLOOR_REWARD
from helm_mtsamples_ext.stats.evidence import MINIMUMS

ALPHA = 0.05
"""Family-wise error rate of the warnings, over every (panel, judge, model) tested (Holm)."""
SHARE_PREFIX = "failed_share:"
"""leaderboard.csv's column per judge: the share of that judge's calls on the model's answers that failed."""
BOUNDED = "reward_failed_at_min"
"""leaderboard.csv's column: the reward with the model's failed judgments at the scale's minimum."""
COLUMNS = ["panel", "judge", "model", "calls", "failures", "share", "other_calls", "other_failures", "other_share"]
COLUMNS += ["p_value", "p_holm", "flagged"]
KIND = "failure_kind"
"""The per-judge rows' column of each failure's kind (rows.judge_rows); not in instances.csv."""


def failure_kinds(instances: pd.DataFrame) -> pd.Series:
    """Each row's failure kind: the rows' ``failure_kind`` column (rows.judge_rows writes it: the record's stored
    kind, or an older record's read from its text), or, for a table without one, the kind each failure's text
    begins with."""
    if KIND in instances.columns:
        return instances[KIND].fillna("").astype(str)
    return instances["failure"].map(lambda failure: failure_kind(str(failure or "failed")))


def _p_value(failures: int, calls: int, other_failures: int, other_calls: int) -> float:
    """One-sided Fisher exact: this model's answers make the judge fail more often than the others' do; NaN when
    either side has fewer calls than the evidence minimum."""
    if min(calls, other_calls) < MINIMUMS.notes_for_verdict:
        return math.nan
    table = [[failures, calls - failures], [other_failures, other_calls - other_failures]]
    return float(fisher_exact(table, alternative="greater").pvalue)


def holm(p_values: pd.Series) -> pd.Series:
    """Holm's step-down adjustment of the p-values that are not NaN (NaN stays NaN)."""
    tested = p_values.dropna().sort_values(kind="stable")
    m = len(tested)
    adjusted = pd.Series(math.nan, index=p_values.index, dtype=float)
    running = 0.0
    for i, (index, p) in enumerate(tested.items()):
        running = max(running, min(1.0, (m - i) * float(p)))
        adjusted[index] = running
    return adjusted


def failure_shares(instances: pd.DataFrame) -> pd.DataFrame:
    """One row per (panel, judge, model): the judge's calls and failures on the model's answers, the same on the
    other models' answers under the panel, the test's p-value (raw and Holm-adjusted) and whether it warns."""
    if instances.empty:
        return pd.DataFrame(columns=COLUMNS)
    calls = instances[instances["status"] != "empty_answer"].assign(failed=lambda t: t["status"] == "failed")
    if calls.empty:
        return pd.DataFrame(columns=COLUMNS)
    table = calls.groupby(["panel", "judge", "model"], as_index=False, sort=False).agg(
        calls=("failed", "size"), failures=("failed", "sum")
    )
    totals = table.groupby(["panel", "judge"])[["calls", "failures"]].transform("sum")
    table["other_calls"] = totals["calls"] - table["calls"]
    table["other_failures"] = totals["failures"] - table["failures"]
    table["share"] = table["failures"] / table["calls"]
    table["other_share"] = table["other_failures"] / table["other_calls"].where(table["other_calls"] > 0)
    table["p_value"] = [
        _p_value(int(r.failures), int(r.calls), int(r.other_failures), int(r.other_calls))
        for r in table.itertuples(index=False)
    ]
    table["p_holm"] = holm(table["p_value"])
    table["flagged"] = (table["p_holm"] < ALPHA) & (table["share"] > table["other_share"])
    return table[COLUMNS].reset_index(drop=True)


def bounded_rewards(instances: pd.DataFrame) -> pd.DataFrame:
    """Per (panel, model): the mean note reward with every failed judgment scored at the scale's minimum (an
    empty answer keeps its 0). Every note has a value, so a note no judge scored counts too."""
    rows = instances.assign(
        floored=instances["judge_reward"].where(instances["status"] != "failed", FLOOR_REWARD).fillna(FLOOR_REWARD)
    )
    notes = rows.groupby(["panel", "model", "note"], as_index=False, sort=False).agg(
        floored=("floored", "mean"), empty=("empty_answer", "any")
    )
    notes["floored"] = notes["floored"].where(~notes["empty"].astype(bool), 0.0)
    return (
        notes.groupby(["panel", "model"], as_index=False, sort=False)["floored"]
        .mean()
        .rename(columns={"floored": BOUNDED})
    )


def with_failure_shares(board: pd.DataFrame, instances: pd.DataFrame, shares: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard with the bounded reward beside the reward and a failed share per judge of the suite."""
    if board.empty or instances.empty:
        return board
    merged = board.merge(bounded_rewards(instances), on=["panel", "model"], how="left")
    result = board.copy()
    result.insert(list(board.columns).index("reward") + 1, BOUNDED, merged[BOUNDED].to_numpy())
    for judge in dict.fromkeys(shares["judge"]):
        mine = shares.loc[shares["judge"] == judge, ["panel", "model", "share"]]
        column = board[["panel", "model"]].merge(mine, on=["panel", "model"], how="left")["share"]
        result[f"{SHARE_PREFIX}{judge}"] = column.to_numpy()
    return result


def warning_lines(shares: pd.DataFrame, board: pd.DataFrame, instances: pd.DataFrame) -> list[str]:
    """One WARNING per (model, judge) whose failures the test charges to the model's answers."""
    lines = []
    flagged = shares[shares["flagged"].astype(bool)] if not shares.empty else shares
    for row in flagged.itertuples(index=False):
        on_board = board[(board["panel"] == row.panel) & (board["model"] == row.model)]
        reward = float(on_board["reward"].iloc[0]) if not on_board.empty else math.nan
        bounded = float(on_board[BOUNDED].iloc[0]) if not on_board.empty and BOUNDED in on_board else math.nan
        mine = instances[
            (instances["panel"] == row.panel)
            & (instances["model"] == row.model)
            & (instances["judge"] == row.judge)
            & (instances["status"] == "failed")
        ]
        found = sorted({kind or "failed" for kind in failure_kinds(mine)})
        kinds = ", ".join(found)
        cause = "the answers cause these failures, not the judge's size"
        if CONTEXT_FAILURE in found:  # the answers' length: a longer context is a fix too
            cause = "the answers' length causes these failures; a judge with a longer context would judge them"
        lines.append(
            f"WARNING: model {row.model}'s answers make judge {row.judge} fail: {row.failures} of {row.calls} "
            f"judgments lost ({row.share:.0%}) against {row.other_failures} of {row.other_calls} "
            f"({row.other_share:.0%}) on the other models' answers under panel {row.panel} "
            f"(Fisher exact, Holm p={row.p_holm:.2g}; {kinds}). A lost judgment counts for nothing, so it can "
            f"raise the reward ({reward:.3f}); with those judgments at the scale's minimum it is {bounded:.3f} "
            f"({BOUNDED}). Read {row.model}'s answers (instances.csv, report.html): {cause}"
        )
    return lines


def flagged_pairs(shares: pd.DataFrame) -> set[tuple[str, str, str]]:
    """(panel, judge, model) of every warning, for the panel's failure line to leave to the warning."""
    if shares.empty:
        return set()
    rows = shares[shares["flagged"].astype(bool)]
    return {(str(p), str(j), str(m)) for p, j, m in zip(rows["panel"], rows["judge"], rows["model"], strict=True)}
