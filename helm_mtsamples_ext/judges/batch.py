"""Judge calls as an OpenAI Batch (``judge_batch=true``): about half the price, answers within 24 h.

Neither HELM nor medhelm batches judges (medhelm 0.8 batches only the model under test, caches nothing,
ignores the error file and keeps polling an expired batch). Here each first-turn judge call of the run
that is not in HELM's cache goes into a batch for its endpoint (``/v1/files``, ``/v1/batches``), and each
answer is written into HELM's cache **under the key the same direct call uses**: the key is built by
HELM's own client code (``OpenAIClient._make_chat_raw_request`` and ``_get_cache_key``, the two HELM
internals used here), so the annotator's ordinary direct pass afterwards replays every batched answer
(zero calls), and a later run without ``judge_batch`` reuses them. What the batch could not answer
goes the ordinary way: repair turns and format fallbacks as direct calls; requests of an expired,
failed or cancelled batch as direct calls; a request the error file names becomes a named failure.

Submitted batches are written down (``<HELM cache dir>/mtsamples_batches/<endpoint>.json``) before
anything waits on them, so a killed run re-attaches to them instead of submitting (and paying) again.
"""

from __future__ import annotations

import hashlib
import io
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import openai
from helm.clients.openai_client import OpenAIClient
from helm.common.hierarchical_logger import hlog, hwarn
from helm.common.request import Request, wrap_request_time

MAX_REQUESTS = 50_000
"""OpenAI's limit of requests per batch."""
MAX_BYTES = 190 * 1024 * 1024
"""OpenAI's limit is 200 MB per input file; a margin for the multipart framing."""
TERMINAL = ("completed", "failed", "expired", "cancelled")
NO_FALLBACK = "no direct call: judge_batch_fallback=false"
CHAT_URL = "/v1/chat/completions"
BATCH_DIR = "mtsamples_batches"
"""Where submitted batches are written down, inside HELM's client file storage (prod_env/cache)."""


@dataclass(frozen=True)
class BatchItem:
    """One judge call for a batch: ``tag`` is the caller's (note, judge), ``request`` HELM's request."""

    tag: Any
    request: Request


@dataclass
class _Pending:
    tag: Any
    key: dict[str, Any]
    body: dict[str, Any]


class _Missing(Exception):
    pass


def _raise_missing() -> dict[str, Any]:
    raise _Missing()


def direct_key(client: OpenAIClient, request: Request) -> tuple[dict[str, Any], dict[str, Any]]:
    """(HELM's cache key, the request body) of the direct call, built by HELM's own client code."""
    raw = client._make_chat_raw_request(request)
    return dict(client._get_cache_key(raw, request)), dict(raw)


def is_cached(cache: Any, key: Mapping[str, Any]) -> bool:
    try:
        cache.get(key, _raise_missing)
    except _Missing:
        return False
    return True


def custom_id(key: Mapping[str, Any]) -> str:
    return "mts-" + hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:40]


def chunks(lines: list[tuple[str, bytes]], max_requests: int = MAX_REQUESTS, max_bytes: int = MAX_BYTES) -> list:
    """Split (custom_id, JSONL line) pairs into batches within the API's request and size limits."""
    out: list[list[tuple[str, bytes]]] = [[]]
    size = 0
    for item in lines:
        if out[-1] and (len(out[-1]) >= max_requests or size + len(item[1]) > max_bytes):
            out.append([])
            size = 0
        out[-1].append(item)
        size += len(item[1])
    return [c for c in out if c]


class BatchLedger:
    """The batches of one deployment, on disk beside HELM's cache: {input file id: {"batch": id, "ids": [...]}}.

    Keyed by the uploaded file, written before the batch is created: a run killed between creating the batch
    and hearing its id finds it again by its input file (``batches.list``), never submits it twice."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict):
            return {}
        return {
            str(f): {"batch": e.get("batch"), "ids": [str(c) for c in e.get("ids") or []]}
            for f, e in data.items()
            if isinstance(e, dict)
        }

    def _write(self, entries: Mapping[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(entries), encoding="utf-8")
        tmp.replace(self.path)

    def put(self, file_id: str, batch_id: str | None, ids: list[str]) -> None:
        with self._lock:
            self._write({**self.read(), file_id: {"batch": batch_id, "ids": ids}})

    def remove(self, file_id: str) -> None:
        with self._lock:
            entries = self.read()
            entries.pop(file_id, None)
            self._write(entries)


@dataclass
class BatchSettings:
    poll_first: float = 1.0
    poll_cap: float = 60.0
    max_wait: float = 26 * 3600.0  # the API's 24 h window and then some
    fallback: bool = True  # False (judge_batch_fallback=false): what a batch leaves unanswered fails, no direct call
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


def run_batches(
    client: OpenAIClient, endpoint: str, items: Iterable[BatchItem], ledger_dir: Path, settings: BatchSettings
) -> dict[Any, str]:
    """Answer ``items`` for one endpoint through the Batch API into HELM's cache; {tag: failure} for the
    requests the error file (or a non-200 line) named. Requests left unanswered (expired, failed, cancelled
    batches) are simply not cached: the caller's direct pass makes them, unless the user asked for no
    fallback, when they are failures named by the batch and its status."""
    cache = client.cache
    pending: dict[str, _Pending] = {}
    tags: dict[str, list[Any]] = {}  # several notes may make one request (same prompt): each gets its answer
    for item in items:
        key, body = direct_key(client, item.request)
        cid = custom_id(key)
        tags.setdefault(cid, []).append(item.tag)
        if cid not in pending and not is_cached(cache, key):
            pending[cid] = _Pending(item.tag, key, body)
    ledger = BatchLedger(ledger_dir / f"{endpoint}.json")
    sdk = client.client
    batches: dict[str, str] = {}  # input file id -> batch id
    members: dict[str, list[str]] = {}  # input file id -> its requests' custom ids
    covered: set[str] = set()
    for file_id, entry in ledger.read().items():
        if not set(entry["ids"]) & pending.keys():
            continue
        covered.update(entry["ids"])
        batch_id = entry["batch"] or _batch_of_file(sdk, file_id)
        if batch_id is None:
            batch_id = _create(sdk, file_id)
        else:
            hlog(
                f"Judge batch {batch_id} at {endpoint}: re-attached (submitted by an earlier run), not submitted again"
            )
        ledger.put(file_id, batch_id, entry["ids"])
        batches[file_id], members[file_id] = batch_id, entry["ids"]
    lines = [
        (cid, (json.dumps({"custom_id": cid, "method": "POST", "url": CHAT_URL, "body": p.body}) + "\n").encode())
        for cid, p in pending.items()
        if cid not in covered
    ]
    for chunk in chunks(lines):
        data = b"".join(line for _, line in chunk)
        uploaded = sdk.files.create(file=("mtsamples_judges.jsonl", io.BytesIO(data)), purpose="batch")
        ids = members[uploaded.id] = [cid for cid, _ in chunk]
        ledger.put(uploaded.id, None, ids)  # before the batch exists: a killed run finds it, never pays twice
        batches[uploaded.id] = _create(sdk, uploaded.id)
        ledger.put(uploaded.id, batches[uploaded.id], ids)
        hlog(f"Judge batch {batches[uploaded.id]} at {endpoint}: submitted {len(ids)} requests")
    failures: dict[Any, str] = {}
    for file_id, bid in batches.items():
        status = _poll(sdk, bid, endpoint, settings)
        for cid, outcome in _results(sdk, status).items():
            if cid not in pending:
                continue
            if isinstance(outcome, dict):
                cache.get(pending[cid].key, wrap_request_time(partial(dict, outcome)))
            else:
                for tag in tags.get(cid, []):
                    failures[tag] = outcome
        if status.status != "completed" and not settings.fallback:
            missing = [cid for cid in members[file_id] if cid in pending and not is_cached(cache, pending[cid].key)]
            hwarn(
                f"Judge batch {bid} at {endpoint} is {status.status}: {len(missing)} requests unanswered, {NO_FALLBACK}"
            )
            for cid in missing:
                for tag in tags.get(cid, []):
                    failures.setdefault(tag, f"judge batch {status.status}, request unanswered ({NO_FALLBACK})")
        elif status.status != "completed":
            hwarn(f"Judge batch {bid} at {endpoint} is {status.status}: its unanswered requests go as direct calls")
        if status.status in TERMINAL:
            ledger.remove(file_id)
    return failures


def _create(sdk: Any, file_id: str) -> str:
    batch = sdk.batches.create(input_file_id=file_id, endpoint="/v1/chat/completions", completion_window="24h")
    return str(batch.id)


def _batch_of_file(sdk: Any, file_id: str) -> str | None:
    """The batch made from ``file_id`` by a run killed before it wrote the batch's id down, if any."""
    for batch in sdk.batches.list(limit=100):
        if batch.input_file_id == file_id:
            return str(batch.id)
    return None


def _poll(sdk: Any, batch_id: str, endpoint: str, settings: BatchSettings) -> Any:
    """Poll with backoff (doubling to ``poll_cap``) until the batch ends; one progress line per poll."""
    wait, start = settings.poll_first, settings.clock()
    while True:
        batch = sdk.batches.retrieve(batch_id)
        counts = batch.request_counts
        done = f"{counts.completed + counts.failed}/{counts.total} requests" if counts is not None else ""
        hlog(f"Judge batch {batch_id} at {endpoint}: {batch.status} {done}".rstrip())
        if batch.status in TERMINAL or settings.clock() - start > settings.max_wait:
            return batch
        settings.sleep(wait)
        wait = min(settings.poll_cap, wait * 2)


def _results(sdk: Any, batch: Any) -> dict[str, dict[str, Any] | str]:
    """{custom id: response body, or why it failed} from the output and error files."""
    results: dict[str, dict[str, Any] | str] = {}
    for file_id in (batch.output_file_id, batch.error_file_id):
        if not file_id:
            continue
        for line in sdk.files.content(file_id).text.splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            cid, response, error = entry.get("custom_id"), entry.get("response") or {}, entry.get("error")
            if response.get("status_code") == 200 and isinstance(response.get("body"), dict):
                results[cid] = response["body"]
            else:
                body: dict[str, Any] = response["body"] if isinstance(response.get("body"), dict) else {}
                detail: dict[str, Any] = error or body.get("error") or {}
                code = detail.get("code") or response.get("status_code") or "error"
                results[cid] = f"batch request failed ({code}): {detail.get('message') or 'no message'}"
    return results


def batch_all(
    client_of: Callable[[str], Any], items: Mapping[str, list[BatchItem]], ledger_dir: Path, settings: BatchSettings
) -> dict[Any, str]:
    """``run_batches`` for every deployment at once (OpenAI takes one model per batch); {tag: failure}. A
    deployment whose client is not HELM's OpenAI client, or whose endpoint refuses the Batch API, is left
    to direct calls (named in the log)."""
    failures: dict[Any, str] = {}

    def without_batch(deployment: str, why: str) -> dict[Any, str]:
        if settings.fallback:
            hwarn(f"{why}; its judge calls go as direct calls")
            return {}
        hwarn(f"{why}; {NO_FALLBACK}")
        return {item.tag: f"no judge batch ({why}; {NO_FALLBACK})" for item in items[deployment]}

    def one(deployment: str) -> dict[Any, str]:
        client = client_of(deployment)
        if not isinstance(client, OpenAIClient):
            return without_batch(deployment, f"{deployment} is not an OpenAI-compatible client")
        try:
            return run_batches(client, deployment.replace("/", "__"), items[deployment], ledger_dir, settings)
        except openai.OpenAIError as error:
            return without_batch(deployment, f"judge batches for {deployment} failed ({type(error).__name__})")

    with ThreadPoolExecutor(max_workers=max(1, len(items)), thread_name_prefix="mtsbatch") as pool:
        for found in pool.map(one, list(items)):
            failures.update(found)
    return failures
