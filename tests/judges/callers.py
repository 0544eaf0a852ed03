"""One judge call as the tests make it: HELM's real client and SQLite cache, against a loopback judge server
(tests/servers/judge.py), with the call settings a run entry gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.common.secrets import PLACEHOLDER_KEY, mask
from helm_mtsamples_ext.judges.core.endpoint_keys import key_settings
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.helm_calls.call import JudgeCaller
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_host, register_endpoint_deployment
from tests.servers.judge import JudgeServer

KEY = "sk-secret-echoed-4242abcd"
SHORT = "Judge this plan: discharge home, follow up in two weeks."
FIXED = {"accuracy": 4, "completeness": 3, "clarity": 5}


def make_caller(
    cache_dir: Path, server_url: str, key: str | None = None, timeout: float = 10.0, **settings: Any
) -> JudgeCaller:
    cache_dir.mkdir(parents=True, exist_ok=True)
    credentials = {f"{endpoint_host(server_url)}ApiKey": key or PLACEHOLDER_KEY}
    auto_client = AutoClient(
        credentials=credentials,
        file_storage_path=str(cache_dir),
        cache_backend_config=SqliteCacheBackendConfig(str(cache_dir)),
    )
    call_settings = CallSettings.from_args(RunEntryArgs(judge_timeout=timeout), retry_base=0.0)
    options: dict[str, Any] = {"breaker_cooldown": 600.0, **settings}
    return JudgeCaller(auto_client, replace(call_settings, **options), lambda text: mask(text, key))


def target(caller: JudgeCaller, server_url: str, model: str) -> JudgeTarget:
    deployment = register_endpoint_deployment(server_url, model)
    judge = JudgeTarget(
        model, deployment, deployment, endpoint_host(server_url), server_url, key_settings(1, server_url), server_url
    )
    caller.preflight(judge)
    return judge


def judge_once(
    tmp_path: Path, server: JudgeServer, model: str, prompt: str = SHORT, timeout: float = 10.0, key: str | None = None
) -> Judgment:
    caller = make_caller(tmp_path / "cache", server.base_url, key, timeout)
    return caller.call(target(caller, server.base_url, model), prompt)
