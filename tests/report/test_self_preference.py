"""Self-preference (self_preference.py): a judge's reward minus its panel's others' on the same answer, own family
against the rest. Expected numbers are worked out by hand here, never with the module's code.

The small panel: judges `gpt` (OpenAI), `claude` (Anthropic), `llama` (Meta); models `openai/m` and `meta/m`.

  answer        gpt   claude  llama    d(gpt) = gpt - mean(claude, llama)
  openai/m n1   .8    .6      .6       .2
  openai/m n2   .6    .6      .4       .1
  meta/m   n1   .6    .6      .6       0
  meta/m   n2   .4    .6      .4       -.1

gpt: own (OpenAI) mean d = .15, other mean d = -.05 -> self-preference .2.
llama: d = .6-.7 = -.1, .4-.6 = -.2 on openai/m; 0, .4-.5 = -.1 on meta/m: own mean -.05, other -.15 -> .1.
claude: no Anthropic model under test: n_own 0, blank figures.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.report.self_preference import COLUMNS, deviations, self_preference, warning_lines
from helm_mtsamples_ext.report.stats import BootstrapSettings

SETTINGS = BootstrapSettings(n_resamples=500, seed=0)
FAMILIES = {"gpt": "OpenAI", "claude": "Anthropic", "llama": "Meta"}
MODEL_FAMILIES = {"openai/m": "OpenAI", "meta/m": "Meta", "mtsamples-control/reference": "mtsamples-control"}
PANEL = "gpt+claude+llama"


def rows(rewards: dict[tuple[str, str], tuple[float | None, ...]], judges: tuple[str, ...] = ("gpt", "claude", "llama"),
         families: dict[str, str | None] | None = None) -> pd.DataFrame:  # fmt: skip
    """The report's per-judge table for ``{(model, note): (reward per judge, None = failed)}``."""
    families = FAMILIES if families is None else families
    table: list[dict[str, Any]] = []
    for (model, note), values in rewards.items():
        for judge, reward in zip(judges, values, strict=True):
            table.append(
                {
                    "panel": "+".join(judges), "model": model, "note": note, "judge": judge,
                    "judge_reward": math.nan if reward is None else reward,
                    "status": "failed" if reward is None else "ok",
                    "judge_family": families.get(judge), "model_family": MODEL_FAMILIES.get(model),
                }
            )  # fmt: skip
    return pd.DataFrame(table)


SMALL = {
    ("openai/m", "n1"): (0.8, 0.6, 0.6),
    ("openai/m", "n2"): (0.6, 0.6, 0.4),
    ("meta/m", "n1"): (0.6, 0.6, 0.6),
    ("meta/m", "n2"): (0.4, 0.6, 0.4),
}


def by_judge(table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    return {row["judge"]: row for row in table.to_dict("records")}


def test_self_preference_is_own_family_deviation_minus_the_others() -> None:
    found = by_judge(self_preference(rows(SMALL), SETTINGS))
    assert list(self_preference(rows(SMALL), SETTINGS).columns) == COLUMNS
    assert found["gpt"]["self_preference"] == pytest.approx(0.2)
    assert found["llama"]["self_preference"] == pytest.approx(0.1)
    assert (found["gpt"]["n_own"], found["gpt"]["n_other"], found["gpt"]["family"]) == (2, 2, "OpenAI")


def test_a_judge_with_no_model_of_its_family_under_test_has_n_own_0_and_blank_figures() -> None:
    claude = by_judge(self_preference(rows(SMALL), SETTINGS))["claude"]
    assert (claude["family"], claude["n_own"], claude["n_other"]) == ("Anthropic", 0, 4)
    assert all(math.isnan(claude[c]) for c in ("self_preference", "ci_low", "ci_high"))


def test_too_few_answers_in_a_group_give_a_figure_but_no_interval_and_no_warning() -> None:
    table = self_preference(rows(SMALL), SETTINGS)
    gpt = by_judge(table)["gpt"]
    assert math.isnan(gpt["ci_low"]) and math.isnan(gpt["ci_high"])
    assert warning_lines(table) == []


def biased(n: int = 8) -> dict[tuple[str, str], tuple[float, ...]]:
    """n notes per model; claude and llama disagree by ±.4 in turn (their sum is constant), gpt varies by .2 with
    the note and adds .2 (+1 on each dimension) to OpenAI's answers."""
    found = {}
    for model in ("openai/m", "meta/m"):
        for k in range(n):
            spread = 0.4 if k % 2 else -0.4
            gpt = (0.6 if k % 4 < 2 else 0.8) + (0.2 if model == "openai/m" else 0.0)
            found[(model, f"n{k}")] = (round(gpt, 9), 0.6 + spread, 0.6 - spread)
    return found


def test_a_judge_adding_a_point_to_its_own_familys_answers_is_flagged_and_the_others_are_not() -> None:
    """gpt's d is .2 higher on OpenAI's answers, exactly: its interval lies above 0. claude and llama disagree with
    each other far more than gpt leans, so their intervals hold 0; claude has no model of its family at all."""
    table = self_preference(rows(biased()), SETTINGS)
    found = by_judge(table)
    assert found["gpt"]["self_preference"] == pytest.approx(0.2)
    assert 0 < found["gpt"]["ci_low"] < 0.2 < found["gpt"]["ci_high"]
    assert found["llama"]["ci_low"] < 0 < found["llama"]["ci_high"]
    (line,) = warning_lines(table)
    assert line.startswith("WARNING: judge gpt (family OpenAI) favours its own family's answers in panel " + PANEL)
    assert "+0.200 reward" in line and "8 answers of its family, 8 others" in line


def test_controls_are_left_out() -> None:
    """The clinician's own plan (a control) changes nothing, whatever its record says of its family."""
    with_control = {**SMALL, ("mtsamples-control/reference", "n1"): (1.0, 0.2, 0.2)}
    assert self_preference(rows(with_control), SETTINGS).equals(self_preference(rows(SMALL), SETTINGS))


def test_a_failed_judge_is_out_of_the_baseline_and_an_answer_with_one_valid_judge_gives_no_d() -> None:
    """claude failed on openai/m n1: gpt's d there is .8 - .6 (llama alone); on meta/m n1 only gpt scored."""
    table = rows({("openai/m", "n1"): (0.8, None, 0.6), ("meta/m", "n1"): (0.6, None, None)})
    found = deviations(table)
    assert found.loc[found["judge"] == "gpt", "d"].tolist() == pytest.approx([0.2])
    assert set(found["judge"]) == {"gpt", "llama"}


def test_judges_that_agree_have_exactly_zero_deviation_and_no_interval() -> None:
    """Rewards reached in different float orders still give d = 0 (ties.settled); a bootstrap of zeros has no
    interval."""
    agree = {(model, f"n{k}"): (0.1 + 0.2, 0.3, 0.3) for model in ("openai/m", "meta/m") for k in range(6)}
    table = self_preference(rows(agree), SETTINGS)
    assert set(deviations(rows(agree))["d"]) == {0.0}
    assert table["self_preference"].tolist()[::2] == [0.0, 0.0] and table["ci_low"].isna().all()  # claude: no own


def test_families_compare_without_case_and_an_unknown_family_gives_blank_figures() -> None:
    """An endpoint judge without judge_family has no family: listed, blank; the other judges are still compared
    with it in their baseline."""
    table = by_judge(
        self_preference(rows(SMALL, families={"gpt": "openai", "claude": None, "llama": "META"}), SETTINGS)
    )
    assert table["gpt"]["self_preference"] == pytest.approx(0.2)
    assert (table["claude"]["family"], table["claude"]["n_own"], table["claude"]["n_other"]) == ("", 0, 0)
    assert math.isnan(table["claude"]["self_preference"])


def test_an_answer_of_a_model_of_unknown_family_is_in_neither_group() -> None:
    unknown = {**SMALL, ("local/m", "n1"): (1.0, 0.2, 0.2)}
    gpt = by_judge(self_preference(rows(unknown), SETTINGS))["gpt"]
    assert (gpt["n_own"], gpt["n_other"]) == (2, 2) and gpt["self_preference"] == pytest.approx(0.2)


def test_a_panel_of_one_judge_has_no_row() -> None:
    alone = rows({("openai/m", "n1"): (0.8,)}, judges=("gpt",))
    assert self_preference(alone, SETTINGS).empty


def test_a_suite_read_without_families_gives_an_empty_table_with_the_columns() -> None:
    table = self_preference(rows(SMALL).drop(columns=["judge_family", "model_family"]), SETTINGS)
    assert table.empty and list(table.columns) == COLUMNS
