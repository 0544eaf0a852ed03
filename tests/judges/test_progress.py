"""The judging progress bar: its pace in a log file, and the note on endpoints that hold calls back."""

from __future__ import annotations

import io
import time

from helm_mtsamples_ext.judges.progress import progress_bar, ticker
from helm_mtsamples_ext.judges.throttle import EndpointGate


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
        assert bar.postfix == "judge.example at 2/4 calls after 429"


def test_endpoints_that_hold_nothing_back_leave_the_note_empty() -> None:
    with progress_bar(1) as bar:
        bar.fp = io.StringIO()
        ticker(bar, lambda: {"judge.example": EndpointGate(max_concurrency=4)})()
        assert not bar.postfix


def test_without_a_bar_the_ticker_reads_no_gate() -> None:
    def gates() -> dict[str, EndpointGate]:
        raise AssertionError("read the gates with no bar to show them on")

    ticker(None, gates)()
