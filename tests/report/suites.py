"""Builds synthetic HELM suites on disk for the report tests.

The files are written the way HELM's runner writes them (helm/benchmark/runner.py `run_one`): HELM's own
dataclasses serialised with `asdict_without_nones` and `json.dumps(..., indent=2)`, so the report is tested
against the real shape, not a hand-typed imitation of it.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd
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

from tests.states import request_state

DIMENSIONS = ("accuracy", "completeness", "clarity")


def ok(accuracy: Any, completeness: Any, clarity: Any, invalid: dict[str, str] | None = None) -> dict[str, Any]:
    """A judge record that parsed; a None score is an invalid dimension."""
    record: dict[str, Any] = {
        dim: {"score": score, "explanation": f"{dim} reasoning"}
        for dim, score in zip(DIMENSIONS, (accuracy, completeness, clarity), strict=True)
    }
    record["status"] = "ok"
    if invalid:
        record["invalid"] = invalid
    record["tokens"] = 321
    record["model_deployment"] = "fake/judge"
    return record


def failed(reason: str) -> dict[str, Any]:
    """A judge record whose call or reply gave no valid dimension."""
    record: dict[str, Any] = {dim: {"score": None, "explanation": ""} for dim in DIMENSIONS}
    record.update(status="failed", failure=reason, raw_reply="garbage", model_deployment="fake/judge")
    return record


EMPTY = "empty"
"""Marker for a note whose model answer was empty: the annotator calls no judge then."""


@dataclass
class Note:
    filename: str
    specialty: str
    section: str = "PLAN"
    specialty_in_extra_data: bool = True
    body: str = "PROCEDURE: something."


@dataclass
class Run:
    model: str
    judges: list[str]
    # note filename -> {judge: record} or EMPTY
    verdicts: dict[str, Any]
    outputs: dict[str, str] = field(default_factory=dict)
    extra_args: str = ""
    rules_version: int | None = None  # written into every record of the run; None: a record from before versioning


def run_name(run: Run) -> str:
    name = f"mtsamples_procedures:model={run.model}"
    if run.extra_args:
        name += "," + run.extra_args
    return name


def _instance(note: Note) -> Instance:
    text = f"Medical Specialty:{note.specialty}\nSample Name: {note.filename[:-4]}\n{note.body}"
    extra: dict[str, Any] = {"filename": note.filename, "extracted_section": note.section, "extraction": "sections"}
    if note.specialty_in_extra_data:
        extra["specialty"] = note.specialty
    return Instance(
        input=Input(text=text),
        references=[Reference(Output(text="Follow up in two weeks."), tags=[CORRECT_TAG])],
        split=TEST_SPLIT,
        id="id_" + note.filename.replace(" ", "_"),
        extra_data=extra,
    )


def _annotation(run: Run, verdicts: Any) -> dict[str, Any]:
    version = {} if run.rules_version is None else {"rules_version": run.rules_version}
    if verdicts == EMPTY:
        return {"failed_judges": [], "answer": "empty", **version}
    record: dict[str, Any] = dict(verdicts)
    record["failed_judges"] = [name for name, v in verdicts.items() if v.get("status") == "failed"]
    return {**record, **version}


def write_run(suite_dir: Path, run: Run, notes: list[Note]) -> Path:
    """Write one complete run directory exactly as HELM's runner does and return its path."""
    annotator = AnnotatorSpec(
        class_name="helm_mtsamples_ext.annotator.JudgeAnnotator",
        args={
            "judges": [{"name": j, "model": j, "model_deployment": f"fake/{j}", "base_url": None} for j in run.judges],
            "judge_prompt": "ours",
            "use_think": False,
            "judge_timeout": 60.0,
        },
    )
    adapter_spec = get_generation_adapter_spec(
        instructions="Here are information about a patient, return a reasonable treatment plan for the patient.",
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
        instance = _instance(note)
        verdicts = run.verdicts[note.filename]
        text = "" if verdicts == EMPTY else run.outputs.get(note.filename, "Plan: rest and follow up.")
        states.append(
            replace(
                request_state(instance.input.text, text, model=run.model),
                instance=instance,
                annotations={"mtsamples_procedures": _annotation(run, verdicts)},
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
    path = suite_dir / run_spec.name
    path.mkdir(parents=True, exist_ok=True)
    stats = [Stat(MetricName("num_instances", split=TEST_SPLIT)).add(len(states))]
    files = {
        "run_spec.json": asdict_without_nones(run_spec),
        "scenario.json": {"name": "mtsamples_procedures", "description": "synthetic", "tags": []},
        "scenario_state.json": asdict_without_nones(scenario_state),
        "stats.json": [asdict_without_nones(s) for s in stats],
        "per_instance_stats.json": [asdict_without_nones(p) for p in per_instance],
    }
    for file_name, payload in files.items():
        (path / file_name).write_text(json.dumps(payload, indent=2))
    return path


def build_suite(output: Path, runs: list[Run], notes: list[Note] | None = None, suite: str = "v1") -> Path:
    suite_dir = output / "runs" / suite
    for run in runs:
        write_run(suite_dir, run, notes or NOTES)
    return suite_dir


def write_foreign_run(suite_dir: Path) -> Path:
    """A run of another scenario in the same suite, which the report must ignore quietly."""
    adapter_spec = get_generation_adapter_spec(output_noun="Answer")
    run_spec = RunSpec(
        name="mmlu:subject=anatomy,model=acme_strong",
        scenario_spec=ScenarioSpec(class_name="helm.benchmark.scenarios.mmlu_scenario.MMLUScenario", args={}),
        adapter_spec=adapter_spec,
        metric_specs=[],
        groups=["mmlu"],
    )
    path = suite_dir / run_spec.name
    path.mkdir(parents=True)
    (path / "run_spec.json").write_text(json.dumps(asdict_without_nones(run_spec), indent=2))
    return path


# ---------------------------------------------------------------------------------------------------------------
# Reading the report back.


def read(out: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(out / f"{name}.csv")


def row(table: pd.DataFrame, **where: object) -> pd.Series:
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    assert mask.sum() == 1, f"expected one row for {where}, got {mask.sum()}"
    return table[mask].iloc[0]


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


# ---------------------------------------------------------------------------------------------------------------
# The main synthetic suite: two models, two judges, nine notes in two specialties (numbers derived in test_report).

JUDGES = ["judge-one", "judge-two"]
STRONG = "acme/strong"
WEAK = "acme/weak-model-with-a-rather-long-name-for-wrapping"

NOTES = [
    Note("n1.txt", "Orthopedic", "PLAN"),
    Note("n2.txt", "Orthopedic", "SUMMARY"),
    Note("n3.txt", "Orthopedic", "FINDINGS", specialty_in_extra_data=False),  # specialty from the note's text
    Note("n4.txt", "Orthopedic", "PLAN"),
    Note("n5.txt", "Neurosurgery", "PLAN"),
    Note("n6.txt", "Neurosurgery", "SUMMARY"),
    Note("n7.txt", "Neurosurgery", "PLAN"),
    Note("n8.txt", "Neurosurgery", "FINDINGS"),
    Note("n9.txt", "Orthopedic", "PLAN"),
]

STRONG_RUN = Run(
    model=STRONG,
    judges=JUDGES,
    verdicts={
        "n1.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(5, 5, 5)},
        "n2.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(4, 4, 4)},
        "n3.txt": {"judge-one": ok(4, 4, 4), "judge-two": ok(4, 4, 4)},
        "n4.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(4, 4, 4)},
        "n5.txt": {"judge-one": ok(4, 4, 4), "judge-two": ok(4, 4, 4)},
        "n6.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(5, 5, 5)},
        "n7.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(4, 4, 4)},
        "n8.txt": {"judge-one": ok(4, 4, 4), "judge-two": ok(4, 4, 4)},
        "n9.txt": {"judge-one": ok(5, 5, 5), "judge-two": ok(5, 5, 5)},
    },
    outputs={"n1.txt": "Rest, ice, and follow up in clinic."},  # 7 words; every other answer has 5
)

WEAK_RUN = Run(
    model=WEAK,
    judges=JUDGES,
    verdicts={
        "n1.txt": {"judge-one": ok(3, 3, 3), "judge-two": ok(2, 2, 2)},
        "n2.txt": {"judge-one": ok(3, 2, 1), "judge-two": failed("call error: timeout after 60s")},
        "n3.txt": {"judge-one": ok(3, 3, 3), "judge-two": ok(3, 3, 3)},
        "n4.txt": {"judge-one": ok(2, 2, 2), "judge-two": ok(2, 2, 2)},
        "n5.txt": {"judge-one": ok("4", 3.0, 2), "judge-two": failed("no verdict in reply")},
        "n6.txt": {"judge-one": ok(3, 3, 3), "judge-two": ok(2, 2, 2)},
        "n7.txt": {"judge-one": ok(2, 2, 2), "judge-two": failed("no valid dimension")},
        "n8.txt": {"judge-one": ok(3, 3, 3), "judge-two": ok(3, 3, None, invalid={"clarity": "4.5 is not an integer"})},
        "n9.txt": {"judge-one": failed("call error: HTTP 500"), "judge-two": failed("no verdict in reply")},
    },
)


def build_main_suite(output: Path, suite: str = "v1") -> Path:
    suite_dir = build_suite(output, [STRONG_RUN, WEAK_RUN], suite=suite)
    write_foreign_run(suite_dir)
    (suite_dir / "eval_cache").mkdir()
    return suite_dir


# ---------------------------------------------------------------------------------------------------------------
# Control runs for the judge audit (test_audit.py derives the expected numbers by hand).

CONTROL = "mtsamples-control"


def reward_record(reward: float | None) -> dict[str, Any]:
    """A judge record whose three scores are all reward * 5 (reward 0.6 -> 3,3,3), or a failed one for None."""
    if reward is None:
        return failed("no verdict in reply")
    score = round(reward * 5)
    assert score / 5 == reward, reward
    return ok(score, score, score)


def control_run(kind: str, rewards: Mapping[str, Mapping[str, float | None]], judges: list[str] = JUDGES) -> Run:
    """A control run (model mtsamples-control/<kind>) with the given per-judge rewards: {note: {judge: reward}}."""
    verdicts = {note: {judge: reward_record(r) for judge, r in by_judge.items()} for note, by_judge in rewards.items()}
    return Run(f"{CONTROL}/{kind}", judges, verdicts)
