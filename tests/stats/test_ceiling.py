"""The clinicians' ceiling (ceiling.py) through the report, on tests/report/rated.py's hand-built suite.

Each rater against the mean of the others, averaged over raters: no rater is first, so names do not matter;
MedHELM's baseline is its statistic for the pair with the most answers in common (alice and bob, 6 answers).
A judge is held to the ceiling like for like: put in each rater's place, against the same others' mean.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.stats.human_agreement import CLINICIANS_ROW
from tests.report import rated
from tests.report.suites import read, row


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    output = tmp_path_factory.mktemp("ceiling")
    return output, rated.build(output)


def agreement(suite: tuple[Path, str], out: str, ratings: dict[str, dict[int, rated.Scores]]) -> pd.DataFrame:
    output, run = suite
    return read(
        rated.report(output, out, rated.write_ratings(output / f"{out}.csv", run, ratings)), "judge_human_agreement"
    )


def test_renaming_raters_or_changing_their_case_changes_no_number(suite: tuple[Path, str]) -> None:
    before = agreement(suite, "names", rated.RATINGS)
    renamed = {"Zoe": rated.RATINGS["alice"], " BOB ": rated.RATINGS["bob"], "aaron": rated.RATINGS["carol"]}
    after = agreement(suite, "renamed", renamed)
    numbers = before.select_dtypes("number").columns
    assert len(numbers) == 27  # every column but panel, judge and verdict
    pd.testing.assert_frame_equal(before[numbers], after[numbers], check_exact=False, rtol=1e-12)
    assert before["verdict"].tolist() == after["verdict"].tolist()
    assert row(before, judge=CLINICIANS_ROW)["n_raters"] == 3


def test_dr_test_and_dr_test_in_lower_case_are_one_rater(suite: tuple[Path, str]) -> None:
    """alice's ratings under two spellings of one name are alice's ratings: same rater count, same numbers."""
    alice = rated.RATINGS["alice"]
    split = {"Dr Test": {1: alice[1]}, "dr  TEST ": {n: s for n, s in alice.items() if n > 1}}
    found = row(agreement(suite, "case", {**split, "bob": rated.RATINGS["bob"]}), judge=CLINICIANS_ROW)
    one = row(agreement(suite, "one", {"alice": alice, "bob": rated.RATINGS["bob"]}), judge=CLINICIANS_ROW)
    assert found["n_raters"] == 2
    assert found["icc"] == pytest.approx(one["icc"])


def test_the_clinicians_icc_medhelm_is_pingouins_averaged_over_every_pair_weighted_by_overlap(
    suite: tuple[Path, str],
) -> None:
    """alice-bob share 6 answers, alice-carol 5, bob-carol 3: each pair's ICC3k on z-scores, weighted 6:5:3."""
    found = row(agreement(suite, "pair", rated.RATINGS), judge=CLINICIANS_ROW)
    values, weights = [], []
    for a, b in [("alice", "bob"), ("alice", "carol"), ("bob", "carol")]:
        common = sorted(set(rated.RATINGS[a]) & set(rated.RATINGS[b]))
        x = np.array([np.mean([s / 5 for s in rated.RATINGS[a][n]]) for n in common])
        y = np.array([np.mean([s / 5 for s in rated.RATINGS[b][n]]) for n in common])
        values.append(rated.pingouin_icc(rated.zscore(x), rated.zscore(y), "ICC3k"))
        weights.append(len(common))
    assert weights == [6, 5, 3]
    assert found["icc_medhelm"] == pytest.approx(np.average(values, weights=weights))
    assert found["icc_medhelm_ci_low"] < found["icc_medhelm"] < found["icc_medhelm_ci_high"]


def test_the_ceiling_is_each_rater_against_the_others_mean_averaged_over_raters(suite: tuple[Path, str]) -> None:
    found = row(agreement(suite, "loo", rated.RATINGS), judge=CLINICIANS_ROW)
    reward = {r: {n: float(np.mean([s / 5 for s in sc])) for n, sc in by.items()} for r, by in rated.RATINGS.items()}
    iccs = []
    for rater, mine in reward.items():
        notes = [n for n in mine if any(n in reward[o] for o in reward if o != rater)]
        others = [np.mean([reward[o][n] for o in reward if o != rater and n in reward[o]]) for n in notes]
        iccs.append(rated.pingouin_icc(np.array([mine[n] for n in notes]), np.array(others), "ICC3"))
    assert found["n"] == 8
    assert found["icc"] == pytest.approx(np.mean(iccs))
    assert found["icc_ci_low"] < found["icc"] < found["icc_ci_high"]


def test_a_constant_rater_gives_no_zero_width_interval_and_no_more_than_verdict(suite: tuple[Path, str]) -> None:
    """The issue's case: bob gave 3/3/3 to everything; the ceiling was "ICC 0.00 [0.00, 0.00]"."""
    flat = {"alice": rated.RATINGS["alice"], "bob": {n: (3, 3, 3) for n in rated.RATINGS["alice"]}}
    table = agreement(suite, "flat", flat)
    for stat in ("spearman", "icc"):
        low, high = table[f"{stat}_ci_low"], table[f"{stat}_ci_high"]
        assert not ((low == high) & low.notna()).any(), stat
    assert not table["verdict"].fillna("").str.contains("more than").any()
    ceiling = row(table, judge=CLINICIANS_ROW)
    assert math.isnan(ceiling["icc"])
    assert ceiling["verdict"] == "rater bob gave one score to every answer: no information"
    text = (suite[0] / "flat" / "report.md").read_text(encoding="utf-8")
    assert "rater bob gave one score to every answer: no information, so there is no human ceiling" in text


def test_a_constant_rater_among_three_is_left_out_of_the_average_and_named(suite: tuple[Path, str]) -> None:
    flat = {**rated.RATINGS, "carol": {n: (3, 3, 3) for n in rated.RATINGS["carol"]}}
    ceiling = row(agreement(suite, "flat3", flat), judge=CLINICIANS_ROW)
    assert not math.isnan(ceiling["icc"])
    assert "rater carol gave one score to every answer: no information" in ceiling["verdict"]


def _others_mean(reward: dict[str, dict[int, float]]) -> dict[str, dict[int, float]]:
    """Per rater, the mean of the OTHER raters on each note that rater and another rated (the ceiling's reference)."""
    found = {}
    for rater, mine in reward.items():
        others = {o: by for o, by in reward.items() if o != rater}
        found[rater] = {n: float(np.mean([by[n] for by in others.values() if n in by])) for n in mine if any(
            n in by for by in others.values())}  # fmt: skip
    return found


def test_a_judge_is_held_to_the_ceiling_in_each_raters_place(suite: tuple[Path, str]) -> None:
    """icc_in_place: judge-one against the very reference each rater faces, averaged; the verdict states it."""
    table = agreement(suite, "in_place", rated.RATINGS)
    found, ceiling = row(table, judge="judge-one"), row(table, judge=CLINICIANS_ROW)
    reward = {r: {n: float(np.mean([s / 5 for s in sc])) for n, sc in by.items()} for r, by in rated.RATINGS.items()}
    judge = {i + 1: float(np.mean([s / 5 for s in scores])) for i, scores in enumerate(rated.JUDGE_ONE)}
    iccs = []
    for reference in _others_mean(reward).values():
        notes = sorted(reference)
        mine = np.array([judge[n] for n in notes])
        iccs.append(rated.pingouin_icc(mine, np.array([reference[n] for n in notes]), "ICC3"))
    assert found["icc_in_place"] == pytest.approx(np.mean(iccs))
    assert found["icc_in_place"] != pytest.approx(found["icc"])  # the mean of all raters is another reference
    assert f"ICC {found['icc_in_place']:.2f} in a rater's place" in found["verdict"]
    assert ceiling["icc_in_place"] == ceiling["icc"]
    assert found["icc_in_place_ci_low"] < found["icc_in_place"] < found["icc_in_place_ci_high"]
