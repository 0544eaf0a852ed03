"""keys.py: the panel's endpoint keys, found by position and handed to HELM as its credentials."""

from __future__ import annotations

from pathlib import Path

import pytest
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from helm_mtsamples_ext.judges.endpoints import endpoint_host
from helm_mtsamples_ext.judges.keys import endpoint_positions, install_panel_keys
from helm_mtsamples_ext.panel import JudgeSpec

ONE, TWO = "http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"


def test_a_suite_from_before_positions_were_recorded_numbers_its_urls_in_panel_order() -> None:
    panel = [JudgeSpec("a", "a", None, TWO), JudgeSpec("b", "b", None, ONE), JudgeSpec("c", "c", None, TWO)]
    assert endpoint_positions(panel) == [(1, TWO), (2, ONE), (1, TWO)]
    assert endpoint_positions([JudgeSpec("a", "a", None, ONE, 2), JudgeSpec("h", "x/h", "x/h")]) == [(2, ONE)]


def test_each_endpoints_key_becomes_helms_credential_and_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JUDGE_API_KEY", raising=False)
    monkeypatch.setenv("JUDGE_API_KEY_2", "key-two-2222")
    auto_client = AutoClient({}, str(tmp_path), SqliteCacheBackendConfig(str(tmp_path)))
    keys = install_panel_keys([JudgeSpec("a", "a", None, ONE, 1), JudgeSpec("b", "b", None, TWO, 2)], auto_client)
    assert auto_client.credentials[f"{endpoint_host(TWO)}ApiKey"] == "key-two-2222"
    assert auto_client.credentials[f"{endpoint_host(ONE)}ApiKey"] == "EMPTY"
    assert "key-two-2222" in keys.secrets and "EMPTY" not in keys.secrets
