"""A loopback OpenAI-compatible ``/v1/chat/completions`` server playing the model under test, for every door.

Why: the doors (helm-run, ``inspect eval``, a verifiers environment) must be run end to end with no real model
API; each sends the model the note's prompt, and this server answers it deterministically, so two doors asking
for the same note get the same plan. ``answer_for(prompt)`` picks the plan (by default a fixed plan naming a hash
of the prompt; a test may give any pure function, e.g. one that plants a judge's fail marker in one note's plan).
It binds 127.0.0.1 on a free port, stops on context exit and after ``max_lifetime`` seconds, and records every
prompt it was sent.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.servers.loopback import Loopback

PLAN = "Continue cefazolin for 24 hours, remove the drain on day two and review in clinic in two weeks."


def default_answer(prompt: str) -> str:
    """A fixed plan naming the prompt's hash: different notes, different answers (and different judge prompts)."""
    return f"{PLAN} (plan {hashlib.sha256(prompt.encode()).hexdigest()[:8]})"


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or []
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


class ModelServer:
    """``with ModelServer() as model: model.base_url`` (serves any model name)."""

    def __init__(self, answer_for: Callable[[str], str] = default_answer, max_lifetime: float = 300.0) -> None:
        self.answer_for = answer_for
        self.max_lifetime = max_lifetime
        self.prompts: list[str] = []
        self.models: list[str] = []
        self._lock = threading.Lock()
        self._loop = Loopback(type("Handler", (_Handler,), {"model_server": self}), max_lifetime, name="model")

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._loop.port}/v1"

    def __enter__(self) -> ModelServer:
        self._loop.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._loop.stop()

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = _last_user_text(body)
        model = str(body.get("model", ""))
        with self._lock:
            self.prompts.append(prompt)
            self.models.append(model)
        text = self.answer_for(prompt)
        return {
            "id": f"chatcmpl-{hashlib.sha256(prompt.encode()).hexdigest()[:12]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": len(prompt.split()),
                "completion_tokens": len(text.split()),
                "total_tokens": len(prompt.split()) + len(text.split()),
            },
        }


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._send(200, {"object": "list", "data": [{"id": "m", "object": "model", "owned_by": "loopback"}]})

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions") or not isinstance(body, dict):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        self._send(200, self.model_server.completion(body))

    def _send(self, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
