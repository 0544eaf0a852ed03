"""The rules of failure_reasons.py: each panel's failed judge calls counted by kind, with what to do, on the
report's stdout and at the top of report.md (helm-run's end-of-run line is in test_metric)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.scoring.failure_reasons import (
    advice,
    failure_kind,
    panel_lines,
    reasons_text,
    record_failure_kinds,
)
from tests.report.suites import JUDGES, NOTES, STRONG_RUN, Run, build_suite, failed, ok

TIMEOUT = "timed out: Request timed out."
TOO_LONG = (
    "prompt too long for the judge's context (2301 tokens): give the judge a larger context (vLLM "
    "--max-model-len, llama.cpp --n_ctx) or use a judge with one"
)


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        (TIMEOUT, "timed out"),
        (TOO_LONG, "prompt too long for the judge's context"),
        ("reply too long (99 characters; the cap is 50)", "reply too long"),
        ("reply cut off (max_tokens)", "reply cut off (max_tokens)"),
        ("judge unavailable: timed out: Request timed out.", "judge unavailable"),
    ],
    ids=["timeout", "sizes dropped", "characters dropped", "words kept", "breaker"],
)
def test_a_failures_kind_is_its_text_before_the_first_colon_without_sizes(failure: str, kind: str) -> None:
    assert failure_kind(failure) == kind


def test_kinds_are_counted_most_frequent_first_each_with_its_advice() -> None:
    text = reasons_text(failure_kind(f) for f in [TOO_LONG] * 3 + [TIMEOUT] * 7 + ["HTTP 418: teapot"])
    assert text.startswith("7 timed out (raise judge_timeout")
    assert "; 3 prompt too long for the judge's context (give the judge a larger context (llama.cpp --n_ctx" in text
    assert text.endswith("; 1 HTTP 418"), "no advice invented for a kind nobody knows"


def test_every_kind_the_annotator_records_has_advice() -> None:
    kinds = ["timed out", "judge unavailable", "connection failed", "gave up waiting for the endpoint within x",
             "rate limited (HTTP 429)", "server error repeats", "not a chat completion", "no verdict in reply",
             "no valid dimension (score out of range)", "reply cut off (max_tokens)", "no annotation",
             "same verdict for different answers", "prompt too long for the judge's context",
             "duplicate keys in the verdict", "verdict copied from the answer or note", "error beside the reply",
             "out of memory while reading the verdict"]  # fmt: skip
    assert [k for k in kinds if advice(k) is None] == []


def test_a_note_without_a_record_is_a_failure_of_each_judge_of_the_panel() -> None:
    records = [None, {"a": failed(TIMEOUT), "b": ok(4, 4, 4), "failed_judges": ["a"]}]
    assert record_failure_kinds(records, panel_size=2) == ["no annotation", "no annotation", "timed out"]


def test_a_panel_line_counts_the_calls_made_and_only_panels_with_failures_have_one() -> None:
    rows = [("p", "failed", failure_kind(TIMEOUT)), ("p", "ok", ""), ("p", "empty_answer", ""), ("q", "ok", "")]
    assert panel_lines(rows) == ["Judge panel p: 1 of 2 judge calls failed: 1 timed out (raise judge_timeout, or "
                                 "lower judge_max_concurrency for a server that queues calls)"]  # fmt: skip


def test_the_report_says_why_judges_failed_on_stdout_and_at_the_top_of_report_md(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reasons = [TIMEOUT] * 5 + [TOO_LONG] * 4
    verdicts = {n.filename: {JUDGES[0]: failed(r), JUDGES[1]: ok(3, 3, 3)} for n, r in zip(NOTES, reasons, strict=True)}
    build_suite(tmp_path, [STRONG_RUN, Run("acme/slow", JUDGES, verdicts)])
    assert main(["--suite", "v1", "-o", str(tmp_path), "--out", str(tmp_path / "r"), "--bootstrap", "50"]) == 0
    expected = "9 of 36 judge calls failed: 5 timed out (raise judge_timeout"
    assert expected in capsys.readouterr().out
    top = (tmp_path / "r" / "report.md").read_text().split("## Leaderboard")[0]
    assert expected in top and "4 prompt too long for the judge's context (give the judge a larger context" in top


def test_a_dry_run_is_nothing_judged_not_failed_calls_to_re_run() -> None:
    """helm-run --dry-run asks no model and no judge: its report says nothing was judged and how to judge, never
    "failed ... re-run the same command" (which would only dry-run again)."""
    (line,) = panel_lines([("a", "failed", "not run")] * 10)
    assert line.startswith("Judge panel a: nothing was judged (10 of 10 judge calls not made)")
    assert "without --dry-run" in line and "failed" not in line and "re-run" not in line
    (mixed,) = panel_lines([("a", "failed", "not run"), ("a", "failed", "timed out"), ("a", "ok", "")])
    assert "2 of 3 judge calls failed" in mixed and "1 not run (a dry run" in mixed
