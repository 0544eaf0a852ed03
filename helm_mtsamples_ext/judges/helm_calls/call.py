"""One judge call, from the request to a verdict or a named failure; the annotator only fans out.

Requests go through HELM's clients and cache (``exchange.JudgeClients``; a re-run replays every answered
call). What a turn (a prompt, or a repair turn) does, in order:
- **HELM's cache first**, in every format the judge could have used (``formats.FormatMemory``), so a
  re-run of a finished suite makes no call and needs no server, whatever format each endpoint ended with;
- only then the server: its endpoint is made ready once (``readiness.py``: checked, and asked how many calls
  it takes at once), the judge's breaker and the endpoint's gate admit the call;
- the retries of a turn (``attempts.TurnAttempts``): 429, 5xx and connection errors are retried until
  ``max_wait`` (Retry-After honoured, else backoff with jitter), each wait one warning line; the same
  server error three times for one prompt ends the call ("server error repeats"), and calls ending in
  server errors open the breaker as timeouts do; a timeout is retried once; a 200 that is not a chat
  completion, a reply over the size cap, and a prompt too long for the judge's context are failures no
  retry fixes, and so is a reply without text (a refusal, a tool call, an empty reply: ``reply_shape.py``,
  failed as "refused: <its first words>" and so on); 401/403 stops the whole run (``JudgeAccessError``): no
  waiting fixes a wrong key, and one clear line beats a failure per note;
- a reply that was cut off, unparseable or without a valid score gets a repair turn (the reply plus
  "answer with only the JSON object"), not the same prompt again, which a deterministic server would
  answer byte for byte the same.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import NoReturn

from helm.clients.auto_client import AutoClient
from helm.clients.client import Client
from helm.clients.openai_client import OpenAIClient
from helm.common.hierarchical_logger import hwarn
from helm.common.request import Request

from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.helm_host.compat import ensure_deployment
from helm_mtsamples_ext.judges.core.capacity import ServerFacts, probe_server
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.prompt import REPAIR_INSTRUCTION
from helm_mtsamples_ext.judges.core.reachability import check_endpoint
from helm_mtsamples_ext.judges.core.reply.reading import read_reply
from helm_mtsamples_ext.judges.core.settings import REPLY_CAP, CallSettings
from helm_mtsamples_ext.judges.core.throttle import Breaker, EndpointGate
from helm_mtsamples_ext.judges.helm_calls.attempts import JudgeAccessError, Turn, TurnAttempts
from helm_mtsamples_ext.judges.helm_calls.cache_gate import clip
from helm_mtsamples_ext.judges.helm_calls.endpoints import JudgeEndpointClient
from helm_mtsamples_ext.judges.helm_calls.exchange import JudgeClients
from helm_mtsamples_ext.judges.helm_calls.formats import FALLBACK_ORDER, FormatMemory, modes_to_try
from helm_mtsamples_ext.judges.helm_calls.outcome import Sent, classify
from helm_mtsamples_ext.judges.helm_calls.pace import Pace
from helm_mtsamples_ext.judges.helm_calls.readiness import EndpointReadiness

__all__ = ["JudgeAccessError", "JudgeCaller", "classify"]


def _read_reply(
    outcome: Judgment, sent: Sent, mode: str | None, untrusted: Sequence[str], max_tokens: int
) -> int | None:
    """Read a turn's reply into ``outcome`` (reply/reading.py's rules); the max_tokens of a repair turn, or None
    when the call is over. A reply cut at max_tokens gets twice as many."""
    outcome.raw_reply, outcome.structured = clip(sent.text), mode
    reading = read_reply(sent.text, sent.finish, untrusted)
    outcome.verdict, outcome.failure = reading.verdict, reading.failure
    if not reading.retry:
        return None
    return 2 * max_tokens if reading.more_tokens else max_tokens


def _repair_messages(prompt: str, reply: str) -> list[dict[str, str]]:
    """A repair turn: the prompt, the judge's reply, and "answer with only the JSON object"."""
    return [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": reply[:REPLY_CAP]},
        {"role": "user", "content": REPAIR_INSTRUCTION},
    ]


@dataclass
class _Shared:
    """State shared by every call of a run: gates per endpoint, breakers and format memory per judge."""

    gates: dict[str, EndpointGate] = field(default_factory=dict)
    breakers: dict[str, Breaker] = field(default_factory=dict)
    formats: dict[str, FormatMemory] = field(default_factory=dict)
    paces: dict[str, Pace] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


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
        probe: Callable[[str, str | None, str], ServerFacts] = probe_server,
    ) -> None:
        self.settings = settings
        self._scrub = scrub
        self._shared = _Shared()
        self._clients = JudgeClients(auto_client, scrub)
        self._readiness = EndpointReadiness(lambda: auto_client.credentials, check, probe, scrub)
        self.fatal: JudgeAccessError | None = None
        self._clock = time.monotonic

    # ------------------------------------------------------------ set-up

    def client(self, deployment: str) -> Client:
        return self._clients.get(deployment)

    def preflight(self, target: JudgeTarget) -> None:
        """Find the judge's deployment and build its client now, so a missing deployment or key fails the run
        before any call. Contacts no server: a run answered from HELM's cache needs none. An endpoint judge's
        client is handed ``judge_timeout`` as the bound on each whole exchange (deadline.py)."""
        self._readiness.expect(target)
        if not ensure_deployment(target.model_deployment):
            raise JudgeAccessError(
                f"judge {target.name!r}: HELM has no model deployment {target.model_deployment!r} "
                "(check judges= or the jury config, or register the deployment in prod_env)"
            )
        try:
            client = self.client(target.model_deployment)
        except Exception as e:
            raise JudgeAccessError(
                f"judge {target.name!r} ({target.where}) cannot be used: {self._scrub(str(e)).strip()}. "
                f"Set {target.key_hint}"
            ) from None
        if isinstance(client, JudgeEndpointClient):
            client.bound_whole_calls(self.settings.timeout)

    def first_request(self, target: JudgeTarget, prompt: str) -> Request:
        """The request a direct call's first turn sends now (the judge's current response_format): batch.py
        submits exactly this, so a batch answer lands under the direct call's cache key."""
        _, _, formats = self._state(target)
        return Turn(prompt, None, self.settings.max_tokens, 0.0, self.settings.explanation_cap).request(
            target, formats.current
        )

    def gates(self) -> dict[str, EndpointGate]:
        """The endpoints' gates so far (for the progress bar: who is waiting, at what limit)."""
        with self._shared.lock:
            return dict(self._shared.gates)

    def limit_of(self, endpoint: str) -> int:
        """Calls the fan-out may start at ``endpoint`` now: its gate's limit; one while an endpoint judge's server
        has not been asked its capacity yet (its first live call asks) and none was answered from HELM's cache, so
        no call waits out its deadline behind a capacity of 1 and a re-run from the cache still fans out."""
        if self._readiness.unasked(endpoint):
            return 1
        with self._shared.lock:
            gate = self._shared.gates.get(endpoint)
        return gate.limit if gate is not None else self.settings.max_concurrency

    def _stop_run_with(self, message: str) -> NoReturn:
        self._stop_run(JudgeAccessError(message))

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

    def call(self, target: JudgeTarget, prompt: str, untrusted: Sequence[str] = ()) -> Judgment:
        """The judge's verdict, or why there is none. Raises JudgeAccessError when the run must stop.

        ``untrusted`` are the prompt's texts a verdict is never read from (the candidate answer, the note)."""
        settings = self.settings
        turn = Turn(prompt, None, settings.max_tokens, self._clock() + settings.max_wait, settings.explanation_cap)
        outcome = Judgment()
        previous: str | None = None
        for _ in range(1 + self.settings.repair_turns):
            sent, mode = self._send(target, turn)
            outcome.count(sent.tokens, sent.tokens_in, sent.tokens_out, sent.served)
            if sent.kind != "ok":
                outcome.failure = self._scrub(sent.error)
                outcome.raw_reply = clip(self._scrub(sent.text)) if sent.text else outcome.raw_reply
                return outcome
            max_tokens = _read_reply(outcome, sent, mode, untrusted, turn.max_tokens)
            if max_tokens is None or sent.text == previous:  # the same bad reply again: more turns would get it again
                return outcome
            previous = sent.text
            turn = replace(turn, messages=_repair_messages(prompt, sent.text), max_tokens=max_tokens)
        return outcome

    def _send(self, target: JudgeTarget, turn: Turn) -> tuple[Sent, str | None]:
        """One turn: from HELM's cache if it holds it in any format, else live; (what came back, format used)."""
        gate, breaker, formats = self._state(target)
        replayed = self._replay(target, turn, formats)
        if replayed is not None:
            self._readiness.replayed(target.endpoint)
            return replayed
        self._readiness.ready(target, gate, self._stop_run_with)
        deployment = target.model_deployment
        self._clients.loaded(deployment, self._readiness.loaded_model(target.endpoint))
        attempts = TurnAttempts(
            target, turn, gate, breaker, formats, self.settings,
            exchange=lambda request: self._clients.exchange(deployment, request),
            stop_run=self._stop_run,
            stopped=lambda: self.fatal,
            scrub=self._scrub,
            clock=self._clock,
            pace=self._pace(target.endpoint),
        )  # fmt: skip
        with formats.first_live_call():
            return attempts.run()

    def _pace(self, endpoint: str) -> Pace:
        with self._shared.lock:
            return self._shared.paces.setdefault(endpoint, Pace())

    def _replay(self, target: JudgeTarget, turn: Turn, formats: FormatMemory) -> tuple[Sent, str] | None:
        """The turn's reply from HELM's cache alone, trying the format in use first, then the others."""
        modes = dict.fromkeys((formats.current, *formats.modes))
        replayed = self._clients.replay(target.model_deployment, ((m, turn.request(target, m)) for m in modes))
        if replayed is not None:
            formats.worked(replayed[1])
        return replayed
