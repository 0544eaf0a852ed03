"""One judge call over an OpenAI-compatible async client, for the doors that have no HELM (a verifiers rubric).

Why not ``call.py``: that path goes through HELM's clients and cache. This one keeps its rules that decide what a
reply counts for, and nothing else: the forms of ``format_order.py`` (the verdict schema as ``json_schema``, as
HELM's ``OpenAIClient`` sends it; llama.cpp's ``json_object``; none), the next asked at once when the server
refuses one; each reply read by ``reply/reading.py``; a reply without a verdict that counts gets a repair turn (the
reply, then "answer with only the JSON object"), at most ``repair_turns``, stopping when the same bad reply comes
back; a reply cut at ``max_tokens`` gets twice as many. Each request is retried by ``judges/openai_calls/attempts.py``
(``judge_timeout`` per exchange, ``judge_max_wait`` for the whole judgment, repair turns included); the client's
own retries are off (``max_retries=0``). A failure is a named reason, never a score. The client is duck-typed
(``client.chat.completions.create``), so this module imports no SDK.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.format_order import (
    FALLBACK_ORDER,
    FORMAT_SUSPECT_STATUS,
    FormatChoice,
    names_format,
)
from helm_mtsamples_ext.judges.core.health import judge_breaker
from helm_mtsamples_ext.judges.core.reply.shape import completion_failure
from helm_mtsamples_ext.judges.core.reply.verdict_schema import openai_json_schema, verdict_schema
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.core.turns import Exchange, Messages, judge_turns
from helm_mtsamples_ext.judges.openai_calls.attempts import Budget, Failure, attempt

MODES = {
    "auto": FALLBACK_ORDER,
    "json_schema": ("json_schema",),
    "json_object": ("json_object",),
    "off": ("off",),
}
"""The formats a ``judge_structured`` setting tries, best first (``auto``: the schema, llama.cpp's form, none)."""


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


class AsyncJudge:
    """One judge of the panel behind an async OpenAI-compatible client; remembers which format its server took, and
    whether the server still answers (its breaker, shared by all its calls, as on HELM's path)."""

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
        self.formats = FormatChoice(MODES[settings.structured])
        self.breaker = judge_breaker(settings.timeout, clock)

    async def judge(self, prompt: str, untrusted: Sequence[str] = (), **extra: object) -> JudgeEntry:
        """The judge's entry for one prompt: its verdict, or why there is none. ``untrusted`` are the prompt's texts
        a verdict is never read from (the candidate answer, the note); ``extra`` goes into the entry."""
        deadline = self.clock() + self.settings.max_wait

        async def send(messages: Messages, max_tokens: int) -> Exchange:
            return await self._send(messages, max_tokens, deadline, prompt)

        turns = await judge_turns(send, prompt, untrusted, self.settings.max_tokens, self.settings.repair_turns)
        return turns.entry(self.scrub, **extra)

    async def _send(self, messages: Messages, max_tokens: int, deadline: float, prompt: str) -> Exchange:
        """One turn, in the judge's current format; a refused format moves this call, and the judge's later ones,
        to the next (``FormatChoice``: safe when calls run at once; a later 500 is the server's, not the
        format's, once a format worked)."""
        budget = Budget(self.settings.timeout, deadline, max_wait=self.settings.max_wait)
        index = self.formats.first()
        while True:
            mode = self.formats.forms[index]
            body = format_body(mode, self.settings.explanation_cap)
            request: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0.0}
            request["max_tokens"] = max_tokens
            if body is not None:
                request["response_format"] = body
            create = partial(self.client.chat.completions.create, **request)
            fallback = body is not None and self.formats.may_fall_back(index)
            completion = await attempt(
                create,
                budget,
                self.scrub,
                self.clock,
                name=self.model,
                final_if=names_format if fallback else None,  # not retried: the next form is asked at once
                breaker=self.breaker,
                prompt=prompt,
            )
            if isinstance(completion, Failure):  # the retries are over: a named failure, never a crash
                following = self.formats.refused(index) if fallback and _refusal(completion) else None
                if following is not None:
                    index = following
                    continue
                return Exchange(failure=self.scrub(completion.text), mode=mode)
            self.formats.worked(index)
            return _read(completion, mode, self.scrub)


def _refusal(failure: Failure) -> bool:
    """A failure that may be the server refusing the request's format (llama-cpp-python: HTTP 500)."""
    return failure.status in FORMAT_SUSPECT_STATUS


def _body(completion: Any) -> Any:
    """The reply's body as parsed JSON (None: not JSON), whatever the SDK handed back. Why: for a 200 that is not
    JSON (an HTML page on the chat route) the openai SDK returns the body as a ``str``, and a completion it could
    not build may raise a pydantic error when dumped; each must be a named failure, never an exception."""
    if isinstance(completion, str | bytes):
        try:
            return json.loads(completion)
        except ValueError:
            return None
    try:
        return completion.model_dump() if hasattr(completion, "model_dump") else dict(completion)
    except Exception:  # a pydantic error, a body of another shape: no chat completion either way
        return {}


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts (``completion_failure`` found
    some text in it)."""
    if isinstance(content, str):
        return content
    parts = content if isinstance(content, list) else []
    return "".join(str(p["text"]) for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _read(completion: Any, mode: str, scrub: Callable[[str], str] = str) -> Exchange:
    """One reply as an exchange: its text, or the failure ``completion_failure`` names in HELM's door's words."""
    response = _body(completion)
    failure = completion_failure(response, scrub)
    if not isinstance(response, dict):
        return Exchange(mode=mode, failure=failure or completion_failure({}, scrub))
    if failure is not None:
        return Exchange(mode=mode, failure=failure)
    usage: dict[str, Any] = response["usage"] if isinstance(response.get("usage"), dict) else {}
    counted = Exchange(
        mode=mode,
        tokens_in=_count(usage.get("prompt_tokens")),
        tokens_out=_count(usage.get("completion_tokens")),
        reported_model=str(response.get("model") or "") or None,
        system_fingerprint=str(response.get("system_fingerprint") or "") or None,
    )
    choice = response["choices"][0]
    text = _text(choice["message"].get("content"))  # over the cap: turns.py names it, unread
    return replace(counted, text=text, finish=choice.get("finish_reason"))


__all__ = ["AsyncCallSettings", "AsyncJudge", "MODES", "format_body"]
