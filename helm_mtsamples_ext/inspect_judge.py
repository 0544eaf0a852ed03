"""One judge's verdict on one note through Inspect's model API: the Inspect door's judge call.

Why apart from the task: the task is Inspect's glue (dataset, solver, scorer); this is the call loop HELM's path
runs in ``judges/call.py``, rewritten over ``inspect_ai.model.Model`` so Inspect's retries, connection limits,
batching and per-model usage apply to the judges. The rules are the core's: the reply is read by
``judges.reply.reading.read_reply``, a reply that may be fixed gets at most two repair turns (``REPAIR_INSTRUCTION``,
stopping when the same bad reply comes again; one cut at ``max_tokens`` gets twice as many), and the entry is
``entry_of``'s: a judge that fails counts for nothing, with its reason. Structured output follows
``judge_structured``: ``auto`` sends the verdict schema as Inspect's ``ResponseSchema``, then llama.cpp's
``json_object`` form, then none, dropping a form only when the server's refusal names it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema

from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.judges.prompt import REPAIR_INSTRUCTION
from helm_mtsamples_ext.judges.reply.reading import entry_of, read_reply
from helm_mtsamples_ext.judges.reply.verdict_schema import verdict_schema
from helm_mtsamples_ext.judges.settings import CallSettings

__all__ = ["JudgeCall", "judge_note"]

REPAIR_TURNS = CallSettings.repair_turns
JUDGE_MAX_TOKENS = CallSettings.max_tokens
"""As HELM's path (judges/settings.py): the same budget and repair turns, written once there."""
REPLY_CAP = 64 * 1024
"""The longest reply sent back in a repair turn, and kept (cut) in the record (judges/cache_gate.py's cap)."""
FALLBACK_ORDER = ("json_schema", "json_object", "off")
_NAMES_FORMAT = re.compile(r"response_format|json_schema|json_object|schema", re.IGNORECASE)
_FINISH = {"max_tokens": "length", "model_length": "length", "content_filter": "content_filter"}
"""Inspect's stop reasons in the OpenAI words read_reply knows (a reply cut short is a failure, never read)."""


@dataclass
class JudgeCall:
    """How one run calls its judges: the structured-output modes to try and, per judge, the one that worked."""

    structured: str
    explanation_cap: int | None
    timeout: float
    max_wait: float
    secrets: tuple[str, ...] = ()
    _mode: dict[str, int] = field(default_factory=dict)
    _worked: set[str] = field(default_factory=set)

    @property
    def modes(self) -> tuple[str, ...]:
        return FALLBACK_ORDER if self.structured == "auto" else (self.structured,)

    def config(self, mode: str, max_tokens: int) -> GenerateConfig:
        schema = verdict_schema(self.explanation_cap)
        extra: dict[str, Any] = {}
        if mode == "json_schema":
            extra["response_schema"] = ResponseSchema(
                name="verdict", json_schema=JSONSchema.model_validate(schema), strict=True
            )
        elif mode == "json_object":
            extra["extra_body"] = {"response_format": {"type": "json_object", "schema": schema}}
        return GenerateConfig(
            max_tokens=max_tokens,
            temperature=0.0,
            attempt_timeout=int(self.timeout),
            timeout=int(self.max_wait),
            **extra,
        )

    def scrub(self, text: str) -> str:
        """A key never reaches the log: an error message may repeat the Authorization header it was sent."""
        for secret in self.secrets:
            if secret and secret != "EMPTY":
                text = text.replace(secret, "[key]")
        return text

    async def generate(
        self, name: str, model: Model, messages: list[ChatMessage], max_tokens: int
    ) -> tuple[ModelOutput, str]:
        """One turn, in the judge's current mode; a refusal that names the format moves to the next mode."""
        while True:
            index = self._mode.get(name, 0)
            mode = self.modes[index]
            try:
                output = await model.generate(messages, config=self.config(mode, max_tokens))
            except Exception as e:
                if name not in self._worked and index + 1 < len(self.modes) and _NAMES_FORMAT.search(str(e)):
                    self._mode[name] = index + 1
                    continue
                raise
            self._worked.add(name)
            return output, mode


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"judge call failed: {type(error).__name__}: {text[0] if text else ''}"[:500]


async def judge_note(call: JudgeCall, name: str, model: Model, prompt: str, untrusted: tuple[str, ...]) -> JudgeEntry:
    """The judge's entry for one note: its verdict, or why there is none (repair turns as HELM's path)."""
    messages: list[ChatMessage] = [ChatMessageUser(content=prompt)]
    max_tokens, previous, mode = JUDGE_MAX_TOKENS, None, None
    tokens_in = tokens_out = 0
    verdict, failure, text = None, None, ""
    for _ in range(1 + REPAIR_TURNS):
        try:
            output, mode = await call.generate(name, model, messages, max_tokens)
        except Exception as e:  # Inspect gave up (its retries spent): the judge counts for nothing, with why
            return entry_of(verdict, _one_line(e), text[:REPLY_CAP] or None, call.scrub, structured=mode)
        if output.usage is not None:
            tokens_in += output.usage.input_tokens
            tokens_out += output.usage.output_tokens
        text = output.completion
        finish = _FINISH.get(output.choices[0].stop_reason) if output.choices else None
        reading = read_reply(text, finish, untrusted)
        verdict, failure = reading.verdict, reading.failure
        if not reading.retry or text == previous:  # the same bad reply again: more turns would get it again
            break
        previous = text
        max_tokens = 2 * max_tokens if reading.more_tokens else max_tokens
        messages = [
            ChatMessageUser(content=prompt),
            ChatMessageAssistant(content=text[:REPLY_CAP]),
            ChatMessageUser(content=REPAIR_INSTRUCTION),
        ]
    return entry_of(
        verdict,
        failure,
        text[:REPLY_CAP],
        call.scrub,
        tokens=tokens_in + tokens_out,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        structured=mode,
    )
