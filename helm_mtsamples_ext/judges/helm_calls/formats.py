"""Structured output for judges: the verdict's JSON schema and the ways servers accept it.

Why: a judge constrained to the verdict schema cannot echo the prompt's format line, write prose, or
give a 4.5; even a 135M model returns a parseable verdict. But servers disagree on how to ask:

- ``json_schema``: OpenAI and vLLM (``{"type": "json_schema", "json_schema": {...}}``), which HELM's
  ``OpenAIClient`` sends for a ``Request.response_format``;
- ``json_object``: llama.cpp's Python server answers HTTP 500 to ``json_schema`` (its pydantic model only
  allows ``text`` or ``json_object``) but takes ``{"type": "json_object", "schema": {...}}``;
- ``off``: no constraint, the plain prompt and the tolerant parser (the last resort).

``auto`` tries them in that order once per endpoint and model, then keeps what worked (``FormatMemory``).
A format is dropped only on evidence: the refusal names the format, or the same format was refused for
two different prompts before anything worked (one prompt failing again and again is that prompt's
problem); once a format has worked it is never dropped (a later 500 is the server's, not the format's).
A prompt too long for the judge's context is never evidence (call.py checks it first).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from helm.common.response_format import ResponseFormat

from helm_mtsamples_ext.common.choices import STRUCTURED_MODES
from helm_mtsamples_ext.judges.core.format_order import FALLBACK_ORDER as FALLBACK_ORDER
from helm_mtsamples_ext.judges.core.format_order import FORMAT_SUSPECT_STATUS as FORMAT_SUSPECT_STATUS
from helm_mtsamples_ext.judges.core.format_order import names_format

# The schema lives in a HELM-free module for the doors without HELM; named here too, as HELM's path always has.
from helm_mtsamples_ext.judges.core.reply.verdict_schema import VERDICT_SCHEMA as VERDICT_SCHEMA
from helm_mtsamples_ext.judges.core.reply.verdict_schema import verdict_schema


@dataclass(frozen=True)
class JudgeResponseFormat(ResponseFormat):
    """HELM's ResponseFormat plus how to send it; HELM's own clients read only ``json_schema`` and send
    it as ``json_schema``, ours (``endpoints.JudgeEndpointClient``) also honours ``mode="json_object"``."""

    mode: str = "json_schema"


def response_format(mode: str, explanation_cap: int | None = None) -> JudgeResponseFormat | None:
    """The ``Request.response_format`` for a concrete mode (``off`` → None)."""
    if mode == "off":
        return None
    if mode not in FALLBACK_ORDER:
        raise ValueError(f"not a concrete structured-output mode: {mode!r}")
    return JudgeResponseFormat(json_schema=verdict_schema(explanation_cap), mode=mode)


def modes_to_try(setting: str, supported: tuple[str, ...] = FALLBACK_ORDER) -> tuple[str, ...]:
    """The modes a judge goes through, best first: ``auto`` walks the fallback order (skipping modes the
    judge's client cannot send); a fixed setting is used alone."""
    if setting not in STRUCTURED_MODES:
        raise ValueError(f"judge_structured must be one of {STRUCTURED_MODES}, got {setting!r}")
    if setting != "auto":
        return (setting,)
    return tuple(mode for mode in FALLBACK_ORDER if mode in supported or mode == "off")


def json_object_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` body llama.cpp-style servers accept."""
    return {"type": "json_object", "schema": schema}


@dataclass
class FormatMemory:
    """Which response_format one judge (endpoint and model) gets, shared by all its calls; thread-safe."""

    modes: tuple[str, ...]
    index: int = 0
    confirmed: bool = False
    refused_prompts: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _probe: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @property
    def current(self) -> str:
        return self.modes[self.index]

    @contextmanager
    def first_live_call(self) -> Iterator[None]:
        """Until a format has worked, one live call at a time: a whole run's first calls go out together, and a
        server that refuses the format (llama.cpp answers json_schema with a 500) would refuse each of them, a
        wasted call apiece; the first refusal moves the format on for the calls waiting here. Once a format
        has worked, or when no refusal could move the judge on (its last format, e.g. ``off``), calls go in
        parallel."""
        held = False
        if self._discovering():
            self._probe.acquire()
            held = self._discovering()
            if not held:
                self._probe.release()
        try:
            yield
        finally:
            if held:
                self._probe.release()

    def _discovering(self) -> bool:
        return not self.confirmed and self.index + 1 < len(self.modes)

    def worked(self, mode: str) -> None:
        """``mode`` got a reply (live or from HELM's cache): keep it for every later call."""
        with self._lock:
            if mode in self.modes and not self.confirmed:
                self.index, self.confirmed = self.modes.index(mode), True
                self.refused_prompts.clear()

    def refused(self, mode: str, status: int | None, error: str, prompt: str = "") -> bool:
        """The server answered ``status``/``error`` to ``mode`` for ``prompt``: True when the call should be
        made again in the format now current (this refusal was evidence enough, or another call moved on)."""
        if mode == "off" or status not in FORMAT_SUSPECT_STATUS:
            return False
        with self._lock:
            if self.confirmed:
                return False
            if self.current == mode:
                self.refused_prompts.add(hash(prompt))
                if names_format(error) or len(self.refused_prompts) >= 2:
                    if self.index + 1 < len(self.modes):
                        self.index += 1
                        self.refused_prompts.clear()
            return self.current != mode
