"""Why judge calls failed, counted and with what to do, where people look: helm-run's end of run, the report's
stdout and the top of report.md.

Why: "judged 2/10" and "80.0%" failures say nothing of the cause, and a key-free first run can fail for several at
once (calls timed out in the queue of a server taking one at a time, prompts too long for its 2048-token context),
each with its own fix. Each failure is recorded with its reason and its kind (``record.py``), a constant of
common/failure_kinds.py, whose advice is written there; a record from before kinds were stored gives the kind its
reason's text begins with, with sizes dropped ("prompt too long for the judge's context (2301 tokens)" counts with
the others). Pure functions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from helm_mtsamples_ext.common.failure_kinds import (
    DRY_RUN,
    LARGER_JUDGE_MODEL,
    NO_ANNOTATION,
    NOT_RUN,
    advice,
    failure_kind,
)
from helm_mtsamples_ext.common.record import NoteRecord

__all__ = [
    "LARGER_JUDGE_MODEL",
    "NO_ANNOTATION",
    "NOT_RUN",
    "advice",
    "failure_kind",
    "panel_lines",
    "reasons_text",
    "record_failure_kinds",
]


def reasons_text(kinds: Iterable[str]) -> str:
    """Each kind with its count, most frequent first, and its advice: "7 timed out (raise judge_timeout, ...);
    3 prompt too long for the judge's context (give the judge a larger context ...)"; empty when none."""
    counts = Counter(kinds)
    parts = []
    for kind, n in counts.most_common():
        what = advice(kind)
        parts.append(f"{n} {kind}" + (f" ({what})" if what else ""))
    return "; ".join(parts)


def record_failure_kinds(records: Iterable[object], panel_size: int = 1) -> list[str]:
    """Every failed judge call's kind in these annotation records (``NoteRecord.kind_of_failure``; a note without
    a record is a failure of each of the panel's ``panel_size`` judges)."""
    kinds: list[str] = []
    for raw in records:
        record = raw if isinstance(raw, NoteRecord) else NoteRecord.from_dict(raw)
        if record is None:
            kinds += [NO_ANNOTATION] * max(1, panel_size)
            continue
        kinds += [record.kind_of_failure(name) for name in record.judges if record.judge_failed(name)]
    return kinds


def panel_line(panel: str, kinds: list[str], calls: int) -> str | None:
    """One panel's line: how many of its calls failed, and why; None when none failed."""
    if not kinds:
        return None
    if all(kind == NOT_RUN for kind in kinds):
        return f"Judge panel {panel}: nothing was judged ({len(kinds)} of {calls} judge calls not made): {DRY_RUN}"
    return f"Judge panel {panel}: {len(kinds)} of {calls} judge calls failed: {reasons_text(kinds)}"


def panel_lines(rows: Iterable[tuple[str, str, str]]) -> list[str]:
    """A line per panel with failed calls, in panel order; ``rows`` are (panel, status, failure kind) per judge
    call as report.py's instances table has them ("empty_answer" rows made no call)."""
    calls: Counter[str] = Counter()
    failures: dict[str, list[str]] = {}
    for panel, status, kind in rows:
        if status == "empty_answer":
            continue
        calls[panel] += 1
        failures.setdefault(panel, [])
        if status == "failed":
            failures[panel].append(str(kind or "failed"))
    lines = (panel_line(panel, failed, calls[panel]) for panel, failed in failures.items())
    return [line for line in lines if line is not None]
