"""settings.py: a run's call settings are built from its run-entry arguments, the breaker's cooldown included."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs
from helm_mtsamples_ext.judges.core.settings import MIN_BREAKER_COOLDOWN, CallSettings, breaker_cooldown


def test_the_call_settings_carry_the_run_entrys_judging_arguments() -> None:
    args = RunEntryArgs.parse(
        judge_timeout="30", judge_max_wait="300", judge_max_concurrency="4", judge_rpm="60", judge_structured="off"
    )
    settings = CallSettings.from_args(args)
    assert (settings.timeout, settings.max_wait, settings.max_concurrency, settings.rpm, settings.structured) == (
        30.0,
        300.0,
        4,
        60.0,
        "off",
    )


@pytest.mark.parametrize(("timeout", "cooldown"), [(120.0, 240.0), (10.0, 20.0), (1.0, MIN_BREAKER_COOLDOWN)])
def test_an_open_breaker_waits_two_timeouts_and_never_under_five_seconds(timeout: float, cooldown: float) -> None:
    assert breaker_cooldown(timeout) == cooldown
    assert CallSettings.from_args(RunEntryArgs(judge_timeout=timeout)).breaker_cooldown == cooldown


def test_knobs_that_are_no_run_entry_argument_are_set_beside_them() -> None:
    settings = CallSettings.from_args(RunEntryArgs(), max_tokens=64, retry_base=0.0)
    assert (settings.max_tokens, settings.retry_base, settings.timeout) == (64, 0.0, RunEntryArgs().judge_timeout)
