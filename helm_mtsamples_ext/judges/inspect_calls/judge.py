"""One judge's verdict on one note through Inspect's model API: the Inspect door's judge call.

Why apart from the task: the task is Inspect's glue (dataset, solver, scorer); this sends one turn over
``inspect_ai.model.Model`` so Inspect's retries, connection limits, batching and per-model usage apply to the judges.
The rules are the core's: the repair turns and the reading of each reply are ``judges/core/turns.py``'s, the loop the
verifiers door runs too, and a judge that fails counts for nothing, with its reason. Structured output follows
``judge_structured``: ``auto`` sends the verdict schema as Inspect's ``ResponseSchema``, then llama.cpp's
``json_object`` form, then none, dropping a form only when the server's refusal names it: one ``FormatChoice`` per
judge, so calls refused at once never skip or lose a form. A server that says how many calls it takes at once
(``judges/core/capacity.py``: llama-cpp-python takes one) is sent no more (``ServerPace``): its judges' calls queue for
a slot before their ``judge_max_wait`` starts, as on HELM's path, instead of timing out in the server's queue.

Failures carry the core's kinds, named by judges/inspect_calls/errors.py (a 200 without text is named at the wire,
judges/inspect_calls/wire.py, and a reply over the cap reaches Inspect clipped, its true length told to the turns); a
reply
without text is never repaired. Each attempt
is bounded by ``judge_timeout`` (Inspect's ``attempt_timeout``) and a turn, its retries included, by
``judge_max_wait`` (Inspect's ``timeout``, and a cancel scope: Inspect's backoff would overshoot it); a turn given
up there is named by the last error Inspect retried. Each judge has HELM's path's breaker (judges/core/health.py): once
it left three prompts in a row unanswered, Inspect's retries of its calls are declined and its next calls fail at
once, until one probe gets through.
"""

from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    ResponseSchema,
)
from inspect_ai.util import JSONSchema, concurrency

from helm_mtsamples_ext.common.failure_kinds import (
    CONTEXT_FAILURE,
    LARGER_CONTEXT,
)
from helm_mtsamples_ext.common.record import JudgeEntry
from helm_mtsamples_ext.common.secrets import mask
from helm_mtsamples_ext.judges.core.format_order import FALLBACK_ORDER, FormatChoice, names_format
from helm_mtsamples_ext.judges.core.health import JudgeHealth, judge_breaker
from helm_mtsamples_ext.judges.core.reply.verdict_schema import verdict_schema
from helm_mtsamples_ext.judges.core.settings import CallSettings
from helm_mtsamples_ext.judges.core.throttle import Breaker
from helm_mtsamples_ext.judges.core.turns import Exchange, Messages, judge_turns
from helm_mtsamples_ext.judges.inspect_calls.errors import (
    GaveUp,
    error_kind,
    failure_of,
    named_reply,
    origin,
    shape_failure,
)
from helm_mtsamples_ext.judges.inspect_calls.wire import CLIPPED

__all__ = ["JudgeCall", "judge_note"]

REPAIR_TURNS = CallSettings.repair_turns
JUDGE_MAX_TOKENS = CallSettings.max_tokens
"""As HELM's path (judges/core/settings.py): the same budget and repair turns, written once there."""
_FINISH = {"max_tokens": "length", "content_filter": "content_filter"}
"""Inspect's stop reasons in the OpenAI words read_reply knows (a reply cut short is a failure, never read);
``model_length`` is a prompt over the judge's context, named apart as on HELM's path."""


_RETRIED: ContextVar[list[BaseException] | None] = ContextVar("_RETRIED", default=None)
"""The errors Inspect retried in the current turn, so a turn given up at ``max_wait`` is named by its last one."""


_FALLBACK: ContextVar[bool] = ContextVar("_FALLBACK", default=False)
"""Whether the current turn has another structured-output form left to try."""
_HEALTH: ContextVar[tuple[JudgeHealth, JudgeCall] | None] = ContextVar("_HEALTH", default=None)
"""The current turn's judgment, told of each error Inspect would retry (the judge's breaker), and its call."""


def _names_format(error: BaseException) -> bool:
    """A refusal of the request's structured-output form, in the server's own words."""
    return names_format(str(origin(error)))


def _hooked(model: Model) -> Model:
    """``model`` with two of Inspect's retry hooks taken over for this instance (Inspect reads them from the
    instance at each call): ``before_retry`` also notes each error it is about to retry, for the current turn;
    ``should_retry`` declines a refusal naming the format while another form is left (llama-cpp-python answers a
    json_schema with HTTP 500, which Inspect would retry, backing off, until ``judge_max_wait``), tells the judge's
    breaker of each error it would retry, and declines the retry while the breaker is open. Once per model."""
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
            if named_reply(ex) is not None:  # the server answered, with nothing to read: asking again gets the same
                return False
            retry = should(ex)
            judgment = _HEALTH.get()
            if retry and judgment is not None:  # Inspect asks this before before_retry: the breaker is told here
                health, call = judgment
                health.told(error_kind(ex), failure_of(ex, call))
                if health.admit() is not None:
                    return False  # the judge stopped answering: this call ends now, named by the breaker
            return retry

        model.__dict__.update(before_retry=noting, should_retry=unless_format, _hooked=True)
    return model


@dataclass(frozen=True)
class ServerPace:
    """How many calls at once a judge's server takes, as it said (``capacity.probe_capacity``): every judge it
    serves shares these slots, so a one-slot server never gets two calls at once, whatever the panel."""

    url: str
    slots: int
    source: str

    @property
    def key(self) -> str:
        """Inspect's concurrency key for this server (its slots in it: a key fixes its count for the process)."""
        return f"mtsamples judge server {self.url} ({self.slots})"


@dataclass
class JudgeCall:
    """How one run calls its judges: the structured-output forms to try (one ``FormatChoice`` per judge, shared by
    its calls), each judge's breaker, and the pace of the servers that said how many calls they take."""

    structured: str
    explanation_cap: int | None
    timeout: float
    max_wait: float
    secrets: tuple[str, ...] = ()
    paces: dict[str, ServerPace] = field(default_factory=dict)
    _formats: dict[str, FormatChoice] = field(default_factory=dict)
    _breakers: dict[str, Breaker] = field(default_factory=dict)

    def formats(self, name: str) -> FormatChoice:
        """The judge's structured-output choice, one for all its calls (made at its first call)."""
        if name not in self._formats:
            self._formats[name] = FormatChoice(self.modes)
        return self._formats[name]

    def health(self, name: str, prompt: str) -> JudgeHealth:
        """A judgment's messenger to the judge's breaker, HELM's path's (one per judge for the run)."""
        if name not in self._breakers:
            self._breakers[name] = judge_breaker(self.timeout)
        return JudgeHealth(self._breakers[name], prompt)

    @property
    def modes(self) -> tuple[str, ...]:
        return FALLBACK_ORDER if self.structured == "auto" else (self.structured,)

    def config(self, mode: str, max_tokens: int, pace: ServerPace | None = None) -> GenerateConfig:
        """The turn's settings for Inspect: the form, the bounds, and a paced server's slots as Inspect's own
        ``max_connections`` (given per call, so the eval's ``--max-connections`` for the model under test does not
        override it)."""
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
            **({"max_connections": pace.slots} if pace is not None else {}),
            **extra,
        )

    def scrub(self, text: str) -> str:
        """A key never reaches the log: an error message may repeat the Authorization header it was sent."""
        return mask(text, self.secrets)

    async def generate(
        self, name: str, model: Model, messages: list[ChatMessage], max_tokens: int
    ) -> tuple[ModelOutput, str]:
        """One turn, in the judge's current form; a refusal that names the form moves this call, and the judge's
        later ones, to the next (``FormatChoice``: calls refused at once never cut a shared list)."""
        choice = self.formats(name)
        index = choice.first()
        while True:
            mode = choice.forms[index]
            fallback = choice.may_fall_back(index)
            token = _FALLBACK.set(fallback)
            try:
                output = await self._paced(name, model, messages, mode, max_tokens)
            except Exception as e:  # the server's words, not the request Inspect's error repeats
                following = choice.refused(index) if fallback and _names_format(e) else None
                if following is None:
                    raise
                index = following
                continue
            finally:
                _FALLBACK.reset(token)
            choice.worked(index)
            return output, mode

    async def _paced(
        self, name: str, model: Model, messages: list[ChatMessage], mode: str, max_tokens: int
    ) -> ModelOutput:
        """One turn, after a slot of the judge's server when it said how many calls it takes: the wait for the slot
        comes before ``max_wait`` starts (HELM's path's fan-out), so a queue at a one-slot server is no timeout."""
        pace = self.paces.get(name)
        config = self.config(mode, max_tokens, pace)
        if pace is None:
            return await self._bounded(model, messages, config)
        async with concurrency(f"judge server {pace.url}", pace.slots, key=pace.key):
            return await self._bounded(model, messages, config)

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


async def judge_note(call: JudgeCall, name: str, model: Model, prompt: str, untrusted: tuple[str, ...]) -> JudgeEntry:
    """The judge's entry for one note: its verdict, or why there is none (judges/core/turns.py's repair turns, each
    turn through Inspect). A judge whose breaker is open fails at once, as on HELM's path."""
    health = call.health(name, prompt)

    async def send(messages: Messages, max_tokens: int) -> Exchange:
        chat = [_chat_message(m) for m in messages]
        closed = health.admit()
        if closed is not None:
            return Exchange(failure=closed)
        lengths: list[int] = []  # the true length of a reply the wire clipped, this turn
        token, clipped = _HEALTH.set((health, call)), CLIPPED.set(lengths)
        try:
            output, mode = await call.generate(name, model, chat, max_tokens)
        except Exception as e:  # Inspect gave up (its retries spent): the judge counts for nothing, with why
            named = named_reply(e)
            if named is not None:  # the server answered, with nothing to read: named as every door names it
                health.answered()
                return Exchange(failure=call.scrub(named.failure))
            return Exchange(failure=health.refused or _told(health, e, call))
        except BaseException:  # cancelled: this call tells the breaker nothing
            health.released()
            raise
        finally:
            _HEALTH.reset(token)
            CLIPPED.reset(clipped)
        health.answered()
        usage = output.usage
        counted = Exchange(
            length=lengths[-1] if lengths else None,  # the wire clipped a reply over the cap: its true length
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


def _told(health: JudgeHealth, error: BaseException, call: JudgeCall) -> str:
    """The failure of a turn Inspect gave up, told to the judge's breaker: a judgment ending in server errors
    counts as unanswered, as on HELM's path."""
    failure, kind = failure_of(error, call), error_kind(error)
    if kind == "server":
        health.ended(failure)
    else:
        health.told(kind, failure)
    return failure


def _chat_message(message: dict[str, str]) -> ChatMessage:
    if message["role"] == "assistant":
        return ChatMessageAssistant(content=message["content"])
    return ChatMessageUser(content=message["content"])
