"""The model a judge server says it ran: its ``model`` field, ``system_fingerprint`` and the model it loaded.

Why: a hosted judge changes behind a fixed name (``gpt-4o-mini`` today is not last year's weights). The
request names what was asked for; only the reply says what answered. Kept per verdict, a suite judged over
months shows when its verdicts came from more than one model. Servers differ: many send no fingerprint,
some no model, a few send a number or an empty string. Anything that is not a non-empty string is ``None``,
never a crash, so a reply of any shape (live, or replayed from HELM's cache) is read the same way.

A local server echoes whatever name it is asked by (llama.cpp, llama-cpp-python), so ``model`` says nothing
there; the server's own routes do: llama.cpp's ``/props`` has ``model_path``, vLLM's ``/v1/models`` a
``root`` per served name, and a server serving one file without an alias lists the file as its only model.
That ``loaded_model`` is asked once per endpoint (``capacity.probe_server``) and stored with each live reply
under ``LOADED_KEY`` (``cache_gate.py``), so a replay from HELM's cache still says it. Pure; no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

MAX_CHARS = 200
"""Longest value kept: a model name or fingerprint is short; anything longer is a server's junk, cut."""


@dataclass(frozen=True)
class ServedModel:
    """What a judge server reported having run for one reply; ``None`` where it said nothing usable."""

    reported_model: str | None
    system_fingerprint: str | None
    loaded_model: str | None = None


NOT_REPORTED = ServedModel(None, None)
LOADED_KEY = "mtsamples_loaded_model"
"""Where a stored reply keeps the model its server said it loaded: ours, set on every live reply (a value the
server itself sent under this key is overwritten or dropped), so a replay says what the live call learned."""
_FILE_ENDINGS = (".gguf", ".bin", ".safetensors", ".ggml")


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value[:MAX_CHARS] if value else None


def served_model(response: Mapping[str, Any]) -> ServedModel:
    """The ``model`` and ``system_fingerprint`` of an OpenAI-compatible chat completion, of any shape."""
    if not isinstance(response, Mapping):
        return NOT_REPORTED
    return ServedModel(
        _text(response.get("model")), _text(response.get("system_fingerprint")), _text(response.get(LOADED_KEY))
    )


def _is_file(text: str) -> bool:
    return text.startswith(("/", "~", ".")) or "\\" in text or text.lower().endswith(_FILE_ENDINGS)


def _file_name(value: Any) -> str | None:
    """A model path's last part (a local path says nothing past its file name and may name a user's home); a
    hub id (``Qwen/Qwen2.5-7B-Instruct``) whole."""
    text = _text(value)
    if text is None or not _is_file(text):
        return text
    return _text(text.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1])


def loaded_model(props: Any, models: Any, asked: str) -> str | None:
    """The model a server says it loaded for the name ``asked``, from its ``/props`` and ``/v1/models``
    answers (any shape), or None where it does not say: llama.cpp's ``model_path``; vLLM's ``root`` of the
    served name when it differs; the one listed model when it is a file (a server started without an alias)."""
    if isinstance(props, Mapping):
        found = _file_name(props.get("model_path"))
        if found is not None:
            return found
    data = models.get("data") if isinstance(models, Mapping) else None
    listed = [m for m in data if isinstance(m, Mapping)] if isinstance(data, list) else []
    for model in listed:
        root = _text(model.get("root"))
        if model.get("id") == asked and root is not None and root != asked:
            return _file_name(root)
    if len(listed) == 1:
        only = _text(listed[0].get("id"))
        if only is not None and _is_file(only):
            return _file_name(only)
    return None
