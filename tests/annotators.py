"""The real JudgeAnnotator as the tests build it: HELM's AutoClient and SQLite cache, judges on a loopback judge
server (tests/servers/judge.py), and request states of one short note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helm.benchmark.adaptation.request_state import RequestState
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from helm_mtsamples_ext.annotator import JudgeAnnotator
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_deployment_name
from tests.servers.judge import JudgeServer
from tests.states import request_state

NOTE = "PREOPERATIVE DIAGNOSIS: Left inguinal hernia. PROCEDURE: Open repair with mesh."
ANSWER = "Discharge home today. Follow up in clinic in 2 weeks. No heavy lifting for 6 weeks."


def judge_specs(server: JudgeServer, models: list[str], endpoint_index: int = 1) -> list[dict[str, Any]]:
    return [
        {
            "name": m,
            "model": m,
            "model_deployment": endpoint_deployment_name(server.base_url, m),
            "base_url": server.base_url,
            "endpoint_index": endpoint_index,
        }
        for m in models
    ]


def make_annotator(
    cache_dir: Path, judges: list[dict[str, Any]], credentials: dict[str, Any] | None = None, **kwargs: Any
) -> JudgeAnnotator:
    cache_dir.mkdir(parents=True, exist_ok=True)
    auto_client = AutoClient(
        credentials=credentials or {},
        file_storage_path=str(cache_dir),
        cache_backend_config=SqliteCacheBackendConfig(str(cache_dir)),
    )
    options: dict[str, Any] = {"judge_timeout": 10.0, "retry_base": 0.0, **kwargs}
    return JudgeAnnotator(auto_client=auto_client, judges=judges, **options)


def state(answer: str = ANSWER, note: str = NOTE, instance_id: str = "note-1") -> RequestState:
    return request_state(note, answer, reference="Follow up in 2 weeks.", instance_id=instance_id)


def notes(n: int, start: int = 0) -> list[RequestState]:
    return [state(note=f"{NOTE} Case {i}.", instance_id=f"n{i}") for i in range(start, start + n)]
