"""The report's tables from a suite's rows, and the audit's one-line verdicts.

One place builds every table (leaderboard, pairwise, specialties, the judge audit, and with clinicians'
ratings the agreement tables), so `helm-mtsamples-report` and the schema's audit lines read the same
numbers, and each figure is computed once here (rendering formats what these tables hold). Pure: a table in,
tables out; writing them is outputs.py's.
"""

from __future__ import annotations

import pandas as pd

from helm_mtsamples_ext.report.answer_failures import failure_kinds, failure_shares, flagged_pairs, with_failure_shares
from helm_mtsamples_ext.report.answer_failures import warning_lines as failure_warnings
from helm_mtsamples_ext.report.audit import judge_audit
from helm_mtsamples_ext.report.audit_warnings import (
    above_ceiling,
    panels_with_controls,
    verdict_lines,
    with_panel_auroc,
)
from helm_mtsamples_ext.report.cost import Prices, with_judge_cost
from helm_mtsamples_ext.report.judge_versions import judge_versions, version_warnings
from helm_mtsamples_ext.report.rules_versions import rules_warnings
from helm_mtsamples_ext.scoring.failure_reasons import LARGER_JUDGE_MODEL, advice, panel_lines
from helm_mtsamples_ext.stats.clinician_scale import clinician_tables, transport_warnings
from helm_mtsamples_ext.stats.flagged_references import flagged_tables
from helm_mtsamples_ext.stats.human_agreement import human_tables
from helm_mtsamples_ext.stats.intervals import BootstrapSettings, by_specialty, leaderboard, note_table
from helm_mtsamples_ext.stats.judge_dropout import judge_dropout
from helm_mtsamples_ext.stats.pairwise import pairwise
from helm_mtsamples_ext.stats.panel_alpha import panel_alpha_table, with_panel_alpha
from helm_mtsamples_ext.stats.ranks import with_ranks
from helm_mtsamples_ext.stats.self_preference import self_preference, warning_lines


def build_tables(
    instances: pd.DataFrame,
    settings: BootstrapSettings,
    ratings: pd.DataFrame | None = None,
    prices: Prices | None = None,
) -> dict[str, pd.DataFrame]:
    """The report's tables; with clinicians' ratings (matched to the suite), the agreement and human columns too;
    with prices, what judging cost."""
    notes = note_table(instances)
    ranked = with_ranks(leaderboard(instances, notes, settings), notes, settings)
    alphas = panel_alpha_table(instances)
    board = with_judge_cost(with_panel_alpha(ranked, alphas), instances, prices)
    shares = failure_shares(instances)
    board = with_failure_shares(board, instances, shares)
    audit = judge_audit(instances, settings)
    tables = {
        "instances": instances,
        "leaderboard": with_panel_auroc(board, audit, instances),
        "pairwise": pairwise(notes, board, settings),
        "by_specialty": by_specialty(notes, board),
        "judge_audit": audit,
        "judge_failure_shares": shares,
        "above_ceiling": above_ceiling(board, instances),
        "judge_self_preference": self_preference(instances, settings),
        "panel_alpha": alphas,
        "judge_versions": judge_versions(instances),
        "judge_dropout": judge_dropout(instances, settings),  # empty without a panel of 3+ judges
    }
    tables |= flagged_tables(notes, instances, ratings, settings, board)  # only with ratings that flag a reference
    if ratings is None:
        return tables
    human = human_tables(instances, board, ratings, settings)
    clinician = clinician_tables(instances, human["leaderboard"], tables["pairwise"], ratings, settings)
    return {**tables, **human, **clinician}


def blames_size(kind: object) -> bool:
    """A failure kind whose advice is a larger judge (failure_reasons.py)."""
    return LARGER_JUDGE_MODEL in (advice(str(kind or "failed")) or "")


def audit_lines(tables: dict[str, pd.DataFrame]) -> list[str]:
    """Each panel's audit verdict, each model above its ceiling, each model whose answers make a judge fail, each
    judge favouring its own family or whose verdicts came from more than one model version, a suite scored under
    more than one rules version, and each panel's other failed calls with why, one line each (stdout, report.md's
    top and the leaderboard schema's notes)."""
    board = tables["leaderboard"]
    panels = list(dict.fromkeys(board["panel"]))
    lines = verdict_lines(tables["judge_audit"], tables["above_ceiling"], panels, panels_with_controls(board))
    instances = tables["instances"]
    shares = tables.get("judge_failure_shares")
    if shares is not None:
        lines += failure_warnings(shares, board, instances)
        # Failures charged to a model's answers leave the panel's line when its advice blames the judge's size:
        # the warning points at the answers. Other advice (a timeout, a context) still helps, so those stay.
        charged = flagged_pairs(shares)
        kinds = failure_kinds(instances)
        keys = zip(instances["panel"], instances["judge"], instances["model"], kinds, strict=True)
        instances = instances[[(str(p), str(j), str(m)) not in charged or not blames_size(k) for p, j, m, k in keys]]
    calls = zip(instances["panel"], instances["status"], failure_kinds(instances), strict=True)
    preference = tables.get("judge_self_preference")
    lines += warning_lines(preference) if preference is not None else []
    versions = version_warnings(tables["judge_versions"]) + rules_warnings(tables["instances"])
    return lines + transport_warnings(board) + versions + panel_lines(calls)
