"""The judging progress bar: notes judged, and a note on endpoints that hold calls back.

Why its own pace: on a terminal it refreshes every second; in a log file (HELM's runs under nohup, Slurm)
every 30 s, not a carriage-return line per second.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from tqdm import tqdm

from helm_mtsamples_ext.judges.fanout import EndpointWait, status_line
from helm_mtsamples_ext.judges.throttle import EndpointGate


def progress_bar(total: int) -> tqdm:
    every = 1.0 if sys.stderr.isatty() else 30.0
    return tqdm(total=total, desc="Judging notes", unit="note", mininterval=every)


def ticker(bar: tqdm | None, gates: Callable[[], dict[str, EndpointGate]]) -> Callable[[], None]:
    """Refreshes the bar's note on endpoints that hold calls back (a 429's wait, a lowered limit)."""

    shown = [0.0]

    def tick() -> None:
        if bar is None:
            return
        now = time.monotonic()
        waits = [
            EndpointWait(endpoint, gate.blocked_until - now, gate.limit, gate.max_concurrency, gate.capacity_source)
            for endpoint, gate in gates().items()
        ]
        due = now - shown[0] >= bar.mininterval
        shown[0] = now if due else shown[0]
        bar.set_postfix_str(status_line(waits), refresh=due)

    return tick
