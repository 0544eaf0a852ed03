"""How a run's judge calls are made, built from the run entry's arguments (``RunEntryArgs``).

Why built and not defaulted: ``judge_timeout``, ``judge_max_wait``, ``judge_max_concurrency``, ``judge_rpm``
and ``judge_structured`` have their defaults in ``RunEntryArgs`` alone; ``CallSettings.from_args`` carries
them here, with the settings that follow from them (the breaker's cooldown from the timeout). What is not a
run-entry argument (reply tokens, retry pacing, the breaker's threshold) has its default here, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs

MIN_BREAKER_COOLDOWN = 5.0
REPLY_CAP = 64 * 1024
"""Characters of a judge reply beyond which it is a failure ("reply too long"): a verdict is a few hundred. Every
door's cap, and the most of a reply a repair turn sends back."""
STORED_REPLY_CAP = 16 * 1024
"""Characters of a reply over the cap that a record keeps, at every door (the rest is never read)."""


def breaker_cooldown(timeout: float) -> float:
    """How long an open breaker waits before it lets one call through: two of the judge's timeouts (a server
    that timed out three calls in a row gets the time of two more to recover), never under 5 s."""
    return max(MIN_BREAKER_COOLDOWN, 2 * float(timeout))


@dataclass(frozen=True)
class CallSettings:
    """The settings of every judge call of one run (shared by all its judges)."""

    timeout: float  # judge_timeout: one exchange, whole (deadline.py)
    max_wait: float  # judge_max_wait: one call, retries included
    structured: str  # judge_structured
    max_concurrency: int  # judge_max_concurrency, per endpoint
    rpm: float | None  # judge_rpm, per endpoint
    breaker_cooldown: float
    explanation_cap: int | None = None  # explanation_cap: characters per explanation in the verdict schema
    max_tokens: int = 1024
    retry_base: float = 0.5
    timeout_retries: int = 1
    repair_turns: int = 2
    breaker_threshold: int = 3
    repeat_limit: int = 3

    @classmethod
    def from_args(cls, args: RunEntryArgs, **knobs: Any) -> CallSettings:
        """The call settings of a run entry; ``knobs`` set what is not a run-entry argument (max_tokens,
        retry_base, ...: tests and benchmarks turn them)."""
        return cls(
            timeout=args.judge_timeout,
            max_wait=args.judge_max_wait,
            structured=args.judge_structured,
            max_concurrency=args.judge_max_concurrency,
            rpm=args.judge_rpm,
            breaker_cooldown=breaker_cooldown(args.judge_timeout),
            explanation_cap=args.explanation_cap,
            **knobs,
        )
