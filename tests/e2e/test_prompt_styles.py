"""The ``prefix`` prompt style end to end, beside a suite of an earlier release: a new suite in the same output
folder gets ``prefix`` (every prompt the judge server sees leads with the same fixed part, the part its prefix
cache reads once) and replays from HELM's cache with zero calls; the old suite keeps the ``ours`` it stored
(tests/e2e/test_old_suite.py re-runs it from its cache, unchanged)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from helm_mtsamples_ext.helm_host.compat import check_distribution
from helm_mtsamples_ext.helm_host.prompt_default import stored_prompt_style
from helm_mtsamples_ext.judges.core.prefix_prompt import FIXED_PART
from tests.e2e.helm_tools import P, helm_tool, user_env
from tests.servers.judge import JudgeServer

pytestmark = pytest.mark.e2e
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "old_suite" / check_distribution().name
NOTES = 4


def judge_prompts(run: Path) -> set[str]:
    spec = json.loads((run / "run_spec.json").read_text())
    return {a["args"]["judge_prompt"] for a in spec["annotators"]}


def test_a_new_suite_beside_an_old_one_gets_the_prefix_style_and_replays_from_cache(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE, tmp_path, dirs_exist_ok=True)
    env = user_env(
        MTSAMPLES_PROCEDURES_BASE_URL=str(tmp_path / "notes"),
        MTSAMPLES_PROCEDURES_MANIFEST=str(tmp_path / "manifest.tsv"),
    )
    out = tmp_path / "benchmark_output"
    with JudgeServer({"a": "steady", "b": "steady"}) as judge:
        entry = f"{P}:model=simple/model1,judges=a+b,judge_base_url={judge.base_url}"
        helm_tool("helm-run", "--run-entries", entry, "--suite", "new", "-m", str(NOTES), cwd=tmp_path, env=env)
        prompts = [r.prompt for r in judge.requests]
    assert len(prompts) == 2 * NOTES
    assert all(p.startswith(FIXED_PART) for p in prompts)
    assert len(os.path.commonprefix(prompts)) >= len(FIXED_PART)
    (run,) = [r for r in (out / "runs" / "new").iterdir() if r.name.startswith(f"{P}:")]
    assert judge_prompts(run) == {"prefix"}
    old = [r for r in (out / "runs" / "old").iterdir() if r.name.startswith(f"{P}:")]
    assert {s for r in old for s in judge_prompts(r)} == {"ours"}
    assert stored_prompt_style(str(out), "old", old[0].name.rsplit(",model=", 1)[0]) == "ours"

    before = rewards_of(out, "new")
    # The server is gone: a call the cache did not answer would fail the run (max_unjudged is 0).
    helm_tool("helm-run", "--run-entries", entry, "--suite", "new", "-m", str(NOTES), cwd=tmp_path, env=env)
    assert rewards_of(out, "new") == before and len(before) == NOTES
    assert judge_prompts(run) == {"prefix"}


def rewards_of(out: Path, suite: str) -> dict[str, float]:
    """{instance id: reward} of the suite's one run."""
    (run,) = [r for r in (out / "runs" / suite).iterdir() if r.name.startswith(f"{P}:")]
    return {
        entry["instance_id"]: s["mean"]
        for entry in json.loads((run / "per_instance_stats.json").read_text())
        for s in entry["stats"]
        if s["name"]["name"] == f"{P}_reward" and not s["name"].get("perturbation")
    }
