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

Submitted batches are written down (``<HELM cache dir>/mtsamples_batches/<endpoint>.json``, batch_ledger.py)
before anything waits on them, so a killed run re-attaches to them instead of submitting (and paying) again.
The Batch API's lines, ids, limits and calls are batch_api.py's.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import openai
from helm.clients.openai_client import OpenAIClient
from helm.common.hierarchical_logger import hlog, hwarn
from helm.common.request import Request, wrap_request_time

from helm_mtsamples_ext.common.failure_kinds import BATCH_UNANSWERED, NO_BATCH
from helm_mtsamples_ext.judges.helm_calls.batch.api import (
    CHAT_URL,
    batch_of_file,
    batch_results,
    chunks,
    create_batch,
    custom_id,
)
from helm_mtsamples_ext.judges.helm_calls.batch.ledger import BatchLedger

TERMINAL = ("completed", "failed", "expired", "cancelled")
NO_FALLBACK = "no direct call: judge_batch_fallback=false"
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


@dataclass
class BatchSettings:
    """How a run waits on its batches (polls doubling from ``poll_first`` to ``poll_cap``, never past
    ``max_wait``) and what it does with what they leave unanswered; the clock is a parameter for the tests."""

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
    ledger = BatchLedger(ledger_dir / f"{endpoint}.json")
    run = _EndpointBatches(client, client.client, client.cache, endpoint, ledger, settings)
    run.want(items)
    covered = run.reattach()
    run.submit(covered)
    failures: dict[Any, str] = {}
    for file_id, batch_id in run.batches.items():
        run.settle(file_id, batch_id, failures)
    return failures


@dataclass
class _EndpointBatches:
    """One endpoint's batching in a run: what it still needs answered, and its batches (re-attached or new)."""

    client: OpenAIClient
    sdk: Any  # the client's OpenAI SDK client
    cache: Any  # the client's HELM cache (behind the tap, if installed)
    endpoint: str
    ledger: BatchLedger
    settings: BatchSettings
    pending: dict[str, _Pending] = field(default_factory=dict)
    tags: dict[str, list[Any]] = field(default_factory=dict)  # several notes may make one request (same prompt)
    batches: dict[str, str] = field(default_factory=dict)  # input file id -> batch id
    members: dict[str, list[str]] = field(default_factory=dict)  # input file id -> its requests' custom ids

    def want(self, items: Iterable[BatchItem]) -> None:
        """Each item's request by its custom id, kept when HELM's cache cannot answer it; every tag gets its answer."""
        for item in items:
            key, body = direct_key(self.client, item.request)
            cid = custom_id(key)
            self.tags.setdefault(cid, []).append(item.tag)
            if cid not in self.pending and not is_cached(self.cache, key):
                self.pending[cid] = _Pending(item.tag, key, body)

    def reattach(self) -> set[str]:
        """The batches an earlier (killed) run submitted for requests still pending; the custom ids they cover."""
        sdk, covered = self.sdk, set[str]()
        for file_id, entry in self.ledger.read().items():
            if not set(entry["ids"]) & self.pending.keys():
                continue
            covered.update(entry["ids"])
            batch_id = entry["batch"] or batch_of_file(sdk, file_id)
            if batch_id is None:
                batch_id = create_batch(sdk, file_id)
            else:
                hlog(
                    f"Judge batch {batch_id} at {self.endpoint}: re-attached (submitted by an earlier run), "
                    "not submitted again"
                )
            self.ledger.put(file_id, batch_id, entry["ids"])
            self.batches[file_id], self.members[file_id] = batch_id, entry["ids"]
        return covered

    def submit(self, covered: set[str]) -> None:
        """New batches for the pending requests no batch covers, each written down before it exists."""
        sdk = self.sdk
        lines = [
            (cid, (json.dumps({"custom_id": cid, "method": "POST", "url": CHAT_URL, "body": p.body}) + "\n").encode())
            for cid, p in self.pending.items()
            if cid not in covered
        ]
        for chunk in chunks(lines):
            data = b"".join(line for _, line in chunk)
            uploaded = sdk.files.create(file=("mtsamples_judges.jsonl", io.BytesIO(data)), purpose="batch")
            ids = self.members[uploaded.id] = [cid for cid, _ in chunk]
            self.ledger.put(uploaded.id, None, ids)  # before the batch exists: a killed run finds it, never pays twice
            self.batches[uploaded.id] = create_batch(sdk, uploaded.id)
            self.ledger.put(uploaded.id, self.batches[uploaded.id], ids)
            hlog(f"Judge batch {self.batches[uploaded.id]} at {self.endpoint}: submitted {len(ids)} requests")

    def settle(self, file_id: str, batch_id: str, failures: dict[Any, str]) -> None:
        """Wait for one batch, cache its answers under the direct calls' keys, and name into ``failures`` what it
        failed (and, without fallback, what it left unanswered); a batch that ended leaves the ledger."""
        sdk, cache, fallback = self.sdk, self.cache, self.settings.fallback
        status = _poll(sdk, batch_id, self.endpoint, self.settings)
        for cid, outcome in batch_results(sdk, status).items():
            if cid not in self.pending:
                continue
            if isinstance(outcome, dict):
                cache.get(self.pending[cid].key, wrap_request_time(partial(dict, outcome)))
            else:
                for tag in self.tags.get(cid, []):
                    failures[tag] = outcome
        if status.status != "completed" and not fallback:
            missing = [
                cid
                for cid in self.members[file_id]
                if cid in self.pending and not is_cached(cache, self.pending[cid].key)
            ]
            hwarn(
                f"Judge batch {batch_id} at {self.endpoint} is {status.status}: {len(missing)} requests unanswered, "
                f"{NO_FALLBACK}"
            )
            for cid in missing:
                for tag in self.tags.get(cid, []):
                    failures.setdefault(tag, f"{BATCH_UNANSWERED}: judge batch {status.status} ({NO_FALLBACK})")
        elif status.status != "completed":
            hwarn(
                f"Judge batch {batch_id} at {self.endpoint} is {status.status}: its unanswered requests go as direct "
                "calls"
            )
        if status.status in TERMINAL:
            self.ledger.remove(file_id)


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
        return {item.tag: f"{NO_BATCH} ({why}; {NO_FALLBACK})" for item in items[deployment]}

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
