"""`--export eee`: a suite's results as Every Eval Ever records (the EvalEval Coalition's schema 0.3.0).

Why: EEE is a shared store of evaluation results in one schema, with converters for HELM and Inspect; its HELM
converter covers no MedHELM leaderboard, so this benchmark is missing there. Per panel (rewards of different juries
are never compared) and per model (the judge audit's control runs left out), under
``<report dir>/eee/<panel>/``, laid out as EEE's datastore is, so a panel's ``data/`` can be submitted as it is:

- ``data/mtsamples_procedures/<developer>/<model>/<uuid>.json``: the aggregate record: the model, the ``reward``
  result (the leaderboard's reward, its bootstrap interval with its method and resample count, the judges and the
  model each one's server said it ran, the judge prompt, the aggregation) and the ``unjudged`` result (the share
  of notes no judge scored);
- ``<uuid>_samples.jsonl`` beside it: the instance records (eee_instances.py).

The uuid is derived from the record's ``evaluation_id`` (suite, panel and model), so a report run again writes the
same file names: EEE's publisher refuses to overwrite, so a second submission cannot silently duplicate a record.
Every file is strict JSON (a missing value is null or left out, never NaN). Pure but for ``write_eee``, which the
report calls inside its own directory swap (outputs.py).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from helm_mtsamples_ext import _version
from helm_mtsamples_ext.report.eee_instances import (
    EVALUATION_NAME,
    REWARD_ID,
    SCHEMA_VERSION,
    UNJUDGED_ID,
    instance_records,
)
from helm_mtsamples_ext.report.eee_results import reward_result, unjudged_result
from helm_mtsamples_ext.report.eee_runs import RunFacts
from helm_mtsamples_ext.report.json_cells import number, strict_json
from helm_mtsamples_ext.report.medmarks_export import slug, slugs
from helm_mtsamples_ext.stats.controls import control_kind
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

EXPORT_DIR = "eee"
COLLECTION = EVALUATION_NAME
__all__ = ["EXPORT_DIR", "REWARD_ID", "UNJUDGED_ID", "EeeExport", "build_eee", "write_eee"]

_UNSAFE = re.compile(r'[<>:"\\|?*\x00-\x1f]')
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10)), *(f"LPT{i}" for i in range(1, 10))}


@dataclass
class EeeExport:
    """One (panel, model)'s aggregate record and its JSONL, with where they go under the panel's directory."""

    panel: str
    model: str
    directory: str
    """``data/<collection>/<developer>/<model>``: the datastore's folder, relative to the panel's directory."""
    file_uuid: str
    aggregate: dict[str, Any]
    samples: str
    """The JSONL text, whose sha256 the aggregate carries."""


def _component(value: str) -> str:
    """One datastore path component as EEE's publisher makes it (``:`` to ``_``), or a slug when it refuses it."""
    value = value.strip().replace(":", "_")
    refused = (
        not value
        or value in (".", "..", "data")
        or value.lower() == "unknown"
        or bool(_UNSAFE.search(value))
        or value.endswith((".", " "))
        or value.split(".", 1)[0].upper() in _RESERVED
    )
    return slug(value) if refused else value


def datastore_dir(model_id: str) -> tuple[str, str]:
    """(developer, model) folders of a model id, as EEE's ``datastore_path_components`` derives them: the id's
    prefix, then the rest with ``/`` flattened to ``_``; a flat id goes under ``unknown-developer``."""
    parts = [p for p in model_id.strip().split("/") if p]
    if len(parts) < 2:
        return "unknown-developer", _component(model_id or "model")
    return _component(parts[0]), "_".join(_component(p) for p in parts[1:])


def file_uuid(evaluation_id: str) -> str:
    """A version-4 uuid (EEE's file names need one) derived from the record's id, so it is the same every run."""
    return str(uuid.UUID(bytes=hashlib.sha256(evaluation_id.encode("utf-8")).digest()[:16], version=4))


def _model_info(model: str, facts: RunFacts) -> dict[str, Any]:
    model_id = facts.model or model
    details = {"deployment_type": "unknown", "model_availability": "unknown", "report_name": model}
    if facts.model_deployment:
        details["helm_model_deployment"] = facts.model_deployment
    developer, _ = datastore_dir(model_id)
    return {"name": model, "id": model_id, "developer": developer, "additional_details": details}


def _generation_config(facts: RunFacts) -> dict[str, Any]:
    args: dict[str, Any] = {"temperature": facts.temperature}
    if facts.max_tokens is not None:
        args["max_tokens"] = facts.max_tokens
    return {"generation_args": args}


def model_export(
    suite: str,
    rows: pd.DataFrame,
    board_row: pd.Series,
    facts: RunFacts,
    settings: BootstrapSettings,
    now: float,
) -> EeeExport:
    """One (panel, model) as EEE's aggregate record and instance records: ``rows`` its per-judge rows, ``board_row``
    its leaderboard row."""
    panel, model = str(board_row["panel"]), str(board_row["model"])
    info = _model_info(model, facts)
    evaluation_id = f"{EVALUATION_NAME}/{suite}/{panel}/{model}"
    developer, folder = datastore_dir(info["id"])
    directory = f"data/{COLLECTION}/{developer}/{folder}"
    records = instance_records(rows.to_dict("records"), evaluation_id, info["id"])
    samples = "".join(strict_json(record) + "\n" for record in records)
    name = file_uuid(evaluation_id)
    generation = _generation_config(facts)
    results = [unjudged_result(board_row, generation)]
    if number(board_row["reward"]) is not None:  # a model no judge scored has no reward at all, never 0
        results.insert(0, reward_result(board_row, rows, facts, settings, generation))
    aggregate = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": str(int(now)),
        "source_metadata": {
            "source_name": "helm-mtsamples-report --export eee",
            "source_type": "evaluation_run",
            "source_organization_name": "unknown",
            "evaluator_relationship": "third_party",
            "additional_details": {"suite": suite, "panel": panel, "run": str(board_row["run"])},
        },
        "eval_library": {
            "name": "helm",
            "version": "unknown",
            "additional_details": {"benchmark_plugin": "helm-mtsamples-ext", "plugin_version": _version.__version__},
        },
        "model_info": info,
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl",
            "file_path": f"{directory}/{name}_samples.jsonl",
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(samples.encode("utf-8")).hexdigest(),
            "total_rows": len(records),
        },
    }
    return EeeExport(panel, model, directory, name, aggregate, samples)


def build_eee(
    instances: pd.DataFrame,
    leaderboard: pd.DataFrame,
    suite: str,
    facts: dict[str, RunFacts],
    settings: BootstrapSettings,
    now: float,
) -> list[EeeExport]:
    """Every (panel, model) of the suite but the control runs, in panel and model order. ``facts``: each run's
    setup (eee_runs.py); ``settings``: the leaderboard's bootstrap; ``now``: the records' retrieval time."""
    models = instances[[control_kind(m) == "" for m in instances["model"]]]
    board = {(str(r["panel"]), str(r["model"])): r for _, r in leaderboard.iterrows()}
    exports = []
    for (panel, model), rows in models.groupby(["panel", "model"], sort=True):
        board_row = board[(str(panel), str(model))]
        exports.append(model_export(suite, rows, board_row, facts[str(board_row["run"])], settings, now))
    return exports


def write_eee(exports: list[EeeExport], out: Path) -> list[Path]:
    """Write the export under ``out`` (the report's ``eee/``, inside its directory swap); each file's path."""
    panels = slugs(sorted({e.panel for e in exports}))
    written = []
    for export in exports:
        folder = out / panels[export.panel] / export.directory
        folder.mkdir(parents=True, exist_ok=True)
        aggregate = folder / f"{export.file_uuid}.json"
        aggregate.write_text(strict_json(export.aggregate) + "\n", encoding="utf-8")
        samples = folder / f"{export.file_uuid}_samples.jsonl"
        samples.write_text(export.samples, encoding="utf-8")
        written += [aggregate, samples]
    return written
