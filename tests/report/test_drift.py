"""report/drift.py: the recheck's sample and its comparison of each judge's verdicts then and now."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.drift import Drift, Recheck, Said, compared, draw_sample, drift, drift_line
from helm_mtsamples_ext.stats.intervals import BootstrapSettings
from tests.report.simulated import noisy_rechecks

SETTINGS = BootstrapSettings(n_resamples=500, seed=0)


def entry(*scores: Any, status: str = "ok", model: str | None = None, fingerprint: str | None = None) -> dict:
    """A judge entry as scenario_state.json holds it."""
    found: dict[str, Any] = {dim: {"score": s, "explanation": ""} for dim, s in zip(DIMENSIONS, scores, strict=True)}
    found["status"] = status
    if model:
        found["reported_model"] = model
    if fingerprint:
        found["system_fingerprint"] = fingerprint
    return found


def test_the_sample_is_the_same_for_the_same_answers_and_seed_in_any_order() -> None:
    keys = [("run", f"id{i}") for i in range(20)]
    first = draw_sample(keys, 5, seed=3)
    assert first == draw_sample(list(reversed(keys)), 5, seed=3)
    assert len(set(first)) == 5 and set(first) <= set(keys)


def test_another_seed_draws_another_sample() -> None:
    keys = [f"id{i}" for i in range(50)]
    assert draw_sample(keys, 5, seed=0) != draw_sample(keys, 5, seed=1)


def test_a_sample_larger_than_the_answers_is_refused() -> None:
    with pytest.raises(ValueError, match="sample of 4 from 3"):
        draw_sample(["a", "b", "c"], 4, seed=0)


@pytest.mark.parametrize(
    ("stored", "said"),
    [
        (entry(4, 3, 5, model="judge-v1"), Said((4, 3, 5), "judge-v1")),
        (entry(4, None, 5), Said((4, None, 5))),  # an invalid dimension stays None
        (entry(None, None, None, status="failed"), Said(None)),
        (entry(4, 4, 4, status="failed"), Said(None)),  # a failed judge's scores never count
        (entry(None, None, None), Said(None)),  # no valid dimension: no verdict
        (entry(4.0, "3", 5), Said((4, 3, 5))),  # read by the rubric's rule, as the metric reads it
        (entry(9, 3, 5), Said((None, 3, 5))),
        ("not a mapping", Said(None)),
        (None, Said(None)),
    ],
)
def test_a_stored_entry_reads_as_what_the_judge_said(stored: Any, said: Said) -> None:
    assert Said.of(stored) == said


def test_an_old_record_without_a_reported_model_reads_blank() -> None:
    stored = entry(4, 4, 4)
    assert Said.of(stored).reported_model is None and Said.of(stored).system_fingerprint is None


def recheck(then: tuple | None, now: tuple | None, judge: str = "j", before: str | None = None) -> Recheck:
    return Recheck("p", judge, Said(then, before), Said(now, "judge-v2"))


def test_same_verdict_rate_is_the_share_of_answers_with_all_three_scores_unchanged() -> None:
    (row,) = drift([recheck((4, 4, 4), (4, 4, 4)), recheck((4, 4, 4), (4, 4, 5)), recheck((3, 2, 1), (3, 2, 1))])
    assert row.n == 3 and row.same_verdict_rate == pytest.approx(2 / 3)


def test_mean_abs_diff_is_over_every_dimension_of_every_answer() -> None:
    (row,) = drift([recheck((4, 4, 4), (4, 4, 4)), recheck((5, 3, 4), (3, 4, 4))])
    assert row.mean_abs_diff == pytest.approx((0 + 0 + 0 + 2 + 1 + 0) / 6)


def test_a_dimension_invalid_then_or_now_is_left_out_of_the_difference_but_changes_the_verdict() -> None:
    (row,) = drift([recheck((4, None, 4), (4, 3, 4))])
    assert row.mean_abs_diff == 0 and row.same_verdict_rate == 0


def test_a_judge_failing_now_is_counted_apart_not_as_a_changed_verdict() -> None:
    (row,) = drift([recheck((4, 4, 4), (4, 4, 4)), recheck((4, 4, 4), None), recheck(None, (2, 2, 2))])
    assert (row.n, row.n_asked, row.failed_now, row.same_verdict_rate) == (1, 3, 1, 1.0)


def test_no_answer_judged_both_times_leaves_the_figures_blank() -> None:
    (row,) = drift([recheck((4, 4, 4), None)])
    assert row.n == 0 and row.same_verdict_rate is None and row.mean_abs_diff is None
    assert "no answer of the 1 asked" in drift_line(row)


def test_reported_models_are_listed_then_and_now_blank_for_old_records() -> None:
    rows = drift([recheck((4, 4, 4), (4, 4, 4), "a", before="judge-v1"), recheck((4, 4, 4), (4, 4, 4), "b")])
    by_judge = {r.judge: r for r in rows}
    assert (by_judge["a"].reported_model_before, by_judge["a"].reported_model_now) == ("judge-v1", "judge-v2")
    assert by_judge["b"].reported_model_before == ""


def test_one_row_per_panel_and_judge_in_order_of_appearance() -> None:
    rows = drift([Recheck("p1", "b", Said(None), Said(None)), Recheck("p2", "a", Said(None), Said(None))])
    assert [(r.panel, r.judge) for r in rows] == [("p1", "b"), ("p2", "a")]


def test_compared_pairs_each_judge_of_each_answer_then_and_now() -> None:
    before = [{"a": entry(4, 4, 4), "b": entry(2, 2, 2)}]
    now = [{"a": entry(5, 4, 4, model="v2"), "b": entry(None, None, None, status="failed")}]
    pairs = compared("a+b", ["a", "b"], before, now)
    assert pairs == [
        Recheck("a+b", "a", Said((4, 4, 4)), Said((5, 4, 4), "v2")),
        Recheck("a+b", "b", Said((2, 2, 2)), Said(None)),
    ]


def test_the_terminal_line_names_the_judge_the_rate_and_a_changed_model() -> None:
    row = Drift("a+b", "a", 4, 0.75, 0.25, "judge-v1", "judge-v2", "", "", 4, 0)
    line = drift_line(row)
    assert line.startswith("a+b / a:") and "3/4 answers (75%)" in line and "0.25" in line
    assert "judge-v1 then, judge-v2 now" in line


def test_a_noisy_judge_that_did_not_change_is_not_called_kinder_or_harsher() -> None:
    """Its same-verdict rate then and now is far from 100% (noise alone), which read alone looks like drift; its
    signed change's 95% interval says "changed" near the nominal 5% of draws (at most 7% of 400), and its replay
    noise is measured."""
    rng = np.random.default_rng(0)
    rows = [drift(noisy_rechecks(rng, 20), SETTINGS)[0] for _ in range(400)]
    assert np.mean([r.same_verdict_rate for r in rows]) < 0.5
    assert np.mean([r.reading in ("kinder now", "harsher now") for r in rows]) <= 0.07
    assert all(r.n_repeated == 20 and r.repeat_mean_abs_diff and r.repeat_mean_abs_diff > 0.2 for r in rows)


def test_a_judge_a_point_harsher_on_accuracy_is_caught_signed() -> None:
    rng = np.random.default_rng(1)
    rows = [drift(noisy_rechecks(rng, 20, shift=-1), SETTINGS)[0] for _ in range(100)]
    assert np.mean([r.reading == "harsher now" for r in rows]) >= 0.9
    assert all(r.reward_change is not None and r.reward_change < 0 for r in rows)
    assert np.mean([r.excess_abs_diff is not None and r.excess_abs_diff > 0 for r in rows]) >= 0.9


def test_the_same_change_on_every_answer_or_none_is_said_without_an_interval() -> None:
    same = [recheck((4, 4, 4), (2, 4, 5)) for _ in range(5)]
    (row,) = drift(same, SETTINGS)
    assert row.reward_change == pytest.approx(-1 / 15) and row.change_ci_low is None
    assert row.reading == "harsher now on every answer" and row.n_repeated == 0
    (steady,) = drift([recheck((4, 4, 4), (4, 4, 4)) for _ in range(5)], SETTINGS)
    assert steady.reading == "no change" and "reward +0.000: no change" in drift_line(steady)


def test_too_few_answers_give_the_change_but_no_verdict() -> None:
    (row,) = drift([recheck((4, 4, 4), (2, 4, 5)), recheck((4, 4, 4), (4, 4, 4))], SETTINGS)
    assert row.reading == "too few answers (2) to tell" and row.change_ci_low is None


def test_compared_with_a_second_ask_keeps_it_per_judge() -> None:
    before = [{"a": entry(4, 4, 4)}]
    pairs = compared("a", ["a"], before, [{"a": entry(5, 4, 4)}], [{"a": entry(4, 4, 3)}])
    assert pairs == [Recheck("a", "a", Said((4, 4, 4)), Said((5, 4, 4)), Said((4, 4, 3)))]
