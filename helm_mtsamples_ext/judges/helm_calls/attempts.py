"""One turn of a judge call against its server: admitted, retried through what waiting can fix, ended on
what it cannot, with every exchange told to the shared state (gate, breaker, format memory).

Why one object per turn (``TurnAttempts``): a turn's retries share what they have seen (timeouts, the
format last used, a server error that keeps coming back) and whom they report to; tenacity's callbacks
read it from there instead of from mutable cells passed around. The waits follow ``throttle.py``; what
each exchange was comes from ``exchange.classify``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from helm.common.hierarchical_logger import hwarn
from helm.common.request import Request
from tenacity import RetryCallState, Retrying, retry_if_exception_type

from helm_mtsamples_ext.common.failure_kinds import GAVE_UP_WAITING, JUDGE_UNAVAILABLE, SERVER_ERROR_REPEATS
from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.core.throttle import NOTICE_EVERY, Breaker, EndpointGate, GateTimeout, backoff
from helm_mtsamples_ext.judges.helm_calls.cache_gate import clip
from helm_mtsamples_ext.judges.helm_calls.deadline import exchange_limit
from helm_mtsamples_ext.judges.helm_calls.formats import FormatMemory, response_format
from helm_mtsamples_ext.judges.helm_calls.outcome import Sent
from helm_mtsamples_ext.judges.helm_calls.pace import Pace


class JudgeAccessError(SystemExit):
    """A judge cannot be used as configured (no key, a refused key, no such deployment, no API at its URL):
    ``helm-run`` stops with this one line, last, and exit status 1. A SystemExit because HELM wraps every
    Exception from an annotator in its own error and prints two tracebacks around the line; a
    SystemExit passes its threads and runner untouched, and Python prints its message alone."""

    def __str__(self) -> str:
        return str(self.code)


@dataclass(frozen=True)
class Turn:
    """One turn of a call: the prompt (or a repair turn's messages), its max_tokens, the call's deadline."""

    prompt: str
    messages: list[dict[str, str]] | None
    max_tokens: int
    deadline: float
    explanation_cap: int | None = None

    def request(self, target: JudgeTarget, mode: str) -> Request:
        return Request(
            model=target.model,
            model_deployment=target.model_deployment,
            prompt="" if self.messages else self.prompt,
            messages=self.messages,
            temperature=0.0,
            max_tokens=self.max_tokens,
            response_format=response_format(mode, self.explanation_cap),
        )


class Transient(Exception):
    """What waiting can fix: tenacity retries the attempt."""

    def __init__(self, sent: Sent) -> None:
        super().__init__(sent.error)
        self.sent = sent


@dataclass
class TurnAttempts:
    """The attempts of one turn: whom they go to, the shared state they update, and what they have seen so far
    (timeouts, the format last used, a repeating server error)."""

    target: JudgeTarget
    turn: Turn
    gate: EndpointGate
    breaker: Breaker
    formats: FormatMemory
    settings: CallSettings
    exchange: Callable[[Request], Sent]
    stop_run: Callable[[JudgeAccessError], NoReturn]
    stopped: Callable[[], JudgeAccessError | None]
    scrub: Callable[[str], str]
    clock: Callable[[], float] = time.monotonic
    timeouts: int = 0
    answers_before: int | None = None  # the judge's answers when this turn began (overload evidence)
    generation: int = 0  # the gate's round this attempt was sent in
    mode: str | None = None
    fault: tuple[int | None, str] | None = None
    repeats: int = 0
    pace: Pace | None = None  # the endpoint's observed pace: how long an exchange may take at a one-slot server
    timed_out: float | None = None  # the limit of this turn's last attempt that timed out
    last_sent: Sent | None = None  # what this turn's last exchange got

    def run(self) -> tuple[Sent, str | None]:
        """The turn, retried through transient faults until the deadline; (what came back, format used)."""
        retrying = Retrying(retry=retry_if_exception_type(Transient), wait=self._wait, stop=self._stop, reraise=True)
        try:
            sent = retrying(self._attempt)
        except Transient as exhausted:
            sent = exhausted.sent
        if sent.kind == "server":  # a call that ended in server errors counts toward the breaker
            self.breaker.unanswered(self.scrub(sent.error)[:200], self.turn.prompt)
        return sent, self.mode

    def _attempt(self) -> Sent:
        fatal = self.stopped()
        if fatal is not None:
            raise fatal
        admitted, last_error = self.breaker.admit()
        if not admitted:
            return Sent("unavailable", error=f"{JUDGE_UNAVAILABLE}: {last_error}")
        try:
            self.gate.acquire(self.turn.deadline)
        except GateTimeout as e:
            self.breaker.released()
            if self.last_sent is not None and self.last_sent.kind == "timeout":
                # The judge's last word on this prompt was no reply in time, and the slot went to the calls the
                # overload's lowered limit let through: the failure is the judge's timeout, not our queue's.
                return self.last_sent
            return Sent("rate_limited", error=f"{GAVE_UP_WAITING} within judge_max_wait: {e}")
        if self.answers_before is None:
            self.answers_before = self.breaker.answers
        self.generation = self.gate.generation
        self.mode = mode = self.formats.current
        limit = self._limit()
        started = self.clock()
        try:
            if limit == self.settings.timeout:
                sent = self.exchange(self.turn.request(self.target, mode))
            else:
                with exchange_limit(limit):
                    sent = self.exchange(self.turn.request(self.target, mode))
        finally:
            self.gate.release()
        self.last_sent = sent
        if self.pace is not None and sent.kind == "ok":
            self.pace.answered(self.clock() - started)
        elif sent.kind == "timeout":
            self.timed_out = limit
        return self._judge(sent, mode)

    def _limit(self) -> float:
        """How long this exchange may take: judge_timeout, or at a one-slot server its pace (``pace.py``), never
        past the call's deadline by more than judge_timeout."""
        timeout = self.settings.timeout
        if self.pace is None:
            return timeout
        paced = self.pace.limit(timeout, self.gate.max_concurrency == 1, self.timed_out)
        return max(timeout, min(paced, self.turn.deadline - self.clock()))

    def _wait(self, state: RetryCallState) -> float:
        sent = state.outcome.exception().sent if state.outcome and state.outcome.failed else None  # type: ignore[union-attr]
        if self._stop(state):  # tenacity asks for the wait before it stops: no retry follows, nothing to announce
            return 0.0
        if sent is not None and sent.kind in ("rate_limited", "format", "overload"):
            return 0.0 if sent.kind == "format" else backoff(1, 0.25)  # the gate holds everyone back
        left = max(0.0, self.turn.deadline - self.clock())
        if sent is not None and sent.kind == "timeout":
            # The timeout was the wait: the server had judge_timeout to answer. A backoff on top made a dead judge
            # cost its timeouts plus a random wait per prompt before the breaker opened (5.3 timeouts, not 5).
            hwarn(
                f"judge {self.target.name}: {clip(self.scrub(sent.error), 160)}; retrying now "
                f"(attempt {state.attempt_number + 1}, up to judge_max_wait={self.settings.max_wait:g} s)"
            )
            return 0.0
        # at most NOTICE_EVERY: each wait is announced, so a line comes at least that often
        seconds = min(backoff(state.attempt_number, self.settings.retry_base, cap=NOTICE_EVERY), left)
        if sent is not None:
            hwarn(
                f"judge {self.target.name}: {clip(self.scrub(sent.error), 160)}; retrying in {seconds:.1f} s "
                f"(attempt {state.attempt_number + 1}, up to judge_max_wait={self.settings.max_wait:g} s)"
            )
        return seconds

    def _stop(self, state: RetryCallState) -> bool:
        return self.clock() >= self.turn.deadline or self.timeouts > self.settings.timeout_retries

    def _overloaded(self, sent: Sent) -> NoReturn:
        """A timeout while the judge answered other calls since this turn began: the server is alive and queues
        what it cannot take. Fewer calls at once, and this one again: neither a judge failure nor a breaker trip
        (the call's deadline still bounds it)."""
        lowered = self.gate.overloaded(self.generation)
        if lowered is not None:
            hwarn(
                f"{self.gate.name}: a call timed out while the server answered others: it takes fewer calls at "
                f"once than were sent; {lowered} at a time from now on"
            )
        raise Transient(Sent("overload", error=sent.error))

    def _repeated(self, sent: Sent) -> int:
        """How many times in a row this server error has come back (1 for a new one)."""
        fault = (sent.status, sent.error)
        self.repeats = self.repeats + 1 if fault == self.fault else 1
        self.fault = fault
        return self.repeats

    def _judge(self, sent: Sent, mode: str) -> Sent:
        """Update the shared state from one exchange; raise Transient for what waiting can fix."""
        target, gate, breaker, formats = self.target, self.gate, self.breaker, self.formats
        if sent.kind == "timeout" and breaker.answers > (self.answers_before or 0):
            self._overloaded(sent)
        if sent.kind in ("timeout", "connection", "not_completion"):
            breaker.unanswered(self.scrub(sent.error)[:200], self.turn.prompt)
            if sent.kind == "not_completion":
                return sent
            self.timeouts += sent.kind == "timeout"
            raise Transient(sent)
        if sent.kind != "server":
            breaker.answered()
        if sent.kind == "ok":
            gate.succeeded()
            formats.worked(mode)
            return sent
        if sent.kind == "auth":
            self.stop_run(
                JudgeAccessError(
                    f"judge {target.name!r} at {target.where} refused its key ({sent.error.split(':')[0]}): "
                    f"set {target.key_hint}"
                )
            )
        if sent.kind not in ("context", "too_long") and formats.refused(
            mode, sent.status, sent.error, self.turn.prompt
        ):
            hwarn(
                f"judge {target.name}: the endpoint refused response_format {mode} "
                f"({clip(self.scrub(sent.error), 120)}); using {formats.current} from now on"
            )
            raise Transient(Sent("format", error=sent.error, status=sent.status))
        if sent.kind == "rate_limited":
            wait = gate.throttled(sent.retry_after, backoff(gate.rate_limited + 1, 1.0, cap=30.0))
            if wait is not None:
                why = "as Retry-After asks" if sent.retry_after is not None else "(no Retry-After: backing off)"
                hwarn(f"judge {target.name}: 429, waiting {wait:.0f} s {why}")
            raise Transient(sent)
        if sent.kind == "server":
            if self._repeated(sent) >= self.settings.repeat_limit:
                return Sent("server", error=f"{SERVER_ERROR_REPEATS}: {sent.error}", status=sent.status)
            raise Transient(sent)
        return sent
