"""One judge reply read into a verdict or a named failure, and into the record's entry: the rules every front
door shares.

Why here and pure: HELM's annotator, an Inspect scorer and a verifiers rubric each get a judge's reply their
own way, but what the reply counts for must be the same in all three (the same verdict, the same failure, the
same reward), so the reading is written once. A reply cut at ``max_tokens`` or by a content filter is a
failure, never read; a reply without a verdict that counts is a failure that a repair turn may fix. No I/O, no
HELM.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from helm_mtsamples_ext.common.failure_kinds import (
    NO_VALID_DIMENSION,
    NO_VERDICT,
    OUT_OF_MEMORY,
    REPLY_CUT_OFF,
    kind_of,
)
from helm_mtsamples_ext.common.record import FAILED, OK, JudgeEntry
from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.judges.core.reply.verdict import Verdict, parse_verdict

CUT_OFF = {"length": "max_tokens", "content_filter": "content filter", "content_policy_violated": "content filter"}
"""The finish reasons that cut a reply short, and what cut it."""


@dataclass(frozen=True)
class Reading:
    """What one reply counts for: a verdict (None when there is none), the failure (None when the verdict
    counts), and whether another turn could help (a repair turn asks for the JSON object alone; a reply cut at
    ``max_tokens`` gets more tokens; a content filter or running out of memory would do the same again)."""

    verdict: Verdict | None
    failure: str | None
    retry: bool = False
    more_tokens: bool = False


def read_reply(text: str, finish: str | None, untrusted: Sequence[str] = ()) -> Reading:
    """The judge's reply ``text`` (its ``finish_reason``), with ``untrusted`` the prompt's texts a verdict is
    never read from (the candidate answer, the note)."""
    if finish in CUT_OFF:
        filtered = CUT_OFF[finish] == "content filter"
        return Reading(None, f"{REPLY_CUT_OFF} ({CUT_OFF[finish]})", retry=not filtered, more_tokens=not filtered)
    try:
        verdict = parse_verdict(text, untrusted)
    except MemoryError:  # not "no verdict": the reply may hold a valid one, and a repair turn would not help
        return Reading(None, OUT_OF_MEMORY)
    if verdict is not None and verdict.has_valid_dimension:
        return Reading(verdict, None)
    return Reading(verdict, NO_VERDICT if verdict is None else verdict.failure or NO_VALID_DIMENSION, retry=True)


def entry_of(
    verdict: Verdict | None,
    failure: str | None,
    raw_reply: str | None,
    scrub: Callable[[str], str] = str,
    **extra: object,
) -> JudgeEntry:
    """What the record keeps of one judge's call: scores only from a verdict that counted (a failed judge counts
    for nothing, never as a low score); the reply only when it failed; every text through ``scrub``; the failure's
    kind beside its text (``failure_kinds.kind_of``: every door's entries are written here, so each stores one).
    ``extra`` are the entry's other fields (tokens, the model the server ran, ...), as the door knows them."""
    failed = failure is not None
    dimensions = {dim: verdict.dimensions[dim] for dim in DIMENSIONS} if verdict is not None else {}
    return JudgeEntry(
        scores={dim: None if failed else d.score for dim, d in dimensions.items()},
        explanations={dim: scrub(d.explanation) for dim, d in dimensions.items()},
        status=FAILED if failed else OK,
        failure=scrub(failure) if failure is not None else None,
        failure_kind=kind_of(failure) if failure is not None else None,
        invalid={dim: scrub(why) for dim, why in verdict.invalid.items()} if verdict is not None else {},
        raw_reply=scrub(raw_reply) if failed and raw_reply is not None else None,
        **extra,  # type: ignore[arg-type]
    )


__all__ = ["CUT_OFF", "Reading", "entry_of", "read_reply"]
