"""keys.py: the panel's endpoint keys, found by position and handed to HELM as its credentials."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helm.clients.auto_client import AutoClient
from helm.common.cache_backend_config import SqliteCacheBackendConfig
from helm.common.credentials_utils import provide_api_key
from helm.common.general import get_credentials
from pyhocon import ConfigTree

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.secrets import mask
from helm_mtsamples_ext.judges.core.endpoint_keys import EndpointKey, refused_keys, resolve_endpoint_keys, secrets_of
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_host
from helm_mtsamples_ext.judges.helm_calls.keys import credentials_with_keys, endpoint_positions, install_panel_keys

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
    assert mask("none of the plan is wrong: abc123 x changeme", keys.secrets) == (
        "none of the plan is wrong: abc123 x changeme"
    )


def test_a_real_key_and_the_keyless_placeholder_get_no_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGE_API_KEY_1", "sk-live-0123456789")
    monkeypatch.delenv("JUDGE_API_KEY", raising=False)
    assert refused_keys(resolve_endpoint_keys([(1, ONE), (2, TWO)], {}).values()) == []


# ---------------------------------------------------------------- where each endpoint's key comes from

URL = "http://127.0.0.1:8000/v1"
OTHER = "https://judge.example.org/v1"

ALL_SOURCES_ENV = {"JUDGE_API_KEY_1": "numbered-1111", "JUDGE_API_KEY": "shared-env-3333"}
ALL_SOURCES_CRED = {"judgeApiKeys": {URL: "by-url-2222"}, "judgeApiKey": "shared-cred-4444"}

PRECEDENCE = [
    (ALL_SOURCES_ENV, ALL_SOURCES_CRED, "numbered-1111", "JUDGE_API_KEY_1"),
    ({"JUDGE_API_KEY": "shared-env-3333"}, ALL_SOURCES_CRED, "by-url-2222", f"judgeApiKeys[{URL!r}]"),
    ({}, {"judgeApiKeys": {URL + "/": "by-url-2222"}}, "by-url-2222", f"judgeApiKeys[{URL!r}]"),
    ({"JUDGE_API_KEY": "shared-env-3333"}, {"judgeApiKey": "shared-cred-4444"}, "shared-env-3333", "JUDGE_API_KEY"),
    ({}, {"judgeApiKey": "shared-cred-4444"}, "shared-cred-4444", "judgeApiKey"),
    ({}, {}, "EMPTY", "none (keyless)"),
    ({"JUDGE_API_KEY_2": "numbered-2222"}, {}, "EMPTY", "none (keyless)"),
    ({"JUDGE_API_KEY_1": ""}, {"judgeApiKey": "shared-cred-4444"}, "shared-cred-4444", "judgeApiKey"),
    ({}, {"judgeApiKeys": {OTHER: "other-5555"}}, "EMPTY", "none (keyless)"),
]
PRECEDENCE_IDS = [
    "numbered-env-first",
    "then-the-url-map",
    "url-map-trailing-slash-normalised",
    "then-shared-env",
    "then-shared-credential",
    "else-keyless",
    "another-positions-env-does-not-apply",
    "empty-numbered-env-is-unset",
    "another-urls-map-entry-does-not-apply",
]


@pytest.mark.parametrize(("environ", "credentials", "key", "source"), PRECEDENCE, ids=PRECEDENCE_IDS)
def test_each_endpoints_key_comes_from_the_first_setting_that_has_one(
    environ: dict[str, str], credentials: dict[str, Any], key: str, source: str
) -> None:
    """JUDGE_API_KEY_<n> > judgeApiKeys[url] > JUDGE_API_KEY > judgeApiKey > EMPTY."""
    keys = resolve_endpoint_keys([(1, URL)], credentials, environ=environ)
    assert keys == {URL: EndpointKey(URL, 1, key, source)}


@pytest.mark.parametrize(("environ", "credentials", "key", "source"), PRECEDENCE, ids=PRECEDENCE_IDS)
def test_the_source_names_the_setting_and_never_holds_the_key(
    environ: dict[str, str], credentials: dict[str, Any], key: str, source: str
) -> None:
    """``source`` goes into messages; it says where the key is set, never what it is."""
    (found,) = resolve_endpoint_keys([(1, URL)], credentials, environ=environ).values()
    assert found.source == source and found.key not in found.source


def test_positions_are_per_endpoint() -> None:
    """Two endpoints each take the numbered key of their own position."""
    environ = {"JUDGE_API_KEY_1": "first-1111", "JUDGE_API_KEY_2": "second-2222", "JUDGE_API_KEY": "shared-0000"}
    keys = resolve_endpoint_keys([(1, URL), (2, OTHER)], {}, environ=environ)
    assert {url: (k.position, k.key) for url, k in keys.items()} == {URL: (1, "first-1111"), OTHER: (2, "second-2222")}


def test_the_url_map_gives_each_endpoint_its_own_key() -> None:
    """judgeApiKeys binds each base URL to its key."""
    credentials = {"judgeApiKeys": {URL: "local-1111", OTHER + "/": "hosted-2222"}, "judgeApiKey": "shared-0000"}
    keys = resolve_endpoint_keys([(1, URL), (2, OTHER)], credentials, environ={})
    assert {url: k.key for url, k in keys.items()} == {URL: "local-1111", OTHER: "hosted-2222"}


def test_a_url_listed_twice_takes_the_key_of_its_first_position() -> None:
    """The same endpoint at positions 1 and 3 (even spelled with a trailing slash) is one endpoint, keyed as 1."""
    environ = {"JUDGE_API_KEY_1": "first-1111", "JUDGE_API_KEY_3": "third-3333"}
    keys = resolve_endpoint_keys([(3, URL + "/"), (1, URL)], {}, environ=environ)
    assert keys == {URL: EndpointKey(URL, 1, "first-1111", "JUDGE_API_KEY_1")}


def test_the_key_is_bound_as_the_host_organizations_api_key_helm_reads() -> None:
    """credentials_with_keys adds ``<mtsjudge-hash>ApiKey`` per endpoint, which HELM's provide_api_key returns."""
    keys = resolve_endpoint_keys([(1, URL), (2, OTHER)], {}, environ={"JUDGE_API_KEY_2": "second-2222"})
    original = {"openaiApiKey": "sk-unrelated"}
    merged = credentials_with_keys(original, keys.values())
    assert merged == {
        "openaiApiKey": "sk-unrelated",
        f"{endpoint_host(URL)}ApiKey": "EMPTY",
        f"{endpoint_host(OTHER)}ApiKey": "second-2222",
    }
    assert provide_api_key(merged, endpoint_host(OTHER)) == "second-2222"
    assert original == {"openaiApiKey": "sk-unrelated"}


# ---------------------------------------------------------------- credentials.conf, read as HELM reads it


def write_credentials(tmp_path: Path, text: str) -> ConfigTree:
    (tmp_path / "credentials.conf").write_text(text)
    return get_credentials(str(tmp_path))


@pytest.fixture
def no_credentials_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """HELM's get_credentials prefers HELM_CREDENTIALS over the file."""
    monkeypatch.delenv("HELM_CREDENTIALS", raising=False)


@pytest.mark.usefixtures("no_credentials_env")
@pytest.mark.parametrize(
    ("text", "url"),
    [
        ('judgeApiKeys: {"http://127.0.0.1:8000/v1": "k1"}\n', URL),
        ('judgeApiKeys: {"http://127.0.0.1:8000/v1/": "k1"}\n', URL),
        ('judgeApiKeys {\n  "http://127.0.0.1:8000/v1" = k1\n}\n', URL),
        ('judgeApiKeys: {"http://localhost:8000/v1": "k1"}\n', "http://localhost:8000/v1"),
        ('judgeApiKey: "shared-0000"\njudgeApiKeys: {"http://127.0.0.1:8000/v1": "k1"}\n', URL),
    ],
    ids=["documented-form", "trailing-slash", "equals-form", "host-without-dots", "beside-a-shared-key"],
)
def test_a_credentials_conf_url_map_read_by_helm_resolves(tmp_path: Path, text: str, url: str) -> None:
    """``judgeApiKeys: {"<base url>": "<key>"}`` in credentials.conf, read by HELM's own loader (pyhocon keeps
    a quoted key's quotes), gives that URL its key."""
    keys = resolve_endpoint_keys([(1, url)], write_credentials(tmp_path, text), environ={})
    assert (keys[url].key, keys[url].source) == ("k1", f"judgeApiKeys[{url!r}]")


@pytest.mark.usefixtures("no_credentials_env")
@pytest.mark.parametrize(
    ("text", "key"),
    [("", "EMPTY"), ('openaiApiKey: "sk-unrelated"\n', "EMPTY"), ('judgeApiKey: "shared-0000"\n', "shared-0000")],
    ids=["empty-file", "no-judge-key", "shared-key-only"],
)
def test_a_credentials_conf_without_a_url_map_still_resolves(tmp_path: Path, text: str, key: str) -> None:
    """HELM hands credentials over as a pyhocon ConfigTree, whose ``get`` raises for a missing key without a
    default: a file with no judgeApiKeys (or no judgeApiKey) must still resolve, never raise."""
    keys = resolve_endpoint_keys([(1, URL)], write_credentials(tmp_path, text), environ={})
    assert keys[URL].key == key


def test_secrets_worth_masking_are_longest_first_without_placeholders() -> None:
    """EMPTY, keys under 8 characters and ordinary words are not secrets; the rest come longest first."""
    keys = [
        EndpointKey("u1", 1, "abcd-123", "JUDGE_API_KEY_1"),
        EndpointKey("u5", 5, "none", "JUDGE_API_KEY_5"),
        EndpointKey("u6", 6, "changeme", "JUDGE_API_KEY_6"),
        EndpointKey("u2", 2, "abcd-long-key", "JUDGE_API_KEY_2"),
        EndpointKey("u3", 3, "EMPTY", "none (keyless)"),
        EndpointKey("u4", 4, "xyz", "JUDGE_API_KEY_4"),
    ]
    assert secrets_of(keys) == ("abcd-long-key", "abcd-123")
