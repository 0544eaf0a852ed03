"""What a note's judge calls leave in its record: a ``JudgeEntry`` per judge, in panel order.

Why apart from the calls: the record is what the metric and the report read, so its rules are kept in one
place: scores only from a verdict that counted (a failed judge counts for nothing, never as a low score),
the reply only when the judge failed, every text masked (``scrub``), the model the server said it ran too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from helm.common.hierarchical_logger import hwarn

from helm_mtsamples_ext.common.panel import JudgeTarget
from helm_mtsamples_ext.common.record import JudgeEntry, NoteRecord
from helm_mtsamples_ext.common.rules import RULES_VERSION
from helm_mtsamples_ext.judges.core.judgment import Judgment
from helm_mtsamples_ext.judges.core.question import panel_record


def judge_entry(judge: JudgeTarget, outcome: Judgment, scrub: Callable[[str], str]) -> JudgeEntry:
    """What the record keeps of a call (``Judgment.entry``, as at every door), with the judge's deployment."""
    return outcome.entry(scrub, model_deployment=judge.model_deployment)


def note_record(
    note_id: str, judges: Sequence[JudgeTarget], outcomes: Sequence[Judgment], scrub: Callable[[str], str]
) -> NoteRecord:
    """The note's record (the empty-answer record when no judge was called), stamped with the rules it is scored
    under; one warning line per failed judge."""
    if not outcomes:
        return NoteRecord.empty(RULES_VERSION)
    entries: dict[str, JudgeEntry] = {}
    for judge, outcome in zip(judges, outcomes, strict=True):
        entries[judge.name] = judge_entry(judge, outcome, scrub)
        if outcome.failure is not None:
            hwarn(f"Judge {judge.name} failed on instance {note_id}: {scrub(outcome.failure)}")
    return panel_record(entries)
