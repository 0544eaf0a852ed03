"""helm-mtsamples-report on synthetic suites written in HELM's exact on-disk shape (see tests/report/suites.py).

Expected numbers are literals derived by hand in the comments, never recomputed with the report's code.

The main suite (judge-one, judge-two; score triples are accuracy/completeness/clarity; judge reward = sum/15):

  note  specialty     strong: j1 / j2 -> note        weak: j1 / j2 -> note
  n1    Orthopedic    555=1.0 / 555=1.0 -> 1.0       333=.6 / 222=.4 -> .5
  n2    Orthopedic    555=1.0 / 444=.8  -> .9        321=.4 / call error -> .4
  n3    Orthopedic*   444=.8  / 444=.8  -> .8        333=.6 / 333=.6 -> .6
  n4    Orthopedic    555=1.0 / 444=.8  -> .9        222=.4 / 222=.4 -> .4
  n5    Neurosurgery  444=.8  / 444=.8  -> .8        ("4",3.0,2)=.6 / no verdict -> .6
  n6    Neurosurgery  555=1.0 / 555=1.0 -> 1.0       333=.6 / 222=.4 -> .5
  n7    Neurosurgery  555=1.0 / 444=.8  -> .9        222=.4 / no valid dimension -> .4
  n8    Neurosurgery  444=.8  / 444=.8  -> .8        333=.6 / 33+invalid clarity=.6 -> .6
  n9    Orthopedic    555=1.0 / 555=1.0 -> 1.0       both failed -> unjudged (missing)
  (* n3's specialty is only in the note's "Medical Specialty:" line, not in extra_data)
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import main
from tests.report.reports import BOOT, run_report
from tests.report.suites import (
    EMPTY,
    JUDGES,
    NOTES,
    STRONG,
    STRONG_RUN,
    WEAK,
    WEAK_RUN,
    Note,
    Run,
    build_suite,
    failed,
    ok,
    png_size,
    read,
    row,
)

REPO = Path(__file__).resolve().parents[2]


def test_leaderboard_values(main_report: tuple[Path, str]) -> None:
    """Reward, CI, dimensions, counts, failure rate and alpha per model match the hand-derived values."""
    out, _ = main_report
    board = read(out, "leaderboard")
    assert list(board["model"]) == [STRONG, WEAK] and list(board["rank"]) == [1, 2]
    strong, weak = board.iloc[0], board.iloc[1]
    # strong: (1+.9+.8+.9+.8+1+.9+.8+1)/9 = 8.1/9 = 0.9; per-note panel means (5,4.5,4,4.5,4,5,4.5,4,5) sum 40.5/9
    assert strong["reward"] == pytest.approx(0.9)
    assert (strong["accuracy"], strong["completeness"], strong["clarity"]) == pytest.approx((4.5, 4.5, 4.5))
    assert (strong["n_notes"], strong["n_judged"], strong["n_unjudged"], strong["judge_failures"]) == (9, 9, 0, 0)
    # weak: n9 unjudged, (.5+.4+.6+.4+.6+.5+.4+.6)/8 = 4.0/8 = 0.5 -- the failed judges are not zeros
    assert weak["reward"] == pytest.approx(0.5)
    # accuracy (2.5+3+3+2+4+2.5+2+3)/8 = 22/8; completeness (2.5+2+3+2+3+2.5+2+3)/8 = 20/8;
    # clarity (2.5+1+3+2+2+2.5+2+3)/8 = 18/8 (n8's clarity is judge-one's 3 alone)
    assert (weak["accuracy"], weak["completeness"], weak["clarity"]) == pytest.approx((2.75, 2.5, 2.25))
    assert (weak["n_notes"], weak["n_judged"], weak["n_unjudged"]) == (9, 8, 1)
    # 5 failed calls (n2, n5, n7 judge-two; n9 both) of 18
    assert (weak["judge_calls"], weak["judge_failures"]) == (18, 5)
    assert weak["judge_failure_rate"] == pytest.approx(5 / 18)
    assert strong["judge_failure_rate"] == 0
    # 95% CIs contain the true mean and stay within the range of the note rewards
    assert 0.8 <= strong["reward_ci_low"] < 0.9 < strong["reward_ci_high"] <= 1.0
    assert 0.4 <= weak["reward_ci_low"] < 0.5 < weak["reward_ci_high"] <= 0.6
    # Krippendorff's alpha (ordinal), strong accuracy: pairs 3x(5,5), 3x(4,4), 3x(5,4): o45=o54=3, n4=n5=9, n=18,
    # delta2(4,5)=(18-9)^2=81; Do=6*81/18=27, De=2*9*9*81/(18*17)=13122/306; alpha=1-27*306/13122=10/27
    assert strong["alpha_accuracy"] == pytest.approx(10 / 27)
    # weak accuracy on the 5 notes both judged: (3,2)x2, (3,3)x2, (2,2): o23=o32=2, n2=4, n3=6, n=10, delta2=5^2;
    # Do=4*25/10=10, De=2*6*4*25/90=13.33; alpha=1-0.75=0.25. Clarity drops n8: n2=n3=4, n=8, delta2=16,
    # Do=4*16/8=8, De=2*4*4*16/56=9.142857; alpha=1-0.875=0.125
    assert (weak["alpha_accuracy"], weak["alpha_completeness"], weak["alpha_clarity"]) == pytest.approx(
        (0.25, 0.25, 0.125)
    )


def test_pairwise_paired_on_shared_notes(main_report: tuple[Path, str]) -> None:
    """The better model wins in (nearly) all resamples; only notes judged for both models are paired."""
    out, _ = main_report
    pairs = read(out, "pairwise")
    assert len(pairs) == 1
    pair = pairs.iloc[0]
    assert (pair["model_a"], pair["model_b"], pair["n_notes"]) == (STRONG, WEAK, 8)  # n9 unjudged for weak
    # strong on n1-n8: 7.1/8 = 0.8875; differences .5,.5,.2,.5,.2,.5,.5,.2 -> 3.1/8 = 0.3875
    assert (pair["reward_a"], pair["reward_b"], pair["difference"]) == pytest.approx((0.8875, 0.5, 0.3875))
    assert 0.2 <= pair["ci_low"] < 0.3875 < pair["ci_high"] <= 0.5
    assert pair["share_resamples_a_ahead"] >= 0.95


def test_by_specialty(main_report: tuple[Path, str]) -> None:
    """Reward per model per specialty, with n judged notes; the specialty may come from the note's text."""
    out, _ = main_report
    spec = read(out, "by_specialty")
    assert len(spec) == 4
    # strong Orthopedic n1-n4,n9: (1+.9+.8+.9+1)/5 = 0.92; Neurosurgery n5-n8: 3.5/4 = 0.875
    assert row(spec, model=STRONG, specialty="Orthopedic")[["reward", "n"]].tolist() == pytest.approx([0.92, 5])
    assert row(spec, model=STRONG, specialty="Neurosurgery")[["reward", "n"]].tolist() == pytest.approx([0.875, 4])
    # weak Orthopedic: (.5+.4+.6+.4)/4 = 0.475 over 4 judged of 5; Neurosurgery (.6+.5+.4+.6)/4 = 0.525
    ortho = row(spec, model=WEAK, specialty="Orthopedic")
    assert (ortho["reward"], ortho["n"], ortho["n_notes"]) == (pytest.approx(0.475), 4, 5)
    assert row(spec, model=WEAK, specialty="Neurosurgery")["reward"] == pytest.approx(0.525)


def test_one_model_suite_and_empty_answer(tmp_path: Path) -> None:
    """A single model gives no pairwise rows and no crash; an empty answer scores 0 without judge calls."""
    notes = [Note("a.txt", "Urology"), Note("b.txt", "Urology")]
    solo = Run("acme/solo", JUDGES, {"a.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(5, 5, 5)}, "b.txt": EMPTY})
    build_suite(tmp_path, [solo], notes)
    assert run_report(tmp_path, tmp_path / "r") == 0
    board = read(tmp_path / "r", "leaderboard")
    # (1.0 + 0.0) / 2 = 0.5; only a.txt's two judge calls were made
    assert board.loc[0, "reward"] == pytest.approx(0.5)
    assert board.loc[0, ["n_judged", "n_empty_answers", "judge_calls"]].tolist() == [2, 1, 2]
    assert read(tmp_path / "r", "pairwise").empty
    assert "nothing to compare" in (tmp_path / "r" / "report.md").read_text()


def test_model_whose_judges_all_failed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A model no judge could score has a missing reward (not 0) everywhere, and the report still works."""
    broken = Run("acme/broken", JUDGES, {n.filename: {j: failed("call error: 500") for j in JUDGES} for n in NOTES})
    build_suite(tmp_path, [STRONG_RUN, broken])
    assert run_report(tmp_path, tmp_path / "r") == 0
    board = read(tmp_path / "r", "leaderboard")
    bad = row(board, model="acme/broken")
    assert math.isnan(bad["reward"]) and math.isnan(bad["reward_ci_low"]) and math.isnan(bad["accuracy"])
    assert (bad["n_judged"], bad["n_unjudged"], bad["judge_failure_rate"], bad["rank"]) == (0, 9, 1.0, 2)
    assert row(board, model=STRONG)["reward"] == pytest.approx(0.9)
    pair = read(tmp_path / "r", "pairwise").iloc[0]
    assert pair["n_notes"] == 0 and math.isnan(pair["difference"]) and math.isnan(pair["share_resamples_a_ahead"])
    assert read(tmp_path / "r", "by_specialty").query("model == 'acme/broken'")["reward"].isna().all()
    assert "missing" in capsys.readouterr().out
    assert png_size(tmp_path / "r" / "leaderboard.png")[0] >= 800


def test_a_rating_sample_with_nothing_to_rate_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--rating-sample on a suite no judge scored: one warning naming the cause, and the report still written."""
    broken = Run("acme/broken", JUDGES, {n.filename: {j: failed("call error: 500") for j in JUDGES} for n in NOTES})
    build_suite(tmp_path, [broken])
    assert run_report(tmp_path, tmp_path / "r", "--rating-sample", "5") == 0
    said = capsys.readouterr().err
    assert "warning: --rating-sample 5: nothing to rate: no judge scored any of the 9 answers" in said
    assert (tmp_path / "r" / "report.html").stat().st_size > 0
    build_suite(tmp_path / "ok", [STRONG_RUN])
    assert run_report(tmp_path / "ok", tmp_path / "r2", "--rating-sample", "5") == 0
    assert "nothing to rate" not in capsys.readouterr().err


def test_panels_are_kept_apart(tmp_path: Path) -> None:
    """Runs judged by different panels get separate rows and are never averaged or compared together."""
    third = Run(STRONG, ["judge-three"], {n.filename: {"judge-three": ok(1, 1, 1)} for n in NOTES}, extra_args="j=3")
    build_suite(tmp_path, [STRONG_RUN, WEAK_RUN, third])
    assert run_report(tmp_path, tmp_path / "r") == 0
    board = read(tmp_path / "r", "leaderboard")
    assert len(board) == 3
    alone = row(board, panel="judge-three", model=STRONG)
    assert alone["reward"] == pytest.approx(0.2)  # 3/15 on every note, not pooled with the 0.9 of the other panel
    assert math.isnan(alone["alpha_accuracy"])  # agreement needs two judges
    assert row(board, panel="judge-one+judge-two", model=STRONG)["reward"] == pytest.approx(0.9)
    pairs = read(tmp_path / "r", "pairwise")
    assert pairs[["panel", "model_a", "model_b"]].values.tolist() == [["judge-one+judge-two", STRONG, WEAK]]
    assert set(read(tmp_path / "r", "by_specialty")["panel"]) == {"judge-one+judge-two", "judge-three"}


def test_nothing_readable_fails_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No readable run, or no suite directory, exits non-zero with a message naming the path."""
    assert main(["--suite", "nope", "-o", str(tmp_path)]) != 0
    assert str(tmp_path / "runs" / "nope") in capsys.readouterr().err
    broken = tmp_path / "runs" / "v1" / "mtsamples_procedures:model=x"
    broken.mkdir(parents=True)
    assert run_report(tmp_path, tmp_path / "r") != 0
    err = capsys.readouterr().err
    assert str(broken) in err and "no readable mtsamples_procedures run" in err
    assert not (tmp_path / "r").exists()


def test_default_out_dir_and_module_entry_point(tmp_path: Path) -> None:
    """`python -m helm_mtsamples_ext.report.cli` works and writes to <output>/mtsamples_report/<suite> by default."""
    build_suite(tmp_path, [STRONG_RUN])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.report.cli", "--suite", "v1", "-o", str(tmp_path), *BOOT],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert STRONG in done.stdout and "0.900" in done.stdout
    assert (tmp_path / "mtsamples_report" / "v1" / "leaderboard.csv").is_file()


def test_bootstrap_is_reproducible(tmp_path: Path) -> None:
    """The same --seed gives the same intervals; the CI comes from resampling, so another seed may differ."""
    build_suite(tmp_path, [STRONG_RUN, WEAK_RUN])
    run_report(tmp_path, tmp_path / "a")
    run_report(tmp_path, tmp_path / "b")
    a, b = read(tmp_path / "a", "leaderboard"), read(tmp_path / "b", "leaderboard")
    pd.testing.assert_frame_equal(a, b)
