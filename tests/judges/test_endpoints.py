"""The rules of endpoints.py: which key each judge endpoint gets, how HELM is handed it, how it is kept out
of logs, and what JudgeEndpointClient sends for each structured-output mode."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helm.common.cache import BlackHoleCacheConfig
from helm.common.credentials_utils import provide_api_key
from helm.common.general import get_credentials
from helm.common.request import Request
from pyhocon import ConfigTree

from helm_mtsamples_ext.judges import formats as structured
from helm_mtsamples_ext.judges.endpoints import (
    EndpointKey,
    JudgeEndpointClient,
    credentials_with_keys,
    endpoint_host,
    install_log_scrubber,
    register_endpoint_deployment,
    resolve_endpoint_keys,
    scrub,
    secrets_of,
)
from helm_mtsamples_ext.judges.formats import VERDICT_SCHEMA

pytestmark = pytest.mark.helm

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


# ---------------------------------------------------------------- keeping keys out of records and logs


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


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("key sk-live-1234 rejected", "sk-live-1234", "key *** rejected"),
        ("a=key-one-1111 b=key-two-2222", ("key-one-1111", "key-two-2222"), "a=*** b=***"),
        (
            "sent abcd-long-key",
            secrets_of([EndpointKey("u", 1, k, "s") for k in ("abcd", "abcd-long-key")]),
            "sent ***",
        ),
        ("twice k3y-9999 and k3y-9999", ["k3y-9999"], "twice *** and ***"),
        ("api_key=EMPTY", ("EMPTY",), "api_key=EMPTY"),
        ("HTTP 401 for key abc", ("abc",), "HTTP 401 for key abc"),
        ("none of the none", ("none",), "none of the none"),
        ("nothing to hide", None, "nothing to hide"),
        ("nothing to hide", (), "nothing to hide"),
    ],
    ids=["one", "several", "longer-first", "every-occurrence", "placeholder", "short-key", "word", "none", "empty"],
)
def test_scrub_masks_every_secret_and_nothing_else(text: str, secrets: Any, expected: str) -> None:
    """Every occurrence of every secret is masked whole; EMPTY, keys under 8 characters and words are left alone."""
    assert scrub(text, secrets) == expected


@pytest.fixture
def helm_log(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.LogCaptureFixture]:
    """Records of the ``helm`` logger (HELM may stop it propagating), once each, with its filters restored after."""
    logger = logging.getLogger("helm")
    filters = list(logger.filters)
    monkeypatch.setattr(logger, "propagate", False)
    logger.addHandler(caplog.handler)
    caplog.set_level(logging.INFO, logger="helm")
    try:
        yield caplog
    finally:
        logger.removeHandler(caplog.handler)
        logger.filters[:] = filters


def test_a_key_logged_through_helms_logger_is_masked(helm_log: pytest.LogCaptureFixture) -> None:
    """HELM's clients log API error text, which may hold the key: the scrubber masks it, args included."""
    install_log_scrubber(("sk-live-98765",))
    logging.getLogger("helm").warning("OpenAI error: Incorrect API key provided: %s", "sk-live-98765")
    assert [r.getMessage() for r in helm_log.records] == ["OpenAI error: Incorrect API key provided: ***"]


def test_a_key_in_a_logged_traceback_is_masked(helm_log: pytest.LogCaptureFixture) -> None:
    """hexception logs the exception too: the key is masked in the traceback text."""
    install_log_scrubber("sk-live-98765")
    try:
        raise RuntimeError("401: key sk-live-98765 is invalid")
    except RuntimeError:
        logging.getLogger("helm").exception("call failed")
    assert "sk-live-98765" not in helm_log.text
    assert "401: key *** is invalid" in helm_log.text


def test_installing_the_scrubber_twice_adds_one_filter(helm_log: pytest.LogCaptureFixture) -> None:
    """Every annotator installs it; the logger does not collect a filter per annotator."""
    logger = logging.getLogger("helm")
    before = len(logger.filters)
    install_log_scrubber(("sk-live-98765", "EMPTY", "abc"))
    install_log_scrubber("sk-live-98765")
    assert len(logger.filters) == before + 1


# ---------------------------------------------------------------- what the client sends


@pytest.fixture(scope="module")
def client() -> JudgeEndpointClient:
    # medhelm 0.8's OpenAIClient takes a tokenizer (helm_compat); crfm-helm 0.5.16's takes none.
    from helm.tokenizers.simple_tokenizer import SimpleTokenizer

    from helm_mtsamples_ext.helm_host.compat import JUDGE_TOKENIZER, openai_client_needs_tokenizer

    tokenizer: dict[str, Any] = {"tokenizer": SimpleTokenizer(), "tokenizer_name": JUDGE_TOKENIZER}
    return JudgeEndpointClient(
        cache_config=BlackHoleCacheConfig(),
        api_key="EMPTY",
        base_url="http://127.0.0.1:9/v1",
        openai_model_name="m",
        **(tokenizer if openai_client_needs_tokenizer() else {}),
    )


def raw_request(client: JudgeEndpointClient, mode: str) -> dict[str, Any]:
    # A registered endpoint model, as the annotator sends (medhelm 0.8 refuses a model it has no metadata for).
    name = register_endpoint_deployment("http://127.0.0.1:9/v1", "m", 5)
    request = Request(model=name, model_deployment=name, prompt="p", response_format=structured.response_format(mode))
    return client._make_chat_raw_request(request)


def test_json_object_mode_sends_the_schema_the_llama_cpp_way(client: JudgeEndpointClient) -> None:
    """``{"type": "json_object", "schema": VERDICT_SCHEMA}``, which llama.cpp's server accepts."""
    assert raw_request(client, "json_object")["response_format"] == {"type": "json_object", "schema": VERDICT_SCHEMA}


def test_json_schema_mode_sends_helms_json_schema_form(client: JudgeEndpointClient) -> None:
    """``{"type": "json_schema", "json_schema": {..., "schema": VERDICT_SCHEMA, "strict": True}}`` as HELM builds it."""
    sent = raw_request(client, "json_schema")["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"] == VERDICT_SCHEMA and sent["json_schema"]["strict"] is True


def test_off_mode_sends_no_response_format(client: JudgeEndpointClient) -> None:
    """Unconstrained: the request has no response_format at all."""
    raw = raw_request(client, "off")
    assert "response_format" not in raw and raw["messages"] == [{"role": "user", "content": "p"}]


def test_the_client_asks_for_the_served_model_name(client: JudgeEndpointClient) -> None:
    """The request names the model as the server knows it, not HELM's deployment name."""
    assert raw_request(client, "json_object")["model"] == "m"
