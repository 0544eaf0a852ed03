"""progress.py: the report's bar shows on a terminal once the report has run a while, never in a log or a pipe,
and never for a short report; it clears itself, and warnings go above it, not through it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from helm_mtsamples_ext.report.progress import STEPS, ReportProgress
from tests.report.reports import run_report
from tests.report.suites import STRONG_RUN, WEAK_RUN, build_suite


class Terminal(io.StringIO):
    """stderr as a terminal: what tqdm writes, kept."""

    def isatty(self) -> bool:
        return True


class Log(io.StringIO):
    def isatty(self) -> bool:
        return False


def _run_steps(stream: io.StringIO, show_after: float) -> str:
    with ReportProgress(stream, show_after=show_after) as progress:
        for name in STEPS:
            progress.step(name)
        progress.say("warning: run skipped, somewhere")
    return stream.getvalue()


def test_on_a_terminal_past_its_delay_the_bar_names_each_step_then_clears_itself() -> None:
    written = _run_steps(Terminal(), show_after=0)
    for done, name in enumerate(STEPS[1:], start=1):
        assert f"helm-mtsamples-report: {name} ({done}/{len(STEPS)} steps done" in written
    assert "warning: run skipped, somewhere\n" in written
    assert written.endswith("\r")  # the last thing written blanks the line: leave=False


@pytest.mark.parametrize(
    ("stream", "show_after"),
    [(Log(), 0), (Terminal(), 3600)],
    ids=["not a terminal", "a report shorter than the delay"],
)
def test_no_bar_in_a_log_or_for_a_short_report(stream: io.StringIO, show_after: float) -> None:
    written = _run_steps(stream, show_after)
    assert "helm-mtsamples-report:" not in written
    assert written == "warning: run skipped, somewhere\n"  # warnings are still said


def test_the_command_writes_no_bar_when_stderr_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    build_suite(tmp_path, [STRONG_RUN, WEAK_RUN])
    assert run_report(tmp_path, tmp_path / "r") == 0
    err = capsys.readouterr().err
    assert "helm-mtsamples-report:" not in err and "\r" not in err
