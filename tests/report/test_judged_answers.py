"""report/judged_answers.py: the answers a suite's judges scored, with the texts the annotator asked them about."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helm_mtsamples_ext.annotator import prompt_of
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.helm_calls.recheck_calls import question
from helm_mtsamples_ext.report.judged_answers import (
    SampleTooLarge,
    SuiteUnreadable,
    judged_runs,
    sample_runs,
)
from tests.report.suites import JUDGES, STRONG, WEAK, Run, build_main_suite, build_suite, ok, run_name
from tests.states import request_state

pytestmark = pytest.mark.helm


def run_dir(run: Run) -> str:
    """The run's directory, named as HELM names it (its RunSpec turns ``/`` into ``_``)."""
    return run_name(run).replace("/", "_")


def test_every_answer_a_judge_scored_is_read_and_no_other(tmp_path: Path) -> None:
    runs = {r.run: r for r in judged_runs(build_main_suite(tmp_path))}  # the foreign run and eval_cache are skipped
    assert len(runs) == 2
    strong = runs[run_dir(Run(STRONG, JUDGES, {}))]
    weak = runs[run_dir(Run(WEAK, JUDGES, {}))]
    assert len(strong.answers) == 9
    assert "id_n9.txt" not in {a.instance_id for a in weak.answers}, "n9: every judge failed, nothing to compare"
    assert len(weak.answers) == 8
    assert strong.panel_name == "judge-one+judge-two" and strong.max_answer_tokens == 512


def test_the_prompt_is_the_one_the_annotator_builds_from_the_same_state(tmp_path: Path) -> None:
    (run, *_) = judged_runs(build_main_suite(tmp_path))
    answer = next(a for a in run.answers if a.instance_id == "id_n1.txt")
    state = json.loads((tmp_path / "runs" / "v1" / run.run / "scenario_state.json").read_text())["request_states"][0]
    same = request_state(
        state["instance"]["input"]["text"],
        state["result"]["completions"][0]["text"],
        state["instance"]["references"][0]["output"]["text"],
    )
    prompt, untrusted = question(answer.note, answer.answer, answer.reference, answer.style)
    assert prompt == prompt_of(same, RunEntryArgs(judge_prompt="ours"))  # what the suite stored
    assert untrusted == (state["result"]["completions"][0]["text"], state["instance"]["input"]["text"])
    assert answer.before["judge-one"]["accuracy"]["score"] == 5


def test_the_runs_stored_settings_shape_the_prompt_and_the_calls(tmp_path: Path) -> None:
    run = Run("acme/thinker", ["j"], {"n1.txt": {"j": ok(4, 4, 4)}}, outputs={"n1.txt": "<think>draft</think>Rest."})
    suite = build_suite(tmp_path, [run])
    spec_path = suite / run_dir(run) / "run_spec.json"
    spec = json.loads(spec_path.read_text())
    spec["annotators"][0]["args"].update(use_think=True, judge_prompt="helm", judge_timeout=7.0, max_tokens=99)
    spec_path.write_text(json.dumps(spec))
    (read,) = judged_runs(suite)
    assert read.args.use_think and read.args.judge_prompt == "helm" and read.args.judge_timeout == 7.0
    assert read.knobs == {"max_tokens": 99}
    (answer,) = read.answers
    assert answer.answer == "Rest." and answer.style == "helm"
    assert "Rest." in question(answer.note, answer.answer, answer.reference, answer.style)[0]


def test_a_run_of_helms_built_in_jury_has_no_panel_to_ask(tmp_path: Path) -> None:
    suite = build_suite(tmp_path, [Run("acme/a", ["j"], {"n1.txt": {"j": ok(4, 4, 4)}})])
    (spec_path,) = suite.glob("*/run_spec.json")
    spec = json.loads(spec_path.read_text())
    spec["annotators"] = [{"class_name": "helm.benchmark.annotation.x.Annotator", "args": {"annotator_models": {}}}]
    spec_path.write_text(json.dumps(spec))
    assert judged_runs(suite) == []


def test_a_half_written_run_is_named(tmp_path: Path) -> None:
    suite = build_suite(tmp_path, [Run("acme/a", ["j"], {"n1.txt": {"j": ok(4, 4, 4)}})])
    (state_path,) = suite.glob("*/scenario_state.json")
    state_path.write_text('{"request_states": [')
    with pytest.raises(SuiteUnreadable, match="scenario_state.json cannot be read"):
        judged_runs(suite)


def test_the_sample_is_n_answers_per_panel_pooled_over_its_runs(tmp_path: Path) -> None:
    runs = judged_runs(build_main_suite(tmp_path))
    sampled = sample_runs(runs, 5, seed=1)
    assert sum(len(r.answers) for r in sampled) == 5
    assert sample_runs(runs, 5, seed=1) == sampled
    assert sum(len(r.answers) for r in sample_runs(runs, 17, seed=0)) == 17


def test_a_sample_larger_than_a_panels_judged_answers_names_the_panel(tmp_path: Path) -> None:
    runs = judged_runs(build_main_suite(tmp_path))
    with pytest.raises(SampleTooLarge, match="panel judge-one\\+judge-two scored 17 answers, fewer than --sample 18"):
        sample_runs(runs, 18, seed=0)
