"""The judging progress line: its pace in a log file, the suite's run k of n, notes and time left, the judges by
name, the note on endpoints that hold calls back, and a bar TQDM_DISABLE turned off."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest
from helm.benchmark.runner import Runner

from helm_mtsamples_ext.judges.core.throttle import EndpointGate
from helm_mtsamples_ext.judges.helm_calls.progress import progress_bar, ticker
from helm_mtsamples_ext.judges.helm_calls.suite_progress import (
    SuitePosition,
    SuiteTally,
    format_left,
    suite_position,
    time_left,
)

pytestmark = pytest.mark.helm


def test_in_a_log_file_the_bar_refreshes_every_30_seconds_not_every_second() -> None:
    # pytest captures stderr, so it is not a terminal here, as under nohup or Slurm
    with progress_bar(5) as bar:
        assert bar.mininterval == 30.0
        assert bar.total == 5


def test_the_note_names_an_endpoint_that_asked_to_wait() -> None:
    gate = EndpointGate(max_concurrency=4)
    gate.blocked_until = time.monotonic() + 42
    with progress_bar(1) as bar:
        bar.fp = io.StringIO()
        ticker(bar, lambda: {"judge.example": gate})()
        assert "judge.example asked to wait" in bar.postfix


def test_the_note_names_an_endpoint_whose_limit_was_lowered_by_a_429() -> None:
    gate = EndpointGate(max_concurrency=4)
    gate.limit = 2
    with progress_bar(1) as bar:
        bar.fp = io.StringIO()
        ticker(bar, lambda: {"judge.example": gate})()
        assert bar.postfix.endswith("; judge.example at 2/4 calls after 429")


def test_the_note_says_when_calls_timing_out_in_the_servers_queue_lowered_the_limit_not_a_429() -> None:
    gate = EndpointGate(max_concurrency=4)
    gate.overloaded(gate.generation)
    with progress_bar(1) as bar:
        bar.fp = io.StringIO()
        ticker(bar, lambda: {"judge.example": gate})()
        assert bar.postfix.endswith("; judge.example at 2/4 calls after calls timed out in its queue")


def test_endpoints_that_hold_nothing_back_leave_the_note_empty() -> None:
    with progress_bar(1) as bar:
        bar.fp = io.StringIO()
        ticker(bar, lambda: {"judge.example": EndpointGate(max_concurrency=4)})()
        assert "judge.example" not in bar.postfix


def test_without_a_bar_the_ticker_reads_no_gate() -> None:
    def gates() -> dict[str, EndpointGate]:
        raise AssertionError("read the gates with no bar to show them on")

    ticker(None, gates)()


def test_the_line_names_the_run_of_the_suite_and_the_judges() -> None:
    with progress_bar(10, "smollm2-135m", SuitePosition(2, 5), SuiteTally()) as bar:
        bar.fp = io.StringIO()
        bar.update(3)
        ticker(bar, dict)()
        assert str(bar).startswith("Judging run 2 of 5 (smollm2-135m): 3/10 notes of this run, 3/")


def test_the_suite_counts_and_time_left_carry_over_from_the_runs_before() -> None:
    """Run 1 judged 10 notes in 100 s; run 2 of 3 has judged 5 of its 10 in 50 s: 15 of 30 done at 10 s a note."""
    tally = SuiteTally()
    tally.finish(SuitePosition(1, 3), 10, 100.0)
    line = tally.line(SuitePosition(2, 3), 5, 10, 50.0)
    assert line == "15/30 notes of the suite judged, about 2 min of judging left"  # 15 notes x 10 s = 150 s
    tally.finish(SuitePosition(2, 3), 10, 100.0)
    assert tally.line(SuitePosition(3, 3), 0, 10, 0.0) == "20/30 notes of the suite judged, about 2 min of judging left"
    # a new suite in the same process (run 1 again) starts over
    assert (
        tally.line(SuitePosition(1, 3), 0, 10, 0.0) == "0/30 notes of the suite judged, time left: after the first note"
    )


def test_time_left_is_the_pace_so_far_times_the_notes_to_go() -> None:
    assert time_left(0, 0.0, 10) is None
    assert time_left(4, 20.0, 6) == 30.0
    assert format_left(30.0) == "about 30 s of judging left"
    assert format_left(600.0) == "about 10 min of judging left"
    assert format_left(3 * 3600.0) == "about 3.0 h of judging left"


def test_the_run_k_of_n_is_read_from_helms_runner() -> None:
    """HELM's own Runner.run_all loop, with a stand-in runner: each run sees its place among the run specs."""
    seen: list[SuitePosition] = []

    class Runs:
        exit_on_error = True

        def run_one(self, run_spec: object) -> None:
            seen.append(suite_position())

    Runner.run_all(Runs(), [SimpleNamespace(name=f"run{i}") for i in range(3)])  # type: ignore[arg-type, misc]
    assert seen == [SuitePosition(1, 3), SuitePosition(2, 3), SuitePosition(3, 3)]
    assert suite_position() == SuitePosition(1, 1)  # outside helm-run


def test_with_tqdm_disabled_the_bar_and_its_ticker_do_nothing_and_do_not_fail() -> None:
    """TQDM_DISABLE=1 (read by tqdm when it is imported, so in a process of its own) left the bar without its
    settings, and the ticker's read of them failed every run; the suite's count goes on without a bar."""
    script = (
        "from helm_mtsamples_ext.judges.helm_calls.progress import progress_bar, ticker\n"
        "from helm_mtsamples_ext.judges.helm_calls.suite_progress import SuitePosition, SuiteTally\n"
        "from helm_mtsamples_ext.judges.core.throttle import EndpointGate\n"
        "tally = SuiteTally()\n"
        "with progress_bar(2, 'a', SuitePosition(1, 2), tally) as bar:\n"
        "    ticker(bar, lambda: {'judge.example': EndpointGate(max_concurrency=4)})()\n"
        "    bar.update(2)\n"
        "print(bar.disable, tally.notes)\n"
    )
    env = {**os.environ, "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "2"] and "Judging" not in done.stderr


def test_an_endpoint_is_named_by_its_judges_not_its_deployment() -> None:
    gate = EndpointGate(max_concurrency=4)
    gate.limit = 2
    with progress_bar(1, "smollm2-135m", SuitePosition(1, 1), SuiteTally()) as bar:
        bar.fp = io.StringIO()
        ticker(bar, lambda: {"mtsjudge-3ef139a5": gate}, {"mtsjudge-3ef139a5": "smollm2-135m"})()
        assert "smollm2-135m at 2/4 calls" in bar.postfix and "mtsjudge" not in bar.postfix


def test_the_suite_count_moves_with_each_note_not_only_at_a_tick() -> None:
    with progress_bar(2, "a", SuitePosition(2, 2), SuiteTally(notes=2, seconds=4.0, suite_runs=2)) as bar:
        bar.fp = io.StringIO()
        bar.update(2)
        assert bar.postfix.startswith("4/4 notes of the suite judged")
