"""Every key the annotator can reach, so that each is masked wherever a judge's words are kept.

A judge server may echo the key it was sent (in a verdict's explanation, an error message, an error body).
Endpoint keys (judges/helm_calls/keys.py) are one source; hosted judges are HELM model deployments, and HELM hands their
clients keys from two more places, both readable by the annotator's process:
- ``credentials.conf`` (or ``HELM_CREDENTIALS``, parsed by HELM into the AutoClient's ``credentials``):
  ``<host>ApiKey`` (``helm.common.credentials_utils.provide_api_key``), the ``deployments`` map of keys by
  deployment, ``huggingfaceAuthToken``, ``perspectiveApiKey``, ``judgeApiKeys``... : every entry named as a
  key, token, secret or password, and every value of the ``deployments`` and ``judgeApiKeys`` maps;
- the environment: a client given no key lets its SDK read one (the OpenAI SDK ``OPENAI_API_KEY``, Azure's
  ``AZURE_OPENAI_API_KEY``), and some of HELM's clients read their own (``TOGETHER_API_KEY``,
  ``XAI_API_KEY``, ``OPENROUTER_API_KEY``, ``HUGGING_FACE_ACCESS_TOKEN``): the ``PROVIDER_KEY_ENV`` names
  and any variable named ``*_API_KEY``, ``*_API_TOKEN``, ``*_ACCESS_TOKEN`` or ``JUDGE_API_KEY_<n>``.
All of them are masked, not only the panel's hosts': masking a key that was never sent costs nothing, and
missing one puts it on a page sent to clinicians. The annotator masks what it records (and what HELM caches);
helm-mtsamples-report masks its tables again with the keys of the machine it runs on (``machine_keys``), so a
suite written before hosted keys were masked does not put them on the review page either. One rule says what
is a key (``is_key``), one masker hides it (``mask``), and the log scrubber uses both. Pure but for
``machine_keys`` and ``install_log_scrubber``.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
import pyhocon

from helm_mtsamples_ext.common.helm_paths import LOCAL_PATH

PROVIDER_KEY_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_AD_TOKEN",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "TOGETHER_API_KEY",
    "XAI_API_KEY",
    "GROK_API_KEY",
    "OPENROUTER_API_KEY",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "CO_API_KEY",
    "HUGGING_FACE_ACCESS_TOKEN",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "JUDGE_API_KEY",
)
"""Environment variables holding a key that HELM's clients, or the SDKs they build, read (found in the
sources of crfm-helm 0.5.16, medhelm 0.8 and the openai and huggingface_hub packages they install)."""
KEY_ENV_PATTERN = re.compile(r"^[A-Z0-9_]*_(API_KEY|API_TOKEN|ACCESS_TOKEN)(_\d+)?$")
"""Any other variable named as a provider key (``JUDGE_API_KEY_2``, ``DEEPSEEK_API_KEY``)."""
KEY_CREDENTIAL_PATTERN = re.compile(r"(api_?key|key|token|secret|password|passwd)s?$", re.IGNORECASE)
"""credentials.conf entries that hold keys (``openaiApiKey``, ``huggingfaceAuthToken``, ``judgeApiKeys``)."""
KEY_MAPS = ("deployments", "judgeApiKeys")
"""credentials.conf maps whose every value is a key, whatever its name (HELM's keys by deployment, ours by URL)."""
MIN_KEY_LENGTH = 8
"""Shorter is no key anyone issues (providers' keys run to 20 characters and more; a local server's chosen key,
vLLM's ``token-abc123``, to 12), and masking it would mangle every record it appears in."""
WORD_LENGTH = 16
"""A value of letters only and shorter than this is an ordinary word (``none``, ``secret``, ``changeme``)."""
PLACEHOLDER_KEY = "EMPTY"
"""The key sent to keyless local servers (vLLM, llama.cpp and Ollama accept any key): no secret."""


def key_problem(value: str) -> str | None:
    """Why ``value`` cannot be taken for a key to mask, in words that never repeat it; None for a key. Masking
    ``none`` would turn every "none" of an answer and a verdict into ``***`` for good."""
    bare = value.strip()
    if bare.isalpha() and len(bare) < WORD_LENGTH:
        return "is an ordinary word"
    if len(bare) < MIN_KEY_LENGTH:
        return f"is shorter than {MIN_KEY_LENGTH} characters"
    return None


def refused_key_line(source: str, value: str) -> str | None:
    """One line when the key ``source`` gave is no key (``key_problem``), saying where it came from without
    repeating it: it is still sent (a keyless server takes any), never masked. None for a key or the placeholder."""
    problem = None if value == PLACEHOLDER_KEY else key_problem(value)
    if problem is None:
        return None
    return (
        f"{source} {problem}, so it is refused as a key: it is not masked in what is kept, and a server that checks "
        "keys will refuse it; for a keyless server unset it, else give the real key"
    )


def is_key(value: object) -> bool:
    """Worth masking: a string that ``key_problem`` finds nothing wrong with and is not the keyless placeholder."""
    return isinstance(value, str) and value != PLACEHOLDER_KEY and key_problem(value) is None


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def credential_keys(credentials: Mapping[str, Any]) -> set[str]:
    """The keys in credentials.conf: entries named as keys, and every value of the key maps (nested maps
    included: pyhocon splits a deployment name at its dots, ``llama-3.3`` into ``llama-3`` and ``3``)."""
    found: set[str] = set()
    for name, value in credentials.items():
        bare = str(name).strip('"')
        if bare in KEY_MAPS or KEY_CREDENTIAL_PATTERN.search(bare):
            found.update(str(v) for v in _leaves(value) if is_key(str(v)) and not isinstance(v, bool))
    return found


def environment_keys(environ: Mapping[str, str]) -> set[str]:
    """The keys in the environment HELM's clients and their SDKs read (PROVIDER_KEY_ENV, KEY_ENV_PATTERN)."""
    return {
        value
        for name, value in environ.items()
        if (name in PROVIDER_KEY_ENV or KEY_ENV_PATTERN.match(name)) and is_key(value)
    }


def reachable_keys(
    credentials: Mapping[str, Any], environ: Mapping[str, str], more: Iterable[str] = ()
) -> tuple[str, ...]:
    """Every key to mask (``more``: keys found elsewhere, the endpoints'), longest first, so that a key
    holding another is masked whole."""
    keys = credential_keys(credentials) | environment_keys(environ) | {k for k in more if is_key(k)}
    return tuple(sorted(keys, key=lambda k: (-len(k), k)))


def mask(text: str, keys: str | Iterable[str] | None) -> str:
    """``text`` with each key replaced by ``***``, for anything recorded, logged or shown (keys longest first,
    as reachable_keys gives them; a value that is no key, ``is_key``, is left alone)."""
    if not keys:
        return text
    for key in [keys] if isinstance(keys, str) else keys:
        if is_key(key):
            text = text.replace(key, "***")
    return text


def mask_table(table: pd.DataFrame, keys: tuple[str, ...]) -> pd.DataFrame:
    """``table`` with every key masked in every text cell."""
    if not keys or table.empty:
        return table
    masked = table.copy()
    for column in masked.select_dtypes(include="object").columns:
        masked[column] = masked[column].map(lambda v: mask(v, keys) if isinstance(v, str) else v)
    return masked


class _MaskFilter(logging.Filter):
    """Masks a key in a logger's records (HELM's clients log the text of API errors, which a server may fill
    with the key it was sent)."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if self.key in message or self.key in (record.exc_text or ""):
            record.msg, record.args = mask(message, self.key), None
            record.exc_text = mask(record.exc_text, self.key) if record.exc_text else record.exc_text
        return True


SCRUBBED_LOGGERS = ("helm", "openai", "httpx")
"""HELM's logger and those of the HTTP stack under its clients (which log request errors)."""


def install_log_scrubber(keys: str | Iterable[str]) -> None:
    """Mask each key in everything logged through HELM's ``helm`` logger and the SDK's (idempotent)."""
    masked = [k for k in ([keys] if isinstance(keys, str) else keys) if is_key(k)]
    for logger in map(logging.getLogger, SCRUBBED_LOGGERS):
        for key in masked:
            if not any(isinstance(f, _MaskFilter) and f.key == key for f in logger.filters):
                logger.addFilter(_MaskFilter(key))


CREDENTIALS_ENV = "HELM_CREDENTIALS"
"""HELM reads credentials.conf's text from this variable first (helm.common.general.get_credentials)."""


def machine_keys(local_path: Path = Path(LOCAL_PATH), environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The keys HELM would hand a judge on this machine: ``HELM_CREDENTIALS`` or ``<local_path>/credentials.conf``
    (HELM's default local path), and the environment. A credentials file that cannot be parsed gives none."""
    env = os.environ if environ is None else environ
    path = local_path / "credentials.conf"
    raw = env.get(CREDENTIALS_ENV) or (path.read_text(encoding="utf-8", errors="replace") if path.is_file() else "")
    try:
        credentials = pyhocon.ConfigFactory.parse_string(raw) if raw.strip() else {}
    except Exception:  # pyhocon's errors have no common base; helm-run itself reports a broken file
        credentials = {}
    return reachable_keys(credentials, env)
