"""`--plan-ratings` and `--rating-sample plan`: the rating plan (stats/rating_plan.py) from a suite, as
rating_plan.csv, as lines on the terminal, and as the per-run quotas the plan's rating sample draws.

The plan is per (panel, model); a rating belongs to a run (one model under one panel), so a model's quota goes to
its run (split over its runs by their unrated answers when one panel holds it under several extraction modes).
"""

from __future__ import annotations

import math

import pandas as pd

from helm_mtsamples_ext.report.rating_sample import answers_table
from helm_mtsamples_ext.stats.rating_plan import plan_answers, rating_plan

PLAN_TABLE = "rating_plan"
"""The plan's table name among the report's tables (outputs.py writes it as rating_plan.csv)."""


def suite_plan(instances: pd.DataFrame, ratings: pd.DataFrame | None, target: float) -> pd.DataFrame:
    """rating_plan.csv's table for the suite, given its matched ratings (None: no ratings yet)."""
    return rating_plan(plan_answers(instances, ratings), target)


def rated_answers(ratings: pd.DataFrame | None) -> frozenset[tuple[str, str]]:
    """(run, note_id) of every rated answer: the plan's draw leaves them out."""
    if ratings is None:
        return frozenset()
    return frozenset(zip(ratings["run"].astype(str), ratings["instance_id"].astype(str), strict=True))


def plan_quotas(
    plan: pd.DataFrame, instances: pd.DataFrame, rated: frozenset[tuple[str, str]]
) -> tuple[tuple[str, int], ...]:
    """(run, answers to draw) for `--rating-sample plan`: each (panel, model)'s quota on its runs' unrated answers."""
    answers = answers_table(instances).merge(instances[["run", "panel"]].drop_duplicates("run"), on="run", how="left")
    answers = answers[[(run, note) not in rated for run, note in zip(answers["run"], answers["note_id"], strict=True)]]
    quotas: list[tuple[str, int]] = []
    for row in plan.itertuples(index=False):
        runs = answers[(answers["panel"] == row.panel) & (answers["model"] == row.model)].groupby("run").size()
        left = int(row.quota)
        for k, (run, size) in enumerate(runs.items()):
            share = left if k == len(runs) - 1 else min(int(round(row.quota * size / runs.sum())), left)
            quotas.append((str(run), int(share)))
            left -= share
    return tuple(quotas)


def _count(value: float) -> str:
    return "-" if math.isnan(value) else f"{int(value)}"


def plan_lines(plan: pd.DataFrame) -> list[str]:
    """What the terminal is told: per model, the ratings for the target and for the leading pair."""
    if plan.empty:
        return ["Rating plan: no judged answer of a model under test to plan ratings for."]
    target = float(plan["target_halfwidth"].iloc[0])
    lines = [f"Rating plan (rating_plan.csv): further rated answers for a clinician-scale interval of +-{target:g}, "
             "and to decide each panel's leading pair (95% interval of their difference excluding 0)"]  # fmt: skip
    for panel, rows in plan.groupby("panel", sort=False):
        lines.append(f"Judge panel: {panel}")
        for row in rows.itertuples(index=False):
            now = "no interval yet" if math.isnan(row.halfwidth_now) else f"+-{row.halfwidth_now:.3f} now"
            target_part = (
                f"{_count(row.more_for_target)} more for +-{target:g}"
                if not math.isnan(row.more_for_target)
                else f"+-{target:g} out of reach even with all {row.n_judged} rated"
            )
            line = f"  {row.model}: {row.n_rated} of {row.n_judged} rated, {now}; {target_part}"
            if row.pair_with:
                if math.isnan(row.more_for_pair):
                    pair = f"not separable from {row.pair_with} by ratings alone"
                elif row.more_for_pair == 0:
                    pair = f"already separated from {row.pair_with}"
                else:
                    pair = f"{_count(row.more_for_pair)} more each to separate it from {row.pair_with}"
                line += f"; {pair} ({abs(row.difference):.3f} apart)"
            lines.append(f"{line}; rho {row.rho:.2f} from {row.rho_from}; --rating-sample plan draws {row.quota}")
    return lines
