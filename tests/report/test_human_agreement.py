"""Judges against clinicians (human_agreement.py), via `helm-mtsamples-report --ratings` on the main synthetic suite.

Rated answers (judge rewards from tests/report/test_cli.py's table) and two raters; human reward = mean score / 5:

  answer      judge-one  judge-two  panel   alice      bob        mean human (scores)
  strong n1   1.0        1.0        1.0     555 = 1.0  555 = 1.0  1.0 (5 5 5)
  strong n3   .8         .8         .8      444 = .8              .8  (4 4 4)
  weak n1     .6         .4         .5      444 = .8   222 = .4   .6  (3 3 3)
  weak n4     .4         .4         .4      222 = .4              .4  (2 2 2)

judge-one equals the humans: rho 1, bias 0, ICC 1, kappa 1.
judge-two, x = 1 .8 .4 .4 against y = 1 .8 .6 .4:
  rho: ranks 4 3 1.5 1.5 vs 4 3 2 1, deviations 1.5 .5 -1 -1 / 1.5 .5 -.5 -1.5: 4.5 / sqrt(4.5 * 5) = sqrt(.9)
  bias: (0 + 0 - .2 + 0) / 4 = -.05
  ICC (x5: 5 4 2 2 / 5 4 3 2): row means 5 4 2.5 2, grand 3.375; SSR 11.375, SSC .125, SST 11.875, SSE .375;
       MSR 11.375/3, MSE .125: (11/3) / (47/12) = 44/47
  kappa (5 4 2 2 vs 5 4 3 2): sum(W*O) = 1/16; sum(W*E) = 48 / (4 * 16) = .75; 1 - 1/12 = 11/12
panel, x = 1 .8 .5 .4: rho 1; bias -.1/4 = -.025; ICC (x10: 10 8 5 4 / 10 8 6 4): MSR 42.375/3 = 14.125,
  MSE .375/3 = .125, (14.125 - .125) / (14.125 + .125) = 56/57; kappa: panel means 5 4 2.5->3 2 = humans: 1
clinicians (answers rated twice: strong n1, weak n1), each rater against the other (two raters: leave-one-out is
  the pair both ways, and ICC and kappa are symmetric), alice x = 1 .8 against bob y = 1 .4:
  ICC (x5: 5 4 / 5 2): SSR 4, SSC 1, SST 6, SSE 1; (4 - 1) / (4 + 1) = .6
  kappa (5 4 vs 5 2): sum(W*O) = 4/16; sum(W*E) = (4 + 1 + 9) / 32; 1 - .25/.4375 = 3/7
  alpha (ordinal; values 5 5 | 4 2; n2 = n4 = 1, n5 = 2): Do = 2 * 1 / 4 = .5; De = (2*1 + 2*2*6.25 + 2*2*2.25) / 12
       = 36/12 = 3; 1 - .5/3 = 5/6
humans' leaderboard: strong (1.0 + .8)/2 = .9, weak (.6 + .4)/2 = .5; both rankings agree: Kendall's tau 1.
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.ratings import COLUMNS
from helm_mtsamples_ext.report.suite import load_suite
from helm_mtsamples_ext.stats.human_agreement import CLINICIANS_ROW, PANEL_ROW, answers_to_decide, verdict
from tests.report import rated as hand
from tests.report.suites import STRONG, WEAK, build_main_suite, read, row

PANEL = "judge-one+judge-two"
RATINGS = [  # model, note, rater, scores
    (STRONG, "n1", "alice", (5, 5, 5)),
    (STRONG, "n3", "alice", (4, 4, 4)),
    (WEAK, "n1", "alice", (4, 4, 4)),
    (WEAK, "n4", "alice", (2, 2, 2)),
    (STRONG, "n1", "bob", (5, 5, 5)),
    (WEAK, "n1", "bob", (2, 2, 2)),
]


def ratings_csv(path: Path, runs: dict[str, str], rows: list[tuple[str, str, str, tuple[int, int, int]]]) -> Path:
    lines = [",".join(COLUMNS)]
    lines += [f'"{runs[m]}",id_{n}.txt,{m},{r},{a},{c},{k},' for m, n, r, (a, c, k) in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def report(output: Path, *extra: str) -> tuple[int, str]:
    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        code = main(["--suite", "v1", "-o", str(output), "--out", str(output / "report"), "--bootstrap", "200", *extra])
    return code, stderr.getvalue()


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    output = tmp_path_factory.mktemp("human")
    build_main_suite(output)
    instances = load_suite(output / "runs" / "v1").instances
    return output, dict(zip(instances["model"], instances["run"], strict=True))


@pytest.fixture(scope="module")
def rated(suite: tuple[Path, dict[str, str]]) -> tuple[Path, str]:
    output, runs = suite
    alice = ratings_csv(output / "alice.csv", runs, [r for r in RATINGS if r[2] == "alice"])
    bob = ratings_csv(output / "bob.csv", runs, [r for r in RATINGS if r[2] == "bob"])
    code, stderr = report(output, "--ratings", str(alice), "--ratings", str(bob))
    assert code == 0, stderr
    return output / "report", stderr


@pytest.mark.parametrize(
    "judge, expected",
    [
        ("judge-one", {"n": 4, "spearman": 1.0, "bias": 0.0, "icc": 1.0, "kappa_accuracy": 1.0, "kappa_clarity": 1.0}),
        ("judge-two", {"n": 4, "spearman": math.sqrt(0.9), "bias": -0.05, "icc": 44 / 47, "kappa_accuracy": 11 / 12}),
        (PANEL_ROW, {"n": 4, "spearman": 1.0, "bias": -0.025, "icc": 56 / 57, "kappa_completeness": 1.0}),
        (CLINICIANS_ROW, {"n": 2, "icc": 0.6, "kappa_accuracy": 3 / 7, "alpha_accuracy": 5 / 6, "n_raters": 2}),
    ],
)
def test_each_judge_the_panel_and_the_clinicians_have_their_agreement_row(
    rated: tuple[Path, str], judge: str, expected: dict[str, float]
) -> None:
    found = row(read(rated[0], "judge_human_agreement"), panel=PANEL, judge=judge)
    assert {key: found[key] for key in expected} == pytest.approx(expected)


def test_intervals_come_with_the_rank_correlation_bias_and_icc(rated: tuple[Path, str]) -> None:
    found = row(read(rated[0], "judge_human_agreement"), panel=PANEL, judge="judge-two")
    for stat in ("spearman", "bias", "icc"):
        assert found[f"{stat}_ci_low"] <= found[stat] <= found[f"{stat}_ci_high"], stat


def test_the_leaderboard_gains_the_clinicians_reward_per_model(rated: tuple[Path, str]) -> None:
    board = read(rated[0], "leaderboard")
    assert row(board, model=STRONG)[["human_reward", "n_human"]].tolist() == pytest.approx([0.9, 2])
    assert row(board, model=WEAK)[["human_reward", "n_human"]].tolist() == pytest.approx([0.5, 2])
    assert list(board.columns[-4:]) == ["human_reward", "human_reward_ci_low", "human_reward_ci_high", "n_human"]


def test_report_md_says_how_each_judge_compares_with_the_clinicians(rated: tuple[Path, str]) -> None:
    text = (rated[0] / "report.md").read_text(encoding="utf-8")
    assert "## Agreement with clinicians" in text
    # four rated answers are below evidence.MINIMUMS: the figure is given, the verdict is not
    assert "- **judge-two** (panel `judge-one+judge-two`): ICC 0.94 [0.80, 1.00]; too few answers (4) to tell." in text
    assert "- **(clinicians)** (panel `judge-one+judge-two`): too few answers (2) to tell." in text
    assert "MedHELM's ICC (z, 3k)" in text
    assert f"- Panel `{PANEL}`: Kendall's tau between the two rankings: 1.00 over 2 models." in text


def test_without_ratings_there_is_no_agreement_file_nor_human_column(suite: tuple[Path, dict[str, str]]) -> None:
    output, _ = suite
    code, _ = report(output, "--out", str(output / "plain"))
    assert code == 0
    assert not (output / "plain" / "judge_human_agreement.csv").exists()
    assert "human_reward" not in read(output / "plain", "leaderboard").columns


@pytest.mark.parametrize(
    "ceiling, icc, low, high, difference, says",
    [
        ((0.6, 0.5, 0.7), 0.62, 0.55, 0.69, (0.02, -0.05, 0.08, math.nan),
         "about as well as clinicians agree with each other (the difference's interval lies within ±0.1): "
         "ICC 0.62 [0.55, 0.69] vs clinicians' 0.60 [0.50, 0.70], difference +0.02 [-0.05, +0.08]"),
        ((0.6, 0.5, 0.7), 0.2, 0.1, 0.3, (-0.4, -0.5, -0.3, math.nan), "less than clinicians agree with each other"),
        ((0.3, 0.2, 0.4), 0.8, 0.7, 0.9, (0.5, 0.4, 0.6, math.nan), "more than clinicians agree with each other"),
        ((math.nan, math.nan, math.nan), 0.5, 0.4, 0.6, None, "no answer was rated by two clinicians"),
        ((0.6, 0.5, 0.7), math.nan, math.nan, math.nan, None, "too few answers to tell"),
        ((0.6, math.nan, math.nan), 0.9, 0.8, 1.0, None, "too few answers for intervals, so no telling"),
        ((0.6, 0.5, 0.7), 0.62, 0.55, 0.69, (0.02, -0.15, 0.19, 40.0),
         "cannot tell yet whether it agrees with clinicians as well as they agree with each other"),
        ((0.6, 0.5, 0.7), 0.62, 0.55, 0.69, (0.02, -0.15, 0.19, 40.0), "about 40 more shared answers would decide"),
    ],
)  # fmt: skip
def test_the_verdict_reads_the_paired_difference_against_the_margin(
    ceiling: tuple[float, float, float],
    icc: float,
    low: float,
    high: float,
    difference: tuple[float, float, float, float] | None,
    says: str,
) -> None:
    """Overlapping intervals are not equivalence: only a difference inside ±margin is "about as well"."""
    clinicians = pd.Series(dict(zip(["icc", "icc_ci_low", "icc_ci_high"], ceiling, strict=True)))
    assert says in verdict(icc, low, high, clinicians, difference=difference)


def test_overlapping_intervals_with_a_wide_difference_are_not_about_as_well() -> None:
    """The old rule's "about as well" (intervals overlap) becomes "cannot tell yet" when the difference is wide."""
    clinicians = pd.Series({"icc": 0.65, "icc_ci_low": 0.45, "icc_ci_high": 0.8})
    said = verdict(0.4, 0.1, 0.6, clinicians, difference=(-0.25, -0.55, 0.05, 120.0))
    assert "about as well" not in said and said.startswith("cannot tell yet")


def test_answers_to_decide_grows_as_the_interval_must_narrow() -> None:
    assert math.isnan(answers_to_decide((-0.3, -0.4, -0.2), 20))  # already "less"
    assert math.isnan(answers_to_decide((0.0, -0.05, 0.05), 20))  # already "about as well"
    wide, narrow = answers_to_decide((-0.1, -0.5, 0.3), 20), answers_to_decide((-0.1, -0.25, 0.05), 20)
    assert wide > narrow >= 1
    assert wide == math.ceil(20 * (0.4 / 0.1) ** 2 - 20)  # half-width 0.4 must fall to |d| = margin - |d| = 0.1


CEILING = pd.Series({"icc": 0.3, "icc_ci_low": 0.2, "icc_ci_high": 0.4, "n": 20, "note": ""})


@pytest.mark.parametrize(
    "ceiling, n, note, says",
    [
        (CEILING, 4, "", "ICC 0.80 [0.70, 0.90]; too few answers (4) to tell"),
        ({**CEILING, "n": 3}, 20, "",
         "vs clinicians' 0.30 [0.20, 0.40]; the clinicians' ceiling: too few answers (3) to tell"),
        ({**CEILING, "icc": math.nan, "note": "rater bob gave one score to every answer: no information"}, 20, "",
         "rater bob gave one score to every answer: no information, so there is no human ceiling to compare with"),
        (CEILING, 20, "judge j gave one score to every answer: no information",
         "judge j gave one score to every answer: no information"),
    ],
)  # fmt: skip
def test_no_verdict_from_too_few_answers_or_a_constant_side(
    ceiling: dict[str, object], n: int, note: str, says: str
) -> None:
    said = verdict(0.8, 0.7, 0.9, pd.Series(ceiling), n, note)
    assert said == says or said.endswith(says)
    assert "more than" not in said


def test_rows_matching_no_run_or_note_are_counted_and_named_on_stderr(suite: tuple[Path, dict[str, str]]) -> None:
    output, runs = suite
    path = ratings_csv(output / "partly.csv", {**runs, "ghost": "mtsamples_procedures:model=ghost"},
                       [(STRONG, "n1", "carol", (5, 5, 5)), (STRONG, "n99", "carol", (3, 3, 3)),
                        ("ghost", "n1", "carol", (3, 3, 3))])  # fmt: skip
    code, stderr = report(output, "--out", str(output / "partly"), "--ratings", str(path))
    assert code == 0
    assert "warning: 2 of 3 rating rows match no run or note of suite v1 and are left out:" in stderr
    assert f"{path}:3: note id_n99.txt is not in run {runs[STRONG]}" in stderr
    assert f"{path}:4: run mtsamples_procedures:model=ghost is not in the suite" in stderr


@pytest.mark.parametrize("score", [0, 6])
def test_a_score_outside_1_to_5_stops_the_report_with_one_line(suite: tuple[Path, dict[str, str]], score: int) -> None:
    output, runs = suite
    path = ratings_csv(
        output / f"bad{score}.csv", runs, [(STRONG, "n1", "dan", (5, 5, 5)), (WEAK, "n1", "dan", (4, score, 4))]
    )
    code, stderr = report(output, "--out", str(output / "bad"), "--ratings", str(path))
    assert code == 1
    assert stderr.strip().splitlines()[-1].startswith(f"error: {path}:3: completeness is '{score}', but a rating")
    assert "Traceback" not in stderr


def test_a_duplicate_rater_row_stops_the_report(suite: tuple[Path, dict[str, str]]) -> None:
    output, runs = suite
    path = ratings_csv(output / "twice.csv", runs, [(STRONG, "n1", "eve", (5, 5, 5)), (STRONG, "n1", "eve", (4, 4, 4))])
    code, stderr = report(output, "--out", str(output / "twice"), "--ratings", str(path))
    assert code == 1
    assert stderr.strip().splitlines()[-1].startswith("error: rater 'eve' rated id_n1.txt of run")


@pytest.fixture(scope="module")
def hand_built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame, pd.DataFrame]:
    """tests/report/rated.py's suite: equal rewards reached in different orders, three raters."""
    output = tmp_path_factory.mktemp("hand")
    run = hand.build(output)
    out = hand.report(output, "report", hand.write_ratings(output / "r.csv", run, hand.RATINGS))
    return out, read(out, "judge_human_agreement"), read(out, "instances")


def judge_and_humans(instances: pd.DataFrame, judge: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The judge's rewards (the panel's, for None) and the mean human reward, note by note, as read from disk."""
    humans = hand.human_rewards(hand.RATINGS)
    mine = instances if judge is None else instances[instances["judge"] == judge]
    by_note = mine.groupby("note_id", sort=True)["judge_reward"].mean()  # every judge scored all: the panel's mean
    notes = [int(note.removeprefix("id_n").removesuffix(".txt")) for note in by_note.index]
    return by_note.to_numpy(dtype=float), np.array([np.mean(humans[n]) for n in notes])


def test_spearman_ties_equal_rewards_reached_in_different_orders(
    hand_built: tuple[Path, pd.DataFrame, pd.DataFrame],
) -> None:
    _, table, instances = hand_built
    x, y = judge_and_humans(instances, "judge-one")
    assert len(set(x)) > len(set(x.round(9)))  # the suite does reach one reward in two float spellings
    expected = stats.spearmanr(x.round(9), y.round(9)).statistic
    assert expected != pytest.approx(stats.spearmanr(x, y).statistic)
    assert row(table, judge="judge-one")["spearman"] == pytest.approx(expected)


@pytest.mark.parametrize("judge", ["judge-one", "judge-two", None])
def test_icc_medhelm_is_pingouins_icc3k_on_z_scored_judge_and_mean_human(
    hand_built: tuple[Path, pd.DataFrame, pd.DataFrame], judge: str | None
) -> None:
    _, table, instances = hand_built
    x, y = judge_and_humans(instances, judge)
    found = row(table, judge=judge or PANEL_ROW)
    assert found["icc_medhelm"] == pytest.approx(hand.pingouin_icc(hand.zscore(x), hand.zscore(y), "ICC3k"))
    assert found["icc"] == pytest.approx(hand.pingouin_icc(x, y, "ICC3"))  # ICC(3,1) stays, with its interval
    assert found["icc_ci_low"] < found["icc"] < found["icc_ci_high"]


def test_a_constant_judge_gets_no_statistic_and_says_why(tmp_path: Path) -> None:
    run = hand.build(tmp_path, judge_two=[(4, 4, 4)] * 8)
    out = hand.report(tmp_path, "report", hand.write_ratings(tmp_path / "r.csv", run, hand.RATINGS))
    found = row(read(out, "judge_human_agreement"), judge="judge-two")
    assert all(math.isnan(found[key]) for key in ("icc", "icc_ci_low", "icc_ci_high", "spearman", "icc_medhelm"))
    assert found["verdict"] == "judge judge-two gave one score to every answer: no information"


def test_two_notes_give_too_few_answers_in_the_agreement_section(tmp_path: Path) -> None:
    run = hand.build(tmp_path, notes=2)
    two = {"alice": {1: (2, 2, 2), 2: (5, 5, 5)}, "bob": {1: (3, 3, 3), 2: (4, 4, 4)}}
    out = hand.report(tmp_path, "report", hand.write_ratings(tmp_path / "r.csv", run, two))
    text = (out / "report.md").read_text(encoding="utf-8")
    assert "- **judge-two** (panel `judge-one+judge-two`): ICC 0.80; too few answers (2) to tell." in text
    assert "- **judge-one** (panel `judge-one+judge-two`): too few answers (2) to tell." in text  # and constant
    assert "- **(clinicians)** (panel `judge-one+judge-two`): too few answers (2) to tell." in text
    assert "clinicians agree with each other" not in text
    table = read(out, "judge_human_agreement")
    for stat in ("spearman", "bias", "icc"):  # two answers resample into ties or a zero-width interval: none given
        low, high = table[f"{stat}_ci_low"], table[f"{stat}_ci_high"]
        assert not ((low == high) & low.notna()).any(), stat
