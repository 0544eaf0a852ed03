"""One judge call, from the request to a verdict or a named failure; the annotator only fans out.

Requests go through HELM's clients and cache (a re-run replays every answered call), but not through
``AutoClient.make_request``, whose own retry (5 attempts, 5 s·2^n) would stack on ours and cannot see a
``Retry-After``. What a turn (a prompt, or a repair turn) does, in order:
- **HELM's cache first**, in every format the judge could have used (``structured.FormatMemory``), so a
  re-run of a finished suite makes no call and needs no server, whatever format each endpoint ended with;
- only then the server: its endpoint is checked once (``endpoints.check_endpoint``: an HTML page or no
  server fails the run at once with one line), the judge's breaker and the endpoint's gate admit the call;
- 429, 5xx and connection errors are retried until ``max_wait`` (Retry-After honoured, else backoff with
  jitter), each wait one warning line; the same server error three times for one prompt ends the call
  ("server error repeats"), and calls ending in server errors open the breaker as timeouts do; a timeout
  is retried once; a 200 that is not a chat completion, a reply over the size cap, and a prompt too long
  for the judge's context are failures no retry fixes; 401/403 stops the whole run
  (``JudgeAccessError``): no waiting fixes a wrong key, and one clear line beats a failure per note;
- a reply that was cut off, unparseable or without a valid score gets a repair turn (the reply plus
  "answer with only the JSON object"), not the same prompt again, which a deterministic server would
  answer byte for byte the same.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NoReturn

from helm.benchmark.model_deployment_registry import ModelDeploymentNotFoundError, get_model_deployment
from helm.clients.auto_client import AutoClient
from helm.clients.client import Client
from helm.clients.openai_client import OpenAIClient
from helm.common.hierarchical_logger import hwarn
from helm.common.request import Request, RequestResult
from tenacity import RetryCallState, Retrying, retry_if_exception_type

from helm_mtsamples_ext.endpoints import JudgeEndpointClient, check_endpoint
from helm_mtsamples_ext.judging import REPAIR_INSTRUCTION, Verdict, parse_verdict
from helm_mtsamples_ext.structured import FALLBACK_ORDER, FormatMemory, modes_to_try, response_format
from helm_mtsamples_ext.throttle import Breaker, EndpointGate, GateTimeout, backoff
from helm_mtsamples_ext.wire import REPLY_CAP, NotCached, Sent, classify, clip, install_tap, quiet_client_errors

CUT_OFF = {"length": "max_tokens", "content_filter": "content filter", "content_policy_violated": "content filter"}


class JudgeAccessError(RuntimeError):
    """A judge cannot be used as configured (no key, a refused key, no such deployment, no API at its URL):
    the run fails."""


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
    repeat_limit: int = 3


@dataclass(frozen=True)
class JudgeTarget:
    """What a call needs to know about its judge; ``endpoint`` keys the shared gate, ``where`` and
    ``key_hint`` make error messages name the endpoint and the setting to fix, never the key; ``base_url``
    (endpoint judges only) is what the endpoint check asks."""

    name: str
    model: str
    model_deployment: str
    endpoint: str
    where: str
    key_hint: str
    base_url: str | None = None


@dataclass
class CallOutcome:
    verdict: Verdict | None = None
    failure: str | None = None
    raw_reply: str | None = None
    tokens: int | None = None
    structured: str | None = None


class _Transient(Exception):
    def __init__(self, sent: Sent) -> None:
        super().__init__(sent.error)
        self.sent = sent


@dataclass(frozen=True)
class _Turn:
    """One turn of a call: the prompt (or a repair turn's messages), its max_tokens, the call's deadline."""

    prompt: str
    messages: list[dict[str, str]] | None
    max_tokens: int
    deadline: float

    def request(self, target: JudgeTarget, mode: str) -> Request:
        return Request(
            model=target.model,
            model_deployment=target.model_deployment,
            prompt="" if self.messages else self.prompt,
            messages=self.messages,
            temperature=0.0,
            max_tokens=self.max_tokens,
            response_format=response_format(mode),
        )


@dataclass
class _Attempts:
    """The attempts of one turn: whom they go to, the shared state they update, and what they have seen so far
    (timeouts, the format last used, a repeating server error)."""

    target: JudgeTarget
    turn: _Turn
    gate: EndpointGate
    breaker: Breaker
    formats: FormatMemory
    timeouts: int = 0
    mode: str | None = None
    fault: tuple[int | None, str] | None = None
    repeats: int = 0

    def repeated(self, sent: Sent) -> int:
        """How many times in a row this server error has come back (1 for a new one)."""
        fault = (sent.status, sent.error)
        self.repeats = self.repeats + 1 if fault == self.fault else 1
        self.fault = fault
        return self.repeats


@dataclass
class _Shared:
    """State shared by every call of a run: gates per endpoint, breakers and format memory per judge, and
    the endpoint checks (one per endpoint, made before its first call the cache cannot answer)."""

    gates: dict[str, EndpointGate] = field(default_factory=dict)
    breakers: dict[str, Breaker] = field(default_factory=dict)
    formats: dict[str, FormatMemory] = field(default_factory=dict)
    checks: dict[str, str | None] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    check_lock: threading.Lock = field(default_factory=threading.Lock)


def _supported_modes(client: Client | None) -> tuple[str, ...]:
    if isinstance(client, JudgeEndpointClient):
        return FALLBACK_ORDER
    return ("json_schema", "off") if isinstance(client, OpenAIClient) else ("off",)


class JudgeCaller:
    """Makes judge calls for one annotator (one run); thread-safe."""

    def __init__(
        self,
        auto_client: AutoClient,
        settings: CallSettings,
        scrub: Callable[[str], str],
        check: Callable[[str, str | None], str | None] = check_endpoint,
    ) -> None:
        if not callable(getattr(auto_client, "_get_client", None)):
            raise RuntimeError(
                "helm-mtsamples-ext needs HELM's AutoClient._get_client (crfm-helm 0.5.x); this HELM has none"
            )
        self._auto_client = auto_client
        self.settings = settings
        self._scrub = scrub
        self._check = check
        self._shared = _Shared()
        self._clients: dict[str, Client] = {}
        self.fatal: JudgeAccessError | None = None
        self._clock = time.monotonic

    # ------------------------------------------------------------ set-up

    def client(self, deployment: str) -> Client:
        with self._shared.lock:
            if deployment not in self._clients:
                client = self._auto_client._get_client(deployment)
                install_tap(client, self._scrub)
                self._clients[deployment] = client
            return self._clients[deployment]

    def preflight(self, target: JudgeTarget) -> None:
        """Find the judge's deployment and build its client now, so a missing deployment or key fails the run
        before any call. Contacts no server: a run answered from HELM's cache needs none."""
        try:
            get_model_deployment(target.model_deployment)
        except ModelDeploymentNotFoundError:
            raise JudgeAccessError(
                f"judge {target.name!r}: HELM has no model deployment {target.model_deployment!r} "
                "(check judges= or the jury config, or register the deployment in prod_env)"
            ) from None
        try:
            self.client(target.model_deployment)
        except Exception as e:
            raise JudgeAccessError(
                f"judge {target.name!r} ({target.where}) cannot be used: {self._scrub(str(e)).strip()}. "
                f"Set {target.key_hint}"
            ) from None

    def _endpoint_ready(self, target: JudgeTarget) -> None:
        """Check the judge's endpoint once per run, before its first live call; a failed check stops the run."""
        if target.base_url is None:
            return
        with self._shared.check_lock:  # concurrent first calls wait for the one check
            if target.endpoint not in self._shared.checks:
                key = self._auto_client.credentials.get(f"{target.endpoint}ApiKey")
                problem = self._check(target.base_url, key)
                self._shared.checks[target.endpoint] = None if problem is None else self._scrub(problem)
            problem = self._shared.checks[target.endpoint]
        if problem is not None:
            self._stop_run(JudgeAccessError(f"judge {target.name!r}: {problem}"))

    def _stop_run(self, error: JudgeAccessError) -> NoReturn:
        with self._shared.lock:
            if self.fatal is None:
                self.fatal = error
        raise self.fatal

    def _state(self, target: JudgeTarget) -> tuple[EndpointGate, Breaker, FormatMemory]:
        s, settings = self._shared, self.settings
        with s.lock:
            if target.endpoint not in s.gates:
                s.gates[target.endpoint] = EndpointGate(
                    settings.max_concurrency, settings.rpm, name=target.where, notice=hwarn
                )
            gate = s.gates[target.endpoint]
            breaker = s.breakers.setdefault(
                target.model_deployment, Breaker(settings.breaker_threshold, settings.breaker_cooldown)
            )
            if target.model_deployment not in s.formats:
                supported = _supported_modes(self._clients.get(target.model_deployment))
                s.formats[target.model_deployment] = FormatMemory(modes_to_try(settings.structured, supported))
            return gate, breaker, s.formats[target.model_deployment]

    # ------------------------------------------------------------ one call

    def call(self, target: JudgeTarget, prompt: str) -> CallOutcome:
        """The judge's verdict, or why there is none. Raises JudgeAccessError when the run must stop."""
        turn = _Turn(prompt, None, self.settings.max_tokens, self._clock() + self.settings.max_wait)
        outcome = CallOutcome()
        tokens: list[int] = []
        previous: str | None = None
        for _ in range(1 + self.settings.repair_turns):
            sent, mode = self._send(target, turn)
            if sent.tokens is not None:
                tokens.append(sent.tokens)
            outcome.tokens = sum(tokens) if tokens else None
            if sent.kind != "ok":
                outcome.failure = self._scrub(sent.error)
                outcome.raw_reply = clip(self._scrub(sent.text)) if sent.text else outcome.raw_reply
                return outcome
            outcome.raw_reply, outcome.structured = clip(sent.text), mode
            max_tokens = turn.max_tokens
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
                {"role": "assistant", "content": sent.text[:REPLY_CAP]},
                {"role": "user", "content": REPAIR_INSTRUCTION},
            ]
            turn = _Turn(prompt, messages, max_tokens, turn.deadline)
        return outcome

    def _send(self, target: JudgeTarget, turn: _Turn) -> tuple[Sent, str | None]:
        """One turn: from HELM's cache if it holds it in any format, else live; (what came back, format used)."""
        gate, breaker, formats = self._state(target)
        replayed = self._replay(target, turn, formats)
        if replayed is not None:
            return replayed
        self._endpoint_ready(target)
        return self._live(_Attempts(target, turn, gate, breaker, formats))

    def _replay(self, target: JudgeTarget, turn: _Turn, formats: FormatMemory) -> tuple[Sent, str] | None:
        """The turn's reply from HELM's cache alone, trying the format in use first, then the others."""
        client = self.client(target.model_deployment)
        tap = install_tap(client, self._scrub)
        if tap is None:
            return None
        for mode in dict.fromkeys((formats.current, *formats.modes)):
            try:
                with tap.replay_only():
                    result = client.make_request(turn.request(target, mode))
            except NotCached:
                continue
            tokens, _ = tap.take()
            sent = classify(result, None, tokens)
            if sent.kind == "ok":
                formats.worked(mode)
                return sent, mode
        tap.take()
        return None

    def _live(self, attempts: _Attempts) -> tuple[Sent, str | None]:
        """The turn against the server, retried through transient faults until the deadline."""
        target, turn, gate, breaker, formats = (
            attempts.target,
            attempts.turn,
            attempts.gate,
            attempts.breaker,
            attempts.formats,
        )

        def attempt() -> Sent:
            if self.fatal is not None:
                raise self.fatal
            admitted, last_error = breaker.admit()
            if not admitted:
                return Sent("unavailable", error=f"judge unavailable: {last_error}")
            try:
                gate.acquire(turn.deadline)
            except GateTimeout as e:
                breaker.released()
                return Sent("rate_limited", error=f"gave up waiting for the endpoint within judge_max_wait: {e}")
            attempts.mode = mode = formats.current
            try:
                sent = self._exchange(target, turn.request(target, mode))
            finally:
                gate.release()
            return self._judge(attempts, sent, mode)

        def wait(state: RetryCallState) -> float:
            sent = state.outcome.exception().sent if state.outcome and state.outcome.failed else None  # type: ignore[union-attr]
            if sent is not None and sent.kind in ("rate_limited", "format"):
                return 0.0 if sent.kind == "format" else backoff(1, 0.25)  # the gate holds everyone back
            seconds = min(
                backoff(state.attempt_number, self.settings.retry_base), max(0.0, turn.deadline - self._clock())
            )
            if sent is not None:
                hwarn(
                    f"judge {target.name}: {clip(self._scrub(sent.error), 160)}; retrying in {seconds:.1f} s "
                    f"(attempt {state.attempt_number + 1}, up to judge_max_wait={self.settings.max_wait:g} s)"
                )
            return seconds

        def stop(state: RetryCallState) -> bool:
            return self._clock() >= turn.deadline or attempts.timeouts > self.settings.timeout_retries

        retrying = Retrying(retry=retry_if_exception_type(_Transient), wait=wait, stop=stop, reraise=True)
        try:
            sent = retrying(attempt)
        except _Transient as exhausted:
            sent = exhausted.sent
        if sent.kind == "server":  # a call that ended in server errors counts toward the breaker
            breaker.unanswered(self._scrub(sent.error)[:200])
        return sent, attempts.mode

    def _exchange(self, target: JudgeTarget, request: Request) -> Sent:
        """One request through HELM's client and cache, classified."""
        client = self.client(target.model_deployment)
        tap = install_tap(client, self._scrub)
        if tap is not None:
            tap.take()
        try:
            with quiet_client_errors():
                result = client.make_request(request)
        except Exception as e:  # a client raising instead of returning an error result
            result = RequestResult(
                success=False, embedding=[], completions=[], cached=False, error=f"{type(e).__name__}: {e}"
            )
        tokens, error = tap.take() if tap is not None else (None, None)
        return classify(result, error, tokens)

    def _judge(self, attempts: _Attempts, sent: Sent, mode: str) -> Sent:
        """Update the shared state from one exchange; raise _Transient for what waiting can fix."""
        target, gate, breaker, formats = attempts.target, attempts.gate, attempts.breaker, attempts.formats
        if sent.kind in ("timeout", "connection", "not_completion"):
            breaker.unanswered(self._scrub(sent.error)[:200])
            if sent.kind == "not_completion":
                return sent
            attempts.timeouts += sent.kind == "timeout"
            raise _Transient(sent)
        if sent.kind != "server":
            breaker.answered()
        if sent.kind == "ok":
            gate.succeeded()
            formats.worked(mode)
            return sent
        if sent.kind == "auth":
            self._stop_run(
                JudgeAccessError(
                    f"judge {target.name!r} at {target.where} refused its key ({sent.error.split(':')[0]}): "
                    f"set {target.key_hint}"
                )
            )
        if sent.kind not in ("context", "too_long") and formats.refused(
            mode, sent.status, sent.error, attempts.turn.prompt
        ):
            hwarn(
                f"judge {target.name}: the endpoint refused response_format {mode} "
                f"({clip(self._scrub(sent.error), 120)}); using {formats.current} from now on"
            )
            raise _Transient(Sent("format", error=sent.error, status=sent.status))
        if sent.kind == "rate_limited":
            wait = gate.throttled(sent.retry_after, backoff(gate.rate_limited + 1, 1.0, cap=30.0))
            if wait is not None:
                why = "as Retry-After asks" if sent.retry_after is not None else "(no Retry-After: backing off)"
                hwarn(f"judge {target.name}: 429, waiting {wait:.0f} s {why}")
            raise _Transient(sent)
        if sent.kind == "server":
            if attempts.repeated(sent) >= self.settings.repeat_limit:
                return Sent("server", error=f"server error repeats: {sent.error}", status=sent.status)
            raise _Transient(sent)
        return sent
