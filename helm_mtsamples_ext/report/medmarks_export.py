"""`--export medmarks`: a suite's rewards as Medmarks reads runs, so `medarc-eval winrate` can rank our models.

Why: Medmarks ranks models by win rate over parquet files (`medarc-eval process` -> `winrate`) and keeps each
note's result as MedARC's result records. Exporting a HELM suite in that shape lets its runs sit on Medmarks'
leaderboard beside runs made there, without re-running anything. Per panel (rewards of different juries are
never compared) and per model, under ``<report dir>/medmarks/<panel>/``:

- ``<model>/mtsamples_procedures.parquet``: ``env_id``, ``example_id`` (Int64: the note's index in the
  manifest, data/example_ids.py), ``model_id`` (the model as the report names it), ``reward`` (null for an
  unjudged note: never 0, which would score a judge's failure as the model's), ``rollout_index`` (0), and
  MedARC's ``status``, ``error``, judge tokens, ``run_id`` and ``version_info``;
- ``<model>/results.jsonl``: one MedARC result record per note (``prompt``, ``completion``, ``reward``,
  ``info{filename, extracted_section, procedure_note, reference_plan, judge_feedback}``);
- ``env_index.json`` (version 2), which `medarc-eval winrate <panel dir>` reads to find the files.

Pure but for ``write_export``: the export is built (and refused, with one line, for a note the manifest lacks)
before anything is written; the report writes it inside its own directory swap (outputs.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from helm_mtsamples_ext import _version
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.stats.controls import control_kind

EXPORT_DIR = "medmarks"
ENV_ID = "mtsamples_procedures"
PARQUET_NAME = f"{ENV_ID}.parquet"
JSONL_NAME = "results.jsonl"
INDEX_NAME = "env_index.json"
PARQUET_COLUMNS = {
    "env_id": "string", "example_id": "Int64", "model_id": "string", "reward": "Float64", "rollout_index": "Int64",
    "status": "string", "error": "string", "judge_token_prompt": "Float64", "judge_token_completion": "Float64",
    "judge_token_total": "Float64", "run_id": "string", "version_info": "string",
}  # fmt: skip
"""The columns `medarc-eval winrate` needs (the first five) and those of MedARC's ``ALLOWED_COLUMNS`` we have."""
JUDGED, UNJUDGED = "judged", "unjudged"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SLUG = 100


class ExportError(Exception):
    """The suite cannot be exported as asked: one line naming the cause and the fix."""


@dataclass
class ModelExport:
    """One model's export under one panel: its parquet rows and its result records, in example_id order."""

    panel: str
    model: str
    rows: pd.DataFrame
    records: list[dict[str, Any]] = field(default_factory=list)


def slug(name: str) -> str:
    """A file-name-safe directory name, as MedARC's ``slugify_filename_component`` makes them (runs of other
    characters to ``_``), never hidden nor ``..``; a long name is cut and keeps a hash of the whole."""
    text = _SLUG.sub("_", name.strip()).lstrip(".") or "model"
    if len(text) > _MAX_SLUG:
        text = text[:_MAX_SLUG] + "_" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]
    return text


def _slugs(names: list[str]) -> dict[str, str]:
    """Each name's slug; names whose slugs collide (``a/b`` and ``a_b``) get a hash of the name added."""
    plain = {name: slug(name) for name in names}
    counts = pd.Series(list(plain.values())).value_counts()
    return {
        name: s if counts[s] == 1 else f"{s}_{hashlib.sha256(name.encode('utf-8', 'replace')).hexdigest()[:8]}"
        for name, s in plain.items()
    }


def _number(value: Any) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def _text(value: Any) -> str | None:
    """A text cell, None for an empty or missing one (a column that was all None can come back NaN)."""
    return value if isinstance(value, str) and value else None


def _score(value: Any) -> int | float | None:
    number = _number(value)
    return None if number is None else int(number) if number.is_integer() else number


Row = dict[str, Any]
"""One judge's row of one note: suite.py's table as records, looped over plainly (64 models x 131 notes: 1.4 s;
a pandas group per note took 16 s, longer than the rest of the report)."""


def _judge_feedback(note: list[Row]) -> dict[str, Any]:
    """MedARC's ``judge_feedback`` entry for one note: each judge's scores with explanations, its reward
    (``score``) and why it gave none (``error``), then the note's reward."""
    judges = [
        {
            "judge": row["judge"],
            "model": _text(row.get("judge_model")),
            "scores": {
                dim: {"score": _score(row[dim]), "explanation": _text(row[f"{dim}_explanation"]) or ""}
                for dim in DIMENSIONS
            },
            "score": _number(row["judge_reward"]),
            "status": row["status"],
            "error": _text(row["failure"]),
            "invalid": _text(row["invalid"]),
        }
        for row in note
    ]
    return {"judges": judges, "score": _number(note[0]["note_reward"])}


def _record(note: list[Row], reward: float | None) -> dict[str, Any]:
    first = note[0]
    return {
        "prompt": [{"role": "user", "content": first["prompt"]}],
        "completion": [{"role": "assistant", "content": first["answer"]}],
        "reward": reward,
        "info": {
            "filename": first["note"],
            "extracted_section": first["extracted_section"],
            "procedure_note": first["note_text"],
            "reference_plan": first["reference"],
            "judge_feedback": [_judge_feedback(note)],
        },
    }


def _failures(note: list[Row]) -> str | None:
    return "; ".join(f"{r['judge']}: {r['failure']}" for r in note if r["status"] == "failed") or None


def _tokens(note: list[Row], column: str) -> float | None:
    """A note's judge tokens over its judges; None when none was counted (records from before they were kept)."""
    counted = [n for n in (_number(r[column]) for r in note) if n is not None]
    return sum(counted) if counted else None


def _version_info(rules_version: Any) -> str:
    rules = _number(rules_version)
    return json.dumps(
        {"helm_mtsamples_ext": _version.__version__, "rules_version": None if rules is None else int(rules)}
    )


def model_export(panel: str, model: str, rows: pd.DataFrame, ids: Mapping[str, int]) -> ModelExport:
    """One (panel, model)'s per-judge rows (suite.py's table) as its parquet rows and result records."""
    notes: dict[str, list[Row]] = {}
    for row in rows.to_dict("records"):
        notes.setdefault(str(row["note"]), []).append(row)
    missing = sorted(set(notes) - set(ids))
    if missing:
        raise ExportError(
            f"note {missing[0]!r} of {model} is not in the manifest, so it has no example_id: set "
            f"MTSAMPLES_PROCEDURES_MANIFEST to the manifest the suite was run with"
        )
    parquet: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    for name in sorted(notes, key=lambda n: ids[n]):
        note = notes[name]
        reward = _number(note[0]["note_reward"])
        tokens_in, tokens_out = _tokens(note, "tokens_in"), _tokens(note, "tokens_out")
        parquet.append(
            {
                "env_id": ENV_ID,
                "example_id": ids[name],
                "model_id": model,
                "reward": reward,
                "rollout_index": 0,
                "status": UNJUDGED if reward is None else JUDGED,
                "error": _failures(note) if reward is None else None,
                "judge_token_prompt": tokens_in,
                "judge_token_completion": tokens_out,
                "judge_token_total": None if tokens_in is None or tokens_out is None else tokens_in + tokens_out,
                "run_id": note[0]["run"],
                "version_info": _version_info(note[0]["rules_version"]),
            }
        )
        records.append(_record(note, reward))
    table = pd.DataFrame(parquet, columns=list(PARQUET_COLUMNS)).astype(PARQUET_COLUMNS)
    return ModelExport(panel, model, table, records)


def build_export(instances: pd.DataFrame, ids: Mapping[str, int]) -> list[ModelExport]:
    """Every (panel, model) of the suite but the control runs (a judge audit's fixed answers, not models)."""
    models = instances[[control_kind(m) == "" for m in instances["model"]]]
    return [
        model_export(str(panel), str(model), rows, ids)
        for (panel, model), rows in models.groupby(["panel", "model"], sort=True)
    ]


def _jsonl(records: list[dict[str, Any]]) -> str:
    # ensure_ascii: every control character and every non-ASCII one is escaped, so a line is one line whatever an
    # answer holds (a U+2028 in an answer splits a line for some JSON readers).
    return "".join(json.dumps(record, ensure_ascii=True, allow_nan=False) + "\n" for record in records)


def write_export(exports: list[ModelExport], out: Path) -> list[Path]:
    """Write the export under ``out`` (the report's ``medmarks/``, inside its directory swap); the panel
    directories, each with its own ``env_index.json``."""
    panels = _slugs(sorted({e.panel for e in exports}))
    written: list[Path] = []
    for panel, panel_slug in panels.items():
        mine = [e for e in exports if e.panel == panel]
        models = _slugs([e.model for e in mine])
        files: dict[str, dict[str, Any]] = {}
        for export in mine:
            directory = out / panel_slug / models[export.model]
            directory.mkdir(parents=True, exist_ok=True)
            export.rows.to_parquet(directory / PARQUET_NAME, index=False)
            (directory / JSONL_NAME).write_text(_jsonl(export.records), encoding="utf-8")
            files[f"{models[export.model]}/{PARQUET_NAME}"] = {
                "env_id": ENV_ID,
                "model_id": export.model,
                "row_count": len(export.rows),
            }
        index = {"version": 2, "panel": panel, "files": files, "runs": {}}
        (out / panel_slug / INDEX_NAME).write_text(json.dumps(index, indent=2, ensure_ascii=True), encoding="utf-8")
        written.append(out / panel_slug)
    return written
