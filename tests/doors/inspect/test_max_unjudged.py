"""``max_unjudged`` under Inspect decides on every note, never on the notes done so far: Inspect computes the metrics
for its progress display while the eval runs, and a CI run failed an eval whose unjudged note happened to finish
early (1 of 9 done, 11%, over 0.1; 1 of 10 in the end)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, cast

import pytest
from inspect_ai.scorer import SampleScore, Score

from helm_mtsamples_ext.inspect_scorer import EvalSize, max_unjudged_check

pytestmark = pytest.mark.inspect


def share(unjudged: list[bool], size: EvalSize) -> Any:
    scores = [SampleScore(score=Score(value=1.0 if u else 0.0), sample_id=i) for i, u in enumerate(unjudged)]
    compute = cast(Callable[[list[SampleScore]], Any], max_unjudged_check(0.1, size))  # Inspect's Metric is a union
    return compute(scores)


def started(total: int) -> EvalSize:
    size = EvalSize()
    name = asyncio.run(size.start_task(None, [object()] * total, epochs=1))
    assert name == "max_unjudged" and size.total == total
    return size


def test_a_share_over_the_limit_while_notes_are_still_running_is_no_verdict() -> None:
    assert share([True] + [False] * 8, started(10)) == pytest.approx(1 / 9)


def test_the_share_over_every_note_decides() -> None:
    assert share([True] + [False] * 9, started(10)) == pytest.approx(0.1)
    with pytest.raises(RuntimeError, match=r"20% of the notes were judged by no judge \(max_unjudged=0.1\)"):
        share([True, True] + [False] * 8, started(10))


def test_the_size_never_stops_a_sample() -> None:
    size = started(3)
    assert asyncio.run(size.schedule_sample("n1", 1)) is None
    assert asyncio.run(size.complete_task()) == {}
