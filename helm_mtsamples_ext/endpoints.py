"""HELM model deployments for judges served at an OpenAI-compatible ``judge_base_url``, and their API key.

Why a deployment per (endpoint, model): HELM keeps one cache file per host organization, and its
OpenAI cache key holds the served model name but not the URL. Putting a short hash of the base URL in
the host organization (``mtsjudge-<8hex>/<model>``) gives every endpoint its own cache file, so two
endpoints serving a same-named model never replay each other's replies.

The key is never part of the deployment (a process-wide registry) nor of the annotator's args (written
to run_spec.json): it is handed to HELM the way HELM expects keys, as the credential
``<host organization>ApiKey`` of the annotator's own AutoClient.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from helm.benchmark.model_deployment_registry import (
    DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT,
    ClientSpec,
    ModelDeployment,
    register_model_deployment,
)
from helm.benchmark.model_metadata_registry import (
    MODEL_NAME_TO_MODEL_METADATA,
    get_unknown_model_metadata,
    register_model_metadata,
)

API_KEY_ENV = "JUDGE_API_KEY"
PLACEHOLDER_API_KEY = "EMPTY"  # keyless local servers (vLLM, llama.cpp, Ollama) accept any key
HOST_PREFIX = "mtsjudge-"
OPENAI_CLIENT_CLASS = "helm.clients.openai_client.OpenAIClient"

_REGISTRY_LOCK = threading.Lock()


def normalise_base_url(base_url: str) -> str:
    return base_url.strip().rstrip("/")


def endpoint_host(base_url: str) -> str:
    """The HELM host organization (and cache shard) of an endpoint: ``mtsjudge-<8 hex of the URL>``."""
    digest = hashlib.sha256(normalise_base_url(base_url).encode()).hexdigest()[:8]
    return f"{HOST_PREFIX}{digest}"


def endpoint_deployment_name(base_url: str, model: str) -> str:
    """The HELM deployment (and model) name of ``model`` served at ``base_url``."""
    return f"{endpoint_host(base_url)}/{model}"


def register_endpoint_deployment(base_url: str, model: str, timeout: float) -> str:
    """Register (idempotently) the deployment calling ``model`` at ``base_url``; returns its name.

    ``max_retries=0`` turns off the OpenAI SDK's own retries so the annotator's are the only ones;
    ``timeout`` bounds each call.
    """
    name = endpoint_deployment_name(base_url, model)
    spec = ClientSpec(
        class_name=OPENAI_CLIENT_CLASS,
        args={
            "base_url": normalise_base_url(base_url),
            "openai_model_name": model,
            "timeout": float(timeout),
            "max_retries": 0,
        },
    )
    deployment = ModelDeployment(name=name, client_spec=spec, model_name=name)
    with _REGISTRY_LOCK:
        if name not in MODEL_NAME_TO_MODEL_METADATA:
            # Registered up front so HELM does not warn about an unknown model for every endpoint.
            metadata = get_unknown_model_metadata(name)
            metadata.creator_organization_name = endpoint_host(base_url)
            metadata.display_name = f"{model} @ {normalise_base_url(base_url)}"
            register_model_metadata(metadata)
        if DEPLOYMENT_NAME_TO_MODEL_DEPLOYMENT.get(name) != deployment:
            register_model_deployment(deployment)
    return name


def resolve_api_key(credentials_key: str | None) -> str:
    """The judge key: env ``JUDGE_API_KEY``, else credentials.conf ``judgeApiKey``, else a placeholder."""
    return os.environ.get(API_KEY_ENV) or credentials_key or PLACEHOLDER_API_KEY


def credentials_with_key(credentials: Mapping[str, Any], base_urls: Iterable[str], api_key: str) -> dict[str, Any]:
    """``credentials`` plus ``<host>ApiKey`` for each endpoint, the binding HELM's AutoClient reads keys from."""
    merged = dict(credentials)
    for base_url in base_urls:
        merged[f"{endpoint_host(base_url)}ApiKey"] = api_key
    return merged


def _is_secret(secret: str | None) -> bool:
    # The placeholder is no secret; a key under 4 characters is not one either, and masking it would
    # mangle every record.
    return bool(secret) and secret != PLACEHOLDER_API_KEY and len(secret or "") >= 4


def scrub(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` masked, for anything recorded or logged."""
    return text.replace(secret, "***") if secret and _is_secret(secret) else text


class _ScrubFilter(logging.Filter):
    """Masks the key in HELM's own log records too (its clients log the text of API errors, which a
    server may fill with the key it was sent)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if self.secret in message or self.secret in (record.exc_text or ""):
            record.msg, record.args = scrub(message, self.secret), None
            record.exc_text = scrub(record.exc_text, self.secret) if record.exc_text else record.exc_text
        return True


def install_log_scrubber(secret: str) -> None:
    """Mask ``secret`` in everything logged through HELM's ``helm`` logger (idempotent)."""
    if not _is_secret(secret):
        return
    logger = logging.getLogger("helm")
    if not any(isinstance(f, _ScrubFilter) and f.secret == secret for f in logger.filters):
        logger.addFilter(_ScrubFilter(secret))
