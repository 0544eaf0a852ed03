"""What one judgment tells its judge's breaker: the rule of HELM's path (attempts.py), for the doors that call
judges without HELM (judges/openai_calls/attempts.py for the verifiers environment, judges/inspect_calls/judge.py for
Inspect).

Why one place: whether a fault means a dead judge decides which later notes fail at once, and the doors must
agree on it. No reply (a timeout, a lost connection) counts, but a timeout while the judge answered other calls
since this judgment began is its load and never counts; server errors count only when the judgment ends in them;
any HTTP answer (a 4xx, a 429) shows the judge alive. A call that told nothing (a retried server error, a
cancelled one) lets another call be the probe, its own retry included.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from helm_mtsamples_ext.common.failure_kinds import JUDGE_UNAVAILABLE
from helm_mtsamples_ext.judges.core.settings import CallSettings, breaker_cooldown
from helm_mtsamples_ext.judges.core.throttle import Breaker


def judge_breaker(timeout: float, clock: Callable[[], float] = time.monotonic) -> Breaker:
    """A judge's breaker as HELM's path builds it from ``judge_timeout`` (CallSettings, settings.breaker_cooldown)."""
    return Breaker(CallSettings.breaker_threshold, breaker_cooldown(timeout), clock)


@dataclass
class JudgeHealth:
    """One judgment's messenger to its judge's breaker (None: no breaker, every call goes)."""

    breaker: Breaker | None
    prompt: str | None = None
    answers_before: int = field(init=False)
    refused: str | None = field(default=None, init=False)  # the failure an open breaker gave this judgment

    def __post_init__(self) -> None:
        self.answers_before = self.breaker.answers if self.breaker else 0

    def admit(self) -> str | None:
        """None when the call may go; else the failure of a judge whose breaker is open."""
        if self.breaker is None:
            return None
        admitted, last_error = self.breaker.admit()
        if not admitted:
            self.refused = f"{JUDGE_UNAVAILABLE}: {last_error}"
        return None if admitted else self.refused

    def answered(self) -> None:
        if self.breaker is not None:
            self.breaker.answered()

    def released(self) -> None:
        if self.breaker is not None:
            self.breaker.released()

    def told(self, kind: str, failure: str) -> None:
        """A fault of ``kind`` (``timeout``, ``connection``, ``rate_limited``, ``server`` or ``final``)."""
        if self.breaker is None:
            return
        if kind == "connection" or (kind == "timeout" and self.breaker.answers <= self.answers_before):
            self.breaker.unanswered(failure[:200], self.prompt)
        elif kind in ("timeout", "server"):
            self.breaker.released()
        else:
            self.breaker.answered()

    def ended(self, failure: str) -> None:
        """The judgment ended in server errors: the judge counts as unanswered."""
        if self.breaker is not None:
            self.breaker.unanswered(failure[:200], self.prompt)


__all__ = ["JudgeHealth", "judge_breaker"]
