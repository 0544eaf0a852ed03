"""The shapes a chat completion takes when it holds no text, each a named failure instead of a crash.

Why: providers answer 200 with a completion that has no text to read, and HELM's OpenAI client reads
``choices[0]["message"]["content"]`` as a string. OpenAI's structured-output refusal is ``"content": null``
with a ``refusal``; a tool call is ``null`` content with ``tool_calls``; some servers send ``""``, a list of
content parts, or a choice without ``message`` or ``finish_reason``. Unhandled, ``null`` content crashed the
whole run (every note and judge lost) and, cached by HELM, crashed every re-run with zero server calls.

- ``readable`` is what HELM's cache stores of a completion: ``null`` content as ``""``, content parts joined,
  a missing ``finish_reason`` as ``null``, so HELM's own code reads every stored reply, on every distribution;
  ``refusal`` and ``tool_calls`` are kept, so a replay names the failure as the live call did. A choice
  without a message has nothing to keep: it is not stored (``NoText``), and the next run asks again.
- ``reply_shape`` names a stored reply without text: ``refused: <first words of the refusal>``, ``no text:
  the judge answered with a tool call``, ``empty reply``, ``no message in the reply``. It reads the raw reply,
  so a cache written before this module (``null`` content as sent) is named the same way.
- ``not_a_completion`` names a 200 that is no chat completion at all (an ``error`` object alone, an HTML page, any
  other JSON), in the words of HELM's door; ``completion_failure`` is what every door without HELM asks of a 200.
- ``error_beside`` names a 200 that holds an ``error`` object beside its choices (a gateway or proxy reporting
  a failure of the model behind it): whatever its choices hold is not a verdict to count. It is a named failure
  and is never stored, so the next run asks again.
Pure; no I/O.
"""

from __future__ import annotations

from typing import Any

from helm_mtsamples_ext.common.failure_kinds import (
    API_ROOT,
    EMPTY_REPLY,
    ERROR_BESIDE,
    NO_MESSAGE,
    NO_TEXT,
    NOT_A_COMPLETION,
    REFUSED,
)

REFUSAL_WORDS = 12
"""Words of a refusal kept in its failure line (the rest is the provider's boilerplate)."""


class NoText(Exception):
    """A completion with nothing HELM can read (no message in its choice): a named failure, never stored."""


def _first_choice(response: Any) -> dict[str, Any] | None:
    choices = response.get("choices") if isinstance(response, dict) else None
    return choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None


def _text_of(content: Any) -> str | None:
    """The text of a message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [str(p["text"]) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(parts) if parts else None
    return None


def error_beside(response: Any) -> str | None:
    """The named failure of a completion whose body also holds an ``error`` (its message, first 200 characters)."""
    error = response.get("error") if isinstance(response, dict) else None
    if not error:
        return None
    said = error.get("message") or error.get("type") or error if isinstance(error, dict) else error
    return f"{ERROR_BESIDE}: the judge server answered 200 with an error: {str(said)[:200]}"


def unreadable(response: Any) -> NoText | None:
    """Why a chat completion (it has choices) must not be stored, or None."""
    choice = _first_choice(response)
    if choice is not None and not isinstance(choice.get("message"), dict):
        return NoText(NO_MESSAGE)
    return None


def readable(response: Any) -> Any:
    """``response`` as HELM's cache stores it: every choice's content a string, every choice a finish_reason."""
    if not isinstance(response, dict) or not isinstance(response.get("choices"), list):
        return response
    choices = []
    for choice in response["choices"]:
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            message = dict(choice["message"])
            message["content"] = _text_of(message.get("content")) or ""
            choice = {**choice, "message": message, "finish_reason": choice.get("finish_reason")}
        choices.append(choice)
    return {**response, "choices": choices}


def reply_shape(response: Any) -> str | None:
    """The named failure of a completion whose first choice holds no text, or None when it holds some."""
    choice = _first_choice(response)
    if choice is None:
        return None  # not a completion at all: cache_gate.completion_problem's case
    beside = error_beside(response)
    if beside is not None:
        return beside
    message = choice.get("message")
    if not isinstance(message, dict):
        return NO_MESSAGE
    text = _text_of(message.get("content"))
    if text is not None and text.strip():
        return None
    refusal = message.get("refusal")
    if isinstance(refusal, str) and refusal.strip():
        words = refusal.split()
        said = " ".join(words[:REFUSAL_WORDS]) + (" …" if len(words) > REFUSAL_WORDS else "")
        return f"{REFUSED}: {said[:200]}"
    if message.get("tool_calls") or message.get("function_call"):
        return f"{NO_TEXT}: the judge answered with a tool call"
    return EMPTY_REPLY


NOT_JSON = "the endpoint answered 200 with a body that is not JSON (an HTML page?)"
"""What a 200 whose body no JSON parser reads is (a web UI or proxy page on the chat route)."""


def not_completion_detail(response: Any, scrub: Any = str) -> str | None:
    """Why a 200's parsed body (None: not JSON) is no chat completion, in HELM's door's words, or None when it is
    one (it has a first choice). An ``error`` object's message is quoted, scrubbed, 200 characters at most."""
    if _first_choice(response) is not None:
        return None
    if response is None:
        return NOT_JSON
    error = response.get("error") if isinstance(response, dict) else None
    said = error.get("message", error) if isinstance(error, dict) else error
    detail = f": the body is an error: {scrub(str(said))[:200]}" if said else ""
    return f"the endpoint answered 200 but not with a chat completion{detail}"


def completion_failure(response: Any, scrub: Any = str) -> str | None:
    """The named failure of a judge's 200 (its parsed body; None: not JSON) that holds no text to read, the same at
    every door: not a chat completion, an error beside the reply, a refusal, a tool call, no message, an empty
    reply; None when it holds text."""
    detail = not_completion_detail(response, scrub)
    if detail is not None:
        return f"{NOT_A_COMPLETION}: {detail}; {API_ROOT}"
    shape = reply_shape(response)
    return None if shape is None else scrub(shape)
