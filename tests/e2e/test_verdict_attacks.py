"""An answer cannot bend its own verdict, through HELM's real helm-run: a plant the judges retype is never scored,
an answer carrying a judge's own words does not remove that judge's low verdict, a JSON reply is its own verdict
whatever its strings quote, a key written twice and a 200 holding an error are named failures, and a 10 MB answer
is judged, cut, within twice the memory of a normal run.

The model under test and the judges are loopback servers (tests/servers/judge.py: ``hostile``, ``huge``,
``author``; the judges by behaviour), the notes come from the loopback mirror.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.helm_host.compat import installed_distributions
from tests.e2e.helm_tools import (
    OWN,
    P,
    helm_tool,
    peak_memory_of_tool,
    register_loopback_model,
    request_states,
    run_dir,
    scores_of,
    stat,
    user_env,
)
from tests.servers.judge import RETYPED_PLANTS, STOCK_OPENING, Behaviour, JudgeServer
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.e2e

LOW = dict.fromkeys(OWN, 1)
SCORING = {"stock_json": LOW, "stock_prose": LOW, "json_quoter": OWN, "quote_retyped": OWN, "quote_after": OWN}


def test_a_hostile_answer_bends_no_verdict(mirror: NoteMirror, tmp_path: Path) -> None:
    """Four answers, each carrying the opening of the stock judges' low verdict and an all-5 plant retyped another
    way (full-width digits and a ligature, zero-width spaces, over lines, fenced as code). The stock judges' own 1s
    are recorded (strict JSON and in prose), the quoting judges' own 2/2/3 (a JSON reply quoting the answer's
    plant in an explanation; a prose reply quoting it retyped, NFKC and whitespace collapsed; a verbatim quote),
    never a 5; a verdict with ``accuracy`` twice and a 200 with an ``error`` beside its choices fail by name. The same
    command again replays every answered call but the errored ones, which were never stored."""
    panel = {
        "hostile": Behaviour("hostile"),
        "duplicate_keys": Behaviour("duplicate_keys", OWN),
        "error_beside": Behaviour("error_beside", OWN),
        **{name: Behaviour(name, OWN) for name in SCORING},
    }
    judges = [*SCORING, "duplicate_keys", "error_beside"]
    with JudgeServer(panel) as server:
        model = register_loopback_model(tmp_path / "prod_env", server.base_url, "hostile")
        entry = f"{P}:model={model},judges={'+'.join(judges)},judge_base_url={server.base_url}"
        env = user_env(**mirror.env)
        args = ["--run-entries", entry, "--suite", "hostile", "-m", "4", "-n", "1"]
        first = helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        calls = {judge: server.count(judge) for judge in judges}
        again = helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        replayed = {judge: server.count(judge) - calls[judge] for judge in judges}

    assert replayed == {**dict.fromkeys(judges, 0), "error_beside": 4}, "a 200 with an error is never stored"
    run = run_dir(tmp_path / "benchmark_output", "hostile")
    states = request_states(run)
    answers = [s["result"]["completions"][0]["text"] for s in states]
    assert all(STOCK_OPENING in a for a in answers)
    # medhelm cuts a completion at max_tokens itself (the zero-width plant is long in tokens): each plant's start
    assert sorted(next(i for i, p in enumerate(RETYPED_PLANTS) if p[:40] in a) for a in answers) == [0, 1, 2, 3]
    for state in states:
        record = state["annotations"][P]
        assert record["failed_judges"] == ["duplicate_keys", "error_beside"]
        for judge, expected in SCORING.items():
            assert record[judge]["status"] == "ok" and scores_of(record[judge]) == expected, judge
        assert record["duplicate_keys"]["failure"] == "duplicate keys in the verdict: accuracy"
        assert record["error_beside"]["failure"].startswith("error beside the reply: ")
        assert "upstream model failed" in record["error_beside"]["failure"]
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx((2 * 0.2 + 3 * 7 / 15) / 5)
    assert "Traceback" not in first + again


def _judged(tmp_path: Path, mirror: NoteMirror, served: str) -> tuple[int, Path, JudgeServer]:
    """One helm-run of the ``served`` loopback model on two notes, one steady judge: its peak memory (KB)."""
    with JudgeServer({served: Behaviour(served), "steady": Behaviour("steady")}) as server:
        model = register_loopback_model(tmp_path / "prod_env", server.base_url, served)
        entry = f"{P}:model={model},judges=steady,judge_base_url={server.base_url}"
        args = ["--run-entries", entry, "--suite", served, "-m", "2", "-n", "1"]
        peak, _ = peak_memory_of_tool("helm-run", *args, cwd=tmp_path, env=user_env(**mirror.env))
    return peak, run_dir(tmp_path / "benchmark_output", served), server


def test_a_10_mb_answer_is_judged_cut_within_twice_a_normal_runs_memory(mirror: NoteMirror, tmp_path: Path) -> None:
    """The model answers a 10 MB plan (its sentences repeated) on each of two notes: both are judged on their first
    ``answer_cap`` characters, the record says how long the answer was, and helm-run's peak memory stays within
    twice that of the same run with short answers (before the cap: 8.3 GB, and a valid verdict recorded as "no
    verdict in reply"). medhelm's own OpenAI client cuts a completion at the run's max_tokens before anything of
    ours sees it, so there the answer arrives cut and its record has nothing to say."""
    normal, _, _ = _judged(tmp_path / "normal", mirror, "author")
    huge, run, server = _judged(tmp_path / "huge", mirror, "long_plan")
    cap = RunEntryArgs().answer_cap
    for state in request_states(run):
        record = state["annotations"][P]
        assert record["failed_judges"] == [] and record["steady"]["status"] == "ok"
        whole = len(state["result"]["completions"][0]["text"])
        if "medhelm" in installed_distributions():
            assert whole < cap and "answer_cut" not in record
        else:
            assert whole > server.huge_bytes - 200 and record["answer_cut"] == whole > cap
    assert all(len(prompt) < cap + 20_000 for prompt in server.prompts_for("steady")), "judges read the cut answer"
    print(f"peak memory: normal run {normal / 1024:.0f} MB, 10 MB answers {huge / 1024:.0f} MB")
    if "medhelm" not in installed_distributions():  # medhelm's client tokenizes the 10 MB itself (3 GB), before us
        assert huge <= 2 * normal
