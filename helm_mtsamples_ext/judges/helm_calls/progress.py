"""The judging progress line: run k of n of the suite, by the judges' names, notes judged, judging time left, and
a note on endpoints that hold calls back.

Why its own pace: on a terminal it refreshes every second; in a log file (HELM's runs under nohup, Slurm)
every 30 s, not a carriage-return line per second. Why it copes with a disabled bar: ``TQDM_DISABLE=1`` in the
environment makes tqdm skip setting up the bar (no ``mininterval``, no output), and judging must go on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from tqdm import tqdm

from helm_mtsamples_ext.judges.core.throttle import EndpointGate
from helm_mtsamples_ext.judges.helm_calls.fanout import EndpointWait, status_line
from helm_mtsamples_ext.judges.helm_calls.suite_progress import TALLY, SuitePosition, SuiteTally

FORMAT = "{desc}: {n_fmt}/{total_fmt} notes of this run{postfix} [{elapsed}]"


class JudgingBar(tqdm):
    """tqdm's bar, knowing its place in the suite (``position``), its judges and when it started."""

    position: SuitePosition
    started: float
    tally: SuiteTally
    judged: int = 0  # counted here too: a disabled bar (TQDM_DISABLE) counts nothing
    status: str = ""  # the endpoints holding calls back, as the ticker last saw them

    def update(self, n: float | None = 1) -> bool | None:
        self.judged += int(n or 0)
        if not self.disable:  # the suite's count moves with the run's, never a note behind
            self.set_postfix_str(self.postfix_line(), refresh=False)
        return super().update(n)

    def postfix_line(self) -> str:
        return "; ".join(part for part in (self.suite_line(), self.status) if part)

    def suite_line(self) -> str:
        return self.tally.line(self.position, self.judged, int(self.total or 0), time.monotonic() - self.started)

    def close(self) -> None:
        if not getattr(self, "_finished", False):
            self._finished = True
            self.tally.finish(self.position, self.judged, time.monotonic() - self.started)
        super().close()


def progress_bar(
    total: int, judges: str = "", position: SuitePosition | None = None, tally: SuiteTally | None = None
) -> JudgingBar:
    """The judging bar of one run: ``judges`` by their names, ``position`` its run in the suite (1 of 1 unless
    given), ``tally`` the suite's runs before it (the process's own unless given)."""
    every = 1.0 if sys.stderr.isatty() else 30.0
    position = position or SuitePosition(1, 1)
    tally = tally if tally is not None else TALLY
    named = f" ({judges})" if judges else ""
    bar = JudgingBar(
        total=total,
        desc=f"Judging run {position.run} of {position.runs}{named}",
        unit="note",
        mininterval=every,
        bar_format=FORMAT,
        postfix=tally.line(position, 0, total, 0.0),
    )
    bar.position, bar.started, bar.tally = position, time.monotonic(), tally
    return bar


def ticker(
    bar: tqdm | None, gates: Callable[[], dict[str, EndpointGate]], names: dict[str, str] | None = None
) -> Callable[[], None]:
    """Refreshes the bar's note: the suite's notes and time left, and endpoints that hold calls back (a 429's
    wait, a lowered limit), each by ``names`` (its judges' names) where given, not its internal deployment name.
    Nothing to do for a disabled bar (TQDM_DISABLE) or none."""
    names = names or {}

    shown = [0.0]

    def tick() -> None:
        if bar is None or bar.disable:
            return
        now = time.monotonic()
        waits = [
            EndpointWait(
                names.get(endpoint, endpoint),
                gate.blocked_until - now,
                gate.limit,
                gate.max_concurrency,
                gate.capacity_source,
                overloaded=gate.overloads > 0 and not gate.rate_limited,  # no 429 lowered it: timeouts did
            )
            for endpoint, gate in gates().items()
        ]
        due = now - shown[0] >= bar.mininterval
        shown[0] = now if due else shown[0]
        if isinstance(bar, JudgingBar):
            bar.status = status_line(waits)
            bar.set_postfix_str(bar.postfix_line(), refresh=due)
        else:
            bar.set_postfix_str(status_line(waits), refresh=due)

    return tick
