"""Self-preference: does a judge favour answers written by a model of its own family?

A jury of several vendors (MedHELM's GPT-4o, Claude 3.7 Sonnet, Llama 3.3 70B) spreads a judge's leaning
toward its own vendor over the panel; it does not measure it. Here every judge's lean is read at once from one
fixed-effects fit per panel (self_preference_fit.py: reward ~ answer + judge + judge x own family), so one
judge's lean never shows up in another's figure, with an interval that resamples models within their families
(a judge that merely likes one model is not a family bias). Where the suite cannot tell (the panel's leanings are
not separable, or a family has one model), the row says so in words and no judge is warned.

Families are what the run stored (families.py): the judge's in run_spec.json, the model's in each note's
record. Controls, empty answers (no judge read them) and answers of a model of unknown family are left out;
a panel of one judge has no "others".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from helm_mtsamples_ext.common.families import family_key
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.evidence import too_few
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from helm_mtsamples_ext.stats.self_preference_fit import Answers, fit
from helm_mtsamples_ext.stats.ties import rounded_for_ranks

COLUMNS = ["panel", "judge", "family", "n_own", "n_other", "n_own_models", "n_other_models"]
COLUMNS += ["self_preference", "ci_low", "ci_high", "reading"]
ANSWER = ["panel", "model", "note"]
"""One answer: a model's answer to a note, judged by one panel."""

FAVOURS = "favours its own family"
NOT_SEPARABLE = (
    "cannot tell: its lean cannot be told apart from the other judges' with these models (two judges see only the "
    "sum of their leanings): add a model of a family no judge of the panel belongs to"
)


def valid_answers(instances: pd.DataFrame) -> pd.DataFrame:
    """(answer, judge) rows with a valid reward, of a model of known family that is not a control, on answers
    at least two judges scored (one judge alone says nothing about how judges differ)."""
    valid = instances[
        (instances["status"] == "ok") & instances["judge_reward"].notna() & (instances["model"].map(control_kind) == "")
    ]
    valid = valid[valid["model_family"].map(family_key) != ""]
    count = valid.groupby(ANSWER, sort=False)["judge_reward"].transform("count")
    return valid[count >= 2]


def _reading(lean: float, low: float, high: float, family: str, own: tuple[int, int], other: tuple[int, int]) -> str:
    """The row in words: why there is no verdict, or the verdict its interval gives."""
    (own_answers, own_models), (other_answers, other_models) = own, other
    if not family:
        return "cannot tell: its family is unknown"
    if own_models == 0:
        return "cannot tell: no model of its family under test"
    if other_models == 0:
        return "cannot tell: no model of another family under test"
    if lean != lean:
        return NOT_SEPARABLE
    if own_models < 2 or other_models < 2:
        return (
            "cannot tell: one model on a side (its family's, or the others'), so a taste for that model and a lean "
            "toward its family are the same number: test two or more models of each family"
        )
    short = too_few(own_answers, "answers") or too_few(other_answers, "answers")
    if short:
        return short
    if low != low:
        return "cannot tell: every model shows the same lean, no spread to give an interval"
    if rounded_for_ranks(low) > 0:
        return FAVOURS
    if rounded_for_ranks(high) < 0:
        return "harsher on its own family than the other judges are"
    return "no lean shown: the interval holds 0"


def _panel_rows(panel: str, judges: pd.DataFrame, answers: pd.DataFrame, settings: BootstrapSettings) -> list[list]:
    names = judges["judge"].tolist()
    families = [family_key(f) for f in judges["judge_family"]]
    codes = {name: i for i, name in enumerate(names)}
    rows_of = answers[answers["judge"].isin(codes)]
    model_codes, models = pd.factorize(rows_of["model"])
    answer_codes = rows_of.groupby(["model", "note"], sort=False).ngroup().to_numpy()
    model_family = rows_of.groupby(model_codes)["model_family"].first().map(family_key)
    family_codes, _ = pd.factorize(model_family.sort_index())
    judge_codes = rows_of["judge"].map(codes).to_numpy()
    row_family = rows_of["model_family"].map(family_key).to_numpy()
    own = np.array(
        [families[j] != "" and families[j] == f for j, f in zip(judge_codes, row_family, strict=True)], dtype=bool
    )
    leans = None
    if len(rows_of):
        data = Answers(answer_codes, model_codes, judge_codes, own, rows_of["judge_reward"].to_numpy(float),
                       family_codes, len(names))  # fmt: skip
        leans = fit(data, settings.n_resamples, settings.seed, settings.confidence)
    rows = []
    for j, (name, family) in enumerate(zip(names, judges["judge_family"], strict=True)):
        mine = rows_of[judge_codes == j]
        is_own = own[judge_codes == j]
        own_side = (int(is_own.sum()), mine[is_own]["model"].nunique())
        other_side = (int((~is_own).sum()), mine[~is_own]["model"].nunique())
        lean, low, high = (np.nan, np.nan, np.nan) if leans is None else (leans.lean[j], leans.low[j], leans.high[j])
        family_text = family if isinstance(family, str) else ""
        reading = _reading(lean, low, high, families[j], own_side, other_side)
        if reading.startswith("cannot tell") or reading.startswith("too few"):
            low, high = np.nan, np.nan
        if own_side[1] == 0 or other_side[1] == 0:
            lean = np.nan
        rows.append([panel, name, family_text, own_side[0], other_side[0], own_side[1], other_side[1], lean, low,
                     high, reading])  # fmt: skip
    return rows


def self_preference(instances: pd.DataFrame, settings: BootstrapSettings) -> pd.DataFrame:
    """judge_self_preference.csv: one row per judge of each panel of two or more judges. ``n_own`` and ``n_other``
    count the answers in each group, ``n_own_models`` and ``n_other_models`` their models; ``reading`` says in
    words what the row shows, or why it cannot tell."""
    needed = {"judge_family", "model_family"}
    if instances.empty or not needed <= set(instances.columns):
        return pd.DataFrame(columns=COLUMNS)
    judges = instances.groupby(["panel", "judge"], sort=False, as_index=False)["judge_family"].first()
    answers = valid_answers(instances)
    rows = []
    for panel, members in judges.groupby("panel", sort=False):
        if len(members) >= 2:
            rows += _panel_rows(str(panel), members, answers[answers["panel"] == panel], settings)
    return pd.DataFrame(rows, columns=COLUMNS)


def warning_lines(table: pd.DataFrame) -> list[str]:
    """A WARNING per judge whose interval lies above 0: it scores its own family's answers higher than the panel's
    other judges do, beyond what a taste for single models explains. Nothing when the row cannot tell."""
    flagged = table[table["reading"] == FAVOURS] if "reading" in table else table.iloc[0:0]
    return [
        f"WARNING: judge {row.judge} (family {row.family}) favours its own family's answers in panel {row.panel}: "
        f"self-preference {row.self_preference:+.3f} reward (95% CI {row.ci_low:+.3f} to {row.ci_high:+.3f}; "
        f"{row.n_own} answers of {row.n_own_models} models of its family, {row.n_other} others of "
        f"{row.n_other_models} models)"
        for row in flagged.itertuples(index=False)
    ]


def self_preference_markdown(table: pd.DataFrame) -> list[str]:
    """report.md's "Self-preference" lines: one per judge, its figure and what it shows, or why it cannot tell."""
    if table.empty:
        return []
    lines = ["## Self-preference", ""]
    lines.append(
        "Each judge's lean toward its own family's answers beyond the panel's other judges (fixed effects: answer, "
        "judge, judge x own family), 95% interval over models resampled within their families "
        "(`judge_self_preference.csv`, docs/report.md#self-preference)."
    )
    lines.append("")
    for row in table.itertuples(index=False):
        figure = "" if row.self_preference != row.self_preference else f" {row.self_preference:+.3f}"
        interval = "" if row.ci_low != row.ci_low else f" [{row.ci_low:+.3f}, {row.ci_high:+.3f}]"
        family = row.family or "unknown family"
        lines.append(f"- `{row.judge}` ({family}, panel `{row.panel}`):{figure}{interval} {row.reading}.")
    return lines
