"""The jury score MedHELM shows (NoteScores.mean_score): every valid 1-5 score pooled, nothing made up."""

from __future__ import annotations

from typing import Any

import pytest

from helm_mtsamples_ext.scoring import score_note


def ok(accuracy: Any, completeness: Any, clarity: Any) -> dict[str, Any]:
    return {
        "accuracy": {"score": accuracy},
        "completeness": {"score": completeness},
        "clarity": {"score": clarity},
        "status": "ok",
    }


FAILED = {"status": "failed", "failure": "call error: timeout"}


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        pytest.param({"A": ok(4, 3, 5), "B": ok(2, 2, 5)}, 21 / 6, id="pooled over judges and dimensions"),
        pytest.param({"A": ok(4, 4, 4), "B": ok(5, None, None)}, 17 / 4, id="pooled, not a mean of judge means"),
        pytest.param({"A": ok(4, 3, 5), "B": FAILED}, 4.0, id="a failed judge counts for nothing"),
        pytest.param({"A": ok(4, 4.5, "4"), "B": ok(9, 0, "N/A")}, 4.0, id="only integer 1-5 counts, no int() of 4.5"),
        pytest.param({"A": ok(4, 4, 5), "B": ok(5, 4, 4)}, 26 / 6, id="not truncated to an int"),
        pytest.param({"A": FAILED, "B": FAILED}, None, id="unjudged: no score, not HELM's 1"),
        pytest.param({"answer": "empty"}, 1.0, id="empty answer: the lowest score, as its reward is 0"),
    ],
)
def test_mean_score_pools_every_valid_score(record: dict[str, Any], expected: float | None) -> None:
    note = score_note({"failed_judges": [], **record}, ["A", "B"])
    if expected is None:
        assert note.mean_score is None
    else:
        assert note.mean_score == pytest.approx(expected)
