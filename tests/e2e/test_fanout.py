"""A whole run judged at the endpoint's pace, through HELM's real helm-run: as many calls in flight as the
endpoint's limit whatever ``--num-threads``, a progress bar, and a killed run that resumes from HELM's cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.helm_tools import P, helm_tool, kill_helm_run_once, request_states, run_dir, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.e2e

FIXED = {"accuracy": 4, "completeness": 4, "clarity": 4}


def test_one_helm_thread_still_keeps_every_judge_call_of_the_run_in_flight(mirror: NoteMirror, tmp_path: Path) -> None:
    """Three notes × three judges with --num-threads 1: the server holds each call until it has seen nine at
    once, which only a whole-run fan-out reaches (note by note, one thread sends three). The format is given,
    so no first call waits alone to learn it (structured.FormatMemory.first_live_call)."""
    judges = dict.fromkeys(["a", "b", "c"], Behaviour("steady", FIXED))
    with JudgeServer(judges, rendezvous=9, rendezvous_timeout=10) as judge:
        entry = f"{P}:model=simple/model1,judges=a+b+c,judge_base_url={judge.base_url},judge_structured=json_schema"
        env = user_env(**mirror.env)
        output = helm_tool("helm-run", "--run-entries", entry, "--suite", "fan", "-m", "3", "-n", "1",
                           cwd=tmp_path, env=env)  # fmt: skip
        assert judge.max_in_flight == 9
    states = request_states(run_dir(tmp_path / "benchmark_output", "fan"))
    assert [s["annotations"][P]["failed_judges"] for s in states] == [[], [], []]
    assert "Judging run 1 of 1 (a+b+c): 3/3 notes of this run" in output


def test_a_killed_run_run_again_makes_only_the_calls_never_answered(mirror: NoteMirror, tmp_path: Path) -> None:
    """One call at a time, a second each: the run is killed while the third call is in progress; the same
    command again replays the two answered calls from HELM's cache and makes the other two."""
    with JudgeServer({"a": Behaviour("steady", FIXED)}, latency=1.0) as judge:
        entry = f"{P}:model=simple/model1,judges=a,judge_base_url={judge.base_url},judge_max_concurrency=1"
        args = ["--run-entries", entry, "--suite", "killed", "-m", "4", "-n", "1"]
        env = user_env(**mirror.env)
        reached = lambda: judge.wait_for_requests(3, timeout=300)  # noqa: E731
        kill_helm_run_once(args, tmp_path, env, reached, "reached its third judge call")
        assert judge.count() == 3
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert judge.count() == 3 + 2
    states = request_states(run_dir(tmp_path / "benchmark_output", "killed"))
    assert len(states) == 4 and all(s["annotations"][P]["failed_judges"] == [] for s in states)
