"""Judge failures a model's answers cause are charged to those answers (answer_failures.py): the share per judge
and model, a warning naming both when the test holds, and the reward with those judgments at the scale's minimum.

Expected numbers are derived by hand in the comments; the test's error rates by seeded simulation with known
truth."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.report.answer_failures import (
    ALPHA,
    BOUNDED,
    SHARE_PREFIX,
    bounded_rewards,
    failure_shares,
    holm,
)
from helm_mtsamples_ext.report.tables import audit_lines, build_tables
from helm_mtsamples_ext.scoring.reward import FLOOR_REWARD, failed_at_min
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

PANEL = "a+b"
PLANT = "no verdict in reply: the verdict's text was copied from the answer"
TIMEOUT = "timed out: after 60 s"


def call(model: str, note: int, judge: str, reward: float | None, failure: str = "") -> dict[str, Any]:
    """One per-judge row as suite.py writes it (the columns the report's tables read)."""
    status = "failed" if failure else "ok"
    return {
        "panel": PANEL,
        "model": model,
        "note": f"n{note}.txt",
        "judge": judge,
        "status": status,
        "failure": failure,
        "judge_reward": None if failure else reward,
        "empty_answer": False,
    }


def suite(
    plan: Mapping[str, Sequence[tuple[float | None, float | None]]], failures: dict[str, str] | None = None
) -> pd.DataFrame:
    """Rows from {model: [(a's reward or None=failed, b's reward or None=failed) per note]}; note rewards and the
    columns the full tables need are filled as the scoring rule gives them."""
    rows = []
    for model, notes in plan.items():
        for k, pair in enumerate(notes):
            valid = [r for r in pair if r is not None]
            note_reward = sum(valid) / len(valid) if valid else None
            for judge, reward in zip(("a", "b"), pair, strict=True):
                why = (failures or {}).get(model, PLANT) if reward is None else ""
                rows.append({**call(model, k, judge, reward, why), "note_reward": note_reward})
    table = pd.DataFrame(rows)
    for dim in ("accuracy", "completeness", "clarity"):
        table[dim] = table["judge_reward"] * 5
    return table.assign(
        run=table["model"],
        specialty="Orthopedic",
        extracted_section="PLAN",
        extraction="helm",
        output_words=10,
        tokens_in=0.0,
        tokens_out=0.0,
        judge_model="fake/judge",
        reported_model=None,
        system_fingerprint=None,
        judge_family=None,
        model_family=None,
        note_id=table["note"],
        answer="an answer",
        note_text="PROCEDURE: something.",
        reference="PLAN",
        invalid="",
        **{f"{dim}_explanation": "" for dim in ("accuracy", "completeness", "clarity")},
    )


# The attack (issue's numbers): a bad model's answers carry the words judge b writes for a low verdict, so b's
# verdict on them is lost; judge a still gives them .2. The good model is judged by both.
GOOD = [(0.8, 0.8)] * 6
BAD_PLANTED = [(0.4, None)] * 6
BAD_PLAIN = [(0.4, 0.2)] * 6


def test_attack_a_planted_answer_is_warned_and_bounded_and_its_twin_is_not() -> None:
    """bad+plant: b fails on 6/6 of its answers, 0/12 of the others' (Fisher one-sided p = 1/C(18,6)
    = 1/18564, Holm x6 < .05): a WARNING naming the model and b, not a. Its reward is .4 (b's .2 lost), above its
    twin bad's (.4+.2)/2 = .3; with b's judgments at 1/5 it is (.4+.2)/2 = .3 too: bounded, the plant gains nothing."""
    instances = suite({"good": GOOD, "bad+plant": BAD_PLANTED, "bad": BAD_PLAIN})
    tables = build_tables(instances, BootstrapSettings(n_resamples=50))
    board = tables["leaderboard"].set_index("model")
    assert (board.loc["bad+plant", "reward"], board.loc["bad", "reward"]) == pytest.approx((0.4, 0.3))
    assert board.loc["bad+plant", BOUNDED] == pytest.approx(0.3) == board.loc["bad", BOUNDED]
    assert board.loc["good", BOUNDED] == pytest.approx(0.8)
    assert board.loc["bad+plant", f"{SHARE_PREFIX}b"] == 1.0 and board.loc["bad+plant", f"{SHARE_PREFIX}a"] == 0.0
    assert board.loc["good", f"{SHARE_PREFIX}b"] == 0.0
    columns = list(tables["leaderboard"].columns)
    assert columns[columns.index("reward") + 1] == BOUNDED, "beside the reward"

    lines = audit_lines(tables)
    warned = [line for line in lines if line.startswith("WARNING: model ")]
    assert len(warned) == 1, lines
    assert "model bad+plant's answers make judge b fail: 6 of 6" in warned[0]
    assert "0 of 12" in warned[0] and "0.400" in warned[0] and "0.300" in warned[0]
    assert "not the judge's size" in warned[0] and "no verdict in reply" in warned[0]
    assert not any("a judge this small" in line for line in lines), "the advice points at the answers"


@pytest.mark.parametrize(
    ("plan", "failures", "expected"),
    [
        # A server fault spread over every model: 2 of 6 calls of b fail for each; nobody's answers cause it.
        ({"good": [(0.8, None)] * 2 + GOOD[:4], "bad": [(0.4, None)] * 2 + BAD_PLAIN[:4]}, {}, set()),
        # Four notes: below the evidence minimum (5 calls a side), so no test and no warning, however stark.
        ({"good": GOOD[:4], "bad+plant": BAD_PLANTED[:4]}, {}, set()),
        # One model only: nobody to compare with.
        ({"bad+plant": BAD_PLANTED}, {}, set()),
        # The plant makes both judges fail: each is named (the note is unjudged; bounded at 1/5).
        ({"good": GOOD, "bad+plant": [(None, None)] * 6}, {}, {("a", "bad+plant"), ("b", "bad+plant")}),
        # Timeouts on one model's long answers are that model's too: the failure's kind does not matter.
        ({"good": GOOD, "long": BAD_PLANTED}, {"long": TIMEOUT}, {("b", "long")}),
    ],
    ids=["spread-fault", "too-few-notes", "one-model", "both-judges", "answer-made-timeouts"],
)
def test_attack_table_who_is_charged(
    plan: dict[str, list[tuple[float | None, float | None]]], failures: dict[str, str], expected: set[tuple[str, str]]
) -> None:
    shares = failure_shares(suite(plan, failures))
    flagged = shares[shares["flagged"]]
    assert set(zip(flagged["judge"], flagged["model"], strict=True)) == expected


def test_below_the_minimum_there_is_no_p_value() -> None:
    shares = failure_shares(suite({"good": GOOD[:4], "bad+plant": BAD_PLANTED[:4]}))
    assert shares["p_value"].isna().all() and not shares["flagged"].any()
    assert set(shares["share"]) == {0.0, 1.0}, "the share is still shown"


def test_a_model_no_judge_could_score_is_bounded_at_the_floor_and_an_empty_answer_at_zero() -> None:
    """Note 1 both failed -> 1/5; note 2 empty answer -> 0; note 3 a=.8, b failed -> (.8+.2)/2 = .5: mean .7/3."""
    rows = [
        call("m", 1, "a", None, PLANT),
        call("m", 1, "b", None, PLANT),
        {**call("m", 2, "a", 0.0), "status": "empty_answer", "empty_answer": True},
        {**call("m", 2, "b", 0.0), "status": "empty_answer", "empty_answer": True},
        call("m", 3, "a", 0.8),
        call("m", 3, "b", None, PLANT),
    ]
    bounded = bounded_rewards(pd.DataFrame(rows))
    assert bounded[BOUNDED].iloc[0] == pytest.approx((FLOOR_REWARD + 0 + 0.5) / 3)


def test_the_bound_is_never_above_the_reward_whatever_fails() -> None:
    """Seeded random suites: a failure counted at 1/5 can only pull a note's mean down (a valid reward is at least
    1/5), and a note no judge scored joins at 1/5, so the bounded reward is at most the reward."""
    rng = np.random.default_rng(7)
    for _ in range(40):
        plan = {
            f"m{k}": [
                tuple(None if rng.random() < 0.3 else float(rng.integers(1, 6)) / 5 for _ in range(2)) for _ in range(6)
            ]
            for k in range(3)
        }
        tables = build_tables(suite(plan), BootstrapSettings(n_resamples=20))  # type: ignore[arg-type]
        board = tables["leaderboard"].dropna(subset=["reward"])
        assert (board[BOUNDED] <= board["reward"] + 1e-12).all()


def _simulated(rng: np.random.Generator, rates: dict[str, float], notes: int) -> pd.DataFrame:
    rows = [
        call(model, k, judge, 0.6, TIMEOUT if rng.random() < rate else "")
        for model, rate in rates.items()
        for k in range(notes)
        for judge in ("a", "b")
    ]
    return pd.DataFrame(rows)


def test_false_alarms_stay_under_alpha_and_a_real_difference_is_found() -> None:
    """Known truth, seeded: four models failing 30% alike warn in at most ALPHA of 300 suites (Holm keeps the
    family-wise rate); one model failing 80% against 10% on 20 notes is named in nearly every suite."""
    rng = np.random.default_rng(0)
    alarms = sum(
        bool(failure_shares(_simulated(rng, dict.fromkeys("wxyz", 0.3), 20))["flagged"].any()) for _ in range(300)
    )
    assert alarms / 300 <= ALPHA
    found = 0
    for _ in range(100):
        shares = failure_shares(_simulated(rng, {"x": 0.8, "y": 0.1, "z": 0.1}, 20))
        found += set(shares.loc[shares["flagged"], "model"]) == {"x"}
    assert found >= 95


def test_holm_steps_down_and_keeps_nan() -> None:
    """p = (.01, .04, .03, NaN): sorted .01*3=.03, .03*2=.06, max(.06, .04*1)=.06."""
    adjusted = holm(pd.Series([0.01, 0.04, 0.03, math.nan]))
    assert list(adjusted[:3]) == pytest.approx([0.03, 0.06, 0.06]) and math.isnan(adjusted[3])


def test_answers_too_long_for_the_judges_context_are_charged_and_keep_the_panels_advice() -> None:
    """A padded model's answers overflow b's context on every note: charged to the answers (warned, bounded), and the
    panel's line still gives the context advice, since a judge with a longer context would judge them."""
    context = "prompt too long for the judge's context (2301 tokens)"
    tables = build_tables(suite({"good": GOOD, "long": BAD_PLANTED}, {"long": context}), BootstrapSettings(50))
    lines = audit_lines(tables)
    (warning,) = [line for line in lines if line.startswith("WARNING: model long's answers make judge b fail")]
    assert "a judge with a longer context would judge them" in warning
    (panel,) = [line for line in lines if line.startswith(f"Judge panel {PANEL}: 6 of 24 judge calls failed")]
    assert "6 prompt too long for the judge's context (give the judge a larger context" in panel


@given(
    st.lists(st.one_of(st.none(), st.floats(0.2, 1.0)), min_size=1, max_size=4),
    st.booleans(),
)
def test_the_doors_per_note_rule_is_the_reports_on_one_note(rewards: list[float | None], empty: bool) -> None:
    """``scoring.reward.failed_at_min``, which the Inspect and verifiers doors give per note, is ``bounded_rewards``
    on a table of that one note: one definition of ``reward_failed_at_min``."""
    rows = pd.DataFrame(
        [
            {
                "panel": "p",
                "model": "m",
                "note": "n",
                "judge": f"j{i}",
                "judge_reward": 0.0 if empty else (math.nan if r is None else r),
                "status": "empty_answer" if empty else "failed" if r is None else "ok",
                "empty_answer": empty,
            }
            for i, r in enumerate(rewards)
        ]
    )
    assert failed_at_min(rewards, empty) == pytest.approx(float(bounded_rewards(rows)[BOUNDED].iloc[0]))
