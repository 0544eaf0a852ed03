"""Where each judge endpoint's key comes from: the one rule every door follows.

Why apart from keys.py: the rule needs no HELM, and the Inspect task, which runs without HELM, must find a key
where a HELM user would have set it. Each endpoint has its own key, found in this order: env ``JUDGE_API_KEY_<n>``
(n = the endpoint's position in ``judge_base_url``, from 1), the credentials.conf map
``judgeApiKeys: {"<base url>": "<key>"}`` (HELM's path only), env ``JUDGE_API_KEY`` or credentials ``judgeApiKey``
(shared by all endpoints), else none (``EMPTY``, for keyless local servers).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from helm_mtsamples_ext.common.secrets import PLACEHOLDER_KEY, is_key, refused_key_line
from helm_mtsamples_ext.judges.core.urls import normalise_base_url

API_KEY_ENV = "JUDGE_API_KEY"
API_KEY_CREDENTIAL = "judgeApiKey"
API_KEYS_CREDENTIAL = "judgeApiKeys"


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
            keys[url] = EndpointKey(url, position, PLACEHOLDER_KEY, "none (keyless)")
    return keys


def secrets_of(keys: Iterable[EndpointKey]) -> tuple[str, ...]:
    """The keys worth masking (common.secrets.is_key), longest first (so a key containing another is masked whole)."""
    return tuple(sorted({k.key for k in keys if is_key(k.key)}, key=len, reverse=True))


def refused_keys(keys: Iterable[EndpointKey]) -> list[str]:
    """One line per endpoint key that is no key (secrets.refused_key_line)."""
    lines = (refused_key_line(endpoint.source, endpoint.key) for endpoint in keys)
    return [line for line in lines if line is not None]


__all__ = [
    "API_KEYS_CREDENTIAL",
    "API_KEY_CREDENTIAL",
    "API_KEY_ENV",
    "EndpointKey",
    "key_settings",
    "refused_keys",
    "resolve_endpoint_keys",
    "secrets_of",
]
