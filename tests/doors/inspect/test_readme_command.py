"""The Inspect commands as written (their block in docs/inspect.md, moved from the README, after the venv line):
bash runs the exports and the ``inspect eval`` line from a fresh directory, with only what a reader would change
swapped for the loopback: the servers' ports (the model under test on 8080, the judge of the key-free start on 8081)
and the venv's path. The judge is served under the name the line gives it and plays llama-cpp-python's server as
the README starts it: one call at a time, ``/v1/models`` saying so, HTTP 500 to a ``json_schema`` response_format.
Every note must be judged, one call at a time, in llama.cpp's ``json_object`` form with the line's explanation cap."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from tests.readme_blocks import block_running
from tests.servers.judge import JudgeServer
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect

MODEL_URL, JUDGE_URL = "http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1"


def test_the_readmes_inspect_commands_run_the_task_as_written(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    lines = block_running("/bin/inspect eval ", skip_prefix="python3 -m venv")
    text = "\n".join(lines)
    assert MODEL_URL in text and JUDGE_URL in text, "the ports the README's servers listen on"
    (judge,) = re.findall(r"-T judges=(\S+)", text)
    (cap,) = re.findall(r"-T explanation_cap=(\d+)", text)
    one_slot = JudgeServer({judge: "schema_refuser"}, one_at_a_time=0.05, owned_by="me")
    with synthetic_notes.mirror() as mirror, ModelServer() as model, one_slot as judges:
        script = text.replace(MODEL_URL, model.base_url).replace(JUDGE_URL, judges.base_url)
        script = script.replace(".venv-inspect/bin/", f"{Path(sys.executable).parent}/")
        env = {**os.environ, **mirror.env, "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp_path / "notes")}
        env.pop("JUDGE_API_KEY", None)
        done = subprocess.run(
            ["bash", "-e", "-c", f"{script} --log-dir logs --display none"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        asked = len(model.prompts)
        requests = [r for r in judges.requests if r.response_format == "json_object"]
        most_at_once = judges.max_in_flight
    (log_file,) = (tmp_path / "logs").glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.status == "success" and log.samples is not None
    assert len(log.samples) == asked == len(requests) == 10, "--limit 10 notes, each asked and judged once"
    assert all(r.explanation_max == int(cap) for r in requests), "the quickstart's cap keeps a small judge fast"
    assert most_at_once == 1, "the server takes one call at a time and says so: no more are sent"
    unjudged = [s.scores["panel_scorer"].value["unjudged"] for s in log.samples if s.scores]
    assert unjudged == [0.0] * 10, "every note judged"
