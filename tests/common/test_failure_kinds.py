"""common/failure_kinds.py: each kind of failed judgment named once, its advice written once and printed the same
wherever a failure is explained."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.failure_kinds import (
    ADVICE,
    CONTEXT_FAILURE,
    JUDGE_UNAVAILABLE,
    LARGER_CONTEXT,
    NOT_A_COMPLETION,
    REQUEST_REFUSED,
    advice,
    context_failure,
    failure_kind,
    http_failure,
)
from helm_mtsamples_ext.scoring.failure_reasons import reasons_text
from helm_mtsamples_ext.scoring.unjudged import Unjudged, failure_kinds


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


@pytest.mark.parametrize(
    ("status", "message", "kind"),
    [
        (400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
         CONTEXT_FAILURE),
        (500, "the request exceeds the context window", CONTEXT_FAILURE),
        (400, "response_format is not supported by this server", REQUEST_REFUSED),
        (404, "model 'judge-x' not served", REQUEST_REFUSED),
        (404, "no route for context length", REQUEST_REFUSED),
        (429, "slow down", "rate limited (HTTP 429)"),
        (503, "overloaded", JUDGE_UNAVAILABLE),
        (None, "socket closed", JUDGE_UNAVAILABLE),
    ],
)  # fmt: skip
def test_an_http_error_is_named_alike_at_every_door(status: int | None, message: str, kind: str) -> None:
    """HELM's path, the Inspect door and the verifiers door name a final HTTP error with this one function: a
    context overflow is never a refused request (no re-run fixes it), a 4xx never "judge unavailable", whose advice
    (check the server, re-run) would send the user the wrong way; each kind has its advice."""
    failure = http_failure(status, message)
    assert failure_kind(failure) == kind and advice(kind) is not None
    assert message in failure or kind == CONTEXT_FAILURE
