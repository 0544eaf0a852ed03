"""A report killed (kill -9) or failing while it writes leaves the previous report as it was, every file of it.

The kill is deterministic: HELM_MTSAMPLES_REPORT_PAUSE makes the report say the step it reached into a FIFO and
stop itself (SIGSTOP); the test reads that line and kills it. No sleep, no timing."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helm_mtsamples_ext.report import outputs
from tests.report.reports import BOOT, run_report
from tests.report.suites import STRONG_RUN, WEAK_RUN, build_suite

ROOT = Path(__file__).resolve().parents[2]


def snapshot(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir())}


def previous_report(tmp_path: Path) -> tuple[Path, Path, dict[str, bytes]]:
    """A suite of one model and its report; then a second model joins the suite, so a new report differs."""
    output = tmp_path / "bench"
    build_suite(output, [STRONG_RUN])
    out = tmp_path / "report"
    assert run_report(output, out) == 0
    before = snapshot(out)
    build_suite(output, [WEAK_RUN])
    return output, out, before


@pytest.mark.parametrize("step", ["figure", "report.md", "written"])
def test_kill_9_during_the_report_leaves_the_previous_one(tmp_path: Path, step: str) -> None:
    output, out, before = previous_report(tmp_path)
    fifo = tmp_path / "pause"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR)  # never blocks, and the report's open for writing does not either
    env = {**os.environ, "PYTHONPATH": str(ROOT), outputs.PAUSE_ENV: f"{step}:{fifo}"}
    args = ["--suite", "v1", "-o", str(output), "--out", str(out), *BOOT]
    report = subprocess.Popen(
        [sys.executable, "-m", "helm_mtsamples_ext.report", *args], env=env, stdout=subprocess.DEVNULL
    )
    try:
        ready, _, _ = select.select([reader], [], [], 300)  # a bound, not a synchronisation: the line comes first
        assert ready, "the report never reached its pause"
        assert os.read(reader, 100).decode().strip() == step
        report.send_signal(signal.SIGKILL)
        assert report.wait() == -signal.SIGKILL  # killed at the pause, not ended by itself
    finally:
        report.kill()
        os.close(reader)
    assert snapshot(out) == before  # every file, byte for byte; no new CSV beside the old report.md
    assert run_report(output, out) == 0  # the next report succeeds and clears the killed one's leftovers
    after = snapshot(out)
    assert after["leaderboard.csv"] != before["leaderboard.csv"] and set(after) == set(before)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".report")) == []


def test_a_report_failing_midway_leaves_the_previous_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output, out, before = previous_report(tmp_path)

    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(outputs, "write_review", broken)
    with pytest.raises(OSError, match="disk full"):
        run_report(output, out)
    assert snapshot(out) == before
