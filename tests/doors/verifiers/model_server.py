"""A minimal loopback model under test for the verifiers door's tests (OpenAI chat completions, 127.0.0.1).

Local to this folder until tests/servers/model.py (the shared one) is merged. The answer is a pure function of the
prompt, so every run answers every note the same: a plan naming a digest of the prompt, and for a note of
``FAIL_SPECIALTY`` a plan carrying ``FAIL_MARKER`` (the judge server's ``lost_some`` judge then gives no verdict).
The server stops on context exit and after ``max_lifetime`` seconds.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAIL_SPECIALTY = "Obstetrics / Gynecology"
FAIL_MARKER = "FAIL_JUDGES"


def answer_for(prompt: str) -> str:
    """The model's deterministic answer to ``prompt``."""
    digest = hashlib.sha256(prompt.encode()).hexdigest()[:8]
    plan = f"Plan {digest}: observe overnight, advance diet as tolerated, follow up in clinic in two weeks."
    return f"{plan} {FAIL_MARKER}" if FAIL_SPECIALTY in prompt else plan


class ModelServer:
    """``with ModelServer() as server: server.base_url``; ``server.requests`` holds each request's JSON body."""

    def __init__(self, max_lifetime: float = 300.0) -> None:
        self.max_lifetime = max_lifetime
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._timer: threading.Timer | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> ModelServer:
        handler = type("Handler", (_Handler,), {"model_server": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self._timer = threading.Timer(self.max_lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def completion(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append(body)
        users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
        text = answer_for(str(users[-1] if users else ""))
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "model"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": len(text.split()), "total_tokens": 10},
        }


class _Handler(BaseHTTPRequestHandler):
    model_server: ModelServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        self._send(200, self.model_server.completion(body))

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
