"""What came back from a judge server, in the terms a retry decision needs, and what HELM's cache keeps of it.

HELM's clients turn an SDK exception into an error string and drop the response's headers and ``usage``;
the tap (``install_tap``) stands in for a client's HELM cache to see both (the 429's Retry-After, the
tokens spent), and ``classify`` names each exchange so judge_call.py can decide: wait, retry, repair, give
up, or stop the run. The tap is also the one gate to HELM's cache, so it decides what is stored there:
- only chat completions: a 200 holding an HTML page or an error body is no answer, and stored it would be
  replayed as one forever;
- only replies up to ``REPLY_CAP`` characters (a runaway server once filled 210 MB of cache);
- never a key: a server may echo the Authorization header back, so what is stored is scrubbed first;
- only what HELM can read back: a completion without text is stored readable and replays as the named
  failure it was live (``reply_shape.py``), so a refusal neither crashes a run nor every re-run;
- and it can answer from the cache alone (``replay_only``), so a re-run needs no server.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import openai
from helm.clients.auto_client import AutoClient
from helm.clients.client import Client
from helm.common.request import Request, RequestResult

from helm_mtsamples_ext.helm_compat import check_helm
from helm_mtsamples_ext.judges.reply_shape import NoText, readable, reply_shape, unreadable
from helm_mtsamples_ext.judges.throttle import parse_retry_after

REPLY_CAP = 64 * 1024
"""Characters of a judge reply beyond which it is a failure ("reply too long"): a verdict is a few hundred."""
CONTEXT_FAILURE = "prompt too long for the judge's context"
"""How a context-length failure begins, so the unjudged summary can group it apart from what a re-run fixes."""
STORED_REPLY_CAP = 16 * 1024
"""Characters of a failed reply kept in the record (with its full length)."""
_CONTEXT = re.compile(
    r"context_length_exceeded|maximum context length|context window|context length|exceeds? the context|"
    r"too many tokens|prompt is too long",
    re.IGNORECASE,
)
_TOKENS = re.compile(r"(?:resulted in|requested|prompt has|input has|got)\D{0,20}(\d+)\s*tokens", re.IGNORECASE)
_REQUESTED = re.compile(r"Requested tokens \((\d+)\)")


class NotCached(Exception):
    """A replay-only lookup found nothing in HELM's cache (the server was not called)."""


class NotACompletion(Exception):
    """The server answered, but not with a chat completion (an HTML page, an error body with status 200)."""


class ReplyTooLong(Exception):
    """The reply is longer than ``REPLY_CAP``; ``head`` keeps its first ``STORED_REPLY_CAP`` characters."""

    def __init__(self, length: int, head: str) -> None:
        super().__init__(f"reply too long ({length} characters; the cap is {REPLY_CAP})")
        self.length = length
        self.head = head


def clip(text: str, cap: int = STORED_REPLY_CAP) -> str:
    """At most ``cap`` characters of ``text``, saying its full length when cut."""
    if len(text) <= cap:
        return text
    return f"{text[:cap]}… [cut: {len(text)} characters in all]"


def scrub_json(value: Any, scrub: Callable[[str], str]) -> Any:
    """``value`` (a JSON-like response) with every string scrubbed."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub_json(k, scrub): scrub_json(v, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_json(v, scrub) for v in value]
    return value


def completion_problem(response: Any, scrub: Callable[[str], str]) -> Exception | None:
    """Why ``response`` (the SDK's reply as HELM caches it) is no chat completion to store, or None."""
    choices = response.get("choices") if isinstance(response, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        error = response.get("error") if isinstance(response, dict) else None
        said = error.get("message", error) if isinstance(error, dict) else error
        detail = f": the body is an error: {clip(scrub(str(said)), 200)}" if said else ""
        return NotACompletion(f"the endpoint answered 200 but not with a chat completion{detail}")
    no_text = unreadable(response)
    if no_text is not None:
        return no_text
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str) and len(content) > REPLY_CAP:
        return ReplyTooLong(len(content), content[:STORED_REPLY_CAP])
    return None


_QUIET = threading.local()


class _ClientErrorFilter(logging.Filter):
    """HELM's OpenAI client logs every API error as an ERROR with a traceback (``hexception``). Inside a judge
    call the error is expected, classified and told in one line by judge_call.py, so in that thread the
    traceback record is dropped; HELM's other logging is untouched."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (getattr(_QUIET, "on", False) and record.exc_info)


_FILTER = _ClientErrorFilter()


@contextmanager
def quiet_client_errors() -> Iterator[None]:
    """Within it (one thread), HELM's logged tracebacks of client errors are dropped."""
    logger = logging.getLogger("helm")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    _QUIET.on = True
    try:
        yield
    finally:
        _QUIET.on = False


@dataclass
class Sent:
    """One exchange with the server, classified."""

    kind: str  # ok | rate_limited | timeout | connection | server | client | auth | filtered | unavailable
    # | context (prompt too long for the judge) | not_completion | too_long | no_text (refused, empty, tool call)
    text: str = ""
    finish: str | None = None
    error: str = ""
    status: int | None = None
    retry_after: float | None = None
    tokens: int | None = None
    tokens_in: int | None = None  # the server's usage: prompt_tokens
    tokens_out: int | None = None  # completion_tokens


class CacheTap:
    """Stands in for a client's HELM cache to see what HELM drops: ``usage`` tokens in the cached response,
    and the SDK exception (status, Retry-After headers, timeout) that HELM turns into an error string."""

    def __init__(self, cache: Any, scrub: Callable[[str], str] = str) -> None:
        self._cache = cache
        self._scrub = scrub
        self._local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cache, name)

    @contextmanager
    def replay_only(self) -> Iterator[None]:
        """Within it, a request HELM's cache cannot answer raises NotCached instead of reaching the server."""
        self._local.replay_only = True
        try:
            yield
        finally:
            self._local.replay_only = False

    def get(self, request: Any, compute: Callable[[], Any]) -> Any:
        def tapped() -> Any:
            if getattr(self._local, "replay_only", False):
                raise NotCached()
            try:
                response = compute()
            except Exception as e:
                self._local.error = e
                raise
            problem = completion_problem(response, self._scrub)
            if problem is not None:  # raised, so HELM stores nothing
                self._local.error = problem
                raise problem
            return scrub_json(readable(response), self._scrub)

        response, cached = self._cache.get(request, tapped)
        self._local.shape = reply_shape(response)  # live or replayed, and caches written before reply_shape.py
        usage = response.get("usage") if isinstance(response, dict) else None
        self._local.tokens = usage.get("total_tokens") if isinstance(usage, dict) else None
        self._local.split = (
            (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")))
            if isinstance(usage, dict)
            else (None, None)
        )
        return response, cached

    def take(self) -> tuple[int | None, BaseException | None]:
        tokens, error = getattr(self._local, "tokens", None), getattr(self._local, "error", None)
        self._local.tokens = self._local.error = None
        return (tokens if isinstance(tokens, int) else None), error

    def take_shape(self) -> str | None:
        """The named failure of the last reply on this thread that held no text (``reply_shape``), or None."""
        shape = getattr(self._local, "shape", None)
        self._local.shape = None
        return shape

    def take_split(self) -> tuple[int | None, int | None]:
        """(prompt, completion) tokens of the last exchange on this thread, for what judging cost."""
        split = getattr(self._local, "split", (None, None))
        self._local.split = (None, None)
        return split


def install_tap(client: Any, scrub: Callable[[str], str]) -> CacheTap | None:
    """Put a CacheTap in front of a HELM ``CachingClient``'s cache (idempotent); None for a client without one."""
    cache = getattr(client, "cache", None)
    if cache is None:
        return None
    if not isinstance(cache, CacheTap):
        cache = CacheTap(cache, scrub)
        setattr(client, "cache", cache)  # noqa: B010 - CachingClient.cache, not on Client
    return cache


def context_failure(message: str) -> str | None:
    """The failure line for a prompt too long for the judge's context, or None when ``message`` is not that."""
    if not _CONTEXT.search(message):
        return None
    found = _TOKENS.search(message) or _REQUESTED.search(message)
    size = f" ({found.group(1)} tokens)" if found else ""
    return (
        f"{CONTEXT_FAILURE}{size}: give the judge a larger context (vLLM --max-model-len, "
        "llama.cpp --n_ctx) or use a judge with one"
    )


_NOT_COMPLETION_FIX = "judge_base_url must be the OpenAI API root, e.g. http://host:port/v1"


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def classify(
    result: RequestResult,
    error: BaseException | None = None,
    tokens: int | None = None,
    split: tuple[int | None, int | None] = (None, None),
) -> Sent:
    """What an exchange was, from HELM's result and, when the tap saw it, the exception raised while the
    server's reply was fetched and read (``error``: the SDK's, or HELM failing to read a non-completion)."""
    if isinstance(error, ReplyTooLong):
        return Sent("too_long", text=error.head, error=str(error), tokens=tokens)
    if isinstance(error, NoText):
        return Sent("no_text", error=str(error))
    if isinstance(error, NotACompletion):
        return Sent("not_completion", error=f"not a chat completion: {error}; {_NOT_COMPLETION_FIX}")
    if error is not None and not isinstance(error, (openai.OpenAIError, NotCached)):
        # HELM's client could not read the reply (the SDK hands back an HTML page as a str): not a completion
        return Sent(
            "not_completion",
            error=f"not a chat completion: the endpoint's 200 could not be read ({type(error).__name__}: "
            f"{clip(str(error), 200)}); {_NOT_COMPLETION_FIX}",
        )
    if result.success and result.completions:
        completion = result.completions[0]
        if not isinstance(completion.text, str) or not completion.text.strip():  # defensive: reply_shape names it
            return Sent("no_text", error="empty reply", tokens=tokens, tokens_in=split[0], tokens_out=split[1])
        reason = (completion.finish_reason or {}).get("reason")
        return Sent("ok", text=completion.text, finish=reason, tokens=tokens, tokens_in=split[0], tokens_out=split[1])
    message = result.error or "no completion returned"
    if isinstance(error, openai.APITimeoutError):
        return Sent("timeout", error=f"timed out: {message}")
    if isinstance(error, openai.APIConnectionError):
        return Sent("connection", error=f"connection failed: {message}")
    status = error.status_code if isinstance(error, openai.APIStatusError) else None
    headers = dict(error.response.headers) if isinstance(error, openai.APIStatusError) else None
    if status is None and "Error code: " in message:
        code = message.split("Error code: ", 1)[1][:3]
        status = int(code) if code.isdigit() else None
    if "blocked" in message.lower() and "filter" in message.lower():
        return Sent("filtered", error=f"reply cut off (content filter): {message}", tokens=tokens)
    if status == 429:
        return Sent("rate_limited", error=f"rate limited (HTTP 429): {message}", status=429,
                     retry_after=parse_retry_after(headers), tokens=tokens)  # fmt: skip
    if status in (401, 403):
        return Sent("auth", error=f"HTTP {status}: {message}", status=status)
    context = context_failure(message) if status is None or status in (400, 413, 422) or status >= 500 else None
    if context is not None:
        return Sent("context", error=context, status=status)
    if status is not None and 400 <= status < 500 and status not in (408, 409):
        return Sent("client", error=f"HTTP {status}: {message}", status=status)
    if status is None and result.error_flags is not None and result.error_flags.is_retriable is False:
        return Sent("client", error=message)
    return Sent("server", error=f"HTTP {status}: {message}" if status else f"call error: {message}", status=status)


class JudgeClients:
    """The HELM clients of a run's judges, each behind a CacheTap: one exchange, or a replay from the cache
    alone. Through ``AutoClient._get_client``, not ``AutoClient.make_request`` (whose own retries, 5 s·2^n,
    would stack on ours and cannot see a Retry-After); thread-safe."""

    def __init__(self, auto_client: AutoClient, scrub: Callable[[str], str]) -> None:
        check_helm()  # the one check of the HELM APIs we use (AutoClient._get_client among them); once per process
        self._auto_client = auto_client
        self._scrub = scrub
        self._clients: dict[str, Client] = {}
        self._lock = threading.Lock()

    def get(self, deployment: str) -> Client:
        with self._lock:
            if deployment not in self._clients:
                client = self._auto_client._get_client(deployment)
                install_tap(client, self._scrub)
                self._clients[deployment] = client
            return self._clients[deployment]

    def exchange(self, deployment: str, request: Request) -> Sent:
        """One request through HELM's client and cache, classified."""
        client = self.get(deployment)
        tap = install_tap(client, self._scrub)
        if tap is not None:
            tap.take()
            tap.take_shape()
        try:
            with quiet_client_errors():
                result = client.make_request(request)
        except Exception as e:  # a client raising instead of returning an error result
            result = RequestResult(
                success=False, embedding=[], completions=[], cached=False, error=f"{type(e).__name__}: {e}"
            )
        shape = tap.take_shape() if tap is not None else None
        tokens, error = tap.take() if tap is not None else (None, None)
        split = tap.take_split() if tap is not None else (None, None)
        if shape is not None:
            return Sent("no_text", error=shape, tokens=tokens, tokens_in=split[0], tokens_out=split[1])
        return classify(result, error, tokens, split)

    def replay(self, deployment: str, requests: Iterable[tuple[str, Request]]) -> tuple[Sent, str] | None:
        """The first of ``(label, request)`` that HELM's cache answers, without reaching any server."""
        client = self.get(deployment)
        tap = install_tap(client, self._scrub)
        if tap is None:
            return None
        for label, request in requests:
            tap.take_shape()
            try:
                with tap.replay_only():
                    result = client.make_request(request)
            except NotCached:
                continue
            except Exception as e:  # HELM could not read what an older release stored (null content on medhelm)
                result = RequestResult(success=False, embedding=[], completions=[], cached=True, error=str(e))
            shape = tap.take_shape()
            tokens, _ = tap.take()
            split = tap.take_split()
            if shape is not None:  # a stored reply without text replays as the failure it was
                return Sent("no_text", error=shape, tokens=tokens, tokens_in=split[0], tokens_out=split[1]), label
            sent = classify(result, None, tokens, split)
            if sent.kind == "ok":
                return sent, label
        tap.take()
        return None
