"""HELM model deployments for judges served at an OpenAI-compatible ``judge_base_url``, and their API keys.

Why a deployment per (endpoint, model): HELM keeps one cache file per host organization, and its
OpenAI cache key holds the served model name but not the URL. Putting a short hash of the base URL in
the host organization (``mtsjudge-<8hex>/<model>``) gives every endpoint its own cache file, so two
endpoints serving a same-named model never replay each other's replies.

Keys are never part of the deployment (a process-wide registry) nor of the annotator's args (written
to run_spec.json): each is handed to HELM the way HELM expects keys, as the credential
``<host organization>ApiKey`` of the annotator's own AutoClient. Each endpoint has its own key, found in
this order: env ``JUDGE_API_KEY_<n>`` (n = the endpoint's position in ``judge_base_url``, from 1), the
credentials.conf map ``judgeApiKeys: {"<base url>": "<key>"}``, env ``JUDGE_API_KEY`` or credentials
``judgeApiKey`` (shared by all endpoints), else none (``EMPTY``, for keyless local servers).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlparse, urlsplit, urlunsplit

import requests
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
from helm_mtsamples_ext.common.secrets import is_key
from helm_mtsamples_ext.helm_host.compat import endpoint_tokenizer_name
from helm_mtsamples_ext.judges.deadline import whole_call_http_client
from helm_mtsamples_ext.judges.formats import JudgeResponseFormat, json_object_format

API_KEY_ENV = "JUDGE_API_KEY"
API_KEY_CREDENTIAL = "judgeApiKey"
API_KEYS_CREDENTIAL = "judgeApiKeys"
PLACEHOLDER_API_KEY = "EMPTY"  # keyless local servers (vLLM, llama.cpp, Ollama) accept any key
HOST_PREFIX = "mtsjudge-"
ENDPOINT_CLIENT_CLASS = names.ENDPOINT_CLIENT_CLASS


class JudgeEndpointClient(OpenAIClient):
    """HELM's OpenAI client, which also sends a verdict schema the llama.cpp way when asked.

    HELM's client turns every ``response_format`` into ``{"type": "json_schema", ...}``; llama.cpp's
    Python server refuses that (HTTP 500) and wants ``{"type": "json_object", "schema": ...}``.
    The judge caller hands it ``judge_timeout`` (``bound_whole_calls``), which then bounds each whole call,
    slow drip included (``deadline.py``); its ClientSpec's ``timeout`` stays the SDK's per-read timeout."""

    _whole_call_limit: float | None = None
    _whole_calls = False

    def bound_whole_calls(self, limit: float) -> None:
        """End every chat call within ``limit`` seconds, from its next call on."""
        self._whole_call_limit = float(limit)

    def _make_chat_request(self, request: Request) -> RequestResult:
        """Swap the SDK client for one whose every call ends within the limit (once, at the first chat call;
        HELM's constructor, which differs between HELM versions, stays untouched)."""
        if self._whole_call_limit is not None and not self._whole_calls:
            self.client = self.client.with_options(http_client=whole_call_http_client(self._whole_call_limit))
            self._whole_calls = True
        return super()._make_chat_request(request)

    def _make_chat_raw_request(self, request: Request) -> dict[str, Any]:
        raw = super()._make_chat_raw_request(request)
        rf = request.response_format
        if isinstance(rf, JudgeResponseFormat) and rf.mode == "json_object" and rf.json_schema:
            raw["response_format"] = json_object_format(dict(rf.json_schema))
        return raw


_REGISTRY_LOCK = threading.Lock()


def normalise_base_url(base_url: str) -> str:
    """The endpoint's identity (its key and cache shard are found by it): its query, if any, included."""
    root, query = split_query(base_url)
    return f"{root}?{urlencode(query)}" if query else root


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """The API root without its query (routes go after its path) and the query, sent on every request."""
    parts = urlsplit(base_url.strip())
    root = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return root, dict(parse_qsl(parts.query, keep_blank_values=True))


def api_url(base_url: str, route: str) -> str:
    """``route`` (``/models``) of the API at ``base_url``, with the base URL's query after it."""
    root, query = split_query(base_url)
    return f"{root}{route}" + (f"?{urlencode(query)}" if query else "")


def bearer_headers(key: str | None) -> dict[str, str]:
    """The Authorization header of a GET we make ourselves (check, capacity); none for the keyless placeholder."""
    return {"Authorization": f"Bearer {key}"} if key and key != PLACEHOLDER_API_KEY else {}


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
    ``timeout`` (judge_timeout) bounds each read of the SDK's HTTP client.
    """
    name = endpoint_deployment_name(base_url, model)
    root, query = split_query(base_url)  # the query goes to the SDK (HELM's client hands it unknown arguments)
    args: dict[str, Any] = {"base_url": root, "openai_model_name": model, "timeout": float(timeout), "max_retries": 0}
    spec = ClientSpec(class_name=ENDPOINT_CLIENT_CLASS, args={**args, "default_query": query} if query else args)
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


def key_settings(position: int, base_url: str) -> str:
    """Where a user sets the key of the endpoint at ``position`` (1-based), for error messages."""
    return (
        f'{API_KEY_ENV}_{position}, {API_KEYS_CREDENTIAL}["{normalise_base_url(base_url)}"] in credentials.conf, '
        f"or {API_KEY_ENV} / {API_KEY_CREDENTIAL} for every endpoint"
    )


@dataclass(frozen=True)
class EndpointKey:
    base_url: str
    position: int  # 1-based position in judge_base_url
    key: str
    source: str  # which setting it came from (never the key itself)


def resolve_endpoint_keys(
    endpoints: Iterable[tuple[int, str]],
    credentials: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
) -> dict[str, EndpointKey]:
    """The key of each endpoint, by normalised base URL; ``endpoints`` are (position, base_url) pairs.

    A URL listed at several positions takes the key of its first position."""
    env = os.environ if environ is None else environ
    by_url_raw = credentials.get(API_KEYS_CREDENTIAL, None) or {}  # pyhocon raises without a default
    # pyhocon keeps the quotes of a quoted key that holds a dot ("http://host/v1" stays quoted).
    by_url = {normalise_base_url(str(u).strip('"')): str(k) for u, k in dict(by_url_raw).items()} if by_url_raw else {}
    shared_env, shared_cred = env.get(API_KEY_ENV), credentials.get(API_KEY_CREDENTIAL, None)
    keys: dict[str, EndpointKey] = {}
    for position, base_url in sorted(endpoints):
        url = normalise_base_url(base_url)
        if url in keys:
            continue
        numbered = f"{API_KEY_ENV}_{position}"
        if env.get(numbered):
            keys[url] = EndpointKey(url, position, env[numbered], numbered)
        elif by_url.get(url):
            keys[url] = EndpointKey(url, position, by_url[url], f"{API_KEYS_CREDENTIAL}[{url!r}]")
        elif shared_env:
            keys[url] = EndpointKey(url, position, shared_env, API_KEY_ENV)
        elif shared_cred:
            keys[url] = EndpointKey(url, position, str(shared_cred), API_KEY_CREDENTIAL)
        else:
            keys[url] = EndpointKey(url, position, PLACEHOLDER_API_KEY, "none (keyless)")
    return keys


def credentials_with_keys(credentials: Mapping[str, Any], keys: Iterable[EndpointKey]) -> dict[str, Any]:
    """``credentials`` plus ``<host>ApiKey`` for each endpoint, the binding HELM's AutoClient reads keys from."""
    merged = dict(credentials)
    for endpoint in keys:
        merged[f"{endpoint_host(endpoint.base_url)}ApiKey"] = endpoint.key
    return merged


def _is_secret(secret: str | None) -> bool:
    # The placeholder is no secret; a short key or an ordinary word is not one either (masking.key_problem), and
    # masking it would mangle every record.
    return bool(secret) and is_key(secret)


def secrets_of(keys: Iterable[EndpointKey]) -> tuple[str, ...]:
    """The keys worth masking, longest first (so a key containing another is masked whole)."""
    return tuple(sorted({k.key for k in keys if _is_secret(k.key)}, key=len, reverse=True))


def scrub(text: str, secrets: str | Iterable[str] | None) -> str:
    """``text`` with every secret masked, for anything recorded or logged."""
    if not secrets:
        return text
    for secret in [secrets] if isinstance(secrets, str) else secrets:
        if _is_secret(secret):
            text = text.replace(secret, "***")
    return text


class _ScrubFilter(logging.Filter):
    """Masks a key in HELM's own log records too (its clients log the text of API errors, which a
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


SCRUBBED_LOGGERS = ("helm", "openai", "httpx")
"""HELM's logger and those of the HTTP stack under its clients (which log request errors)."""


def install_log_scrubber(secrets: str | Iterable[str]) -> None:
    """Mask each secret in everything logged through HELM's ``helm`` logger and the SDK's (idempotent)."""
    masked = [s for s in ([secrets] if isinstance(secrets, str) else secrets) if _is_secret(s)]
    for logger in map(logging.getLogger, SCRUBBED_LOGGERS):
        for secret in masked:
            if not any(isinstance(f, _ScrubFilter) and f.secret == secret for f in logger.filters):
                logger.addFilter(_ScrubFilter(secret))


CHECK_TIMEOUT = 10.0


def check_endpoint(base_url: str, key: str | None, timeout: float = CHECK_TIMEOUT) -> str | None:
    """What is wrong with an OpenAI-compatible endpoint, from one ``GET {base}/models``; None when nothing is.

    Only plain evidence fails: no connection (refused, unknown host, no answer) or an answer that is an HTML
    page or not JSON at all. Any JSON answer passes, even an error (some servers have no ``/models``, and a
    refused key is reported by the first call with the setting to fix)."""
    url = normalise_base_url(base_url)
    models = api_url(base_url, "/models")
    try:
        with requests.get(models, headers=bearer_headers(key), timeout=timeout, stream=True) as response:
            head = response.raw.read(4096, decode_content=True) if response.raw is not None else b""
            content_type = response.headers.get("Content-Type", "")
            status = response.status_code
    except requests.exceptions.ConnectionError as e:
        reason = "unknown host" if "resolve" in str(e).lower() or "name or service" in str(e).lower() else None
        return f"judge endpoint {url} cannot be reached ({reason or _short(e)}): start the server or fix judge_base_url"
    except requests.RequestException as e:
        return f"judge endpoint {url} cannot be reached ({_short(e)}): start the server or fix judge_base_url"
    text = head.lstrip().lower()
    root = urlparse(url)
    example = f"{root.scheme}://{root.netloc}/v1"
    if "html" in content_type.lower() or text.startswith((b"<!doctype", b"<html", b"<")):
        return (
            f"judge endpoint {url} answered with an HTML page (HTTP {status}), not the OpenAI API: use the API "
            f"root, e.g. {example}"
        )
    if 200 <= status < 300 and not text.startswith((b"{", b"[")):
        return (
            f"judge endpoint {url} answered HTTP {status} with something that is not JSON: use the API root, "
            f"e.g. {example}"
        )
    return None


def _short(error: Exception) -> str:
    text = str(error)
    for marker in ("Connection refused", "timed out", "Name or service not known", "No route to host"):
        if marker.lower() in text.lower():
            return marker.lower()
    return type(error).__name__
