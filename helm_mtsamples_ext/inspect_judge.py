"""One judge's verdict on one note through Inspect's model API: the Inspect door's judge call.

Why apart from the task: the task is Inspect's glue (dataset, solver, scorer); this sends one turn over
``inspect_ai.model.Model`` so Inspect's retries, connection limits, batching and per-model usage apply to the judges.
The rules are the core's: the repair turns and the reading of each reply are ``judges/turns.py``'s, the loop the
verifiers door runs too, and a judge that fails counts for nothing, with its reason. Structured output follows
``judge_structured``: ``auto`` sends the verdict schema as Inspect's ``ResponseSchema``, then llama.cpp's
``json_object`` form, then none, dropping a form only when the server's refusal names it.

Failures carry the core's kinds (common/failure_kinds.py), as on HELM's path, so a judge failing the same way
fails under the same name through every door: a reply without text (OpenAI's refusal, which Inspect turns into a
``ContentText(refusal=True)``; a tool call; nothing) is named by ``judges.reply.shape.reply_shape`` and is never
repaired; an exception Inspect raises once its retries are spent is "timed out", "connection failed" or "judge
unavailable", never Inspect's or tenacity's own words. Each attempt is bounded by ``judge_timeout`` (Inspect's
``attempt_timeout``) and a turn, its retries included, by ``judge_max_wait`` (Inspect's ``timeout``, and a cancel
scope: Inspect's backoff would overshoot it); a turn given up there is named by the last error Inspect retried.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
import openai
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema
from tenacity import RetryError

from helm_mtsamples_ext.common.failure_kinds import (
    CONNECTION_FAILED,
    CONTEXT_FAILURE,
    JUDGE_UNAVAILABLE,
    LARGER_CONTEXT,
    TIMED_OUT,
    http_failure,
)
from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.common.secrets import mask
from helm_mtsamples_ext.judges.format_order import FALLBACK_ORDER, names_format
from helm_mtsamples_ext.judges.reply.shape import reply_shape
from helm_mtsamples_ext.judges.reply.verdict_schema import verdict_schema
from helm_mtsamples_ext.judges.settings import CallSettings
from helm_mtsamples_ext.judges.turns import Exchange, Messages, judge_turns

__all__ = ["GaveUp", "JudgeCall", "failure_of", "judge_note", "origin", "shape_failure"]

REPAIR_TURNS = CallSettings.repair_turns
JUDGE_MAX_TOKENS = CallSettings.max_tokens
"""As HELM's path (judges/settings.py): the same budget and repair turns, written once there."""
_FINISH = {"max_tokens": "length", "content_filter": "content_filter"}
"""Inspect's stop reasons in the OpenAI words read_reply knows (a reply cut short is a failure, never read);
``model_length`` is a prompt over the judge's context, named apart as on HELM's path."""
_TIMEOUTS = ("AttemptTimeoutError", "StreamIdleTimeoutError")
"""Inspect's own timeouts (``inspect_ai.model._model``, not exported): an attempt past ``attempt_timeout``."""


_RETRIED: ContextVar[list[BaseException] | None] = ContextVar("_RETRIED", default=None)
"""The errors Inspect retried in the current turn, so a turn given up at ``max_wait`` is named by its last one."""


class GaveUp(Exception):
    """A turn given up at ``judge_max_wait`` while Inspect was still retrying it, with the last error it retried
    (None: the first attempt was still running)."""

    def __init__(self, last: BaseException | None) -> None:
        super().__init__(str(last) if last is not None else "no reply")
        self.last = last


_FALLBACK: ContextVar[bool] = ContextVar("_FALLBACK", default=False)
"""Whether the current turn has another structured-output form left to try."""


def _names_format(error: BaseException) -> bool:
    """A refusal of the request's structured-output form, in the server's own words."""
    return names_format(str(origin(error)))


def _hooked(model: Model) -> Model:
    """``model`` with two of Inspect's retry hooks taken over for this instance (Inspect reads them from the
    instance at each call): ``before_retry`` also notes each error it is about to retry, for the current turn;
    ``should_retry`` declines a refusal naming the format while another form is left (llama-cpp-python answers a
    json_schema with HTTP 500, which Inspect would retry, backing off, until ``judge_max_wait``). Once per model."""
    if not getattr(model, "_hooked", False):
        before, should = model.before_retry, model.should_retry

        async def noting(ex: BaseException) -> None:
            retried = _RETRIED.get()
            if retried is not None:
                retried.append(ex)
            await before(ex)

        def unless_format(ex: BaseException) -> Any:
            if _FALLBACK.get() and _names_format(ex):
                return False
            return should(ex)

        model.__dict__.update(before_retry=noting, should_retry=unless_format, _hooked=True)
    return model


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
            attempt_timeout=_seconds(self.timeout),
            timeout=_seconds(self.max_wait),
            **extra,
        )

    def scrub(self, text: str) -> str:
        """A key never reaches the log: an error message may repeat the Authorization header it was sent."""
        return mask(text, self.secrets)

    async def generate(
        self, name: str, model: Model, messages: list[ChatMessage], max_tokens: int
    ) -> tuple[ModelOutput, str]:
        """One turn, in the judge's current mode; a refusal that names the format moves to the next mode."""
        while True:
            index = self._mode.get(name, 0)
            mode = self.modes[index]
            fallback = name not in self._worked and index + 1 < len(self.modes)
            token = _FALLBACK.set(fallback)
            try:
                output = await self._bounded(model, messages, self.config(mode, max_tokens))
            except Exception as e:
                if fallback and _names_format(e):  # the server's words, not the request Inspect's error repeats
                    self._mode[name] = index + 1
                    continue
                raise
            finally:
                _FALLBACK.reset(token)
            self._worked.add(name)
            return output, mode

    async def _bounded(self, model: Model, messages: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        """One turn through Inspect's retries, given up at ``max_wait``: Inspect stops retrying only after an attempt
        that fails past its ``timeout``, so its backoff (3 s, doubling, up to 30 minutes) would overshoot."""
        retried: list[BaseException] = []
        token = _RETRIED.set(retried)
        try:
            with anyio.move_on_after(self.max_wait):
                return await _hooked(model).generate(messages, config=config)
        finally:
            _RETRIED.reset(token)
        raise GaveUp(retried[-1] if retried else None)  # only a cancelled scope gets here


def _seconds(value: float) -> int:
    """Inspect's timeouts are whole seconds: rounded up, so a short ``judge_timeout`` never becomes none."""
    return max(1, math.ceil(value))


def origin(error: BaseException) -> BaseException:
    """The error behind what Inspect raised: tenacity's ``RetryError`` holds the last attempt's, our ``GaveUp`` the
    last one Inspect retried, and Inspect's ``ModelGenerateError`` (whose text is the whole request, formats and
    all) the provider's as its cause."""
    if isinstance(error, RetryError) and error.last_attempt.failed:
        error = error.last_attempt.exception() or error
    if isinstance(error, GaveUp):
        error = error.last or TimeoutError()
    cause = error.__cause__
    return cause if not isinstance(error, openai.OpenAIError) and isinstance(cause, openai.OpenAIError) else error


def failure_of(error: BaseException, call: JudgeCall) -> str:
    """The named failure for an exception Inspect raised once its retries were spent (the last attempt's, when
    tenacity wraps it), in the core's kinds; the details scrubbed of any key."""
    error = origin(error)
    if isinstance(error, (TimeoutError, openai.APITimeoutError)) or type(error).__name__ in _TIMEOUTS:
        return (
            f"{TIMED_OUT}: no reply within judge_timeout={call.timeout:g}s per attempt, "
            f"judge_max_wait={call.max_wait:g}s in all"
        )
    # another provider's error stays wrapped in Inspect's ModelGenerateError, which keeps its status and message
    lines = str(getattr(error, "provider_message", None) or error).strip().splitlines()
    said = call.scrub(lines[0] if lines else "")[:200]
    if isinstance(error, openai.APIConnectionError):
        return f"{CONNECTION_FAILED}: {said}"
    status = getattr(error, "status_code", None)
    return http_failure(status, said) if status else f"{JUDGE_UNAVAILABLE}: {type(error).__name__}: {said}"


def shape_failure(output: ModelOutput) -> str | None:
    """``reply_shape``'s name for a reply without text, read from Inspect's output put back in OpenAI's shape
    (Inspect keeps OpenAI's ``refusal`` as a ``ContentText`` marked ``refusal``), or None when it has text."""
    if not output.choices:
        return "no message in the reply"
    message = output.choices[0].message
    parts = [ContentText(text=message.content)] if isinstance(message.content, str) else message.content
    texts = [p for p in parts if isinstance(p, ContentText)]
    refusal = "".join(p.text for p in texts if p.refusal)
    content = "".join(p.text for p in texts if not p.refusal)
    said = {"content": content, "refusal": refusal or None, "tool_calls": message.tool_calls or None}
    return reply_shape({"choices": [{"message": said}]})


async def judge_note(call: JudgeCall, name: str, model: Model, prompt: str, untrusted: tuple[str, ...]) -> JudgeEntry:
    """The judge's entry for one note: its verdict, or why there is none (judges/turns.py's repair turns, each
    turn through Inspect)."""

    async def send(messages: Messages, max_tokens: int) -> Exchange:
        chat = [_chat_message(m) for m in messages]
        try:
            output, mode = await call.generate(name, model, chat, max_tokens)
        except Exception as e:  # Inspect gave up (its retries spent): the judge counts for nothing, with why
            return Exchange(failure=failure_of(e, call))
        usage = output.usage
        counted = Exchange(
            mode=mode,
            tokens_in=usage.input_tokens if usage is not None else None,
            tokens_out=usage.output_tokens if usage is not None else None,
        )
        shape = shape_failure(output)
        if shape is not None:  # nothing to read, and a repair turn would get nothing again (HELM's path)
            return replace(counted, text=output.completion, failure=shape)
        stop = output.choices[0].stop_reason if output.choices else None
        if stop == "model_length":  # Inspect's word for OpenAI's context_length_exceeded: no turn would fit
            return replace(counted, text=output.completion, failure=f"{CONTEXT_FAILURE}: {LARGER_CONTEXT}")
        return replace(counted, text=output.completion, finish=_FINISH.get(stop) if stop else None)

    turns = await judge_turns(send, prompt, untrusted, JUDGE_MAX_TOKENS, REPAIR_TURNS)
    return turns.entry(call.scrub)


def _chat_message(message: dict[str, str]) -> ChatMessage:
    if message["role"] == "assistant":
        return ChatMessageAssistant(content=message["content"])
    return ChatMessageUser(content=message["content"])
