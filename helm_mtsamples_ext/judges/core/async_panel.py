"""One note before a panel of async judges, for the doors without HELM (Inspect, verifiers): the record HELM's
annotator would write for the same answer.

Why one: both doors wrote the same steps (the answer cut as the annotator cuts it, an empty answer judged by
nobody, our fenced judge prompt, every judge asked at once, the failed ones named), and a step changed in one
door and not the other would make the doors' rewards differ. The steps themselves are question.py's, which HELM's
annotator takes too; this adds asking every judge at once. How a judge is asked is the door's (``JudgeOne``);
the reward is scoring's, from the record this returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.judges.core.question import ask_about, panel_record

__all__ = ["JudgeOne", "Judged", "judge_panel"]

JudgeOne = Callable[[str, tuple[str, ...]], Awaitable[JudgeEntry]]
"""A door's judge: the prompt and the texts no verdict may be read from (the cut answer, the note) in, its entry out."""


class Judged(NamedTuple):
    record: NoteRecord
    answer: str
    """The answer as the judges read it (cut at ``answer_cap``, its think block gone with ``use_think``)."""


async def judge_panel(
    answer: str,
    note: str,
    reference: str,
    judges: Mapping[str, JudgeOne],
    *,
    use_think: bool,
    answer_cap: int,
    judge_prompt: str,
    gather: Callable[..., Awaitable[Any]] = asyncio.gather,
) -> Judged:
    """The record of one note: each judge's entry, or the empty answer no judge is asked about. ``gather`` runs
    the judges at once (a door may give its own, e.g. Inspect's ``collect``)."""
    asked = ask_about(answer, note, reference, use_think=use_think, answer_cap=answer_cap, judge_prompt=judge_prompt)
    if asked.question is None:
        return Judged(NoteRecord.empty(RULES_VERSION), asked.answer.text)
    prompt, untrusted = asked.question
    names = list(judges)
    entries = await gather(*(judges[name](prompt, untrusted) for name in names))
    return Judged(panel_record(dict(zip(names, entries, strict=True)), asked.answer.cut_from), asked.answer.text)
