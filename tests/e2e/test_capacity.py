"""A server that takes one call at a time is judged at its pace, through HELM's real helm-run: no judgment is lost
to a timeout, whether the server says its capacity (llama-cpp-python's signature) or not (the gate adapts).

The loopback server serves one call at a time, a second each, and keeps serving a call its client gave up on
(as llama-cpp-python's server does); ``judge_timeout`` is shorter than its queue, so sending every note's call
at once would time most of them out."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.helm_tools import P, helm_tool, request_states, run_dir, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.mirror import NoteMirror

pytestmark = pytest.mark.e2e

FIXED = {"accuracy": 4, "completeness": 4, "clarity": 4}


def judge_run(judge: JudgeServer, mirror: NoteMirror, tmp_path: Path, notes: int, timeout: float) -> str:
    entry = f"{P}:model=simple/model1,judges=a,judge_base_url={judge.base_url},judge_timeout={timeout:g}"
    env = user_env(**mirror.env)
    return helm_tool("helm-run", "--run-entries", entry, "--suite", "cap", "-m", str(notes), cwd=tmp_path, env=env)


def failed_judges(tmp_path: Path) -> list[list[str]]:
    return [s["annotations"][P]["failed_judges"] for s in request_states(run_dir(tmp_path / "benchmark_output", "cap"))]


def test_llama_cpp_pythons_server_gets_one_call_at_a_time_and_every_note_is_judged(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    """Five notes, a 1 s call each, judge_timeout 3 s: at 16 at once the queue would time out three of them."""
    with JudgeServer({"a": Behaviour("steady", FIXED)}, one_at_a_time=1.0, owned_by="me") as judge:
        output = judge_run(judge, mirror, tmp_path, notes=5, timeout=3)
        assert judge.max_in_flight == 1, "never a call queued behind another"
    assert failed_judges(tmp_path) == [[]] * 5
    assert "llama-cpp-python's server serves one request at a time: at most 1 judge call(s) at once" in output
    assert "timed out" not in output


def test_a_server_that_does_not_say_its_capacity_is_slowed_down_to_not_failed(
    mirror: NoteMirror, tmp_path: Path
) -> None:
    """Six notes, a 1 s call each, judge_timeout 2.5 s, a server that says nothing: the calls queued at it time
    out while it answers others; the gate halves its calls at once and retries them, and every note is judged."""
    with JudgeServer({"a": Behaviour("steady", FIXED)}, one_at_a_time=1.0) as judge:
        output = judge_run(judge, mirror, tmp_path, notes=6, timeout=2.5)
        assert judge.max_in_flight > 2, "the calls did queue at the server"
    assert failed_judges(tmp_path) == [[]] * 6
    assert "a call timed out while the server answered others: it takes fewer calls at once than were sent" in output
    assert "judge unavailable" not in output and "Judge a failed" not in output
