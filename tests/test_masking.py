"""The rules of masking.py: which credentials.conf entries and environment variables hold a key the annotator can
reach, so that every one is masked (the end-to-end proof is test_masking_e2e.py)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from helm.common.general import parse_hocon

from helm_mtsamples_ext.endpoints import SCRUBBED_LOGGERS, install_log_scrubber
from helm_mtsamples_ext.masking import credential_keys, environment_keys, reachable_keys

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
    "XAI_API_KEY": "abc",  # under 4 characters: no key anyone issues, and masking it would mangle records
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
    assert keys == ("sk-acme-key-longer", "acme-key", "acme")


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
