"""keys.py: the panel's endpoint keys, found by position and handed to HELM as its credentials."""

from __future__ import annotations

from pathlib import Path

import pytest
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.judges.endpoints import endpoint_host, resolve_endpoint_keys, scrub
from helm_mtsamples_ext.judges.keys import endpoint_positions, install_panel_keys, refused_keys

pytestmark = pytest.mark.helm

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


KEY_ATTACKS = [
    ("none", "is an ordinary word"),
    ("null", "is an ordinary word"),
    ("changeme", "is an ordinary word"),
    ("abc123", "is shorter than 8 characters"),
    ("ab-1", "is shorter than 8 characters"),
]


@pytest.mark.parametrize(("value", "problem"), KEY_ATTACKS, ids=[a[0] for a in KEY_ATTACKS])
def test_a_word_or_a_short_value_is_refused_as_a_key_with_one_line_and_never_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str, problem: str
) -> None:
    """JUDGE_API_KEY=none would otherwise mask every "none" of every answer and verdict; the line names the
    setting and the rule, never the value."""
    monkeypatch.setenv("JUDGE_API_KEY", value)
    (line,) = refused_keys(resolve_endpoint_keys([(1, ONE)], {}).values())
    assert line.startswith(f"JUDGE_API_KEY {problem}, so it is refused as a key") and "unset it" in line
    assert f" {value} " not in line and f"{value!r}" not in line
    auto_client = AutoClient({}, str(tmp_path), SqliteCacheBackendConfig(str(tmp_path)))
    keys = install_panel_keys([JudgeSpec("a", "a", None, ONE, 1)], auto_client)
    assert value not in keys.secrets
    assert scrub("none of the plan is wrong: abc123 x changeme", keys.secrets) == (
        "none of the plan is wrong: abc123 x changeme"
    )


def test_a_real_key_and_the_keyless_placeholder_get_no_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY_1", "sk-live-0123456789")
    monkeypatch.delenv("JUDGE_API_KEY", raising=False)
    assert refused_keys(resolve_endpoint_keys([(1, ONE), (2, TWO)], {}).values()) == []
