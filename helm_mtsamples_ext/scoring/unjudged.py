"""The notes of a run that no judge could score: why, in words, and whether that many fails the run.

HELM's built-in scores an unjudged run as all 1s and exits 0. The metric says plainly what happened instead,
and fails the run past the run entry's ``max_unjudged`` so scripts and CI do not read a half-judged run as a
result. The words live here, pure, so they can be read and tested on records alone; the metric only logs or
raises them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from helm_mtsamples_ext import names
from helm_mtsamples_ext.common.failure_kinds import (
    CONTEXT_FAILURE,
    LARGER_CONTEXT,
    NO_ANNOTATION,
    NO_VALID_DIMENSION,
    failure_kind,
)
from helm_mtsamples_ext.common.record import NoteRecord


def failure_kinds(records: Sequence[object]) -> Counter[str]:
    """How often each judge failed for each kind of reason (its stored kind; an older record's read from its text),
    as "judge: kind"; "no valid dimension" names why its dimensions were invalid (each reason's text before its
    first ':'), so an echoing judge says so."""
    kinds: Counter[str] = Counter()
    for raw in records:
        record = raw if isinstance(raw, NoteRecord) else NoteRecord.from_dict(raw)
        if record is None:
            kinds[NO_ANNOTATION] += 1
            continue
        for name, entry in record.judges.items():
            if record.judge_failed(name):
                kind = record.kind_of_failure(name)
                invalid = sorted({failure_kind(why) for why in entry.invalid.values()})
                if kind == NO_VALID_DIMENSION and invalid:
                    kind += f" ({'; '.join(invalid)})"
                kinds[f"{name}: {kind}"] += 1
    return kinds


def _too_long_for_context(kind: str) -> bool:  # kinds read "judge: reason"
    return kind.partition(": ")[2].startswith(CONTEXT_FAILURE)


@dataclass(frozen=True)
class Unjudged:
    """``unjudged`` of a run's ``notes`` had no reward, and the judges' failures on them by kind (failure_kinds)."""

    unjudged: int
    notes: int
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def too_long(self) -> int:
        """Judge calls whose prompt did not fit the judge's context: no re-run fixes those."""
        return sum(count for kind, count in self.kinds.items() if _too_long_for_context(kind))

    @property
    def fixable(self) -> Counter[str]:
        """The other failures (rate limits, timeouts, bad replies): a re-run may fix them."""
        return Counter({kind: count for kind, count in self.kinds.items() if not _too_long_for_context(kind)})

    def fails_run(self, max_unjudged: float) -> bool:
        return bool(self.notes) and self.unjudged / self.notes > max_unjudged

    def summary(self) -> str:
        """How many notes have no reward and why: the three commonest fixable kinds, then the context failures."""
        reasons = ", ".join(f"{kind} ×{count}" for kind, count in self.fixable.most_common(3))
        context = (
            f"{self.too_long} judge calls had a {CONTEXT_FAILURE}, which no re-run fixes: {LARGER_CONTEXT}"
            if self.too_long
            else ""
        )
        summary = f"{self.unjudged} of {self.notes} notes have no reward: every judge failed on them"
        return summary + f" ({'; '.join(part for part in (reasons, context) if part)})"

    def error(self, max_unjudged: float) -> str:
        """Why the run fails, and the two ways on: re-run (when a re-run can fix something) or accept them."""
        rerun = (
            " Re-running the same command makes only the failed judge calls (the rest replay from HELM's cache);"
            if self.fixable
            else ""
        )
        return f"{self.summary()}; max_unjudged={max_unjudged:g}.{rerun} max_unjudged=1 reports such notes instead."

    def warning(self) -> str:
        """The line for a run within ``max_unjudged``: the notes are reported, and where their reasons are."""
        return f"{self.summary()}; the reasons are in each note's '{names.ANNOTATION_KEY}' annotation"
