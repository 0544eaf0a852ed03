"""One note before a panel of async judges, for the doors without HELM (Inspect, verifiers): the record HELM's
annotator would write for the same answer.

Why one: both doors wrote the same steps (the answer cut as the annotator cuts it, an empty answer judged by
nobody, our fenced judge prompt, every judge asked at once, the failed ones named), and a step changed in one
door and not the other would make the doors' rewards differ. How a judge is asked is the door's (``JudgeOne``);
the reward is scoring's, from the record this returns.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from helm_mtsamples_ext.common.answer import strip_think
from helm_mtsamples_ext.common.answer_cap import judged_answer
from helm_mtsamples_ext.common.outside_text import encodable_text
from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.judges.core.prompt import build_prompt

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
    text = encodable_text(answer)
    cut = judged_answer(strip_think(text) if use_think else text, answer_cap)
    if not cut.text.strip():
        return Judged(NoteRecord.empty(RULES_VERSION), cut.text)
    note = encodable_text(note)
    prompt = build_prompt(note, cut.text, encodable_text(reference), judge_prompt)
    names = list(judges)
    entries = await gather(*(judges[name](prompt, (cut.text, note)) for name in names))
    panel = dict(zip(names, entries, strict=True))
    failed = tuple(name for name, entry in panel.items() if entry.failed)
    return Judged(NoteRecord(panel, failed, answer_cut=cut.cut_from, rules_version=RULES_VERSION), cut.text)
