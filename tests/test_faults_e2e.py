"""Faults of real judge servers through HELM's real helm-run: nothing lost that waiting could save, no
score a judge did not give, and a run that could not judge fails with one clear line and a non-zero exit.

The judges are loopback OpenAI-compatible servers (tests/judge_server.py) reached through HELM's own
client; the model under test is HELM's offline simple/model1; the notes come from the loopback mirror.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.judge_server import Behaviour, JudgeServer
from tests.mirror import NoteMirror
from tests.test_pipeline_e2e import BIN, P, files_containing, helm_tool, request_states, run_dir, stat, user_env

pytestmark = pytest.mark.e2e

RIGHT, WRONG = "sk-right-key-1234abcd", "sk-wrong-key-5678efgh"
FIXED = {"accuracy": 4, "completeness": 4, "clarity": 4}


@pytest.fixture(scope="module")
def mirror(pinned_notes_dir: Path) -> Iterator[NoteMirror]:
    with NoteMirror(pinned_notes_dir, max_lifetime=1200) as m:
        yield m


def helm_run_failing(*args: str, cwd: Path, env: dict[str, str]) -> str:
    """Run helm-run expecting it to fail; its output."""
    proc = subprocess.run(
        [str(BIN / "helm-run"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"helm-run should have failed:\n{output[-3000:]}"
    return output


def line_with(output: str, needle: str) -> str:
    lines = [line for line in output.splitlines() if needle in line]
    assert lines, f"no line with {needle!r} in:\n{output[-3000:]}"
    return lines[-1]


def answered(judge: JudgeServer) -> int:
    return sum(1 for _, status in judge.arrivals if status == 200)


def test_a_refused_key_fails_the_run_then_a_rate_limited_rerun_makes_exactly_the_missing_calls(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    with JudgeServer({"a": Behaviour("steady", FIXED), "b": Behaviour("steady", FIXED)}, api_key=RIGHT) as judge:
        entry = f"{P}:model=simple/model1,judges=a+b,judge_base_url={judge.base_url},judge_max_concurrency=2"
        args = ["--run-entries", entry, "--suite", "keys", "-m", "3", "-n", "1"]
        output = helm_run_failing(*args, cwd=tmp_path, env=user_env(MTSAMPLES_PROCEDURES_BASE_URL=mirror.base_url,
                                                                   JUDGE_API_KEY=WRONG))  # fmt: skip
        line = line_with(output, "refused its key")
        assert judge.base_url.rstrip("/") in line and "HTTP 401" in line and "JUDGE_API_KEY_1" in line
        assert WRONG not in output
        assert judge.count() <= 2, "the run stops with the calls in flight at the first refusal, not once per note"

        judge.rate_limit = (4, 2.0)  # the right key now, and the endpoint pushes back with 429 + Retry-After
        env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=mirror.base_url, JUDGE_API_KEY=RIGHT)
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert judge.rejected_429 > 0
        assert answered(judge) == 3 * 2, "every judgment made once, none lost to the rate limit"

    run = run_dir(tmp_path / "benchmark_output", "keys")
    assert all(s["annotations"][P]["failed_judges"] == [] for s in request_states(run))
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx(0.8)
    for secret in (RIGHT, WRONG):
        assert files_containing(tmp_path / "benchmark_output", secret) == []


def test_an_unjudged_run_fails_loudly_and_the_same_command_again_makes_only_the_failed_calls(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    """Two answered calls per ten minutes, and judge_max_wait=2: notes 3 and 4 cannot be judged in time."""
    with JudgeServer({"a": Behaviour("steady", FIXED)}, rate_limit=(2, 600.0)) as judge:
        entry = f"{P}:model=simple/model1,judges=a,judge_base_url={judge.base_url},judge_max_wait=2"
        args = ["--run-entries", entry, "--suite", "limits", "-m", "4", "-n", "1"]
        env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=mirror.base_url)
        output = helm_run_failing(*args, cwd=tmp_path, env=env)
        line = line_with(output, "notes have no reward")
        assert "2 of 4 notes have no reward" in line and "max_unjudged=0" in line
        assert "gave up waiting for the endpoint" in line and "Re-running the same command" in line
        assert answered(judge) == 2

        judge.rate_limit = None  # the quota is back
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert answered(judge) == 2 + 2, "the re-run replays two judgments from HELM's cache and makes two"

    run = run_dir(tmp_path / "benchmark_output", "limits")
    assert stat(run, f"{P}_unjudged")["mean"] == 0


def test_misconfigured_judges_fail_before_any_judge_call(pinned_notes_dir: Path, tmp_path: Path) -> None:
    """A hosted judge without its key, and a judge URL carrying a secret: each fails the run with one line
    naming what to fix, and the secret is written nowhere."""
    env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=str(pinned_notes_dir))
    keyless = f"{P}:model=simple/model1,judges=openai/gpt-4o-mini"
    output = helm_run_failing("--run-entries", keyless, "--suite", "keyless", "-m", "1", cwd=tmp_path, env=env)
    line = line_with(output, "cannot be used")
    assert "'gpt-4o-mini'" in line and "OPENAI_API_KEY" in line

    leaky = f"{P}:model=simple/model1,judges=a,judge_base_url=http://127.0.0.1:9/v1?auth=SECRETVALUE"
    output = helm_run_failing("--run-entries", leaky, "--suite", "leaky", "-m", "1", cwd=tmp_path, env=env)
    line = line_with(output, "judge_base_url may carry only")
    assert "'auth'" in line and "SECRETVALUE" not in line
    assert not (tmp_path / "benchmark_output" / "runs" / "leaky").exists() or not files_containing(
        tmp_path / "benchmark_output" / "runs" / "leaky", "SECRETVALUE"
    )


def test_two_endpoints_each_with_its_own_key_from_credentials_and_env(mirror: NoteMirror, tmp_path: Path) -> None:
    """Endpoint 1's key in credentials.conf (judgeApiKeys, keyed by URL), endpoint 2's in JUDGE_API_KEY_2."""
    one_key, two_key = "sk-endpoint-one-1111", "sk-endpoint-two-2222"
    with (
        JudgeServer({"a": Behaviour("steady", FIXED)}, api_key=one_key) as one,
        JudgeServer({"b": Behaviour("steady", FIXED)}, api_key=two_key) as two,
    ):
        prod_env = tmp_path / "prod_env"
        prod_env.mkdir()
        (prod_env / "credentials.conf").write_text(f'judgeApiKeys: {{"{one.base_url}": "{one_key}"}}\n')
        entry = f"{P}:model=simple/model1,judges=a+b,judge_base_url={one.base_url}+{two.base_url}"
        env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=mirror.base_url, JUDGE_API_KEY_2=two_key)
        output = helm_tool("helm-run", "--run-entries", entry, "--suite", "two", "-m", "2", cwd=tmp_path, env=env)
        assert (one.count(), two.count()) == (2, 2)
    run = run_dir(tmp_path / "benchmark_output", "two")
    assert all(s["annotations"][P]["failed_judges"] == [] for s in request_states(run))
    for secret in (one_key, two_key):
        assert secret not in output and files_containing(tmp_path / "benchmark_output", secret) == []


def test_judges_that_do_not_read_the_answer_leave_every_note_unjudged_and_a_reading_judge_still_scores(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    """`mangled` writes SmolLM2-135M's reply to every note (the format line, placeholders mangled: no dimension is
    the judge's own words); `parrot` writes one fluent verdict to every note (the same verdict for different
    answers). Together they leave all five notes unjudged, and with max_unjudged=0 the run fails with one line
    naming each judge and why. A judge that reads the answer, fixed scores and all, scores as usual."""
    panel = {"mangled": Behaviour("mangled"), "parrot": Behaviour("parrot"), "reader": Behaviour("steady", FIXED)}
    env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=mirror.base_url)
    with JudgeServer(panel) as judge:
        entry = f"{P}:model=simple/model1,judges=mangled+parrot,judge_base_url={judge.base_url}"
        output = helm_run_failing("--run-entries", entry, "--suite", "blind", "-m", "5", cwd=tmp_path, env=env)
        line = line_with(output, "notes have no reward")
        assert "5 of 5 notes have no reward" in line and "max_unjudged=0" in line
        assert "mangled: no valid dimension (explanation is not the judge's own words) ×5" in line
        assert "parrot: same verdict for different answers ×5" in line

        entry = f"{P}:model=simple/model1,judges=reader,judge_base_url={judge.base_url}"
        helm_tool("helm-run", "--run-entries", entry, "--suite", "reads", "-m", "5", cwd=tmp_path, env=env)
    run = run_dir(tmp_path / "benchmark_output", "reads")
    answers = {s["result"]["completions"][0]["text"].strip() for s in request_states(run)}
    assert len(answers) >= 3, f"the rule needs three different answers to bite: {answers}"
    assert stat(run, f"{P}_reward")["mean"] == pytest.approx(0.8)
    assert (stat(run, f"{P}_same_verdict")["mean"], stat(run, f"{P}_unjudged")["mean"]) == (0, 0)
