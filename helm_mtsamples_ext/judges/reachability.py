"""Is an OpenAI-compatible endpoint there at all: one ``GET {base}/models`` before the first live call.

Why apart from the deployment: the check uses no HELM client (a plain GET, so a wrong URL fails in one line
naming the fix, not in an SDK stack trace), and the readiness gate calls it at most once per endpoint.
"""

from __future__ import annotations

from urllib.parse import urlparse

import requests

from helm_mtsamples_ext.judges.urls import api_url, bearer_headers, normalise_base_url

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
