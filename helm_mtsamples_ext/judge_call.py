"""One judge call, from the request to a verdict or a named failure; the annotator only fans out.

Requests go through HELM's clients and cache (a re-run replays every answered call), but not through
``AutoClient.make_request``, whose own retry (5 attempts, 5 s·2^n) would stack on ours and cannot see a
``Retry-After``. What a call does, in order:
- the judge's breaker (``throttle.Breaker``) and its endpoint's gate (``throttle.EndpointGate``) admit it;
- it asks for the verdict as structured output, falling back per endpoint and model (``structured.py``);
- 429, 5xx and connection errors are retried until ``max_wait`` (Retry-After honoured, else backoff with
  jitter); a timeout is retried once; 401/403 stops the whole run (``JudgeAccessError``): no waiting
  fixes a wrong key, and one clear line beats a failure per note;
- a reply that was cut off, unparseable or without a valid score gets a repair turn (the reply plus
  "answer with only the JSON object"), not the same prompt again, which a deterministic server would
  answer byte for byte the same.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from helm.clients.auto_client import AutoClient
from helm.clients.client import Client
from helm.clients.openai_client import OpenAIClient
from helm.common.request import Request, RequestResult
from tenacity import RetryCallState, Retrying, retry_if_exception_type

from helm_mtsamples_ext.endpoints import JudgeEndpointClient
from helm_mtsamples_ext.helm_compat import ensure_deployment
from helm_mtsamples_ext.judging import REPAIR_INSTRUCTION, Verdict, parse_verdict
from helm_mtsamples_ext.structured import FALLBACK_ORDER, modes_to_try, response_format
from helm_mtsamples_ext.throttle import Breaker, EndpointGate, GateTimeout, backoff
from helm_mtsamples_ext.wire import CacheTap, Sent, classify

CUT_OFF = {"length": "max_tokens", "content_filter": "content filter", "content_policy_violated": "content filter"}
_FORMAT_SUSPECT = (400, 415, 422, 500, 501)  # how servers refuse a response_format they do not know
_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|schema", re.IGNORECASE)


class JudgeAccessError(RuntimeError):
    """A judge cannot be used as configured (no key, a refused key, no such deployment): the run fails."""


@dataclass(frozen=True)
class CallSettings:
    max_tokens: int = 1024
    max_wait: float = 900.0
    timeout_retries: int = 1
    repair_turns: int = 2
    structured: str = "auto"
    max_concurrency: int = 16
    rpm: float | None = None
    retry_base: float = 0.5
    breaker_threshold: int = 3
    breaker_cooldown: float = 60.0


@dataclass(frozen=True)
class JudgeTarget:
    """What a call needs to know about its judge; ``endpoint`` keys the shared gate, ``where`` and
    ``key_hint`` make error messages name the endpoint and the setting to fix, never the key."""

    name: str
    model: str
    model_deployment: str
    endpoint: str
    where: str
    key_hint: str


@dataclass
class CallOutcome:
    verdict: Verdict | None = None
    failure: str | None = None
    raw_reply: str | None = None
    tokens: int | None = None
    structured: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None


def judge_request(
    target: JudgeTarget, prompt: str, messages: list[dict[str, str]] | None, max_tokens: int, mode: str
) -> Request:
    """One turn's HELM request; its raw form is HELM's cache key for the call."""
    return Request(
        model=target.model,
        model_deployment=target.model_deployment,
        prompt="" if messages else prompt,
        messages=messages,
        temperature=0.0,
        max_tokens=max_tokens,
        response_format=response_format(mode),
    )


def _plus(total: int | None, more: int | None) -> int | None:
    """Token counts over a call's turns (None until a server reported any)."""
    return more if total is None else total + (more or 0)


class _Transient(Exception):
    def __init__(self, sent: Sent) -> None:
        super().__init__(sent.error)
        self.sent = sent


@dataclass
class _ModeState:
    """Which response_format a judge gets. A refusal moves on to the next format only with evidence (the
    error names the format, or the same format was refused twice): a passing 500 must not downgrade."""

    modes: tuple[str, ...]
    index: int = 0
    confirmed: bool = False
    refusals: int = 0

    @property
    def current(self) -> str:
        return self.modes[self.index]


@dataclass
class _Shared:
    """State shared by every call of a run: gates per endpoint, breakers and format memory per judge."""

    gates: dict[str, EndpointGate] = field(default_factory=dict)
    breakers: dict[str, Breaker] = field(default_factory=dict)
    modes: dict[str, _ModeState] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class JudgeCaller:
    """Makes judge calls for one annotator (one run); thread-safe."""

    def __init__(self, auto_client: AutoClient, settings: CallSettings, scrub: Callable[[str], str]) -> None:
        if not callable(getattr(auto_client, "_get_client", None)):
            raise RuntimeError(
                "helm-mtsamples-ext needs HELM's AutoClient._get_client (crfm-helm 0.5.x); this HELM has none"
            )
        self._auto_client = auto_client
        self.settings = settings
        self._scrub = scrub
        self._shared = _Shared()
        self._clients: dict[str, Client] = {}
        self.fatal: JudgeAccessError | None = None
        self._clock = time.monotonic

    # ------------------------------------------------------------ set-up

    def client(self, deployment: str) -> Client:
        with self._shared.lock:
            if deployment not in self._clients:
                client = self._auto_client._get_client(deployment)
                cache = getattr(client, "cache", None)
                if cache is not None and not isinstance(cache, CacheTap):
                    setattr(client, "cache", CacheTap(cache))  # noqa: B010 - CachingClient.cache, not on Client
                self._clients[deployment] = client
            return self._clients[deployment]

    def preflight(self, target: JudgeTarget) -> None:
        """Find the judge's deployment and build its client now, so a missing deployment or key fails the run
        before any call."""
        if not ensure_deployment(target.model_deployment):
            raise JudgeAccessError(
                f"judge {target.name!r}: HELM has no model deployment {target.model_deployment!r} "
                "(check judges= or the jury config, or register the deployment in prod_env)"
            )
        try:
            self.client(target.model_deployment)
        except Exception as e:
            raise JudgeAccessError(
                f"judge {target.name!r} ({target.where}) cannot be used: {self._scrub(str(e)).strip()}. "
                f"Set {target.key_hint}"
            ) from None

    def first_request(self, target: JudgeTarget, prompt: str) -> Request:
        """The request a direct call's first turn sends now (the judge's current response_format): batch.py
        submits exactly this, so a batch answer lands under the direct call's cache key."""
        self.client(target.model_deployment)
        _, _, modes = self._state(target)
        return judge_request(target, prompt, None, self.settings.max_tokens, modes.current)

    def gates(self) -> dict[str, EndpointGate]:
        """The endpoints' gates so far (for the progress bar: who is waiting, at what limit)."""
        with self._shared.lock:
            return dict(self._shared.gates)

    def _state(self, target: JudgeTarget) -> tuple[EndpointGate, Breaker, _ModeState]:
        s, settings = self._shared, self.settings
        with s.lock:
            gate = s.gates.setdefault(target.endpoint, EndpointGate(settings.max_concurrency, settings.rpm))
            breaker = s.breakers.setdefault(
                target.model_deployment, Breaker(settings.breaker_threshold, settings.breaker_cooldown)
            )
            if target.model_deployment not in s.modes:
                client = self._clients.get(target.model_deployment)
                supported = (
                    FALLBACK_ORDER
                    if isinstance(client, JudgeEndpointClient)
                    else ("json_schema", "off")
                    if isinstance(client, OpenAIClient)
                    else ("off",)
                )
                s.modes[target.model_deployment] = _ModeState(modes_to_try(settings.structured, supported))
            return gate, breaker, s.modes[target.model_deployment]

    # ------------------------------------------------------------ one call

    def call(self, target: JudgeTarget, prompt: str) -> CallOutcome:
        """The judge's verdict, or why there is none. Raises JudgeAccessError when the run must stop."""
        deadline = self._clock() + self.settings.max_wait
        max_tokens = self.settings.max_tokens
        messages: list[dict[str, str]] | None = None
        outcome = CallOutcome()
        tokens: list[int] = []
        previous: str | None = None
        for _ in range(1 + self.settings.repair_turns):
            sent, mode = self._send(target, prompt, messages, max_tokens, deadline)
            if sent.tokens is not None:
                tokens.append(sent.tokens)
            outcome.tokens = sum(tokens) if tokens else None
            outcome.tokens_in = _plus(outcome.tokens_in, sent.tokens_in)
            outcome.tokens_out = _plus(outcome.tokens_out, sent.tokens_out)
            if sent.kind != "ok":
                outcome.failure = self._scrub(sent.error)
                return outcome
            outcome.raw_reply, outcome.structured = sent.text, mode
            if sent.finish in CUT_OFF:
                outcome.verdict, outcome.failure = None, f"reply cut off ({CUT_OFF[sent.finish]})"
                if CUT_OFF[sent.finish] == "content filter":
                    return outcome
                max_tokens *= 2
            else:
                verdict = parse_verdict(sent.text)
                outcome.verdict = verdict
                if verdict is not None and verdict.has_valid_dimension:
                    outcome.failure = None
                    return outcome
                outcome.failure = "no verdict in reply" if verdict is None else "no valid dimension"
            if sent.text == previous:  # the same bad reply again: more turns would get it again
                return outcome
            previous = sent.text
            messages = [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": sent.text},
                {"role": "user", "content": REPAIR_INSTRUCTION},
            ]
        return outcome

    def _send(
        self, target: JudgeTarget, prompt: str, messages: list[dict[str, str]] | None, max_tokens: int, deadline: float
    ) -> tuple[Sent, str | None]:
        """One turn, retried through transient faults until the deadline; (what came back, format used)."""
        gate, breaker, modes = self._state(target)
        timeouts = [0]
        used: list[str | None] = [None]

        def attempt() -> Sent:
            if self.fatal is not None:
                raise self.fatal
            admitted, last_error = breaker.admit()
            if not admitted:
                return Sent("unavailable", error=f"judge unavailable: {last_error}")
            try:
                gate.acquire(deadline)
            except GateTimeout as e:
                breaker.released()
                return Sent("rate_limited", error=f"gave up waiting for the endpoint within judge_max_wait: {e}")
            mode = modes.current
            used[0] = mode
            request = judge_request(target, prompt, messages, max_tokens, mode)
            try:
                client = self.client(target.model_deployment)
                tap = getattr(client, "cache", None)
                if isinstance(tap, CacheTap):
                    tap.take()
                result = client.make_request(request)
                tokens, error = tap.take() if isinstance(tap, CacheTap) else (None, None)
                split = tap.take_split() if isinstance(tap, CacheTap) else (None, None)
            except Exception as e:  # a client raising instead of returning an error result
                failed = RequestResult(
                    success=False, embedding=[], completions=[], cached=False, error=f"{type(e).__name__}: {e}"
                )
                result, tokens, error, split = failed, None, e, (None, None)
            finally:
                gate.release()
            sent = classify(result, error, tokens, split)
            return self._judge_exchange(target, sent, mode, gate, breaker, modes, timeouts)

        def wait(state: RetryCallState) -> float:
            sent = state.outcome.exception().sent if state.outcome and state.outcome.failed else None  # type: ignore[union-attr]
            if sent is not None and sent.kind in ("rate_limited", "format"):
                return 0.0 if sent.kind == "format" else backoff(1, 0.25)  # the gate holds everyone back
            return min(backoff(state.attempt_number, self.settings.retry_base), max(0.0, deadline - self._clock()))

        def stop(state: RetryCallState) -> bool:
            return self._clock() >= deadline or timeouts[0] > self.settings.timeout_retries

        retrying = Retrying(retry=retry_if_exception_type(_Transient), wait=wait, stop=stop, reraise=True)
        try:
            return retrying(attempt), used[0]
        except _Transient as exhausted:
            return exhausted.sent, used[0]

    def _judge_exchange(
        self,
        target: JudgeTarget,
        sent: Sent,
        mode: str,
        gate: EndpointGate,
        breaker: Breaker,
        modes: _ModeState,
        timeouts: list[int],
    ) -> Sent:
        """Update the shared state from one exchange; raise _Transient for what waiting can fix."""
        if sent.kind in ("timeout", "connection"):
            breaker.unanswered(self._scrub(sent.error)[:200])
            timeouts[0] += sent.kind == "timeout"
            raise _Transient(sent)
        breaker.answered()
        if sent.kind == "ok":
            gate.succeeded()
            with self._shared.lock:
                modes.confirmed = True
            return sent
        if sent.kind == "auth":
            with self._shared.lock:
                if self.fatal is None:
                    self.fatal = JudgeAccessError(
                        f"judge {target.name!r} at {target.where} refused its key ({sent.error.split(':')[0]}): "
                        f"set {target.key_hint}"
                    )
            raise self.fatal
        if mode != "off" and sent.status in _FORMAT_SUSPECT and not modes.confirmed:
            with self._shared.lock:
                current = modes.current == mode
                if current and (_NAMES_FORMAT.search(sent.error) or modes.refusals >= 1):
                    if modes.index + 1 < len(modes.modes):
                        modes.index += 1  # this endpoint does not take `mode`: the next one, for every later call
                        modes.refusals = 0
                elif current:
                    modes.refusals += 1
                retry = modes.current != mode
            if retry:
                raise _Transient(replace(sent, kind="format"))
        if sent.kind == "rate_limited":
            gate.throttled(sent.retry_after, backoff(gate.rate_limited + 1, 1.0, cap=30.0))
            raise _Transient(sent)
        if sent.kind == "server":
            raise _Transient(sent)
        return sent
