"""The panel's endpoint keys handed to HELM; every key this process could send, for masking.

Why here and not in the annotator: that a key is masked in all we keep is the judges wing's rule; the annotator
only asks for the keys of its panel. Where each key comes from is endpoint_keys.py's rule, shared with the doors
that run without HELM. Each is handed to HELM the way HELM expects keys: the credential
``<host organization>ApiKey`` of the annotator's AutoClient.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from helm.clients.auto_client import AutoClient
from helm.common.hierarchical_logger import hwarn

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.secrets import (
    install_log_scrubber,
    reachable_keys,
)
from helm_mtsamples_ext.judges.core.endpoint_keys import EndpointKey, refused_keys, resolve_endpoint_keys, secrets_of
from helm_mtsamples_ext.judges.core.urls import normalise_base_url
from helm_mtsamples_ext.judges.helm_calls.endpoints import endpoint_host


def credentials_with_keys(credentials: Mapping[str, Any], keys: Iterable[EndpointKey]) -> dict[str, Any]:
    """``credentials`` plus ``<host>ApiKey`` for each endpoint, the binding HELM's AutoClient reads keys from."""
    merged = dict(credentials)
    for endpoint in keys:
        merged[f"{endpoint_host(endpoint.base_url)}ApiKey"] = endpoint.key
    return merged


@dataclass(frozen=True)
class PanelKeys:
    """The endpoint keys of a panel, by normalised base URL, and every secret to mask (longest first)."""

    by_url: dict[str, EndpointKey]
    secrets: tuple[str, ...]


def endpoint_positions(panel: list[JudgeSpec]) -> list[tuple[int, str]]:
    """(position in judge_base_url, URL) of each endpoint judge; suites from before positions were recorded
    number their distinct URLs in panel order."""
    distinct: list[str] = []
    positions = []
    for judge in panel:
        if not judge.base_url:
            continue
        url = normalise_base_url(judge.base_url)
        if url not in distinct:
            distinct.append(url)
        positions.append((judge.endpoint_index or distinct.index(url) + 1, judge.base_url))
    return positions


def install_panel_keys(panel: list[JudgeSpec], auto_client: AutoClient) -> PanelKeys:
    """Find each endpoint's key and bind it as HELM's ``<host>ApiKey`` credential of ``auto_client``; mask every
    key this process could send (hosted judges' included, common/secrets.py) in HELM's and the SDK's logs."""
    keys = resolve_endpoint_keys(endpoint_positions(panel), auto_client.credentials)
    for line in refused_keys(keys.values()):
        hwarn(line)
    secrets = reachable_keys(auto_client.credentials, os.environ, secrets_of(keys.values()))
    install_log_scrubber(secrets)
    if keys:
        auto_client.credentials = credentials_with_keys(auto_client.credentials, keys.values())
    return PanelKeys(keys, secrets)
