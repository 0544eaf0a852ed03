"""The Every Eval Ever export's instance-level records: one model's notes under one panel, as EEE's JSONL lines.

Why two records for a judged note: EEE's instance record must hold a number as its score, and an unjudged note
has no reward (a failed judge is not the model's 0). So every note has a record of the ``unjudged`` result (score
1 when no judge of the panel scored it, with the judges' failures as its ``error``; 0 otherwise), and a note the
panel scored has a second record, of the ``reward`` result, with its reward. The reward's records are exactly the
notes its mean is over; no unjudged note ever carries a reward. Each judge's scores, explanations, served model
and failure go in the record's ``metadata`` (EEE's metadata holds strings: they are one JSON string). EEE requires
``is_correct``: it is false on every record, as a graded reward claims no correctness (EEE's HELM converter does the
same for graded metrics). Pure: rows of the report's table in, plain dicts out.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.report.json_cells import number, strict_json, text

SCHEMA_VERSION = "0.3.0"
EVALUATION_NAME = "mtsamples_procedures"
REWARD_ID = f"{EVALUATION_NAME}.reward"
UNJUDGED_ID = f"{EVALUATION_NAME}.unjudged"

Row = dict[str, Any]
"""One judge's row of one note (suite.py's table as records)."""


def _score(value: Any) -> int | None:
    score = number(value)
    return None if score is None else int(score)


def judge_entry(row: Row) -> dict[str, Any]:
    """One judge's verdict on one note: its served model, scores, explanations, reward, and why it gave none."""
    return {
        "judge": row["judge"],
        "model_deployment": text(row.get("judge_model")),
        "served_model": text(row.get("reported_model")),
        "status": row["status"],
        "scores": {dim: _score(row[dim]) for dim in DIMENSIONS},
        "explanations": {dim: text(row.get(f"{dim}_explanation")) for dim in DIMENSIONS},
        "reward": number(row["judge_reward"]),
        "failure": text(row["failure"]),
        "failure_kind": text(row.get("failure_kind")),
        "invalid": text(row["invalid"]),
        "tokens_in": number(row.get("tokens_in")),
        "tokens_out": number(row.get("tokens_out")),
    }


def failures(note: list[Row]) -> str:
    """An unjudged note's error: each failed judge's reason."""
    said = "; ".join(f"{r['judge']}: {text(r['failure']) or 'failed'}" for r in note if r["status"] == "failed")
    return f"unjudged: no judge of the panel scored this answer ({said or 'no judge record'})"


def _metadata(note: list[Row]) -> dict[str, str]:
    first = note[0]
    statuses = [r["status"] for r in note]
    metadata = {
        "note": str(first["note"]),
        "specialty": str(first["specialty"]),
        "extracted_section": str(first["extracted_section"]),
        "run": str(first["run"]),
        "panel": str(first["panel"]),
        "judges_scored": str(statuses.count("ok")),
        "judges_failed": str(statuses.count("failed")),
        "empty_answer": "true" if bool(first["empty_answer"]) else "false",
        "judges": strict_json([judge_entry(r) for r in note]),
    }
    rules = number(first.get("rules_version"))
    if rules is not None:
        metadata["rules_version"] = str(int(rules))
    return metadata


def sample_hash(raw: str, reference: list[str]) -> str:
    """EEE's cross-model join key for one input (its conversion guide's recipe), the same for every model."""
    canonical = json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def note_records(note: list[Row], evaluation_id: str, model_id: str) -> list[dict[str, Any]]:
    """The records of one note: its ``unjudged`` record, then, when the panel scored it, its ``reward`` one."""
    first = note[0]
    reference = [str(first["reference"])]
    common: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "model_id": model_id,
        "evaluation_name": EVALUATION_NAME,
        "sample_id": str(first["note_id"]),
        "sample_hash": sample_hash(str(first["note_text"]), reference),
        "interaction_type": "single_turn",
        "input": {"raw": str(first["note_text"]), "formatted": str(first["prompt"]), "reference": reference},
        "output": {"raw": [str(first["answer"])]},
        "answer_attribution": [],
        "metadata": _metadata(note),
    }
    reward = number(first["note_reward"])
    records = [
        {
            **common,
            "evaluation_result_id": UNJUDGED_ID,
            "evaluation": {"score": 1.0 if reward is None else 0.0, "is_correct": False},
            "error": failures(note) if reward is None else None,
        }
    ]
    if reward is not None:
        evaluation = {"score": reward, "is_correct": False}
        records.append({**common, "evaluation_result_id": REWARD_ID, "evaluation": evaluation, "error": None})
    return records


def instance_records(rows: list[Row], evaluation_id: str, model_id: str) -> list[dict[str, Any]]:
    """Every note's records for one (panel, model), in note order."""
    notes: dict[str, list[Row]] = {}
    for row in rows:
        notes.setdefault(str(row["note"]), []).append(row)
    return [record for name in sorted(notes) for record in note_records(notes[name], evaluation_id, model_id)]
