"""Builds synthetic HELM suites on disk for the report tests.

The files are written as HELM's runner writes them (helm/benchmark/runner.py `run_one`: its dataclasses through
`asdict_without_nones` and `json.dumps(..., indent=2)`), but from plain data: the report never imports HELM, so its
tests need no HELM and run once. tests/report/test_suites_as_helm_writes.py builds the same runs with each HELM's
own dataclasses and checks that every file is byte for byte what this module writes, on both HELMs.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

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


INSTRUCTIONS = "Here are information about a patient, return a reasonable treatment plan for the patient."
REFERENCE = "Follow up in two weeks."
DEFAULT_ANSWER = "Plan: rest and follow up."


def note_text(note: Note) -> str:
    """The instance's input text."""
    return f"Medical Specialty:{note.specialty}\nSample Name: {note.filename[:-4]}\n{note.body}"


def instance_id(note: Note) -> str:
    return "id_" + note.filename.replace(" ", "_")


def instance_extra_data(note: Note) -> dict[str, Any]:
    extra: dict[str, Any] = {"filename": note.filename, "extracted_section": note.section, "extraction": "sections"}
    if note.specialty_in_extra_data:
        extra["specialty"] = note.specialty
    return extra


def annotator_args(run: Run) -> dict[str, Any]:
    return {
        "judges": [{"name": j, "model": j, "model_deployment": f"fake/{j}", "base_url": None} for j in run.judges],
        "judge_prompt": "ours",
        "use_think": False,
        "judge_timeout": 60.0,
    }


def adapter_spec(
    model: str = "", instructions: str = "", input_noun: str = "", max_tokens: int = 5, max_train_instances: int = 5
) -> dict[str, Any]:
    """HELM's ``get_generation_adapter_spec(instructions, input_noun, output_noun="Answer", max_tokens,
    max_train_instances)`` with ``model`` and ``model_deployment`` set, as run_spec.json holds it."""
    return {
        "method": "generation",
        "global_prefix": "",
        "global_suffix": "",
        "instructions": f"{instructions}\n" if instructions else "",
        "input_prefix": f"{input_noun}: " if input_noun else "",
        "input_suffix": "\n",
        "reference_prefix": "A. ",
        "reference_suffix": "\n",
        "chain_of_thought_prefix": "",
        "chain_of_thought_suffix": "\n",
        "output_prefix": "Answer: ",
        "output_suffix": "\n",
        "instance_prefix": "\n",
        "substitutions": [],
        "max_train_instances": max_train_instances,
        "num_outputs": 1,
        "num_train_trials": 1,
        "num_trials": 1,
        "sample_train": True,
        "model_deployment": model,
        "model": model,
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "stop_sequences": ["\n"],
        "multi_label": False,
    }


DATA_AUGMENTER_SPEC: dict[str, Any] = {
    "perturbation_specs": [],
    "should_augment_train_instances": False,
    "should_include_original_train": False,
    "should_skip_unchanged_train": False,
    "should_augment_eval_instances": False,
    "should_include_original_eval": False,
    "should_skip_unchanged_eval": False,
    "seeds_per_instance": 1,
}
"""HELM's default ``DataAugmenterSpec()``, which every RunSpec holds."""


def stat(name: str, value: int) -> dict[str, Any]:
    """HELM's ``Stat(MetricName(name, split="test")).add(value)``."""
    return {
        "name": {"name": name, "split": "test"},
        "count": 1,
        "sum": value,
        "sum_squared": value * value,
        "min": value,
        "max": value,
        "mean": float(value),
        "variance": 0.0,
        "stddev": 0.0,
    }


def request_state_record(note: Note, answer: str, model: str, annotation: dict[str, Any]) -> dict[str, Any]:
    """One request state as scenario_state.json holds it (tests/states.py's ``request_state`` with the note's
    instance and the run's annotation)."""
    return {
        "instance": {
            "input": {"text": note_text(note)},
            "references": [{"output": {"text": REFERENCE}, "tags": ["correct"]}],
            "split": "test",
            "id": instance_id(note),
            "extra_data": instance_extra_data(note),
        },
        "train_trial_index": 0,
        "request": {
            "model_deployment": model,
            "model": model,
            "embedding": False,
            "prompt": note_text(note),
            "temperature": 1.0,
            "num_completions": 1,
            "top_k_per_token": 1,
            "max_tokens": 100,
            "stop_sequences": [],
            "echo_prompt": False,
            "top_p": 1,
            "presence_penalty": 0,
            "frequency_penalty": 0,
        },
        "result": {
            "success": True,
            "embedding": [],
            "completions": [{"text": answer, "logprob": 0.0, "tokens": []}],
            "cached": False,
        },
        "num_train_instances": 0,
        "prompt_truncated": False,
        "num_conditioning_tokens": 0,
        "annotations": {"mtsamples_procedures": annotation},
    }


def annotation_record(run: Run, verdicts: Any) -> dict[str, Any]:
    version = {} if run.rules_version is None else {"rules_version": run.rules_version}
    if verdicts == EMPTY:
        return {"failed_judges": [], "answer": "empty", **version}
    record: dict[str, Any] = dict(verdicts)
    record["failed_judges"] = [name for name, v in verdicts.items() if v.get("status") == "failed"]
    return {**record, **version}


def answer_of(run: Run, filename: str) -> str:
    return "" if run.verdicts[filename] == EMPTY else run.outputs.get(filename, DEFAULT_ANSWER)


def write_run(suite_dir: Path, run: Run, notes: list[Note]) -> Path:
    """Write one complete run directory exactly as HELM's runner does and return its path."""
    annotator = {"class_name": "helm_mtsamples_ext.annotator.JudgeAnnotator", "args": annotator_args(run)}
    adapter = adapter_spec(run.model, INSTRUCTIONS, "Patient Notes", max_tokens=512, max_train_instances=0)
    run_spec: dict[str, Any] = {
        "name": run_name(run).replace("/", "_"),  # HELM's RunSpec writes "/" as "_" (its output folder's name)
        "scenario_spec": {"class_name": "helm_mtsamples_ext.scenario.MTSamplesProceduresScenario", "args": {}},
        "adapter_spec": adapter,
        "metric_specs": [
            {"class_name": "helm_mtsamples_ext.metric.MTSamplesProceduresMetric", "args": {"judge_names": run.judges}}
        ],
        "data_augmenter_spec": DATA_AUGMENTER_SPEC,
        "groups": ["mtsamples_procedures"],
        "annotators": [annotator],
    }
    judged = [note for note in notes if note.filename in run.verdicts]
    states = [
        request_state_record(
            note, answer_of(run, note.filename), run.model, annotation_record(run, run.verdicts[note.filename])
        )
        for note in judged
    ]
    per_instance = [
        {
            "instance_id": instance_id(note),
            "train_trial_index": 0,
            "stats": [stat("mtsamples_procedures_judge_failures", 0)],
        }
        for note in judged
    ]
    path = suite_dir / run_spec["name"]
    path.mkdir(parents=True, exist_ok=True)
    files = {
        "run_spec.json": run_spec,
        "scenario.json": {"name": "mtsamples_procedures", "description": "synthetic", "tags": []},
        "scenario_state.json": {"adapter_spec": adapter, "request_states": states, "annotator_specs": [annotator]},
        "stats.json": [stat("num_instances", len(states))],
        "per_instance_stats.json": per_instance,
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
    path = suite_dir / FOREIGN_RUN_SPEC["name"]
    path.mkdir(parents=True)
    (path / "run_spec.json").write_text(json.dumps(FOREIGN_RUN_SPEC, indent=2))
    return path


FOREIGN_RUN_SPEC: dict[str, Any] = {
    "name": "mmlu:subject=anatomy,model=acme_strong",
    "scenario_spec": {"class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario", "args": {}},
    "adapter_spec": adapter_spec(),
    "metric_specs": [],
    "data_augmenter_spec": DATA_AUGMENTER_SPEC,
    "groups": ["mmlu"],
}
"""HELM's RunSpec of an MMLU run (``get_generation_adapter_spec(output_noun="Answer")``, no metric)."""


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
