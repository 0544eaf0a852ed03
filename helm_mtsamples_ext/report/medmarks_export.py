"""`--export medmarks`: a suite's rewards as Medmarks reads runs, so `medarc-eval winrate` can rank our models.

Why: Medmarks ranks models by win rate over parquet files (`medarc-eval process` -> `winrate`) and keeps each
note's result as MedARC's result records. Exporting a HELM suite in that shape lets its runs sit on Medmarks'
leaderboard beside runs made there, without re-running anything. Per panel (rewards of different juries are
never compared) and per model, under ``<report dir>/medmarks/<panel>/``:

- ``<model>/mtsamples_procedures.parquet``: exactly Medmarks' processed columns and Arrow types
  (medmarks_schema.py), one row per note: ``example_id`` (a string: MedARC's id for the note,
  data/example_ids.py), ``reward`` (null for an unjudged note: never 0, which would score a judge's failure as the
  model's), ``status`` and ``error`` (why a note is unjudged), the judges' tokens and, with prices, their cost;
  what the suite does not measure (the model's tokens and cost, timings) is null;
- ``<model>/results.jsonl``: one MedARC result record per note (``example_id``, ``prompt``, ``completion``,
  ``reward``, ``info{filename, extracted_section, procedure_note, reference_plan, judge_feedback}``), strict JSON: a
  missing number is ``null``, never ``NaN``;
- ``env_index.json`` (version 2), which `medarc-eval winrate --processed-dir <panel dir>` reads to find the files;
  and ``medmarks/README.md`` (medmarks_readme.py): which directory to rank and what each panel can rank.

Pure but for ``write_export``: the export is built (and refused, with one line, for a note the manifest lacks)
before anything is written; the report writes it inside its own directory swap (outputs.py).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from helm_mtsamples_ext import _version
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.cost import Prices
from helm_mtsamples_ext.report.json_cells import number, strict_json, text
from helm_mtsamples_ext.report.medmarks_readme import README_NAME, export_summary, readme_text
from helm_mtsamples_ext.report.medmarks_schema import MEDMARKS_SCHEMA, medmarks_table
from helm_mtsamples_ext.stats.controls import control_kind

EXPORT_DIR = "medmarks"
ENV_ID = "mtsamples_procedures"
PARQUET_NAME = f"{ENV_ID}.parquet"
JSONL_NAME = "results.jsonl"
INDEX_NAME = "env_index.json"
JUDGED, UNJUDGED = "judged", "unjudged"
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_SLUG = 100


class ExportError(Exception):
    """The suite cannot be exported as asked: one line naming the cause and the fix."""


@dataclass
class ModelExport:
    """One model's export under one panel: its parquet rows (Medmarks' schema) and result records, in id order."""

    panel: str
    model: str
    rows: pa.Table = field(default_factory=MEDMARKS_SCHEMA.empty_table)
    records: list[dict[str, Any]] = field(default_factory=list)


def slug(name: str) -> str:
    """A file-name-safe directory name, as MedARC's ``slugify_filename_component`` makes them (runs of other
    characters to ``_``), never hidden nor ``..``; a long name is cut and keeps a hash of the whole."""
    text = _SLUG.sub("_", name.strip()).lstrip(".") or "model"
    if len(text) > _MAX_SLUG:
        text = text[:_MAX_SLUG] + "_" + hashlib.sha256(name.encode("utf-8", "replace")).hexdigest()[:8]
    return text


def slugs(names: list[str]) -> dict[str, str]:
    """Each name's slug; names whose slugs collide (``a/b`` and ``a_b``) get a hash of the name added."""
    plain = {name: slug(name) for name in names}
    counts = pd.Series(list(plain.values()), dtype=object).value_counts()
    return {
        name: s if counts[s] == 1 else f"{s}_{hashlib.sha256(name.encode('utf-8', 'replace')).hexdigest()[:8]}"
        for name, s in plain.items()
    }


def _score(value: Any) -> int | float | None:
    found = number(value)
    return None if found is None else int(found) if found.is_integer() else found


Row = dict[str, Any]
"""One judge's row of one note: suite.py's table as records, looped over plainly (64 models x 131 notes: 1.4 s;
a pandas group per note took 16 s, longer than the rest of the report)."""


def _judge_feedback(note: list[Row]) -> dict[str, Any]:
    """MedARC's ``judge_feedback`` entry for one note: per judge MedARC's fields (``model``, ``raw``, ``error``,
    ``scores`` with explanations per dimension, ``score``: its reward) and ours beside them under names MedARC's
    entry does not use (``judge``, ``status``, ``invalid``), then the note's reward."""
    judges = [
        {
            "model": text(row.get("judge_model")),
            "raw": None,  # the judge's reply text is in HELM's run, not in the report's table
            "error": text(row["failure"]),
            "scores": {
                dim: {"score": _score(row[dim]), "explanation": text(row[f"{dim}_explanation"]) or ""}
                for dim in DIMENSIONS
            },
            "score": number(row["judge_reward"]),
            "judge": row["judge"],
            "status": row["status"],
            "invalid": text(row["invalid"]),
        }
        for row in note
    ]
    return {"judges": judges, "score": number(note[0]["note_reward"])}


def _record(note: list[Row], example_id: str, reward: float | None) -> dict[str, Any]:
    first = note[0]
    return {
        "example_id": example_id,
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
    """A note's judge tokens over its judges; None when one was not counted (a record from before they were kept
    apart): a part of the sum would read as the whole."""
    counted = [number(r[column]) for r in note]
    return None if not counted or any(n is None for n in counted) else sum(n for n in counted if n is not None)


def _cost(note: list[Row], prices: Prices | None) -> float | None:
    """What judging the note cost in USD (direct calls, as cost.py's ``judge_cost_usd``): None without prices, or
    when a judge's price or tokens are missing (a missing part never counts as 0)."""
    if prices is None:
        return None
    total = 0.0
    for row in note:
        price = prices.of(str(row["judge"]), text(row.get("judge_model")))
        tokens_in, tokens_out = number(row["tokens_in"]), number(row["tokens_out"])
        if price is None or tokens_in is None or tokens_out is None:
            return None
        total += price.cost(tokens_in, tokens_out)
    return total


def _version_info(rules_version: Any) -> str:
    rules = number(rules_version)
    return strict_json(
        {"helm_mtsamples_ext": _version.__version__, "rules_version": None if rules is None else int(rules)}
    )


def _row(note: list[Row], model: str, example_id: str, prices: Prices | None) -> dict[str, Any]:
    """The note's parquet row: what the suite holds, the rest left null (medmarks_schema.py)."""
    first = note[0]
    reward = number(first["note_reward"])
    tokens_in, tokens_out = _tokens(note, "tokens_in"), _tokens(note, "tokens_out")
    return {
        "env_id": ENV_ID,
        "error": _failures(note) if reward is None else None,
        "example_id": example_id,
        "answer": text(first["reference"]),  # verifiers' `answer`: the dataset's, MedARC's reference plan
        "judge_cost": _cost(note, prices),
        "judge_token_completion": tokens_out,
        "judge_token_prompt": tokens_in,
        "judge_token_total": None if tokens_in is None or tokens_out is None else tokens_in + tokens_out,
        "model_id": model,
        "version_info": _version_info(first["rules_version"]),
        "reward": reward,
        "rollout_index": 0,
        "run_id": first["run"],
        "status": UNJUDGED if reward is None else JUDGED,
    }


def model_export(
    panel: str, model: str, rows: pd.DataFrame, ids: Mapping[str, int], prices: Prices | None = None
) -> ModelExport:
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
        note, example_id = notes[name], str(ids[name])
        parquet.append(_row(note, model, example_id, prices))
        records.append(_record(note, example_id, number(note[0]["note_reward"])))
    return ModelExport(panel, model, medmarks_table(parquet), records)


def panel_models(instances: pd.DataFrame) -> dict[str, list[str]]:
    """Each panel of the suite with the models the export ranks there (control runs left out: a judge audit's fixed
    answers are not models), panels in name order; a panel of control runs alone has none."""
    pairs = instances[["panel", "model"]].drop_duplicates().sort_values(["panel", "model"])
    found: dict[str, list[str]] = {}
    for panel, model in pairs.itertuples(index=False):
        found.setdefault(str(panel), [])
        if control_kind(str(model)) == "":
            found[str(panel)].append(str(model))
    return found


def build_export(instances: pd.DataFrame, ids: Mapping[str, int], prices: Prices | None = None) -> list[ModelExport]:
    """Every (panel, model) of the suite but the control runs; ``prices`` (``--judge-prices``) fill ``judge_cost``."""
    models = instances[[control_kind(m) == "" for m in instances["model"]]]
    return [
        model_export(str(panel), str(model), rows, ids, prices)
        for (panel, model), rows in models.groupby(["panel", "model"], sort=True)
    ]


def summary(instances: pd.DataFrame, exports: list[ModelExport]) -> pd.DataFrame:
    """The export's panels for report.md and the terminal (medmarks_readme.py): each panel's directory, models and
    the line of a panel with fewer than two models to rank."""
    return export_summary(panel_models(instances), slugs(sorted({e.panel for e in exports})))


def _jsonl(records: list[dict[str, Any]]) -> str:
    return "".join(strict_json(record) + "\n" for record in records)


def write_export(exports: list[ModelExport], out: Path) -> list[Path]:
    """Write the export under ``out`` (the report's ``medmarks/``, inside its directory swap): the panel
    directories, each with its own ``env_index.json``, and ``README.md``; returns the panel directories."""
    out.mkdir(parents=True, exist_ok=True)
    panels = slugs(sorted({e.panel for e in exports}))
    written: list[Path] = []
    ranked: dict[str, tuple[str, list[str]]] = {}
    for panel, panel_slug in panels.items():
        mine = [e for e in exports if e.panel == panel]
        models = slugs([e.model for e in mine])
        files: dict[str, dict[str, Any]] = {}
        for export in mine:
            directory = out / panel_slug / models[export.model]
            directory.mkdir(parents=True, exist_ok=True)
            pq.write_table(export.rows, directory / PARQUET_NAME)
            (directory / JSONL_NAME).write_text(_jsonl(export.records), encoding="utf-8")
            files[f"{models[export.model]}/{PARQUET_NAME}"] = {
                "env_id": ENV_ID,
                "model_id": export.model,
                "row_count": export.rows.num_rows,
            }
        index = {"version": 2, "panel": panel, "files": files, "runs": {}}
        (out / panel_slug / INDEX_NAME).write_text(strict_json(index, indent=2), encoding="utf-8")
        written.append(out / panel_slug)
        ranked[panel] = (panel_slug, [e.model for e in mine])
    (out / README_NAME).write_text(readme_text(ranked), encoding="utf-8")
    return written
