"""The panel's endpoint keys, found and handed to HELM; every key this process could send, for masking.

Why here and not in the annotator: where a key comes from (``JUDGE_API_KEY_<n>``, ``judgeApiKeys`` in
credentials.conf, ``JUDGE_API_KEY``: ``endpoints.resolve_endpoint_keys``) and that it is masked in all we
keep are the judges wing's rules; the annotator only asks for the keys of its panel.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from helm.clients.auto_client import AutoClient
from helm.common.hierarchical_logger import hwarn

from helm_mtsamples_ext.common.panel import JudgeSpec
from helm_mtsamples_ext.common.secrets import key_problem, reachable_keys
from helm_mtsamples_ext.judges.endpoints import (
    PLACEHOLDER_API_KEY,
    EndpointKey,
    credentials_with_keys,
    install_log_scrubber,
    normalise_base_url,
    resolve_endpoint_keys,
    secrets_of,
)


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


def refused_keys(keys: Iterable[EndpointKey]) -> list[str]:
    """One line per endpoint key that is no key (masking.key_problem): it is sent as given, for a server that
    takes any key, but never masked, and the line says where it came from without repeating it."""
    lines = []
    for endpoint in keys:
        problem = None if endpoint.key == PLACEHOLDER_API_KEY else key_problem(endpoint.key)
        if problem is not None:
            lines.append(
                f"{endpoint.source} {problem}, so it is refused as a key: it is not masked in what is kept, and a "
                f"server that checks keys will refuse it; for a keyless server unset it, else give the real key"
            )
    return lines


def install_panel_keys(panel: list[JudgeSpec], auto_client: AutoClient) -> PanelKeys:
    """Find each endpoint's key and bind it as HELM's ``<host>ApiKey`` credential of ``auto_client``; mask every
    key this process could send (hosted judges' included, masking.py) in HELM's and the SDK's logs."""
    keys = resolve_endpoint_keys(endpoint_positions(panel), auto_client.credentials)
    for line in refused_keys(keys.values()):
        hwarn(line)
    secrets = reachable_keys(auto_client.credentials, os.environ, secrets_of(keys.values()))
    install_log_scrubber(secrets)
    if keys:
        auto_client.credentials = credentials_with_keys(auto_client.credentials, keys.values())
    return PanelKeys(keys, secrets)
