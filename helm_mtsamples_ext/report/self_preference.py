"""Self-preference: does a judge favour answers written by a model of its own family?

A jury of several vendors (MedHELM's GPT-4o, Claude 3.7 Sonnet, Llama 3.3 70B) spreads a judge's leaning
toward its own vendor over the panel; it does not measure it. Here each judge is compared with the rest of
its panel on the same answers: d = its reward minus the mean reward of the panel's other judges on that
answer, so how hard the note was and how good the answer was cancel out. A judge's self-preference is the
mean d over answers of models of its own family minus the mean d over the other families' answers, with a
percentile bootstrap that resamples answers within each group.

Families are what the run stored (families.py): the judge's in run_spec.json, the model's in each note's
record. Controls, empty answers (no judge read them) and answers of a model of unknown family are left out;
a panel of one judge has no "others". Pure pandas on the report's per-judge table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.families import family_key
from helm_mtsamples_ext.report.audit import control_kind
from helm_mtsamples_ext.report.evidence import mostly_tied, too_few
from helm_mtsamples_ext.report.stats import BootstrapSettings
from helm_mtsamples_ext.report.ties import settled

COLUMNS = ["panel", "judge", "family", "n_own", "n_other", "self_preference", "ci_low", "ci_high"]
ANSWER = ["panel", "model", "note"]
"""One answer: a model's answer to a note, judged by one panel."""


def deviations(instances: pd.DataFrame) -> pd.DataFrame:
    """One row per (answer, judge) with a valid reward and at least one other valid judge on the answer: ``d``,
    its reward minus the mean of the others' (settled, so agreeing judges give exactly 0), and ``own``, whether
    the answer's model is of the judge's family. Controls, empty answers and unknown families are left out."""
    valid = instances[
        (instances["status"] == "ok") & instances["judge_reward"].notna() & (instances["model"].map(control_kind) == "")
    ]
    grouped = valid.groupby(ANSWER, sort=False)["judge_reward"]
    total, count = grouped.transform("sum"), grouped.transform("count")
    # Every other valid judge is in the baseline, whatever its family; only the judge and the answer need one.
    known = (valid["model_family"].map(family_key) != "") & (valid["judge_family"].map(family_key) != "")
    rows = valid[(count >= 2) & known]
    others = (total[rows.index] - rows["judge_reward"]) / (count[rows.index] - 1)
    own = rows["model_family"].map(family_key) == rows["judge_family"].map(family_key)
    return pd.DataFrame(
        {"panel": rows["panel"], "judge": rows["judge"], "d": settled(rows["judge_reward"] - others), "own": own}
    )


def _difference_ci(own: np.ndarray, other: np.ndarray, settings: BootstrapSettings) -> tuple[float, float]:
    """The percentile interval of mean(own) - mean(other), each group resampled on its own; NaN below the
    evidence minimum or when most resamples tie (evidence.py)."""
    if too_few(len(own), "answers") or too_few(len(other), "answers"):
        return (np.nan, np.nan)
    result = stats.bootstrap(
        (own, other),
        lambda a, b, axis=-1: np.mean(a, axis=axis) - np.mean(b, axis=axis),
        paired=False,
        vectorized=True,
        n_resamples=settings.n_resamples,
        confidence_level=settings.confidence,
        method="percentile",
        rng=np.random.default_rng(settings.seed),
    )
    if mostly_tied(result.bootstrap_distribution, float(own.mean() - other.mean())):
        return (np.nan, np.nan)
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))


def self_preference(instances: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """judge_self_preference.csv: one row per judge of each panel of two or more judges. ``n_own`` and ``n_other``
    count the answers in each group; with none in either (no model of its family under test, or its family
    unknown) the figures are blank."""
    needed = {"judge_family", "model_family"}
    if instances.empty or not needed <= set(instances.columns):
        return pd.DataFrame(columns=COLUMNS)
    judges = instances.groupby(["panel", "judge"], sort=False, as_index=False)["judge_family"].first()
    sizes = judges.groupby("panel")["judge"].transform("count")
    found = deviations(instances)
    rows = []
    for panel, judge, family in judges.loc[sizes >= 2, ["panel", "judge", "judge_family"]].itertuples(index=False):
        mine = found[(found["panel"] == panel) & (found["judge"] == judge)]
        own, other = mine.loc[mine["own"], "d"].to_numpy(float), mine.loc[~mine["own"], "d"].to_numpy(float)
        point = float(own.mean() - other.mean()) if len(own) and len(other) else np.nan
        low, high = _difference_ci(own, other, settings) if point == point else (np.nan, np.nan)
        family_text = family if isinstance(family, str) else ""
        rows.append([panel, judge, family_text, len(own), len(other), point, low, high])
    return pd.DataFrame(rows, columns=COLUMNS)


def warning_lines(table: pd.DataFrame) -> list[str]:
    """A WARNING per judge whose interval lies above 0: it scores its own family's answers higher than the rest of
    its panel does, beyond what the others' answers show. Nothing when the interval holds 0 or there is none."""
    flagged = table[table["ci_low"].notna() & (table["ci_low"].map(lambda v: settled(float(v))) > 0)]
    return [
        f"WARNING: judge {row.judge} (family {row.family}) favours its own family's answers in panel {row.panel}: "
        f"self-preference {row.self_preference:+.3f} reward (95% CI {row.ci_low:+.3f} to {row.ci_high:+.3f}; "
        f"{row.n_own} answers of its family, {row.n_other} others)"
        for row in flagged.itertuples(index=False)
    ]
