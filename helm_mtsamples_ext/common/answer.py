"""The answer of the model under test as the judges read it: its first completion's text, its reasoning cut off.

Every reader of an answer (the annotator and the metric on HELM's request states, the report and the recheck on
scenario_state.json) takes it from here, so a state's answer is read one way. Pure: text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["answer_text", "first_completion", "reasoning_end", "strip_think"]


def first_completion(completions: Sequence[Any] | None) -> str:
    """The text of the first completion ("" when there is none): HELM's completion objects (``.text``) or the
    mappings scenario_state.json stores (``"text"``)."""
    if not completions:
        return ""
    first = completions[0]
    text = first.get("text") if isinstance(first, Mapping) else getattr(first, "text", None)
    return str(text or "")


_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_LEADING_OPEN = re.compile(r"\s*<think>", re.IGNORECASE)


def reasoning_end(text: str, tags_may_be_quoted: bool = False) -> int:
    """Where a reasoning model's reasoning ends in ``text`` (0 when it has none).

    Only where such a model puts it: a leading ``<think>`` block (to the end of the text if it never closes,
    as when max_tokens cut it), or everything before a first ``</think>`` that has no ``<think>`` before it
    (the chat template wrote the opening tag). The second form is not trusted when ``tags_may_be_quoted``
    (the answer or note holds the tag, so the reply's could be a quote of theirs)."""
    leading = _LEADING_OPEN.match(text)
    if leading:
        close = _THINK_CLOSE.search(text, leading.end())
        return close.end() if close else len(text)
    close = _THINK_CLOSE.search(text)
    opened = _THINK_OPEN.search(text)
    if close and not tags_may_be_quoted and (opened is None or close.start() < opened.start()):
        return close.end()
    return 0


def strip_think(text: str) -> str:
    """``text`` without its leading reasoning (``reasoning_end``), so only the final answer is judged."""
    return text[reasoning_end(text) :].strip()


def answer_text(completions: Sequence[Any] | None, use_think: bool) -> str:
    """The answer the judges read: the first completion, its leading reasoning cut off when ``use_think``."""
    text = first_completion(completions)
    return strip_think(text) if use_think else text
