"""The report's progress bar: which step `helm-mtsamples-report` is on, on stderr, for a report that takes a while.

Why these rules: a report of a few models is done in a few seconds and a bar would only flicker; one of 64
models reads 64 runs and writes a review page of every answer, tens of seconds that look hung without a word.
So the bar shows only once the report has run `SHOW_AFTER` seconds (tqdm's own `delay`: a short report prints
nothing), only on a terminal (stderr a TTY: logs, pipes, cron and the tests get no carriage-return lines), and
it clears itself when the report is done, so the leaderboard printed next stands alone.
"""

from __future__ import annotations

import sys
from typing import TextIO

from tqdm import tqdm

from helm_mtsamples_ext.common.outside_text import terminal

SHOW_AFTER = 3.0
"""Seconds a report runs before its bar shows: "more than a few seconds"."""

STEPS = ("reading the suite", "tables", "CSV tables", "figure", "review page", "report.md")
"""What the report does, in order; cli.py and outputs.py announce each with `ReportProgress.step`."""


class ReportProgress:
    """The steps of one report as a tqdm bar; `step(name)` closes the step before and starts ``name``."""

    def __init__(self, stream: TextIO | None = None, show_after: float = SHOW_AFTER) -> None:
        stream = stream if stream is not None else sys.stderr
        self._stream = stream
        self._bar = tqdm(
            total=len(STEPS),
            file=stream,
            disable=not stream.isatty(),
            delay=show_after,
            leave=False,
            miniters=1,
            mininterval=0,  # six updates in all: each is worth showing
            bar_format="helm-mtsamples-report: {desc} ({n_fmt}/{total_fmt} steps done, {elapsed})",
        )
        self._started = False

    def step(self, name: str) -> None:
        """Start step ``name`` (one of STEPS): the bar moves on, and shows if the report has run long enough."""
        self._bar.set_description_str(name, refresh=False)
        if self._started:
            self._bar.update(1)
        self._started = True

    def say(self, line: str) -> None:
        """A warning or error on stderr, above the bar if it shows (tqdm.write), never through it. Not through
        tqdm.write while the bar is hidden: it would redraw the bar before its delay."""
        bar, line = self._bar, terminal(line)
        if not bar.disable and bar.last_print_t >= bar.start_t + bar.delay:  # shown (tqdm's own test, in close)
            bar.write(line, file=self._stream)
        else:
            print(line, file=self._stream)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> ReportProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
