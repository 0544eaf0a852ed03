"""An endpoint's base URL: its identity, its API root and query, the routes we GET ourselves.

Why apart: the deployment (endpoints.py), the keys (keys.py), the reachability check and the capacity probe
all find an endpoint by the same normalised URL and send its query the same way; none of them needs HELM.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from helm_mtsamples_ext.common.secrets import PLACEHOLDER_KEY


def split_query(base_url: str) -> tuple[str, dict[str, str]]:
    """The API root without its query (routes go after its path) and the query, sent on every request."""
    parts = urlsplit(base_url.strip())
    root = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
    return root, dict(parse_qsl(parts.query, keep_blank_values=True))


def normalise_base_url(base_url: str) -> str:
    """The endpoint's identity (its key and cache shard are found by it): its query, if any, included."""
    root, query = split_query(base_url)
    return f"{root}?{urlencode(query)}" if query else root


def api_url(base_url: str, route: str) -> str:
    """``route`` (``/models``) of the API at ``base_url``, with the base URL's query after it."""
    root, query = split_query(base_url)
    return f"{root}{route}" + (f"?{urlencode(query)}" if query else "")


def bearer_headers(key: str | None) -> dict[str, str]:
    """The Authorization header of a GET we make ourselves (check, capacity); none for the keyless placeholder."""
    return {"Authorization": f"Bearer {key}"} if key and key != PLACEHOLDER_KEY else {}
