"""suite.py: reading a suite's runs as HELM wrote them, run by run: a broken run is named and the others read,
two runs of one model stay apart, and a run is read whole (the run-level rule, as the metric applies it)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from helm_mtsamples_ext import schema
from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.judged_answers import judged_runs
from helm_mtsamples_ext.report.suite import load_suite, report_path, suite_path
from tests.report.reports import BOOT, run_report
from tests.report.suites import (
    JUDGES,
    NOTES,
    STRONG,
    STRONG_RUN,
    WEAK,
    WEAK_RUN,
    Run,
    build_main_suite,
    build_suite,
    ok,
    read,
    row,
    write_foreign_run,
    write_run,
)

pytestmark = pytest.mark.helm


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
        None,  # type: ignore[arg-type]
        "",
        parallelism=1,
    )
    stats = {s.name.name: s.mean for s in result.aggregated_stats}
    assert stats["mtsamples_procedures_reward"] == pytest.approx(board["reward"])
    assert stats["mtsamples_procedures_unjudged"] == board["n_unjudged"] == 0
    assert stats["mtsamples_procedures_same_verdict"] == pytest.approx(0.5)


def own(score: int, words: str) -> dict[str, Any]:
    """A parsed verdict of ``score`` on every dimension, each explained in ``words``."""
    record = ok(score, score, score)
    for dim in ("accuracy", "completeness", "clarity"):
        record[dim]["explanation"] = words
    return record


def test_the_same_verdict_rule_judges_a_judge_across_the_suite_and_never_one_models_answers(tmp_path: Path) -> None:
    """Attack table in one suite. judge-two gives its one low verdict (111, same words) to junk's three different
    answers only: fair, kept (junk: (.4+.2)/2 = .3, not judge-one's .4 alone). judge-one gives one 555 verdict to
    good's and flat's answers alike (three different answers, two models): blind, void on both, whatever it scored
    (good: judge-two's .8; flat: judge-two's .6)."""
    notes = ["n1.txt", "n2.txt", "n3.txt"]

    def answers(model: str) -> dict[str, str]:
        return {n: f"{model} answer {k}." for k, n in enumerate(notes)}

    canned_low = ok(1, 1, 1)
    junk = {n: {"judge-one": own(2, f"junk {n}"), "judge-two": canned_low} for n in notes}
    good = {n: {"judge-one": ok(5, 5, 5), "judge-two": own(4, f"good {n}")} for n in notes[:2]}
    flat = {n: {"judge-one": ok(5, 5, 5), "judge-two": own(3, f"flat {n}")} for n in notes[:2]}
    runs = [
        Run("acme/junk", JUDGES, junk, outputs=answers("junk")),
        Run("acme/good", JUDGES, good, outputs=answers("good")),
        Run("acme/flat", JUDGES, flat, outputs=answers("flat")),
    ]
    build_suite(tmp_path, runs)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), *BOOT]) == 0
    board = read(tmp_path / "r", "leaderboard").set_index("model")
    assert board.loc[["acme/junk", "acme/good", "acme/flat"], "reward"].tolist() == pytest.approx([0.3, 0.8, 0.6])
    instances = read(tmp_path / "r", "instances")
    voided = instances[instances["failure"].fillna("").str.startswith("same verdict for different answers")]
    assert sorted(set(zip(voided["model"], voided["judge"], strict=True))) == [
        ("acme/flat", "judge-one"),
        ("acme/good", "judge-one"),
    ]
    assert voided["failure"].str.endswith("of several models in this suite").all()


def test_the_report_the_recheck_and_the_schema_read_the_same_runs_of_a_suite(tmp_path: Path) -> None:
    """One reader: the three commands find the suite at one path and take the same runs for ours, with one panel;
    another benchmark's run and HELM's eval_cache beside them are no run of ours for any of them."""
    suite = build_suite(tmp_path, [STRONG_RUN, WEAK_RUN])
    write_foreign_run(suite)
    (suite / "eval_cache").mkdir()
    assert suite == suite_path(tmp_path, "v1") and report_path(tmp_path, "v1") == tmp_path / "mtsamples_report" / "v1"
    reported = load_suite(suite).instances
    reported_runs = sorted(set(reported["run"]))
    rechecked = judged_runs(suite)
    described = schema.read_suite(suite, "test")
    assert reported_runs == sorted(r.run for r in rechecked) == sorted(Path(r.name).name for r in described)
    assert len(reported_runs) == 2
    panels = {r.panel_name for r in rechecked} | {"+".join(r.judge_names) for r in described}
    assert panels == set(reported["panel"])
