"""The rules of one turn's attempts (attempts.TurnAttempts): what is retried, what ends the turn, what it tells
the shared state. The exchange is a script of classified replies, so each rule is read off the calls made."""

from __future__ import annotations

import logging
import time
from dataclasses import replace
from typing import NoReturn

import pytest
from helm.common.request import Request

from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.core.throttle import Breaker, EndpointGate
from helm_mtsamples_ext.judges.helm_calls.attempts import JudgeAccessError, Turn, TurnAttempts
from helm_mtsamples_ext.judges.helm_calls.formats import FALLBACK_ORDER, FormatMemory
from helm_mtsamples_ext.judges.helm_calls.outcome import Sent

pytestmark = pytest.mark.helm

TARGET = JudgeTarget("j", "j", "host/j", "host", "http://host/v1", "JUDGE_API_KEY_1", "http://host/v1")
OK = Sent("ok", text="{}")
E500 = Sent("server", error="HTTP 500: could not broadcast input array", status=500)


def attempts(
    script: list[Sent], breaker: Breaker | None = None, formats: FormatMemory | None = None, prompt: str = "prompt"
) -> TurnAttempts:
    replies = iter(script)
    sent_modes: list[str | None] = []

    def exchange(request: object) -> Sent:
        rf = getattr(request, "response_format", None)
        sent_modes.append(getattr(rf, "mode", None) if rf else "off")
        return next(replies)

    def stop_run(error: JudgeAccessError) -> NoReturn:
        raise error

    turn = TurnAttempts(
        TARGET,
        Turn(prompt, None, 100, deadline=float("inf")),
        EndpointGate(4),
        breaker or Breaker(3, 600.0),
        formats or FormatMemory(FALLBACK_ORDER),
        CallSettings.from_args(RunEntryArgs(), retry_base=0.0),
        exchange=exchange,
        stop_run=stop_run,
        stopped=lambda: None,
        scrub=str,
    )
    turn.sent_modes = sent_modes  # type: ignore[attr-defined]
    return turn


def calls(turn: TurnAttempts) -> int:
    return len(turn.sent_modes)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("script", "kind", "failure", "n"),
    [
        ([E500, E500, E500], "server", "server error repeats: HTTP 500", 3),
        ([E500, Sent("server", error="HTTP 502: bad gateway", status=502), E500, OK], "ok", "", 4),
        ([Sent("timeout", error="timed out"), Sent("timeout", error="timed out")], "timeout", "timed out", 2),
        ([Sent("timeout", error="timed out"), OK], "ok", "", 2),
        ([Sent("not_completion", error="not a chat completion: html")], "not_completion", "not a chat", 1),
        ([Sent("context", error="prompt too long for the judge's context (9 tokens)", status=400)], "context", "", 1),
        ([Sent("too_long", error="reply too long (99 characters)")], "too_long", "reply too long", 1),
        ([Sent("client", error="HTTP 404: no such model", status=404)], "client", "HTTP 404", 1),
    ],
    ids=[
        "the same 500 three times ends the turn",
        "changing 5xx are waited out",
        "a timeout is retried once",
        "a retried timeout may succeed",
        "a 200 that is no completion is not retried",
        "a prompt too long is not retried",
        "a reply too long is not retried",
        "another 4xx is not retried",
    ],
)
def test_what_is_retried_and_what_ends_the_turn(script: list[Sent], kind: str, failure: str, n: int) -> None:
    turn = attempts(script)
    sent, _ = turn.run()
    assert (sent.kind, sent.error.startswith(failure), calls(turn)) == (kind, True, n)


@pytest.mark.parametrize(
    "ending",
    [[E500, E500, E500], [Sent("not_completion", error="not a chat completion")], [Sent("timeout", error="t")] * 2],
    ids=["repeated server error", "non-completion", "timeouts"],
)
def test_turns_ending_unanswered_open_the_breaker_after_three(ending: list[Sent]) -> None:
    breaker = Breaker(3, 600.0)
    for n in range(3):
        attempts(list(ending), breaker=breaker, prompt=f"note {n}").run()
    sent, _ = attempts([OK], breaker=breaker, prompt="note 3").run()
    assert sent.kind == "unavailable"


def test_a_timeout_is_retried_at_once_and_the_last_one_announces_no_retry(caplog: pytest.LogCaptureFixture) -> None:
    """The timeout was the wait (the server had judge_timeout to answer): its retry goes without a backoff, so a dead
    judge costs its timeouts and no more. The second timeout ends the turn, and no line announces a retry."""
    caplog.set_level(logging.WARNING, logger="helm")
    turn = attempts([Sent("timeout", error="timed out")] * 2)
    turn.settings = replace(turn.settings, retry_base=60.0)  # any backoff would be seconds here
    start = time.monotonic()
    sent, _ = turn.run()
    assert (sent.kind, calls(turn)) == ("timeout", 2)
    assert time.monotonic() - start < 5.0
    lines = [r.getMessage() for r in caplog.records if r.name == "helm" and "judge j:" in r.getMessage()]
    assert len(lines) == 1 and "retrying now (attempt 2" in lines[0]


def test_turns_of_one_prompt_ending_unanswered_leave_the_judge_admitted_for_the_others() -> None:
    """The same prompt unanswered three times (its turns, the repair turn's retries) is one silent prompt: the
    judge still gets the other notes' calls."""
    breaker = Breaker(3, 600.0)
    for _ in range(3):
        attempts([Sent("timeout", error="t")] * 2, breaker=breaker, prompt="the silent note").run()
    sent, _ = attempts([OK], breaker=breaker, prompt="another note").run()
    assert sent.kind == "ok"


def test_a_prompt_too_long_is_never_evidence_against_the_format() -> None:
    formats = FormatMemory(FALLBACK_ORDER)
    for _ in range(3):
        attempts([Sent("context", error="context_length_exceeded json_schema", status=400)], formats=formats).run()
    assert formats.current == "json_schema"


def test_a_refused_format_is_retried_at_once_in_the_next_one() -> None:
    turn = attempts([Sent("server", error="HTTP 500: json_schema not allowed", status=500), OK])
    sent, mode = turn.run()
    assert (sent.kind, mode, turn.sent_modes) == ("ok", "json_object", ["json_schema", "json_object"])  # type: ignore[attr-defined]


def test_a_refused_key_stops_the_run_naming_the_setting() -> None:
    turn = attempts([Sent("auth", error="HTTP 401: bad key sk-x", status=401)])
    with pytest.raises(JudgeAccessError, match=r"refused its key \(HTTP 401\): set JUDGE_API_KEY_1"):
        turn.run()


def overloaded_attempts(script: list[Sent], others_answered: bool, gate: EndpointGate) -> TurnAttempts:
    """A turn whose timed-out exchanges happen while the judge answers other calls (``others_answered``)."""
    breaker = Breaker(3, 600.0)
    turn = attempts(script, breaker=breaker)
    turn.gate = gate
    exchange = turn.exchange

    def busy_exchange(request: Request) -> Sent:
        sent = exchange(request)
        if others_answered and sent.kind == "timeout":
            breaker.answered()  # another call of the same judge came back while this one waited
        return sent

    turn.exchange = busy_exchange
    return turn


def test_a_timeout_while_the_judge_answered_others_is_overload_retried_without_tripping_the_breaker() -> None:
    """A queued call at a server that takes fewer calls than sent: three timeouts, then an answer. No failure,
    no breaker trip (more than ``timeout_retries``), and the endpoint's limit halved once per round."""
    gate = EndpointGate(16)
    turn = overloaded_attempts([Sent("timeout", error="timed out")] * 3 + [OK], True, gate)
    sent, _ = turn.run()
    assert (sent.kind, calls(turn), turn.timeouts) == ("ok", 4, 0)
    assert gate.limit == 2 and gate.overloads == 3
    assert turn.breaker.admit() == (True, "")


def test_a_timeout_with_no_answer_meanwhile_is_the_judges_failure() -> None:
    """Nothing came back from the judge while the call waited: a dead or stuck judge, as before."""
    gate = EndpointGate(16)
    turn = overloaded_attempts([Sent("timeout", error="timed out")] * 2, False, gate)
    sent, _ = turn.run()
    assert (sent.kind, calls(turn), gate.limit, gate.overloads) == ("timeout", 2, 16, 0)


def test_an_overloaded_call_left_without_a_slot_at_its_deadline_fails_as_the_timeout_it_was() -> None:
    """Its attempt timed out while the judge answered others; the retry finds every slot taken until the deadline.
    The judge never answered this prompt: the failure is its timeout, not "gave up waiting for the endpoint" (whose
    advice, judge_max_wait or judge_rpm, fits a rate limit). A call that never got a slot still gave up waiting."""
    gate = EndpointGate(16, clock=lambda: 10.0)  # the deadline has come whenever a call waits for a slot
    turn = overloaded_attempts([Sent("timeout", error="timed out: no reply")], True, gate)
    turn.turn = replace(turn.turn, deadline=10.0)
    turn.clock = lambda: 0.0
    exchange = turn.exchange

    def others_take_every_slot(request: Request) -> Sent:
        gate.in_flight += gate.limit
        return exchange(request)

    turn.exchange = others_take_every_slot
    sent, _ = turn.run()
    assert (sent.kind, sent.error, calls(turn)) == ("timeout", "timed out: no reply", 1)

    never = attempts([OK])
    never.gate, never.turn = gate, replace(never.turn, deadline=10.0)
    sent, _ = never.run()
    assert (sent.kind, calls(never)) == ("rate_limited", 0)
    assert sent.error.startswith("gave up waiting for the endpoint within judge_max_wait: no free slot")
