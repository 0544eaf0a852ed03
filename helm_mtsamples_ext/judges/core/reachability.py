"""Is an OpenAI-compatible endpoint there at all: one ``GET {base}/models`` before the first live call.

Why apart from the deployment: the check uses no HELM client (a plain GET, so a wrong URL fails in one line
naming the fix, not in an SDK stack trace), and the readiness gate calls it at most once per endpoint.

A server that took the connection but has not answered yet is alive and busy, not dead: llama-cpp-python's
server answers ``/models`` only once the completion it is writing is done (its model lock), which takes minutes
for a small judge writing long replies, for another run or for a client that gave up. Such a server is waited for
(``busy_wait``, one line saying so), as the judge calls themselves wait for it; only no connection, an HTML page or
a body that is not JSON fails at once.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlparse

import requests

from helm_mtsamples_ext.common.log import hwarn
from helm_mtsamples_ext.judges.core.urls import api_url, bearer_headers, normalise_base_url

CHECK_TIMEOUT = 10.0
BUSY_WAIT = 900.0
"""How long a check waits for a server that took the connection but is busy: ``judge_max_wait``'s default."""


def check_endpoint(
    base_url: str,
    key: str | None,
    timeout: float = CHECK_TIMEOUT,
    busy_wait: float = BUSY_WAIT,
    warn: Callable[[str], None] = hwarn,
) -> str | None:
    """What is wrong with an OpenAI-compatible endpoint, from one ``GET {base}/models``; None when nothing is.

    Only plain evidence fails: no connection (refused, unknown host, no answer to the connection), an answer that
    is an HTML page or not JSON at all, or a server that took the connection and still said nothing after
    ``busy_wait`` seconds. Any JSON answer passes, even an error (some servers have no ``/models``, and a refused
    key is reported by the first call with the setting to fix)."""
    url = normalise_base_url(base_url)
    models = api_url(base_url, "/models")
    try:
        try:
            head, content_type, status = _get(models, key, timeout, timeout)
        except requests.exceptions.ReadTimeout:
            warn(
                f"judge endpoint {url} took the connection but has not answered in {timeout:g} s (busy with "
                f"another client's request?): waiting up to {busy_wait:g} s for it"
            )
            head, content_type, status = _get(models, key, timeout, max(timeout, busy_wait))
    except requests.exceptions.ReadTimeout:
        return (
            f"judge endpoint {url} took the connection but did not answer in {max(timeout, busy_wait):g} s: it is "
            "busy or hung; let its other work finish or restart it, or raise judge_max_wait"
        )
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


def _get(url: str, key: str | None, connect: float, read: float) -> tuple[bytes, str, int]:
    """The first 4 KiB of ``url``'s body, its content type and status (a connect and a read timeout apart: a
    server that took the connection is alive)."""
    with requests.get(url, headers=bearer_headers(key), timeout=(connect, read), stream=True) as response:
        head = response.raw.read(4096, decode_content=True) if response.raw is not None else b""
        return head, response.headers.get("Content-Type", ""), response.status_code


def _short(error: Exception) -> str:
    text = str(error)
    for marker in ("Connection refused", "timed out", "Name or service not known", "No route to host"):
        if marker.lower() in text.lower():
            return marker.lower()
    return type(error).__name__
