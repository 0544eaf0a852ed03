"""common/failure_kinds.py: each kind of failed judgment named once, its advice written once and printed the same
wherever a failure is explained."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.failure_kinds import (
    ADVICE,
    CONTEXT_FAILURE,
    LARGER_CONTEXT,
    NOT_A_COMPLETION,
    advice,
    failure_kind,
)
from helm_mtsamples_ext.judges.outcome import context_failure
from helm_mtsamples_ext.scoring.failure_reasons import reasons_text
from helm_mtsamples_ext.scoring.unjudged import Unjudged, failure_kinds

pytestmark = pytest.mark.helm


@pytest.mark.parametrize(
    ("failure", "kind"),
    [
        ("prompt too long for the judge's context (2301 tokens): give the judge more", CONTEXT_FAILURE),
        ("rate limited (HTTP 429): slow down", "rate limited (HTTP 429)"),
        ("no verdict in reply", "no verdict in reply"),
        ("", "failed"),
    ],
)
def test_a_failures_kind_is_its_text_before_the_colon_without_a_size(failure: str, kind: str) -> None:
    assert failure_kind(failure) == kind


def test_each_kind_has_one_advice() -> None:
    kinds = [kind for kind, _ in ADVICE]
    assert len(kinds) == len(set(kinds))
    assert advice("rate limited (HTTP 429)") == advice("gave up waiting for the endpoint")
    assert advice("a kind nobody knows") is None


def test_the_context_advice_is_the_same_in_the_failure_line_the_end_of_run_and_the_unjudged_summary() -> None:
    """The judges write the failure, scoring counts it twice: all three say the one advice."""
    line = context_failure("This model's maximum context length is 2048 tokens; you requested 2301 tokens")
    assert line == f"{CONTEXT_FAILURE} (2301 tokens): {LARGER_CONTEXT}"
    assert f"1 {CONTEXT_FAILURE} ({LARGER_CONTEXT})" == reasons_text([line])
    summary = Unjudged(1, 1, failure_kinds([{"A": {"status": "failed", "failure": line}}])).summary()
    assert summary.endswith(f"which no re-run fixes: {LARGER_CONTEXT})")
    assert advice(NOT_A_COMPLETION) is not None
