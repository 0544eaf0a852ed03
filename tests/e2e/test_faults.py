"""Faults of real judge servers through HELM's real helm-run: nothing lost that waiting could save, no
score a judge did not give, and a run that could not judge fails with one clear line and a non-zero exit.

The judges are loopback OpenAI-compatible servers (tests/servers/judge.py) reached through HELM's own
client; the model under test is HELM's offline simple/model1; the notes (synthetic) come from the loopback mirror.
"""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helm_tools import BIN, P, files_containing, helm_tool, request_states, run_dir, stat, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.loopback import closed_port_url
from tests.servers.mirror import NoteMirror
from tests.synthetic_notes import LONG_INPUT_WORDS, OBGYN, SyntheticNotes

pytestmark = pytest.mark.e2e

RIGHT, WRONG = "sk-right-key-1234abcd", "sk-wrong-key-5678efgh"
FIXED = {"accuracy": 4, "completeness": 4, "clarity": 4}


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
        output = helm_run_failing(*args, cwd=tmp_path, env=user_env(**mirror.env, JUDGE_API_KEY=WRONG))
        line = line_with(output, "refused its key")
        assert judge.base_url.rstrip("/") in line and "HTTP 401" in line and "JUDGE_API_KEY_1" in line
        assert WRONG not in output
        assert judge.count() <= 2, "the run stops with the calls in flight at the first refusal, not once per note"

        judge.rate_limit = (4, 2.0)  # the right key now, and the endpoint pushes back with 429 + Retry-After
        env = user_env(**mirror.env, JUDGE_API_KEY=RIGHT)
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
        env = user_env(**mirror.env)
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


def test_misconfigured_judges_fail_before_any_judge_call(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    """A hosted judge without its key, and a judge URL carrying a secret: each fails the run with one line
    naming what to fix, and the secret is written nowhere."""
    env = user_env(**synthetic_notes.env())
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
        env = user_env(**mirror.env, JUDGE_API_KEY_2=two_key)
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
    env = user_env(**mirror.env)
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


# ---------------------------------------------------------------- faults of real servers, each with its bound

KEY = "sk-echoed-by-the-gateway-9f8e7d6c"


def last_line(output: str) -> str:
    return [line for line in output.splitlines() if line.strip()][-1]


def records_of(run: Path, judge: str) -> list[dict[str, Any]]:
    return [s["annotations"][P][judge] for s in request_states(run)]


def notes_where(run: Path, rule: Callable[[str], bool]) -> int:
    """How many of the run's notes (inputs) follow ``rule``: some must and some must not, or the test shows nothing."""
    states = request_states(run)
    count = sum(rule(s["instance"]["input"]["text"]) for s in states)
    assert 0 < count < len(states), f"the sample needs notes either way, got {count} of {len(states)}"
    return count


def test_a_judge_url_serving_an_html_page_fails_the_run_before_any_judge_call(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    with JudgeServer({"a": "steady"}, html_page=True) as judge:
        entry = f"{P}:model=simple/model1,judges=a,judge_base_url={judge.base_url}"
        env = user_env(**mirror.env)
        output = helm_run_failing("--run-entries", entry, "--suite", "html", "-m", "3", cwd=tmp_path, env=env)
        assert judge.count() == 0 and judge.get_requests == ["/v1/models"]
    line = last_line(output)
    assert "answered with an HTML page" in line and judge.base_url in line
    assert "not the OpenAI API: use the API root, e.g. http://127.0.0.1:" in line and "Traceback" not in output


@pytest.fixture(scope="module")
def faulty_run(mirror: NoteMirror, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, JudgeServer]]:
    """Five notes judged by a steady judge beside one judge per fault, defaults but judge_timeout=3 (the
    drip's bound); every endpoint call carries a key that two of the judges echo back."""
    cwd = tmp_path_factory.mktemp("faulty")
    panel: dict[str, str | Behaviour] = {
        "steady": Behaviour("steady", FIXED),
        "repeats": Behaviour("fail_some", FIXED, fail_marker=OBGYN),
        "drip": Behaviour("drip", FIXED),
        "context": Behaviour("context_limit", FIXED, context_words=LONG_INPUT_WORDS),
        "huge": "huge",
        "leaky500": "leaky_500",
        "leaky200": "leaky_200",
    }
    with JudgeServer(panel, drip_seconds=1.0, max_lifetime=600) as judge:
        entry = f"{P}:model=simple/model1,judges={'+'.join(panel)},judge_base_url={judge.base_url},judge_timeout=3"
        env = user_env(**mirror.env, JUDGE_API_KEY=KEY)
        output = helm_tool(
            "helm-run", "--run-entries", entry, "--suite", "faulty", "-m", "5", "-n", "1", cwd=cwd, env=env
        )
        yield cwd, output, judge


def test_a_server_error_repeated_for_one_prompt_ends_that_call_after_three_tries(
    faulty_run: tuple[Path, str, JudgeServer],
) -> None:
    cwd, _, judge = faulty_run
    run = run_dir(cwd / "benchmark_output", "faulty")
    obgyn = notes_where(run, lambda note: OBGYN in note)
    failed = [r for r in records_of(run, "repeats") if r["status"] == "failed"]
    assert len(failed) == obgyn and all(r["failure"].startswith("server error repeats: HTTP 500") for r in failed)
    prompts = [p for p in judge.prompts_for("repeats") if OBGYN in p]
    assert sorted(Counter(prompts).values()) == [3] * obgyn


def test_a_slow_drip_ends_as_a_timeout_and_the_others_are_judged(faulty_run: tuple[Path, str, JudgeServer]) -> None:
    cwd, _, judge = faulty_run
    records = records_of(run_dir(cwd / "benchmark_output", "faulty"), "drip")
    assert all(r["status"] == "failed" for r in records)
    assert {r["failure"].split(":")[0] for r in records} <= {"timed out", "judge unavailable"}
    assert judge.count("drip") <= 2 * 5


def test_prompts_too_long_for_the_context_fail_as_such_and_the_rest_keep_json_schema(
    faulty_run: tuple[Path, str, JudgeServer],
) -> None:
    cwd, _, judge = faulty_run
    run = run_dir(cwd / "benchmark_output", "faulty")
    long = notes_where(run, lambda note: len(note.split()) > LONG_INPUT_WORDS)
    records = records_of(run, "context")
    too_long = [r for r in records if r["status"] == "failed"]
    assert len(too_long) == long
    assert all(r["failure"].startswith("prompt too long for the judge's context (") for r in too_long)
    assert [r["structured"] for r in records if r["status"] == "ok"] == ["json_schema"] * (len(records) - long)
    assert {r.response_format for r in judge.requests if r.model == "context"} == {"json_schema"}


def test_a_ten_megabyte_reply_is_a_failure_that_leaves_the_outputs_small(
    faulty_run: tuple[Path, str, JudgeServer],
) -> None:
    cwd, _, _ = faulty_run
    run = run_dir(cwd / "benchmark_output", "faulty")
    records = records_of(run, "huge")
    assert all(r["failure"].startswith("reply too long (10485760 characters") for r in records)
    assert (run / "scenario_state.json").stat().st_size < 1024 * 1024
    assert sum(p.stat().st_size for p in (cwd / "prod_env").rglob("*") if p.is_file()) < 2 * 1024 * 1024


def test_an_echoed_key_is_found_nowhere_under_the_working_directory(
    faulty_run: tuple[Path, str, JudgeServer],
) -> None:
    cwd, output, judge = faulty_run
    assert {r.authorization for r in judge.requests} == {f"Bearer {KEY}"}
    assert files_containing(cwd, KEY) == [] and KEY not in output


def test_expected_faults_log_no_traceback(faulty_run: tuple[Path, str, JudgeServer]) -> None:
    _, output, _ = faulty_run
    assert "Traceback" not in output
    assert any("retrying in" in line and "judge repeats" in line for line in output.splitlines())


def test_a_llamacpp_like_endpoints_finished_suite_reruns_with_the_server_stopped(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    """llama.cpp refuses json_schema with a 500 and answers json_object: the re-run needs no server."""
    with JudgeServer({"llama": "schema_refuser", "b": "steady"}) as judge:
        entry = f"{P}:model=simple/model1,judges=llama+b,judge_base_url={judge.base_url}"
        args = ["--run-entries", entry, "--suite", "llama", "-m", "3", "-n", "1"]
        env = user_env(**mirror.env)
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        assert judge.count("llama") == 1 + 3
    run = run_dir(tmp_path / "benchmark_output", "llama")
    before = stat(run, f"{P}_reward")
    assert all(s["annotations"][P]["llama"]["structured"] == "json_object" for s in request_states(run))

    helm_tool("helm-run", *args, cwd=tmp_path, env=env)  # the judge server is gone
    assert stat(run, f"{P}_reward") == before
    assert all(s["annotations"][P]["failed_judges"] == [] for s in request_states(run))


def test_a_bad_run_entry_argument_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    entry = f"{P}:model=simple/model1,judge_timeout=abc"
    output = helm_run_failing(
        "--run-entries", entry, "--suite", "bad", "--dry-run", "-m", "1", cwd=tmp_path, env=user_env()
    )
    assert "Traceback" not in output
    assert [line for line in output.splitlines() if "judge_timeout" in line] == [
        f"{P}: judge_timeout must be a positive number of seconds, got 'abc'"
    ]


def test_an_unreachable_note_host_fails_with_one_last_line_naming_the_base_url_variable(tmp_path: Path) -> None:
    env = user_env(MTSAMPLES_PROCEDURES_BASE_URL=closed_port_url("/notes/"))
    output = helm_run_failing("--run-entries", f"{P}:model=simple/model1", "--suite", "off", "-m", "1", cwd=tmp_path,
                              env=env)  # fmt: skip
    assert "Traceback" not in output
    line = last_line(output)
    assert "cannot be reached (connection refused)" in line and "MTSAMPLES_PROCEDURES_BASE_URL" in line
