"""HELM model deployments for judges served at an OpenAI-compatible ``judge_base_url``, and their client.

Why a deployment per (endpoint, model): HELM keeps one cache file per host organization, and its
OpenAI cache key holds the served model name but not the URL. Putting a short hash of the base URL in
the host organization (``mtsjudge-<8hex>/<model>``) gives every endpoint its own cache file, so two
endpoints serving a same-named model never replay each other's replies.

Keys are never part of the deployment (a process-wide registry) nor of the annotator's args (written
to run_spec.json): keys.py finds them and hands each to HELM as the credential ``<host organization>ApiKey``.
Nor is ``judge_timeout``: the judge caller hands it to the client (``bound_whole_calls``), the one route by
which it reaches the HTTP client, so a deployment registered in prod_env with this class is bounded alike.
"""

from __future__ import annotations

import hashlib
import threading
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
from helm.clients.openai_client import OpenAIClient
from helm.common.request import Request, RequestResult

from helm_mtsamples_ext import names
from helm_mtsamples_ext.helm_host.compat import endpoint_tokenizer_name
from helm_mtsamples_ext.judges.core.urls import normalise_base_url, split_query
from helm_mtsamples_ext.judges.helm_calls.deadline import whole_call_http_client
from helm_mtsamples_ext.judges.helm_calls.formats import JudgeResponseFormat, json_object_format

HOST_PREFIX = "mtsjudge-"


class JudgeEndpointClient(OpenAIClient):
    """HELM's OpenAI client, which also sends a verdict schema the llama.cpp way when asked.

    HELM's client turns every ``response_format`` into ``{"type": "json_schema", ...}``; llama.cpp's
    Python server refuses that (HTTP 500) and wants ``{"type": "json_object", "schema": ...}``.
    The judge caller hands it ``judge_timeout`` (``bound_whole_calls``), which then bounds each read and each
    whole call, slow drip included (``deadline.py``)."""

    _whole_call_limit: float | None = None
    _whole_calls = False

    def bound_whole_calls(self, limit: float) -> None:
        """End every read and every whole chat call within ``limit`` seconds, from its next call on."""
        self._whole_call_limit = float(limit)

    def _make_chat_request(self, request: Request) -> RequestResult:
        """Swap the SDK client for one whose every call ends within the limit (once, at the first chat call;
        HELM's constructor, which differs between HELM versions, stays untouched)."""
        if self._whole_call_limit is not None and not self._whole_calls:
            limit = self._whole_call_limit
            self.client = self.client.with_options(timeout=limit, http_client=whole_call_http_client(limit))
            self._whole_calls = True
        return super()._make_chat_request(request)

    def _make_chat_raw_request(self, request: Request) -> dict[str, Any]:
        raw = super()._make_chat_raw_request(request)
        rf = request.response_format
        if isinstance(rf, JudgeResponseFormat) and rf.mode == "json_object" and rf.json_schema:
            raw["response_format"] = json_object_format(dict(rf.json_schema))
        return raw


_REGISTRY_LOCK = threading.Lock()


def endpoint_host(base_url: str) -> str:
    """The HELM host organization (and cache shard) of an endpoint: ``mtsjudge-<8 hex of the URL>``."""
    digest = hashlib.sha256(normalise_base_url(base_url).encode()).hexdigest()[:8]
    return f"{HOST_PREFIX}{digest}"


def endpoint_deployment_name(base_url: str, model: str) -> str:
    """The HELM deployment (and model) name of ``model`` served at ``base_url``."""
    return f"{endpoint_host(base_url)}/{model}"


def register_endpoint_deployment(base_url: str, model: str) -> str:
    """Register (idempotently) the deployment calling ``model`` at ``base_url``; returns its name.

    ``max_retries=0`` turns off the OpenAI SDK's own retries so the annotator's are the only ones.
    """
    name = endpoint_deployment_name(base_url, model)
    root, query = split_query(base_url)  # the query goes to the SDK (HELM's client hands it unknown arguments)
    args: dict[str, Any] = {"base_url": root, "openai_model_name": model, "max_retries": 0}
    spec = ClientSpec(class_name=names.ENDPOINT_CLIENT_CLASS, args={**args, "default_query": query} if query else args)
    deployment = ModelDeployment(name=name, client_spec=spec, model_name=name, tokenizer_name=endpoint_tokenizer_name())
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
