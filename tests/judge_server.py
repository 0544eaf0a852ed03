"""A loopback OpenAI-compatible ``/v1/chat/completions`` server playing a panel of scripted judges.

Each served model name is one judge with a behaviour, so one server plays the whole panel. Scores are
deterministic and recoverable (``scores_for``) so tests can recompute what the annotator must record.
The server binds 127.0.0.1 on a free port, stops on context exit and after ``max_lifetime`` seconds,
and every wait inside it is bounded and released on shutdown.

Behaviours:
  steady        valid JSON with ``scores_for`` scores
  prose_fence   the same JSON wrapped in prose and a ```json fence
  nonsense      prose without JSON
  out_of_range  scores 9, 0, 4.5
  flaky         HTTP 500 on the first call for each prompt, then steady
  rate_limited  HTTP 429 on the first call for each prompt, then steady
  slow          never answers within a client timeout (holds until shutdown or ``hold_seconds``)
  partial       clarity "N/A", the other dimensions steady
  fail_some     HTTP 500 whenever the prompt contains ``fail_marker``, else steady
  quoter        quotes a planted all-5 verdict, then gives its real (steady) verdict last
  reject        HTTP 400 always (a client error that must not be retried)
  thinker       a <think> block with a draft all-1 verdict, then the steady verdict
  leaky         HTTP 401 whose message repeats the Authorization header it got (as some APIs do)
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DIMENSIONS = ("accuracy", "completeness", "clarity")
BEHAVIOURS = (
    "steady",
    "prose_fence",
    "nonsense",
    "out_of_range",
    "flaky",
    "rate_limited",
    "slow",
    "partial",
    "fail_some",
    "quoter",
    "reject",
    "thinker",
    "leaky",
)


@dataclass(frozen=True)
class Behaviour:
    kind: str
    scores: dict[str, int] | None = None  # fixed scores; None derives them from the prompt
    fail_marker: str = "FAIL_JUDGES"

    def __post_init__(self) -> None:
        if self.kind not in BEHAVIOURS:
            raise ValueError(f"unknown behaviour {self.kind!r}")


@dataclass(frozen=True)
class RecordedRequest:
    model: str
    prompt: str
    authorization: str | None


def hashed_scores(model: str, prompt: str) -> dict[str, int]:
    digest = hashlib.sha256(f"{model}\x00{prompt}".encode()).digest()
    return {dim: digest[i] % 5 + 1 for i, dim in enumerate(DIMENSIONS)}


def verdict_json(scores: dict[str, Any]) -> str:
    return json.dumps({dim: {"score": scores[dim], "explanation": f"{dim} judged"} for dim in DIMENSIONS})


class JudgeServer:
    """``with JudgeServer({"a": "steady", "b": Behaviour("steady", {...})}) as server: server.base_url``"""

    def __init__(
        self,
        judges: dict[str, str | Behaviour],
        latency: float = 0.0,
        rendezvous: int = 0,
        rendezvous_timeout: float = 5.0,
        hold_seconds: float = 10.0,
        max_lifetime: float = 300.0,
    ) -> None:
        self.judges = {m: b if isinstance(b, Behaviour) else Behaviour(b) for m, b in judges.items()}
        self.latency = latency
        self.rendezvous = rendezvous
        self.rendezvous_timeout = rendezvous_timeout
        self.hold_seconds = hold_seconds
        self.max_lifetime = max_lifetime
        self.requests: list[RecordedRequest] = []
        self.counts: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self._cond = threading.Condition()
        self._seen_prompts: set[tuple[str, str]] = set()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._timer: threading.Timer | None = None

    # ------------------------------------------------------------ lifecycle

    @property
    def base_url(self) -> str:
        assert self._httpd is not None, "server not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> JudgeServer:
        handler = type("Handler", (_Handler,), {"judge_server": self})
        self._httpd = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        self._timer = threading.Timer(self.max_lifetime, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._stopping.is_set():
            return
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        if self._timer is not None:
            self._timer.cancel()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # ------------------------------------------------------------ what tests read

    def count(self, model: str | None = None) -> int:
        with self._cond:
            return sum(self.counts.values()) if model is None else self.counts[model]

    def scores_for(self, model: str, prompt: str) -> dict[str, int]:
        """The valid scores ``model`` gives for ``prompt`` (fixed, or derived from the prompt)."""
        fixed = self.judges[model].scores
        return dict(fixed) if fixed is not None else hashed_scores(model, prompt)

    def prompts_for(self, model: str) -> list[str]:
        with self._cond:
            return [r.prompt for r in self.requests if r.model == model]

    # ------------------------------------------------------------ serving

    def _enter(self, record: RecordedRequest) -> None:
        with self._cond:
            self.requests.append(record)
            self.counts[record.model] += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._cond.notify_all()
            if self.rendezvous:
                self._cond.wait_for(
                    lambda: self.max_in_flight >= self.rendezvous or self._stopping.is_set(),
                    timeout=self.rendezvous_timeout,
                )

    def _leave(self) -> None:
        with self._cond:
            self.in_flight -= 1

    def respond(self, model: str, prompt: str, authorization: str | None = None) -> tuple[int, str]:
        """(HTTP status, reply text or error message) for one request."""
        behaviour = self.judges.get(model)
        if behaviour is None:
            return 404, f"model {model!r} not served"
        if self.latency:
            self._stopping.wait(self.latency)
        kind = behaviour.kind
        scores = self.scores_for(model, prompt)
        if kind == "slow":
            self._stopping.wait(self.hold_seconds)
            return 200, verdict_json(scores)
        if kind == "leaky":
            return 401, f"Incorrect API key provided: {authorization}"
        if kind == "reject":
            return 400, "invalid request: judge rejects this prompt"
        if kind in ("flaky", "rate_limited"):
            with self._cond:
                first = (model, prompt) not in self._seen_prompts
                self._seen_prompts.add((model, prompt))
            if first:
                return (500, "flaky judge: first call fails") if kind == "flaky" else (429, "rate limit reached")
        if kind == "fail_some" and behaviour.fail_marker in prompt:
            return 500, "judge fails for this note"
        if kind == "nonsense":
            return 200, "I am unable to provide an evaluation of this plan at this time."
        if kind == "out_of_range":
            return 200, verdict_json({"accuracy": 9, "completeness": 0, "clarity": 4.5})
        if kind == "partial":
            return 200, verdict_json({**scores, "clarity": "N/A"})
        if kind == "prose_fence":
            return 200, f"Here is my evaluation.\n```json\n{verdict_json(scores)}\n```\nLet me know if you need more."
        if kind == "quoter":
            planted = verdict_json(dict.fromkeys(DIMENSIONS, 5))
            real = verdict_json(scores)
            return 200, f"The candidate plan itself says: {planted}\nIgnoring that, my verdict is:\n{real}"
        if kind == "thinker":
            draft = verdict_json(dict.fromkeys(DIMENSIONS, 1))
            return 200, f"<think>First draft: {draft}</think>\n{verdict_json(scores)}"
        return 200, verdict_json(scores)


class _Server(ThreadingHTTPServer):
    # The default backlog of 5 drops connections when a whole panel connects at once; the client then
    # waits for a SYN retransmit (1 s) and times out, which would look like a judge failure.
    request_queue_size = 256
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    judge_server: JudgeServer

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        server = self.judge_server
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        model = str(body.get("model", ""))
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        authorization = self.headers.get("Authorization")
        server._enter(RecordedRequest(model, prompt, authorization))
        try:
            status, text = server.respond(model, prompt, authorization)
        finally:
            server._leave()
        if status != 200:
            kind = "server_error" if status >= 500 else "invalid_request_error"
            self._send(status, {"error": {"message": text, "type": kind}})
            return
        prompt_tokens, completion_tokens = len(prompt.split()), len(text.split())
        self._send(
            200,
            {
                "id": f"chatcmpl-{server.count()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass
