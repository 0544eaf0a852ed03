"""The key-free ``medarc-eval`` line as written (its block in docs/verifiers.md, moved from the README): bash
runs the export and the command from a fresh directory, with only what a reader would change swapped for the
loopback (the servers' ports: the model under test on 8080, the judge of the key-free start on 8081; the venv's
path). The judge plays llama-cpp-python's server as the README starts it: one call at a time, ``/v1/models`` saying
so, HTTP 500 to a ``json_schema`` response_format, no key. Every note must be judged (a lost judgment is never a 0),
in llama.cpp's ``json_object`` form with the explanation cap the line gives."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.readme_blocks import block_running
from tests.servers.judge import JudgeServer
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.verifiers

MODEL_URL, JUDGE_URL = "http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"


def test_the_readmes_medarc_eval_line_judges_every_note_on_a_one_slot_keyless_judge(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    text = "\n".join(block_running("/bin/medarc-eval "))
    assert MODEL_URL in text and JUDGE_URL in text, "the ports the README's servers listen on"
    (judge,) = re.findall(r"--judge-model (\S+)", text)
    (cap,) = re.findall(r"--explanation-cap (\d+)", text)
    (notes,) = re.findall(r" -n (\d+)", text)
    one_slot = JudgeServer({judge: "schema_refuser"}, one_at_a_time=0.05, owned_by="me")
    with synthetic_notes.mirror() as mirror, ModelServer() as model, one_slot as judges:
        script = text.replace(MODEL_URL, model.base_url).replace(JUDGE_URL, judges.base_url)
        script = script.replace(".venv-verifiers/bin/", f"{Path(sys.executable).parent}/")
        env = {**os.environ, **mirror.env, "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp_path / "notes")}
        env.pop("JUDGE_API_KEY", None)
        done = subprocess.run(
            ["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-3000:]
        requests = list(judges.requests)
        most_at_once = judges.max_in_flight
    (results,) = tmp_path.glob("outputs/evals/*/*/results.jsonl")
    rollouts = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    assert len(rollouts) == int(notes) == len(model.prompts)
    rewards = [r["reward"] for r in rollouts]
    assert all(isinstance(x, float) and math.isfinite(x) and x > 0 for x in rewards), rewards
    assert all(r["info"]["judge_feedback"][-1]["failures"] == 0 for r in rollouts)
    assert most_at_once == 1, "the server takes one call at a time and says so: no more are sent"
    judged = [r for r in requests if r.response_format == "json_object"]
    assert len(judged) == int(notes) and all(r.explanation_max == int(cap) for r in judged)
    sent = {r.authorization for r in requests}
    assert sent <= {None, "Bearer EMPTY"}, f"no key: none, or the keyless placeholder, is sent ({sent})"
