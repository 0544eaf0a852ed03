"""The rules of common/secrets.py: which credentials.conf entries and environment variables hold a key the annotator can
reach, so that every one is masked (the end-to-end proof is test_masking_e2e.py)."""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from helm.common.general import parse_hocon

from helm_mtsamples_ext.common.secrets import (
    SCRUBBED_LOGGERS,
    credential_keys,
    environment_keys,
    install_log_scrubber,
    machine_keys,
    mask,
    reachable_keys,
)
from helm_mtsamples_ext.report.cli import main as report_main
from tests.report.suites import STRONG_RUN, build_suite, ok

pytestmark = pytest.mark.helm

CREDENTIALS = """
openaiApiKey: "sk-openai-cred-1111"
acmehostApiKey: "acme-2222-key"
huggingfaceAuthToken: "hf_token_3333"
judgeApiKeys: {"http://127.0.0.1:8081/v1": "endpoint-4444"}
deployments: {"together/llama-3.3-70b-instruct-turbo": "together-5555"}
openaiOrgId: "org-not-a-key"
critiqueModelName: "openai/gpt-4o"
gcsBucketName: "bucket-name"
judgeApiKey: "EMPTY"
"""


def test_every_credentials_entry_holding_a_key_is_found_and_nothing_else() -> None:
    """Entries named as keys, and every value of the deployments and judgeApiKeys maps (pyhocon splits the
    deployment name at an unquoted dot into nested maps); ids, names, and the keyless placeholder are no keys."""
    found = credential_keys(parse_hocon(CREDENTIALS))
    assert found == {"sk-openai-cred-1111", "acme-2222-key", "hf_token_3333", "endpoint-4444", "together-5555"}


ENV = {
    "OPENAI_API_KEY": "sk-openai-env-1111",
    "AZURE_OPENAI_AD_TOKEN": "azure-token-2222",
    "HF_TOKEN": "hf-env-3333",
    "JUDGE_API_KEY_2": "judge-two-4444",
    "DEEPSEEK_API_KEY": "deepseek-5555",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    "PATH": "/usr/bin:/bin",
    "HOME": "/root",
    "XAI_API_KEY": "abc",  # under 8 characters: no key anyone issues, and masking it would mangle records
    "GROK_API_KEY": "none",  # an ordinary word: masking it would turn every "none" into ***
}


def test_every_provider_variable_holding_a_key_is_found_and_nothing_else() -> None:
    assert environment_keys(ENV) == {
        "sk-openai-env-1111",
        "azure-token-2222",
        "hf-env-3333",
        "judge-two-4444",
        "deepseek-5555",
    }


def test_all_keys_come_together_longest_first() -> None:
    keys = reachable_keys({"acmeApiKey": "acme-key"}, {"OPENAI_API_KEY": "sk-acme-key-longer"}, ["acme"])
    assert keys == ("sk-acme-key-longer", "acme-key")  # "acme": too short to be a key, never masked


@pytest.mark.parametrize("name", SCRUBBED_LOGGERS)
def test_a_key_logged_by_helm_or_its_http_stack_is_masked(name: str, caplog: pytest.LogCaptureFixture) -> None:
    install_log_scrubber(reachable_keys({}, {"OPENAI_API_KEY": "sk-logged-9999"}))
    logger: Any = logging.getLogger(name)
    with caplog.at_level(logging.WARNING, logger=name):
        logger.propagate, was = True, logger.propagate
        try:
            logger.warning("request failed: Authorization: Bearer %s", "sk-logged-9999")
        finally:
            logger.propagate = was
    assert "Bearer ***" in caplog.text and "sk-logged-9999" not in caplog.text


def test_the_report_masks_the_keys_of_its_machine_in_a_suite_recorded_unmasked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite recorded before hosted keys were masked holds them in its judges' explanations: the report (run
    where the keys are, as HELM finds them: prod_env/credentials.conf and the environment) writes none of them."""
    cred_key, env_key = "sk-cred-recorded-7777", "sk-env-recorded-8888"
    leaky = {**ok(5, 5, 5), "accuracy": {"score": 5, "explanation": f"sent {cred_key} and {env_key}"}}
    build_suite(tmp_path, [replace(STRONG_RUN, verdicts={"n1.txt": {"judge-one": leaky, "judge-two": ok(4, 4, 4)}})])
    (tmp_path / "prod_env").mkdir()
    (tmp_path / "prod_env" / "credentials.conf").write_text(f'acmeApiKey: "{cred_key}"\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", env_key)
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert (
            report_main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "20"]) == 0
        )
    assert "sent *** and ***" in (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    written = [p for p in (tmp_path / "r").rglob("*") if p.is_file()]
    assert [p for p in written for key in (cred_key, env_key) if key.encode() in p.read_bytes()] == []
    assert cred_key not in out.getvalue() and env_key not in out.getvalue()


def test_a_credentials_file_that_does_not_parse_leaves_the_environments_keys(tmp_path: Path) -> None:
    (tmp_path / "credentials.conf").write_text('openaiApiKey: "unterminated\n')
    assert machine_keys(tmp_path, {"OPENAI_API_KEY": "sk-env-9999"}) == ("sk-env-9999",)
    assert machine_keys(tmp_path, {"HELM_CREDENTIALS": 'xApiKey: "from-env-var-1234"'}) == ("from-env-var-1234",)


# ---------------------------------------------------------------- one masker, and the log scrubber


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        ("key sk-live-1234 rejected", "sk-live-1234", "key *** rejected"),
        ("a=key-one-1111 b=key-two-2222", ("key-one-1111", "key-two-2222"), "a=*** b=***"),
        ("sent abcd-long-key", ("abcd-long-key", "abcd"), "sent ***"),
        ("twice k3y-9999 and k3y-9999", ["k3y-9999"], "twice *** and ***"),
        ("api_key=EMPTY", ("EMPTY",), "api_key=EMPTY"),
        ("HTTP 401 for key abc", ("abc",), "HTTP 401 for key abc"),
        ("none of the none", ("none",), "none of the none"),
        ("nothing to hide", None, "nothing to hide"),
        ("nothing to hide", (), "nothing to hide"),
    ],
    ids=["one", "several", "longer-first", "every-occurrence", "placeholder", "short-key", "word", "none", "empty"],
)
def test_mask_hides_every_key_and_nothing_else(text: str, secrets: Any, expected: str) -> None:
    """Every occurrence of every secret is masked whole; EMPTY, keys under 8 characters and words are left alone."""
    assert mask(text, secrets) == expected


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
