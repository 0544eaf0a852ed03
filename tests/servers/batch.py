"""The OpenAI Batch API on the loopback judge server: ``JudgeServer(..., batch=BatchAPI())``.

Routes: ``POST /v1/files`` (multipart upload), ``GET /v1/files/{id}/content``, ``POST /v1/batches``,
``GET /v1/batches/{id}``. A batch moves validating → in_progress → completed, one step per poll (after
``polls_in_progress`` polls in progress), or stays in progress while ``hold`` is set (a test kills the
run then), or ends ``expired`` with only the first half of its requests answered (``expire=True``), as
OpenAI's batches do after 24 h. Each request is answered by the server's own judges (``respond``), never
counted as a chat-completion call; a non-200 answer goes to the batch's error file.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from email.parser import BytesParser
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.servers.judge import JudgeServer


@dataclass
class _Batch:
    id: str
    input_file_id: str
    status: str = "validating"
    polls: int = 0
    output_file_id: str | None = None
    error_file_id: str | None = None
    total: int = 0
    completed: int = 0
    failed: int = 0


@dataclass
class BatchAPI:
    polls_in_progress: int = 1
    expire: bool = False
    hold: threading.Event = field(default_factory=threading.Event)
    files: dict[str, bytes] = field(default_factory=dict)
    batches: dict[str, _Batch] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)  # "METHOD path" of every batch/file request
    _lock: threading.Condition = field(default_factory=threading.Condition)

    @staticmethod
    def handles(path: str) -> bool:
        return "/files" in path or "/batches" in path

    # ------------------------------------------------------------ routes

    def post(self, path: str, content_type: str, raw: bytes) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(f"POST {path}")
            if path.rstrip("/").endswith("/files"):
                data = _multipart_file(content_type, raw)
                return 200, self._file_object(self._store(data), len(data))
            if path.rstrip("/").endswith("/batches"):
                body = json.loads(raw or b"{}")
                batch = _Batch(f"batch_{len(self.batches) + 1}", str(body.get("input_file_id")))
                batch.total = len(self.files.get(batch.input_file_id, b"").splitlines())
                self.batches[batch.id] = batch
                self._lock.notify_all()
                return 200, self._batch_object(batch)
        return 404, {"error": {"message": f"no route {path}"}}

    def get(self, path: str, server: JudgeServer) -> tuple[int, Any]:
        with self._lock:
            self.requests.append(f"GET {path}")
            parts = path.split("?")[0].rstrip("/").split("/")
            if parts[-1] == "batches":
                data = [self._batch_object(b) for b in self.batches.values()]
                return 200, {"object": "list", "data": data, "has_more": False}
            if len(parts) >= 2 and parts[-1] == "content" and parts[-2] in self.files:
                return 200, self.files[parts[-2]]
            if parts[-1] in self.batches:
                batch = self.batches[parts[-1]]
                self._advance(batch, server)
                return 200, self._batch_object(batch)
        return 404, {"error": {"message": f"no route {path}"}}

    # ------------------------------------------------------------ what tests read

    def created(self) -> int:
        with self._lock:
            return len(self.batches)

    def wait_created(self, n: int, timeout: float) -> bool:
        """Block until ``n`` batches exist (or the timeout); whether they do."""
        with self._lock:
            return self._lock.wait_for(lambda: len(self.batches) >= n, timeout=timeout)

    # ------------------------------------------------------------ the batch's life

    def _advance(self, batch: _Batch, server: JudgeServer) -> None:
        batch.polls += 1
        if batch.status == "validating":
            batch.status = "in_progress"
        elif batch.status == "in_progress" and not self.hold.is_set() and batch.polls > self.polls_in_progress:
            self._finish(batch, server)

    def _finish(self, batch: _Batch, server: JudgeServer) -> None:
        lines = [json.loads(line) for line in self.files[batch.input_file_id].splitlines() if line.strip()]
        answered = lines[: len(lines) // 2] if self.expire else lines
        output: list[str] = []
        errors: list[str] = []
        for line in answered:
            status, payload = server.answer_body(line["body"])
            entry = {"id": f"req_{line['custom_id']}", "custom_id": line["custom_id"], "error": None}
            entry["response"] = {"status_code": status, "request_id": "r", "body": payload}
            (output if status == 200 else errors).append(json.dumps(entry))
        batch.completed, batch.failed = len(output), len(errors)
        if output:
            batch.output_file_id = self._store(("\n".join(output) + "\n").encode())
        if errors:
            batch.error_file_id = self._store(("\n".join(errors) + "\n").encode())
        batch.status = "expired" if self.expire else "completed"

    # ------------------------------------------------------------ objects as the SDK reads them

    def _store(self, data: bytes) -> str:
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = data
        return file_id

    @staticmethod
    def _file_object(file_id: str, size: int) -> dict[str, Any]:
        return {"id": file_id, "object": "file", "bytes": size, "created_at": int(time.time()),
                "filename": "batch.jsonl", "purpose": "batch", "status": "processed"}  # fmt: skip

    @staticmethod
    def _batch_object(batch: _Batch) -> dict[str, Any]:
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.input_file_id,
            "completion_window": "24h",
            "status": batch.status,
            "created_at": int(time.time()),
            "output_file_id": batch.output_file_id,
            "error_file_id": batch.error_file_id,
            "request_counts": {"total": batch.total, "completed": batch.completed, "failed": batch.failed},
        }


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    """The ``file`` part of a multipart/form-data upload."""
    message = BytesParser().parsebytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw)
    for part in message.walk():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b""
    return b""
