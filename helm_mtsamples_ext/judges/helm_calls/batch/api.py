"""The OpenAI Batch API as batch.py uses it: input lines and their ids, the API's limits, and its calls.

A request's custom id is a hash of HELM's cache key, so the same request gets the same id in every run (a
re-run finds its answer, and a killed run's batch, by it). Input files are cut within the API's limits
(``chunks``); an output or error file is read back into one answer or one named failure per id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from helm_mtsamples_ext.common.failure_kinds import BATCH_REQUEST_FAILED

MAX_REQUESTS = 50_000
"""OpenAI's limit of requests per batch."""
MAX_BYTES = 190 * 1024 * 1024
"""OpenAI's limit is 200 MB per input file; a margin for the multipart framing."""
CHAT_URL = "/v1/chat/completions"


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


def create_batch(sdk: Any, file_id: str) -> str:
    batch = sdk.batches.create(input_file_id=file_id, endpoint=CHAT_URL, completion_window="24h")
    return str(batch.id)


def batch_of_file(sdk: Any, file_id: str) -> str | None:
    """The batch made from ``file_id`` by a run killed before it wrote the batch's id down, if any."""
    for batch in sdk.batches.list(limit=100):
        if batch.input_file_id == file_id:
            return str(batch.id)
    return None


def batch_results(sdk: Any, batch: Any) -> dict[str, dict[str, Any] | str]:
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
                results[cid] = f"{BATCH_REQUEST_FAILED} ({code}): {detail.get('message') or 'no message'}"
    return results
