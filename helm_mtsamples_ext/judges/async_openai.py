"""One judge call over an OpenAI-compatible async client, for the doors that have no HELM (a verifiers rubric).

Why not ``call.py``: that path goes through HELM's clients and cache. This one keeps its rules that decide what a
reply counts for, and nothing else: the verdict schema first (``json_schema``, as HELM's ``OpenAIClient`` sends
it), then no ``response_format`` when the server refuses the format; each reply read by ``reply/reading.py``; a
reply without a verdict that counts gets a repair turn (the reply, then "answer with only the JSON object"), at
most ``repair_turns``, stopping when the same bad reply comes back; a reply cut at ``max_tokens`` gets twice as
many. Each request is retried by ``async_attempts.py`` (``judge_timeout`` per exchange, ``judge_max_wait`` for the
whole judgment, repair turns included); the client's own retries are off (``max_retries=0``). A failure is a
named reason, never a score. The client is duck-typed (``client.chat.completions.create``), so this module
imports no SDK.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.async_attempts import Budget, Failure, attempt
from helm_mtsamples_ext.judges.prompt import REPAIR_INSTRUCTION
from helm_mtsamples_ext.judges.reply.reading import entry_of, read_reply
from helm_mtsamples_ext.judges.reply.shape import reply_shape
from helm_mtsamples_ext.judges.reply.verdict import Verdict
from helm_mtsamples_ext.judges.reply.verdict_schema import openai_json_schema, verdict_schema
from helm_mtsamples_ext.judges.settings import CallSettings

REPLY_CAP = 64 * 1024
"""Characters of a reply beyond which it is a failure, as in HELM's path (``cache_gate.REPLY_CAP``)."""
FORMAT_SUSPECT_STATUS = (400, 415, 422, 500, 501)
"""How servers refuse a response_format they do not know (``formats.FORMAT_SUSPECT_STATUS``)."""
MODES = {
    "auto": ("json_schema", "off"),
    "json_schema": ("json_schema",),
    "json_object": ("json_object",),
    "off": ("off",),
}
"""The formats a ``judge_structured`` setting tries, best first (``auto``: the schema, then none)."""


def format_body(mode: str, explanation_cap: int | None) -> dict[str, Any] | None:
    """The ``response_format`` a mode sends (None: no constraint)."""
    if mode == "json_schema":
        return openai_json_schema(explanation_cap)
    if mode == "json_object":
        return {"type": "json_object", "schema": verdict_schema(explanation_cap)}
    return None


@dataclass(frozen=True)
class AsyncCallSettings:
    """How each call is made: HELM's path's defaults (``CallSettings``, ``RunEntryArgs``), read from there."""

    timeout: float = RunEntryArgs.judge_timeout
    max_wait: float = RunEntryArgs.judge_max_wait
    max_tokens: int = CallSettings.max_tokens
    repair_turns: int = CallSettings.repair_turns
    structured: str = RunEntryArgs.judge_structured
    explanation_cap: int | None = RunEntryArgs.explanation_cap


@dataclass
class _Sent:
    text: str = ""
    finish: str | None = None
    failure: str | None = None
    mode: str | None = None
    response: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Outcome:
    verdict: Verdict | None = None
    failure: str | None = None
    raw_reply: str | None = None
    structured: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    reported_model: str | None = None
    system_fingerprint: str | None = None

    def count(self, sent: _Sent) -> None:
        usage = sent.response.get("usage") or {}
        for mine, theirs in (("tokens_in", "prompt_tokens"), ("tokens_out", "completion_tokens")):
            more = usage.get(theirs)
            if isinstance(more, int):
                setattr(self, mine, (getattr(self, mine) or 0) + more)
        self.reported_model = sent.response.get("model") or self.reported_model
        self.system_fingerprint = sent.response.get("system_fingerprint") or self.system_fingerprint


class AsyncJudge:
    """One judge of the panel behind an async OpenAI-compatible client; remembers which format its server took."""

    def __init__(
        self,
        client: Any,
        model: str,
        settings: AsyncCallSettings = AsyncCallSettings(),
        scrub: Callable[[str], str] = str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if settings.structured not in MODES:
            raise ValueError(f"judge_structured must be one of {', '.join(MODES)}, got {settings.structured!r}")
        self.client, self.model, self.settings, self.scrub, self.clock = client, model, settings, scrub, clock
        self._modes = MODES[settings.structured]

    async def judge(self, prompt: str, untrusted: Sequence[str] = (), **extra: object) -> JudgeEntry:
        """The judge's entry for one prompt: its verdict, or why there is none. ``untrusted`` are the prompt's texts
        a verdict is never read from (the candidate answer, the note); ``extra`` goes into the entry."""
        outcome = _Outcome()
        deadline = self.clock() + self.settings.max_wait
        messages = [{"role": "user", "content": prompt}]
        max_tokens, previous = self.settings.max_tokens, None
        for _ in range(1 + self.settings.repair_turns):
            sent = await self._send(messages, max_tokens, deadline)
            outcome.count(sent)
            outcome.structured = sent.mode
            if sent.failure is not None:
                outcome.failure, outcome.raw_reply = sent.failure, sent.text[:REPLY_CAP] or outcome.raw_reply
                break
            reading = read_reply(sent.text, sent.finish, untrusted)
            outcome.verdict, outcome.failure, outcome.raw_reply = reading.verdict, reading.failure, sent.text
            if not reading.retry or sent.text == previous:  # the same bad reply again: more turns get it again
                break
            previous = sent.text
            max_tokens = 2 * max_tokens if reading.more_tokens else max_tokens
            messages = [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": sent.text[:REPLY_CAP]},
                {"role": "user", "content": REPAIR_INSTRUCTION},
            ]
        return entry_of(
            outcome.verdict,
            outcome.failure,
            outcome.raw_reply,
            self.scrub,
            structured=outcome.structured,
            tokens_in=outcome.tokens_in,
            tokens_out=outcome.tokens_out,
            tokens=None if outcome.tokens_in is None else outcome.tokens_in + (outcome.tokens_out or 0),
            reported_model=outcome.reported_model,
            system_fingerprint=outcome.system_fingerprint,
            **extra,
        )

    async def _send(self, messages: list[dict[str, str]], max_tokens: int, deadline: float) -> _Sent:
        """One turn, in the first format the server takes; a refused format is dropped for this judge's later
        calls only once no format at all worked before it (a later 500 is the server's, not the format's)."""
        budget = Budget(self.settings.timeout, deadline)
        for i, mode in enumerate(self._modes):
            body = format_body(mode, self.settings.explanation_cap)
            request: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0.0}
            request["max_tokens"] = max_tokens
            if body is not None:
                request["response_format"] = body
            create = partial(self.client.chat.completions.create, **request)
            completion = await attempt(create, budget, self.scrub, self.clock, name=self.model)
            if isinstance(completion, Failure):  # the retries are over: a named failure, never a crash
                last = i == len(self._modes) - 1
                if body is not None and completion.status in FORMAT_SUSPECT_STATUS and not last:
                    continue
                return _Sent(failure=self.scrub(completion.text), mode=mode)
            self._modes = self._modes[i:]  # the first format that worked is the one this judge keeps
            return _read(completion, mode)
        raise AssertionError("unreachable: the last format's failure is returned")  # pragma: no cover


def _read(completion: Any, mode: str) -> _Sent:
    response = completion.model_dump() if hasattr(completion, "model_dump") else dict(completion)
    shape = reply_shape(response)
    choices = response.get("choices") or []
    if shape is not None or not choices:
        return _Sent(failure=shape or "not a chat completion", mode=mode, response=response)
    text = choices[0]["message"].get("content") or ""
    if len(text) > REPLY_CAP:
        too_long = f"reply too long ({len(text)} characters; the cap is {REPLY_CAP})"
        return _Sent(text[:REPLY_CAP], failure=too_long, mode=mode, response=response)
    return _Sent(text, choices[0].get("finish_reason"), mode=mode, response=response)


__all__ = ["AsyncCallSettings", "AsyncJudge", "FORMAT_SUSPECT_STATUS", "MODES", "REPLY_CAP", "format_body"]
