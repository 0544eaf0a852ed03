"""Where judging stands in the whole suite: run k of n, notes judged, and the judging time left.

Why: ``helm-run`` runs a suite's run specs one after another in one process (HELM's ``Runner.run_all``), and a
bar per run says nothing a user can plan with (the quickstart's five runs took 8 minutes on idle cores and 66 on
busy ones). So the judging line counts the suite's notes, names the run (k of n, read from ``Runner.run_all`` on
the stack, as model_check.py reads ``helm_run``) and estimates the judging time left from this process's own pace
so far, every run's notes taken as many as this run's (``--max-eval-instances`` sets them all). Outside
``helm-run`` (tests, a recheck) the run is 1 of 1.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from types import FrameType

__all__ = ["SuitePosition", "SuiteTally", "format_left", "suite_position", "time_left"]


@dataclass(frozen=True)
class SuitePosition:
    run: int  # 1-based
    runs: int


def suite_position(frame: FrameType | None = None) -> SuitePosition:
    """This run's place among the suite's run specs, read from HELM's ``Runner.run_all`` loop on the stack."""
    try:
        from helm.benchmark.runner import Runner

        run_all = Runner.run_all.__code__
    except Exception:  # pragma: no cover - HELM always has it (helm_compat.REQUIRED_API)
        return SuitePosition(1, 1)
    current: FrameType | None = frame or sys._getframe(1)
    while current is not None:
        if current.f_code is run_all:
            specs, spec = current.f_locals.get("run_specs"), current.f_locals.get("run_spec")
            if isinstance(specs, list) and spec is not None:
                found = next((i for i, s in enumerate(specs) if s is spec), None)
                if found is not None:
                    return SuitePosition(found + 1, len(specs))
        current = current.f_back
    return SuitePosition(1, 1)


def time_left(done: int, seconds: float, remaining: int) -> float | None:
    """Seconds the ``remaining`` notes take at the pace of ``done`` notes in ``seconds``; None before any note."""
    if done <= 0 or remaining < 0:
        return None
    return remaining * seconds / done


def format_left(seconds: float | None) -> str:
    if seconds is None:
        return "time left: after the first note"
    if seconds < 90:
        return f"about {max(seconds, 0):.0f} s of judging left"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min of judging left"
    return f"about {seconds / 3600:.1f} h of judging left"


@dataclass
class SuiteTally:
    """Notes judged and seconds spent judging by the runs before this one, in this process."""

    notes: int = 0
    seconds: float = 0.0
    suite_runs: int = 0  # the suite these counts belong to, by its number of runs (a new helm-run starts over)

    def line(self, position: SuitePosition, run_done: int, run_total: int, run_seconds: float) -> str:
        """What the bar says after its counts: the suite's notes judged and the judging time left."""
        same = self.suite_runs == position.runs and position.run > 1
        before, spent = (self.notes, self.seconds) if same else (0, 0.0)
        suite_total = before + run_total + (position.runs - position.run) * run_total
        done = before + run_done
        left = time_left(done, spent + run_seconds, suite_total - done)
        return f"{done}/{suite_total} notes of the suite judged, {format_left(left)}"

    def finish(self, position: SuitePosition, run_done: int, run_seconds: float) -> None:
        if self.suite_runs != position.runs or position.run == 1:
            self.notes, self.seconds, self.suite_runs = 0, 0.0, position.runs
        self.notes += run_done
        self.seconds += run_seconds


TALLY = SuiteTally()
"""The process's tally: helm-run judges a suite's runs one after another in one process."""
