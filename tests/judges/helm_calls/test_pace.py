"""No work thrown away at a server that serves one call at a time: an exchange's limit follows the server's observed
pace (``judges/helm_calls/pace.py``), and a call the client gives up on has its connection closed, which is how a
server that
checks its connection (llama.cpp) learns to drop it. Through HELM's real client against the loopback judge server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.common.secrets import PLACEHOLDER_KEY, mask
from helm_mtsamples_ext.judges.core.endpoint_keys import key_settings
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.call import JudgeCaller
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_host, register_endpoint_deployment
from helm_mtsamples_ext.judges.helm_calls.pace import PACE_FACTOR, Pace
from tests.servers.judge import Behaviour, JudgeServer

pytestmark = pytest.mark.helm

FIXED = {"accuracy": 4, "completeness": 3, "clarity": 5}


def caller_and_judge(
    tmp_path: Path, server: JudgeServer, timeout: float, **settings: Any
) -> tuple[JudgeCaller, JudgeTarget]:
    cache = tmp_path / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    auto_client = AutoClient(
        credentials={f"{endpoint_host(server.base_url)}ApiKey": PLACEHOLDER_KEY},
        file_storage_path=str(cache),
        cache_backend_config=SqliteCacheBackendConfig(str(cache)),
    )
    call_settings = CallSettings.from_args(RunEntryArgs(judge_timeout=timeout), retry_base=0.0)
    caller = JudgeCaller(auto_client, replace(call_settings, **settings), lambda text: mask(text, None))
    deployment = register_endpoint_deployment(server.base_url, "a")
    url = server.base_url
    judge = JudgeTarget("a", deployment, deployment, endpoint_host(url), url, key_settings(1, url), url)
    caller.preflight(judge)
    return caller, judge


# ---------------------------------------------------------------- the rule, pure


def test_the_limit_is_judge_timeout_until_a_one_slot_servers_pace_asks_for_more() -> None:
    pace = Pace(window=3)
    assert pace.limit(10.0, one_slot=True) == 10.0, "no pace observed yet: judge_timeout"
    pace.answered(2.0)
    assert pace.limit(10.0, one_slot=True) == 10.0, "3 x 2 s is under judge_timeout"
    pace.answered(8.0)
    assert pace.limit(10.0, one_slot=True) == PACE_FACTOR * 8.0
    assert pace.limit(10.0, one_slot=False) == 10.0, "a server taking several calls keeps judge_timeout"
    assert pace.limit(10.0, one_slot=True, timed_out=30.0) == 60.0, "a retry after a timeout gets twice its limit"
    for _ in range(3):
        pace.answered(1.0)
    assert pace.limit(10.0, one_slot=True) == 10.0, "the pace is the recent one: a server that sped up again"
    pace.answered(float("nan"))
    assert pace.slowest() == 1.0


# ---------------------------------------------------------------- against a one-slot server


def test_a_one_slot_server_slowing_down_is_waited_for_and_no_call_is_given_up(tmp_path: Path) -> None:
    """Each call takes twice the one before (0.3 s to 2.4 s), judge_timeout 1 s: under a fixed limit the last two
    would be given up (and served anyway); following the server's pace, every call is answered once."""
    service = (0.3, 0.6, 1.2, 2.4)
    with JudgeServer({"a": Behaviour("steady", FIXED)}, one_at_a_time=service, owned_by="me") as server:
        caller, judge = caller_and_judge(tmp_path, server, timeout=1.0)
        outcomes = [caller.call(judge, f"Judge plan {i}: rest, fluids, review in a week.") for i in range(4)]
        assert [o.failure for o in outcomes] == [None] * 4
        assert server.count() == 4, "no call sent twice"
        assert server.closed_while_serving == 0, "no call given up while the server worked on it"
        assert max(server.served_seconds) > 1.0, "the server did take longer than judge_timeout"


def test_a_call_given_up_on_closes_its_connection_so_a_server_that_checks_drops_it(tmp_path: Path) -> None:
    """A server that needs 30 s a call, judge_timeout 0.5 s: each attempt the client gives up on is hung up on, and
    a server that checks its connection (llama.cpp) stops working on it instead of serving it to no one."""
    with JudgeServer(
        {"a": Behaviour("steady", FIXED)}, one_at_a_time=30.0, cancel_on_close=True, owned_by="me", max_lifetime=60
    ) as server:
        caller, judge = caller_and_judge(tmp_path, server, timeout=0.5, max_wait=20.0)
        outcome = caller.call(judge, "Judge this plan: discharge home.")
        assert outcome.failure is not None and "timed out" in outcome.failure.lower()
        attempts = server.count()
        assert attempts == 2, "one retry after the timeout, then the call ends"
        assert server.wait_until(lambda: len(server.served_seconds) == attempts, timeout=20.0)
        assert server.closed_while_serving == attempts, "every attempt given up on had its connection closed"
        assert max(server.served_seconds) < 30.0, "the server dropped them instead of finishing them"


def test_a_retry_after_a_timeout_at_a_one_slot_server_waits_for_the_call_it_queues_behind(tmp_path: Path) -> None:
    """llama-cpp-python's server finishes a call its client gave up on, so the retry waits behind it: the retry's
    limit doubles, and the call is answered on its second attempt instead of timing out twice."""
    with JudgeServer({"a": Behaviour("steady", FIXED)}, one_at_a_time=1.2, owned_by="me") as server:
        caller, judge = caller_and_judge(tmp_path, server, timeout=1.0)
        outcome = caller.call(judge, "Judge this plan: discharge home.")
        assert outcome.failure is None
        assert server.count() == 2 and server.closed_while_serving == 1
