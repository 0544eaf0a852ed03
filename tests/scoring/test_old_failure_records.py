"""A record without ``failure_kind`` (an older suite's) reads as before: the same failure kinds, counts, reasons
and report rows as the prefix reader gave; a record with one is read by its stored kind."""

from __future__ import annotations

from collections import Counter
from typing import Any

from helm_mtsamples_ext.common.failure_kinds import GAVE_UP_WAITING, REPLY_CUT_OFF, SERVER_ERROR, failure_kind, kind_of
from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.report.rows import judge_rows
from helm_mtsamples_ext.scoring.failure_reasons import panel_lines, reasons_text, record_failure_kinds
from helm_mtsamples_ext.scoring.reward import score_note
from helm_mtsamples_ext.scoring.unjudged import failure_kinds

OLD_FAILURES = [
    "timed out: Request timed out.",
    "timed out: Request timed out.",
    "rate limited (HTTP 429): slow down",
    "reply cut off (max_tokens)",
    "reply cut off (content filter): blocked",
    "HTTP 500: boom",
    "gave up waiting for the endpoint within judge_max_wait: HTTP 503: busy",
    "prompt too long for the judge's context (2301 tokens): give the judge a larger context",
    "judge batch expired, request unanswered (no direct call: judge_batch_fallback=false)",
    "same verdict for different answers: the same scores and explanations given to 2 different answers",
]
"""Failures as releases before ``failure_kind`` wrote them, some in words no writer uses now."""


def _entry(failure: str, kind: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {"status": "failed", "failure": failure}
    return entry if kind is None else {**entry, "failure_kind": kind}


def _records(stored: bool = False) -> list[dict[str, Any]]:
    """One note per failure, judge "a" failed with it and "b" scored; ``stored``: with today's kinds beside."""
    ok = {dim: {"score": 4, "explanation": "fine"} for dim in ("accuracy", "completeness", "clarity")}
    return [{"a": _entry(f, kind_of(f) if stored else None), "b": ok, "failed_judges": ["a"]} for f in OLD_FAILURES] + [
        {"a": {"status": "failed"}, "b": ok, "failed_judges": ["a"]}
    ]


def test_an_older_records_failure_kinds_are_the_prefix_readers() -> None:
    records = _records()
    parsed = [NoteRecord.from_dict(r) for r in records]
    before = [failure_kind(p.failure_of("a")) for p in parsed if p is not None]  # the reader of then
    assert record_failure_kinds(records, panel_size=2) == before
    assert before[2:7] == [
        "rate limited (HTTP 429)",
        "reply cut off (max_tokens)",
        "reply cut off (content filter)",
        "HTTP 500",
        "gave up waiting for the endpoint within judge_max_wait",
    ]


def test_an_older_records_reasons_and_unjudged_counts_read_as_before() -> None:
    records = _records()
    assert reasons_text(record_failure_kinds(records)) == (
        "2 timed out (raise judge_timeout, or lower judge_max_concurrency for a server that queues calls); "
        "1 rate limited (HTTP 429) (raise judge_max_wait, or set judge_rpm to the endpoint's limit); "
        "1 reply cut off (max_tokens) (a judge this small does not follow the verdict format: use a larger judge "
        "model); 1 reply cut off (content filter) (a judge this small does not follow the verdict format: use a "
        "larger judge model); 1 HTTP 500; 1 gave up waiting for the endpoint within judge_max_wait (raise "
        "judge_max_wait, or set judge_rpm to the endpoint's limit); 1 prompt too long for the judge's context (give "
        "the judge a larger context (llama.cpp --n_ctx 8192, vLLM --max-model-len) or use a judge with one); "
        "1 judge batch expired, request unanswered (no direct call; 1 same verdict for different answers (a judge "
        "not reading the answer: use a larger judge model); 1 marked failed"
    )
    assert failure_kinds(records) == Counter({f"a: {failure_kind(f)}": n for f, n in Counter(OLD_FAILURES).items()}) + (
        Counter({"a: marked failed": 1})
    )
    assert sum(score_note(r, ["a", "b"]).same_verdict for r in records) == 1


def test_an_older_records_report_rows_and_panel_line_read_as_before() -> None:
    """rows.judge_rows gives the kind the report compares; for an older record it is the prefix reader's, so the
    panel's line is the one a table without the column (the report before kinds were stored) gives."""
    rows = [row for record in _records() for row in judge_rows(record, ["a", "b"])]
    assert [r["failure_kind"] for r in rows] == [failure_kind(r["failure"]) if r["failure"] else "" for r in rows]
    stored = panel_lines(("p", r["status"], r["failure_kind"]) for r in rows)
    assert stored == panel_lines(("p", r["status"], failure_kind(str(r["failure"] or "failed"))) for r in rows)
    assert stored[0].startswith("Judge panel p: 11 of 22 judge calls failed: 2 timed out (raise judge_timeout")


def test_a_record_with_stored_kinds_is_read_by_them_not_by_its_text() -> None:
    kinds = record_failure_kinds(_records(stored=True))
    assert kinds[2:7] == ["rate limited", REPLY_CUT_OFF, REPLY_CUT_OFF, SERVER_ERROR, GAVE_UP_WAITING]
    rows = [row for record in _records(stored=True) for row in judge_rows(record, ["a"])]
    assert [r["failure_kind"] for r in rows] == kinds
    assert sum(score_note(r, ["a", "b"]).same_verdict for r in _records(stored=True)) == 1
