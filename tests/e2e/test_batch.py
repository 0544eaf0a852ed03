"""judge_batch=true through HELM's real helm-run against the loopback OpenAI Batch server: no direct call, the
rewards of a direct run, a killed run that re-attaches to its batch, and a finished run that makes no request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helm_tools import P, helm_tool, kill_helm_run_once, request_states, run_dir, stat, user_env
from tests.servers.batch import BatchAPI
from tests.servers.judge import JudgeServer
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.e2e


def annotations_of(run: Path) -> list[dict[str, Any]]:
    return [s["annotations"][P] for s in request_states(run)]


def test_a_batched_run_judges_every_note_as_a_direct_run_without_a_direct_call(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    env = user_env(**mirror.env)
    for name in ("batched", "direct"):
        (tmp_path / name).mkdir()
    with JudgeServer(dict.fromkeys(["a", "b"], "steady"), batch=BatchAPI()) as judge:
        entry = f"{P}:model=simple/model1,judges=a+b,judge_base_url={judge.base_url}"
        helm_tool("helm-run", "--run-entries", entry + ",judge_batch=true", "--suite", "batch", "-m", "4",
                  cwd=tmp_path / "batched", env=env)  # fmt: skip
        assert judge.count() == 0 and judge.batch is not None and judge.batch.created() == 2
        helm_tool("helm-run", "--run-entries", entry, "--suite", "direct", "-m", "4", cwd=tmp_path / "direct", env=env)
    batched = run_dir(tmp_path / "batched" / "benchmark_output", "batch")
    direct = run_dir(tmp_path / "direct" / "benchmark_output", "direct")
    assert annotations_of(batched) == annotations_of(direct)
    assert stat(batched, f"{P}_reward")["mean"] == stat(direct, f"{P}_reward")["mean"]
    assert batched.name == direct.name, "how judging was paid does not rename the run"


def test_a_run_killed_while_its_batch_is_in_progress_reattaches_and_a_finished_run_makes_no_request(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    env = user_env(**mirror.env)
    api = BatchAPI()
    api.hold.set()
    with JudgeServer({"a": "steady"}, batch=api) as judge:
        entry = f"{P}:model=simple/model1,judges=a,judge_base_url={judge.base_url},judge_batch=true"
        args = ["--run-entries", entry, "--suite", "killed", "-m", "3"]
        kill_helm_run_once(args, tmp_path, env, lambda: api.wait_created(1, timeout=300), "submitted its batch")
        (ledger,) = (tmp_path / "prod_env" / "cache" / "mtsamples_batches").iterdir()
        assert len(json.loads(ledger.read_text())) == 1, "the submitted batch is written down"

        api.hold.clear()  # the provider finishes the batch
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert (api.created(), judge.count()) == (1, 0), "re-attached: no second batch, no direct call"

        seen = len(api.requests)
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert (len(api.requests), judge.count()) == (seen, 0), "a finished run re-run makes zero requests"
    assert all(a["failed_judges"] == [] for a in annotations_of(run_dir(tmp_path / "benchmark_output", "killed")))
