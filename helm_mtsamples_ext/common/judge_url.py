"""A judge's base URL checked before anything stores it: no URL that could carry a secret.

Why apart from run_spec.py: every door writes the judge's URL where others read it (HELM's run_spec.json and
scenario_state.json, an Inspect log's task arguments), so every door refuses the same URLs in the same words.
Pure: it parses, contacts nothing.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlsplit

__all__ = ["ALLOWED_QUERY_PARAMS", "check_base_url"]

ALLOWED_QUERY_PARAMS = ("api-version",)  # Azure's; anything else in a URL may be a credential

_SECRET_LIKE = re.compile(
    r"^(sk|pk|rk|key|token|secret|bearer|ghp|hf|xai|gsk)[-_]"  # a provider's key prefix
    r"|(?<![A-Za-z0-9])(?=[A-Za-z0-9]*[0-9])(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{20,}",  # a long run of both
    re.IGNORECASE,
)
"""A path segment or query value that reads as a key: a provider's key prefix (``sk-``, ``hf_``), or 20 letters
and digits mixed without a break (API paths are words and versions: ``v1``, ``deployments``,
``gpt-4o-mini-2024-07-18``, a UUID)."""


def check_base_url(url: str, position: int = 1) -> str:
    """Refuse a URL that could carry a secret: run entries are written to run_spec.json and scenario_state.json,
    and logged. The message names the URL's position and the offending part, never the URL nor its value."""
    which = "judge_base_url" if position == 1 else f"judge_base_url's URL {position}"
    where = "keys go in JUDGE_API_KEY_<n>, judgeApiKeys in credentials.conf, or JUDGE_API_KEY"
    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018 (raises on a port that is no number)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"{which} must be an http(s) URL such as http://127.0.0.1:8081/v1 (not repeated here: a URL may hold a "
            "secret)"
        )
    if parts.username or parts.password or "@" in parts.netloc:
        raise ValueError(f"{which} must not carry user:password@; {where}")
    if parts.fragment or "#" in url:
        raise ValueError(f"{which} must not carry a #fragment; {where}")
    if ";" in parts.path or ";" in parts.query:
        raise ValueError(f"{which} must not carry ;parameters; {where}")
    if any(_SECRET_LIKE.search(segment) for segment in parts.path.split("/") if segment):
        raise ValueError(
            f"{which} has a path segment that reads as a key: use the API root (e.g. http://host:port/v1); {where}"
        )
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    extra = sorted({k for k, _ in pairs} - set(ALLOWED_QUERY_PARAMS))
    if extra or (parts.query and not pairs) or any(_SECRET_LIKE.search(v) for _, v in pairs):
        named = ", ".join(repr(k) for k in extra) or (
            "a value that reads as a key" if pairs else "an unparseable query"
        )
        raise ValueError(
            f"{which} may carry only the query parameter {', '.join(ALLOWED_QUERY_PARAMS)}, not {named}; {where}"
        )
    return url
