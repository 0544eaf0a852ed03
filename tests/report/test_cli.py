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

import contextlib
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.cli import judge_rows, main
from helm_mtsamples_ext.scoring import score_note
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
    build_main_suite,
    build_suite,
    failed,
    ok,
    png_size,
    read,
    row,
    run_name,
    write_run,
)

REPO = Path(__file__).resolve().parents[2]
BOOT = ["--bootstrap", "400", "--seed", "0"]


def run_report(output: Path, out: Path, *extra: str) -> int:
    return main(["--suite", "v1", "-o", str(output), "--out", str(out), *BOOT, *extra])


@pytest.fixture(scope="module")
def main_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    output = tmp_path_factory.mktemp("bench")
    build_main_suite(output)
    out = output / "report"
    stdout = io.StringIO()  # capsys is per test; this report is built once for the module
    with contextlib.redirect_stdout(stdout):
        assert run_report(output, out) == 0
    return out, stdout.getvalue()


def test_instances_one_row_per_model_note_judge(main_report: tuple[Path, str]) -> None:
    """instances.csv has one row per model x note x judge with normalised scores, rewards and failure reasons."""
    out, _ = main_report
    inst = read(out, "instances")
    assert len(inst) == 2 * 9 * 2
    assert set(inst["panel"]) == {"judge-one+judge-two"}
    # "4" and 3.0 are normalised to 4 and 3: (4+3+2)/15 = 0.6
    n5 = row(inst, model=WEAK, note="n5.txt", judge="judge-one")
    assert (n5["accuracy"], n5["completeness"], n5["clarity"]) == (4, 3, 2)
    assert n5["judge_reward"] == pytest.approx(0.6)
    # an invalid clarity is left out of the judge's reward: (3+3)/10 = 0.6, not (3+3+0)/15
    n8 = row(inst, model=WEAK, note="n8.txt", judge="judge-two")
    assert math.isnan(n8["clarity"]) and n8["judge_reward"] == pytest.approx(0.6) and "clarity" in n8["invalid"]
    failed_call = row(inst, model=WEAK, note="n2.txt", judge="judge-two")
    assert failed_call["status"] == "failed" and failed_call["failure"].startswith("call error: ")
    assert math.isnan(failed_call["judge_reward"])
    assert row(inst, model=WEAK, note="n7.txt", judge="judge-two")["failure"] == "no valid dimension"
    assert (inst["status"] == "failed").sum() == 5
    n3 = row(inst, model=STRONG, note="n3.txt", judge="judge-one")
    assert (n3["specialty"], n3["extracted_section"], n3["note_id"]) == ("Orthopedic", "FINDINGS", "id_n3.txt")
    assert row(inst, model=STRONG, note="n1.txt", judge="judge-two")["output_words"] == 7
    assert row(inst, model=STRONG, note="n2.txt", judge="judge-two")["output_words"] == 5
    parquet = pd.read_parquet(out / "instances.parquet")
    assert len(parquet) == len(inst) and list(parquet.columns) == list(inst.columns)


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
    assert pair["share_a_wins"] >= 0.95


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


def test_figure_and_markdown(main_report: tuple[Path, str]) -> None:
    """A real PNG of sensible size is written and embedded in report.md, which summarises every table."""
    out, stdout = main_report
    width, height = png_size(out / "leaderboard.png")
    assert 800 <= width <= 3000 and 200 <= height <= 3000
    md = (out / "report.md").read_text()
    assert "![" in md and "(leaderboard.png)" in md
    assert STRONG in md and WEAK in md and "0.900" in md and "Orthopedic" in md
    assert f"| {STRONG} | {WEAK} | 8 | 0.388 |" in md and "100.0%" in md  # the pairwise row
    # the terminal leaderboard is compact and names both models with their rewards
    assert STRONG in stdout and "0.900" in stdout and "0.500" in stdout and "27.8%" in stdout


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
    assert pair["n_notes"] == 0 and math.isnan(pair["difference"]) and math.isnan(pair["share_a_wins"])
    assert read(tmp_path / "r", "by_specialty").query("model == 'acme/broken'")["reward"].isna().all()
    assert "missing" in capsys.readouterr().out
    assert png_size(tmp_path / "r" / "leaderboard.png")[0] >= 800


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


def test_same_model_in_two_runs_of_one_panel(tmp_path: Path) -> None:
    """Two runs of one model under one panel stay apart, labelled by their run arguments."""
    helm_mode = Run(STRONG, JUDGES, {"n1.txt": {j: ok(2, 2, 2) for j in JUDGES}}, extra_args="extraction=helm")
    build_suite(tmp_path, [STRONG_RUN, helm_mode])
    assert run_report(tmp_path, tmp_path / "r") == 0
    board = read(tmp_path / "r", "leaderboard").set_index("model")
    assert board.loc[f"{STRONG} [extraction=helm]", "reward"] == pytest.approx(0.4)
    assert board.loc[f"{STRONG} [mtsamples_procedures:model=acme_strong]", "reward"] == pytest.approx(0.9)


def test_half_written_runs_are_named_and_others_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Missing files, truncated JSON and an empty run dir are each named on stderr; the good runs are reported."""
    suite = build_main_suite(tmp_path)
    no_stats = write_run(suite, Run("acme/no-stats", JUDGES, WEAK_RUN.verdicts), NOTES)
    (no_stats / "per_instance_stats.json").unlink()
    truncated = write_run(suite, Run("acme/truncated", JUDGES, WEAK_RUN.verdicts), NOTES)
    state = truncated / "scenario_state.json"
    state.write_text(state.read_text()[:500])
    crashed = suite / "mtsamples_procedures:model=acme_crashed"
    crashed.mkdir()
    assert run_report(tmp_path, tmp_path / "r") == 0
    err = capsys.readouterr().err
    assert f"{no_stats}: per_instance_stats.json is missing" in err
    assert f"{truncated}: scenario_state.json is not valid JSON" in err
    assert f"{crashed}: run_spec.json is missing" in err
    assert "mmlu" not in err  # another scenario's run is not ours and not a problem
    assert list(read(tmp_path / "r", "leaderboard")["model"]) == [STRONG, WEAK]
    assert str(truncated) in (tmp_path / "r" / "report.md").read_text()


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


def test_judge_marked_failed_counts_for_nothing(tmp_path: Path) -> None:
    """A judge marked failed (status or failed_judges) is left out even if a score survived in its record."""
    leftover = {**ok(1, 1, 1), "status": "failed", "failure": "no verdict in reply"}
    listed = ok(1, 1, 1)  # status ok, but named in failed_judges below
    run = Run("acme/m", ["a", "b", "c"], {"n1.txt": {"a": ok(5, 5, 5), "b": leftover, "c": listed}, "n2.txt": {}})
    path = write_run(tmp_path / "runs" / "v1", run, NOTES)
    state_file = path / "scenario_state.json"
    state = json.loads(state_file.read_text())
    state["request_states"][0]["annotations"]["mtsamples_procedures"]["failed_judges"] = ["b", "c"]
    del state["request_states"][1]["annotations"]  # n2 was never annotated: unjudged, its judges failed
    state_file.write_text(json.dumps(state))
    assert run_report(tmp_path, tmp_path / "r") == 0
    board = read(tmp_path / "r", "leaderboard").iloc[0]
    # only judge a counts: 15/15 = 1.0 (counting b and c would give (1 + .2 + .2)/3)
    assert (board["reward"], board["accuracy"], board["n_unjudged"]) == (pytest.approx(1.0), 5.0, 1)
    assert (board["judge_calls"], board["judge_failures"]) == (6, 2 + 3)


def test_rewards_agree_with_scoring_module(main_report: tuple[Path, str]) -> None:
    """The report's note rewards equal scoring.score_note's on the same records, so report.md and stats agree.

    The mean of the per-judge rewards is checked, not the note reward the report copies from score_note, so
    this also guards that the per-judge rows are the ones score_note counted.
    """

    out, _ = main_report
    suite = out.parent / "runs" / "v1"
    inst = read(out, "instances")
    for run in (STRONG_RUN, WEAK_RUN):
        state_file = suite / run_name(run).replace("/", "_") / "scenario_state.json"
        states = json.loads(state_file.read_text())["request_states"]
        for state in states:
            expected = score_note(state["annotations"]["mtsamples_procedures"], JUDGES).reward
            note = inst[(inst["model"] == run.model) & (inst["note"] == state["instance"]["extra_data"]["filename"])]
            got = note["judge_reward"].mean()
            assert (math.isnan(got) and expected is None) or got == pytest.approx(expected)


def test_valid_scores_only_integers_one_to_five() -> None:
    """Only integer scores 1-5 count (int-like floats and numeric strings too); bools and 4.5 do not."""
    raw = [4, "4", 3.0, "5.0", 4.5, 0, 6, True, None, "four"]
    record = {f"j{i}": {"accuracy": {"score": value}, "status": "ok"} for i, value in enumerate(raw)}
    rows = judge_rows({**record, "failed_judges": []}, list(record))
    accuracy = pd.Series([r["accuracy"] for r in rows], dtype=float)
    assert accuracy.tolist()[:4] == [4.0, 4.0, 3.0, 5.0]
    assert accuracy[4:].isna().all()
    assert [r["status"] for r in rows] == ["ok"] * 4 + ["failed"] * 6


def test_a_judge_giving_one_verdict_to_different_answers_counts_for_nothing_as_in_the_metric(tmp_path: Path) -> None:
    """judge-two gives 555 with the same words to three different answers: the report, like the metric, reads the
    run as a whole, so judge-two fails on each note ("same verdict for different answers") and the rewards are
    judge-one's alone: 222=.4, 333=.6, 444=.8 -> .6. The metric on the same records and answers agrees."""
    from helm.benchmark.adaptation.adapter_spec import AdapterSpec
    from helm.benchmark.adaptation.scenario_state import ScenarioState

    from helm_mtsamples_ext.metric import MTSamplesProceduresMetric
    from tests.states import request_state

    notes = ["n1.txt", "n2.txt", "n3.txt"]
    verdicts = {n: {"judge-one": ok(s, s, s), "judge-two": ok(5, 5, 5)} for n, s in zip(notes, (2, 3, 4), strict=True)}
    answers = {n: f"Answer number {k}." for k, n in enumerate(notes)}
    build_suite(tmp_path, [Run("acme/m", JUDGES, verdicts, outputs=answers)])
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), *BOOT]) == 0
    board = row(read(tmp_path / "r", "leaderboard"), model="acme/m")
    assert (board["reward"], board["judge_failures"], board["n_unjudged"]) == (pytest.approx(0.6), 3, 0)
    failures = read(tmp_path / "r", "instances").query("judge == 'judge-two'")["failure"]
    assert failures.str.startswith("same verdict for different answers: ").all()

    states = []
    for k, n in enumerate(notes):
        record = {**verdicts[n], "failed_judges": []}
        states.append(
            request_state(answer=answers[n], instance_id=f"n{k}", annotations={"mtsamples_procedures": record})
        )
    result = MTSamplesProceduresMetric(JUDGES).evaluate(
        ScenarioState(AdapterSpec(method="generation"), states),
        None,
        "",
        parallelism=1,  # type: ignore[arg-type]
    )
    stats = {s.name.name: s.mean for s in result.aggregated_stats}
    assert stats["mtsamples_procedures_reward"] == pytest.approx(board["reward"])
    assert stats["mtsamples_procedures_unjudged"] == board["n_unjudged"] == 0
    assert stats["mtsamples_procedures_same_verdict"] == pytest.approx(0.5)
