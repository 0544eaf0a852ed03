"""Door runs written in the formats their tools write (verifiers' results.jsonl, Inspect's .eval), from their
documented shapes: for the tests of ``helm-mtsamples-report --door-results`` that need known truth, and for the
README's command run as written."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

JUDGES = ("harsh", "kind")
VERDICT = {"accuracy": 2, "completeness": 3, "clarity": 4}


def entry(failed: bool) -> dict[str, Any]:
    """One judge's entry as every door records it (common/record.py)."""
    if failed:
        return {"status": "failed", "failure": "no verdict in reply", "raw_reply": "..."}
    return {**{d: {"score": s, "explanation": "ok"} for d, s in VERDICT.items()}, "status": "ok"}


def record(failed: set[str]) -> dict[str, Any]:
    return {**{j: entry(j in failed) for j in JUDGES}, "failed_judges": sorted(failed)}


def write_verifiers_run(root: Path, model: str, failing: list[set[str]]) -> Path:
    """A results.jsonl as vf-eval -s writes it (one rollout per note, ``info.record``), metadata.json beside it."""
    run = root / "outputs" / "evals" / f"helm_mtsamples_ext.verifiers_env--{model}" / "abc123"
    run.mkdir(parents=True)
    lines = [json.dumps({"example_id": i, "reward": 0.6, "info": {"record": record(f)}}) for i, f in enumerate(failing)]
    (run / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (run / "metadata.json").write_text(json.dumps({"model": model, "env_id": "helm_mtsamples_ext.verifiers_env"}))
    return run / "results.jsonl"


def write_inspect_log(root: Path, model: str, failing: list[set[str]]) -> Path:
    """An .eval log as Inspect writes it: a zip with header.json and samples/<id>_epoch_<n>.json."""
    path = root / "logs" / f"2026-12-06T00-00-00_mtsamples-procedures_{model.replace('/', '-')}.eval"
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as log:
        log.writestr("header.json", json.dumps({"eval": {"task": "mtsamples_procedures", "model": model}}))
        for i, failed in enumerate(failing):
            judged = record(failed)
            metadata = {
                "judges": {j: judged[j] for j in JUDGES},
                "failures": {j: "no verdict in reply" for j in sorted(failed)},
                "empty_answer": False,
            }
            sample = {"id": f"note-{i}", "epoch": 1, "scores": {"panel_scorer": {"value": {}, "metadata": metadata}}}
            log.writestr(f"samples/note-{i}_epoch_1.json", json.dumps(sample))
    return path
