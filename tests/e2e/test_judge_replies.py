"""Untrusted text stays untrusted, through HELM's real helm-run: a model under test that plants its own verdict in
its answer never gets a planted score recorded, and a judge reply without text fails that judge by name instead of
crashing the run, then replays from HELM's cache.

The model under test is a loopback OpenAI-compatible server (tests/servers/judge.py's ``planter``), registered in
``prod_env`` as any local model is; the judges are loopback servers reached through HELM's own client; the notes
come from the loopback mirror.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.helm_tools import (
    OWN,
    P,
    helm_tool,
    register_loopback_model,
    request_states,
    run_dir,
    scores_of,
    stat,
    user_env,
)
from tests.servers.judge import PLAN_TEXT, PLANTED_FORMS, REFUSAL, Behaviour, JudgeServer
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.e2e

QUOTERS = ("quote_before", "quote_after", "quote_prose", "quote_single")


def test_no_planted_verdict_is_ever_recorded_whatever_the_judges_quote(mirror: NoteMirror, tmp_path: Path) -> None:
    """Six notes, each answer planting an all-5 verdict in another form (JSON, after ``}}}``, single-quoted,
    followed by ``<think>``, after ``</think>``, or just ``<think>``); four judges quote the answer before and
    after their own verdict, in prose and as single-quoted dicts. Every judge's own 2/2/3 is recorded, no 5."""
    panel = {"planter": Behaviour("planter"), **{q: Behaviour(q, OWN) for q in QUOTERS}}
    with JudgeServer(panel) as server:
        model = register_loopback_model(tmp_path / "prod_env", server.base_url, "planter")
        entry = f"{P}:model={model},judges={'+'.join(QUOTERS)},judge_base_url={server.base_url}"
        env = user_env(**mirror.env)
        helm_tool("helm-run", "--run-entries", entry, "--suite", "planted", "-m", "6", "-n", "1", cwd=tmp_path, env=env)
        assert server.count("quote_prose") == 12, "prose has no verdict: each note gets its repair turn"

    run = run_dir(tmp_path / "benchmark_output", "planted")
    states = request_states(run)
    answers = {s["result"]["completions"][0]["text"].strip() for s in states}
    assert answers == {form.strip() for form in PLANTED_FORMS}, "each planted form reached the judges"
    for state in states:
        record = state["annotations"][P]
        assert record["failed_judges"] == []
        for judge in QUOTERS:
            assert scores_of(record[judge]) == OWN, (judge, state["result"]["completions"][0]["text"])
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx(7 / 15)
    quoted = [s["annotations"][P]["quote_single"]["accuracy"]["explanation"] for s in states]
    assert all(PLAN_TEXT in explanation for explanation in quoted), "the judge's quote is kept in its explanation"


def test_a_refusing_judge_fails_by_name_the_run_completes_and_reruns_from_cache(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    """``content: null`` with a refusal (OpenAI's structured-output refusal), a tool call and an empty reply: each
    fails its judge on every note with its reason, the steady judge scores, and the same command again makes no
    judge call (the previous release crashed here, and on every re-run from its cache)."""
    panel = {
        "refuser": Behaviour("refuser"),
        "tool_caller": Behaviour("tool_caller"),
        "empty": Behaviour("empty"),
        "steady": Behaviour("steady", {"accuracy": 4, "completeness": 4, "clarity": 4}),
    }
    with JudgeServer(panel) as server:
        entry = f"{P}:model=simple/model1,judges=refuser+tool_caller+empty+steady,judge_base_url={server.base_url}"
        env = user_env(**mirror.env)
        args = ["--run-entries", entry, "--suite", "refused", "-m", "3", "-n", "1"]
        first = helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert server.count() == 3 * 4, "one call per note and judge: a refusal is not retried nor repaired"
        run = run_dir(tmp_path / "benchmark_output", "refused")
        recorded = [s["annotations"][P] for s in request_states(run)]

        again = helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert server.count() == 3 * 4, "the re-run replays every judge reply from HELM's cache"

    refusal = f"refused: {' '.join(REFUSAL.split()[:12])} …"
    for record in recorded:
        assert record["failed_judges"] == ["refuser", "tool_caller", "empty"]
        assert record["refuser"]["failure"] == refusal
        assert record["tool_caller"]["failure"] == "no text: the judge answered with a tool call"
        assert record["empty"]["failure"] == "empty reply"
        assert record["steady"]["status"] == "ok"
    assert [s["annotations"][P] for s in request_states(run)] == recorded
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx(0.8)
    assert "Traceback" not in first + again and "TypeError" not in first + again
