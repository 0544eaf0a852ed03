"""The report tests' synthetic suites (tests/report/suites.py, plain data) are what this HELM writes: each run built
again here with HELM's own dataclasses, serialised as its runner serialises them (helm/benchmark/runner.py
`run_one`: `asdict_without_nones`, `json.dumps(..., indent=2)`), equals suites.py's files byte for byte.

The report never imports HELM, so its tests run once (on the first HELM); this file, marked ``helm``, runs on both and
fails the day a HELM's RunSpec, AdapterSpec, RequestState or Stat writes a field the synthetic suites lack or drop.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helm.benchmark.adaptation.common_adapter_specs import get_generation_adapter_spec
from helm.benchmark.adaptation.request_state import RequestState
from helm.benchmark.adaptation.scenario_state import ScenarioState
from helm.benchmark.annotation.annotator import AnnotatorSpec
from helm.benchmark.metrics.metric import MetricSpec, PerInstanceStats
from helm.benchmark.metrics.metric_name import MetricName
from helm.benchmark.metrics.statistic import Stat
from helm.benchmark.run_spec import RunSpec
from helm.benchmark.scenarios.scenario import CORRECT_TAG, TEST_SPLIT, Input, Instance, Output, Reference, ScenarioSpec
from helm.common.general import asdict_without_nones

from tests.report.suites import (
    EMPTY,
    INSTRUCTIONS,
    JUDGES,
    NOTES,
    REFERENCE,
    STRONG_RUN,
    WEAK_RUN,
    Note,
    Run,
    annotation_record,
    annotator_args,
    answer_of,
    control_run,
    instance_extra_data,
    instance_id,
    note_text,
    run_name,
    write_foreign_run,
    write_run,
)
from tests.states import request_state

pytestmark = pytest.mark.helm


def helm_files(run: Run, notes: list[Note]) -> dict[str, Any]:
    """One run's files as HELM's runner writes them, from HELM's dataclasses."""
    annotator = AnnotatorSpec(class_name="helm_mtsamples_ext.annotator.JudgeAnnotator", args=annotator_args(run))
    adapter_spec = get_generation_adapter_spec(
        instructions=INSTRUCTIONS,
        input_noun="Patient Notes",
        output_noun="Answer",
        max_tokens=512,
        max_train_instances=0,
    )
    adapter_spec = replace(adapter_spec, model=run.model, model_deployment=run.model)
    run_spec = RunSpec(
        name=run_name(run),
        scenario_spec=ScenarioSpec(class_name="helm_mtsamples_ext.scenario.MTSamplesProceduresScenario", args={}),
        adapter_spec=adapter_spec,
        metric_specs=[
            MetricSpec(
                class_name="helm_mtsamples_ext.metric.MTSamplesProceduresMetric", args={"judge_names": run.judges}
            )
        ],
        annotators=[annotator],
        groups=["mtsamples_procedures"],
    )
    states: list[RequestState] = []
    per_instance: list[PerInstanceStats] = []
    for note in notes:
        if note.filename not in run.verdicts:
            continue
        instance = Instance(
            input=Input(text=note_text(note)),
            references=[Reference(Output(text=REFERENCE), tags=[CORRECT_TAG])],
            split=TEST_SPLIT,
            id=instance_id(note),
            extra_data=instance_extra_data(note),
        )
        states.append(
            replace(
                request_state(instance.input.text, answer_of(run, note.filename), model=run.model),
                instance=instance,
                annotations={"mtsamples_procedures": annotation_record(run, run.verdicts[note.filename])},
            )
        )
        per_instance.append(
            PerInstanceStats(
                instance_id=str(instance.id),
                perturbation=None,
                train_trial_index=0,
                stats=[Stat(MetricName("mtsamples_procedures_judge_failures", split=TEST_SPLIT)).add(0)],
            )
        )
    scenario_state = ScenarioState(adapter_spec=adapter_spec, request_states=states, annotator_specs=[annotator])
    stats = [Stat(MetricName("num_instances", split=TEST_SPLIT)).add(len(states))]
    return {
        "run_spec.json": asdict_without_nones(run_spec),
        "scenario.json": {"name": "mtsamples_procedures", "description": "synthetic", "tags": []},
        "scenario_state.json": asdict_without_nones(scenario_state),
        "stats.json": [asdict_without_nones(s) for s in stats],
        "per_instance_stats.json": [asdict_without_nones(p) for p in per_instance],
        "name": run_spec.name,
    }


ODD_NOTES = [*NOTES, Note("odd name #2.txt", "Urology", "SUMMARY", specialty_in_extra_data=False, body="Short.")]
ODD_RUN = Run(
    model="org/odd",
    judges=["j"],
    verdicts={"n1.txt": EMPTY, "odd name #2.txt": {"j": WEAK_RUN.verdicts["n9.txt"]["judge-one"]}},
    outputs={"odd name #2.txt": 'Ünïcode answer\n\twith "quotes" and </script>'},
    extra_args="judges=j,judge_prompt=prefix",
    rules_version=3,
)
RUNS = {
    "strong": STRONG_RUN,
    "weak": WEAK_RUN,
    "empty answer, odd names, a rules version": ODD_RUN,
    "control": control_run("reference", {"n1.txt": {j: 0.6 for j in JUDGES}, "n2.txt": {j: None for j in JUDGES}}),
}


@pytest.mark.parametrize("run", RUNS.values(), ids=list(RUNS))
def test_each_file_of_a_synthetic_run_is_what_this_helm_writes(run: Run, tmp_path: Path) -> None:
    expected = helm_files(run, ODD_NOTES)
    path = write_run(tmp_path, run, ODD_NOTES)
    assert path == tmp_path / expected.pop("name")
    assert sorted(p.name for p in path.iterdir()) == sorted(expected)
    for name, payload in expected.items():
        assert (path / name).read_text() == json.dumps(payload, indent=2), name


def test_the_foreign_run_is_what_this_helm_writes(tmp_path: Path) -> None:
    run_spec = RunSpec(
        name="mmlu:subject=anatomy,model=acme_strong",
        scenario_spec=ScenarioSpec(class_name="helm.benchmark.scenarios.mmlu_scenario.MMLUScenario", args={}),
        adapter_spec=get_generation_adapter_spec(output_noun="Answer"),
        metric_specs=[],
        groups=["mmlu"],
    )
    path = write_foreign_run(tmp_path)
    assert path == tmp_path / run_spec.name
    assert (path / "run_spec.json").read_text() == json.dumps(asdict_without_nones(run_spec), indent=2)
