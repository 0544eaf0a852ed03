"""Why judge calls failed, counted and with what to do, where people look: helm-run's end of run, the report's
stdout and the top of report.md.

Why: "judged 2/10" and "80.0%" failures say nothing of the cause, and a key-free first run can fail for several at
once (calls timed out in the queue of a server taking one at a time, prompts too long for its 2048-token context),
each with its own fix. Each failure is recorded with its reason (``record.py``); the kind is the reason's text
before its first ':', with sizes dropped ("prompt too long for the judge's context (2301 tokens)" counts with the
others), and its advice is common/failure_kinds.py's. Pure functions.
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

__all__ = ["LARGER_JUDGE_MODEL", "NO_ANNOTATION", "NOT_RUN", "advice", "failure_kind", "panel_lines", "reasons_text"]


def reasons_text(failures: Iterable[str]) -> str:
    """Each kind with its count, most frequent first, and its advice: "7 timed out (raise judge_timeout, ...);
    3 prompt too long for the judge's context (give the judge a larger context ...)"; empty when none."""
    counts = Counter(failure_kind(f) for f in failures)
    parts = []
    for kind, n in counts.most_common():
        what = advice(kind)
        parts.append(f"{n} {kind}" + (f" ({what})" if what else ""))
    return "; ".join(parts)


def record_failures(records: Iterable[object], panel_size: int = 1) -> list[str]:
    """Every failed judge call's reason in these annotation records (a note without a record is a failure of
    each of the panel's ``panel_size`` judges)."""
    failures: list[str] = []
    for raw in records:
        record = raw if isinstance(raw, NoteRecord) else NoteRecord.from_dict(raw)
        if record is None:
            failures += [NO_ANNOTATION] * max(1, panel_size)
            continue
        failures += [record.failure_of(name) for name in record.judges if record.judge_failed(name)]
    return failures


def panel_line(panel: str, failures: list[str], calls: int) -> str | None:
    """One panel's line: how many of its calls failed, and why; None when none failed."""
    if not failures:
        return None
    if all(failure_kind(f) == NOT_RUN for f in failures):
        return f"Judge panel {panel}: nothing was judged ({len(failures)} of {calls} judge calls not made): {DRY_RUN}"
    return f"Judge panel {panel}: {len(failures)} of {calls} judge calls failed: {reasons_text(failures)}"


def panel_lines(rows: Iterable[tuple[str, str, str]]) -> list[str]:
    """A line per panel with failed calls, in panel order; ``rows`` are (panel, status, failure) per judge call
    as report.py's instances table has them ("empty_answer" rows made no call)."""
    calls: Counter[str] = Counter()
    failures: dict[str, list[str]] = {}
    for panel, status, failure in rows:
        if status == "empty_answer":
            continue
        calls[panel] += 1
        failures.setdefault(panel, [])
        if status == "failed":
            failures[panel].append(str(failure or "failed"))
    lines = (panel_line(panel, failed, calls[panel]) for panel, failed in failures.items())
    return [line for line in lines if line is not None]
