"""How many calls at once a judge endpoint takes, asked where the server says it.

Why: a server that takes fewer calls than we send queues the rest, and a queued call times out while the
server is alive and busy. llama-cpp-python's server (``python -m llama_cpp.server``, the PyPI wheel's only
server) takes one request at a time; sending it 16 loses most of the key-free quickstart's notes to
``judge_timeout`` (measured: 7 of 10). Two servers say what they take:
- llama.cpp's ``llama-server``: ``GET /props`` answers ``total_slots`` (its ``--parallel``);
- llama-cpp-python's server: no ``/props``, and its ``GET /v1/models`` lists each model with
  ``owned_by: "me"`` and ``permissions: []``, which no other server we know writes; it serves one at a time.
Any other server keeps the configured ``judge_max_concurrency`` and the gate adapts (``throttle.py``).

The same two answers say which model the server loaded (``served_model.loaded_model``): a local server
answers to any name, so the name asked says nothing of the weights. Asked once per endpoint, with the
endpoint check, before its first live call; a run answered from HELM's cache asks nothing (its replies
stored what the live call learned). No answer, a refusal or anything unexpected means "unknown", never a
failure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import requests

from helm_mtsamples_ext.judges.core.reply.served_model import loaded_model
from helm_mtsamples_ext.judges.core.urls import api_url, bearer_headers, normalise_base_url, split_query

PROBE_TIMEOUT = 10.0
LLAMA_CPP_PYTHON = "llama-cpp-python's server serves one request at a time"


@dataclass(frozen=True)
class Capacity:
    """Calls the endpoint takes at once, and who said so (for the log line and the progress bar)."""

    slots: int
    source: str


@dataclass(frozen=True)
class ServerFacts:
    """What one endpoint's server said of itself: calls at once (None: unknown) and the model it loaded."""

    capacity: Capacity | None
    loaded_model: str | None


def server_root(base_url: str) -> str:
    """The server's root for its own routes (``/props``): the API root without its ``/v1``."""
    url = split_query(base_url)[0]
    return url[: -len("/v1")] if url.endswith("/v1") else url


def from_props(props: Any) -> Capacity | None:
    """llama.cpp's ``/props``: ``total_slots`` when it is a positive integer."""
    slots = props.get("total_slots") if isinstance(props, Mapping) else None
    if isinstance(slots, int) and not isinstance(slots, bool) and slots >= 1:
        return Capacity(slots, f"llama.cpp's /props says total_slots={slots}")
    return None


def from_models(models: Any) -> Capacity | None:
    """llama-cpp-python's ``/v1/models``: every model ``owned_by`` "me" with empty ``permissions``."""
    data = models.get("data") if isinstance(models, Mapping) else None
    if not isinstance(data, list) or not data:
        return None
    if all(isinstance(m, Mapping) and m.get("owned_by") == "me" and m.get("permissions") == [] for m in data):
        return Capacity(1, LLAMA_CPP_PYTHON)
    return None


def _get_json(url: str, headers: dict[str, str], timeout: float) -> Any:
    try:
        response = requests.get(url, headers=headers, timeout=timeout)
        if response.status_code != 200 or len(response.content) > 1_000_000:
            return None
        return response.json()
    except (requests.RequestException, json.JSONDecodeError, ValueError):
        return None


def probe_server(base_url: str, key: str | None, asked: str, timeout: float = PROBE_TIMEOUT) -> ServerFacts:
    """The endpoint's capacity (``/props``, then the ``/v1/models`` signature) and the model loaded for the
    name ``asked``, each None where the server does not say; each route asked once."""
    headers = bearer_headers(key)
    props = _get_json(f"{server_root(base_url)}/props", headers, timeout)
    models = _get_json(api_url(base_url, "/models"), headers, timeout)
    return ServerFacts(from_props(props) or from_models(models), loaded_model(props, models, asked))


def probe_capacity(base_url: str, key: str | None, timeout: float = PROBE_TIMEOUT) -> Capacity | None:
    """The endpoint's capacity if its server says it, else None."""
    return probe_server(base_url, key, "", timeout).capacity


def endpoint_capacities(
    endpoints: Iterable[tuple[str, str | None]],
    probe: Callable[[str, str | None], Capacity | None] = probe_capacity,
) -> dict[str, Capacity]:
    """Each endpoint's capacity by its normalised URL, where its server says: ``endpoints`` are (base URL, key)
    pairs, each distinct endpoint asked once (the doors without HELM, at start; HELM's path asks in readiness.py)."""
    asked: set[str] = set()
    said: dict[str, Capacity] = {}
    for base_url, key in endpoints:
        url = normalise_base_url(base_url)
        if url in asked:
            continue
        asked.add(url)
        capacity = probe(base_url, key)
        if capacity is not None:
            said[url] = capacity
    return said
