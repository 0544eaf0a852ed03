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
from helm_mtsamples_ext.judges.core.question import panel_record
from helm_mtsamples_ext.judges.core.reply.reading import entry_of
from helm_mtsamples_ext.judges.helm_calls.call import CallOutcome


def judge_entry(judge: JudgeTarget, outcome: CallOutcome, scrub: Callable[[str], str]) -> JudgeEntry:
    """What the record keeps of a call (reply/reading.py's ``entry_of``), with what the call path knows beside."""
    return entry_of(
        outcome.verdict,
        outcome.failure,
        outcome.raw_reply,
        scrub,
        tokens=outcome.tokens,
        structured=outcome.structured,
        model_deployment=judge.model_deployment,
        tokens_in=outcome.tokens_in,
        tokens_out=outcome.tokens_out,
        reported_model=_scrubbed(outcome.served.reported_model, scrub),
        system_fingerprint=_scrubbed(outcome.served.system_fingerprint, scrub),
        loaded_model=_scrubbed(outcome.served.loaded_model, scrub),
    )


def _scrubbed(text: str | None, scrub: Callable[[str], str]) -> str | None:
    return None if text is None else scrub(text)


def note_record(
    note_id: str, judges: Sequence[JudgeTarget], outcomes: Sequence[CallOutcome], scrub: Callable[[str], str]
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
