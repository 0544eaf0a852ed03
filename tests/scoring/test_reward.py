"""The reward arithmetic: any record scores in range, and the jury score MedHELM shows (NoteScores.mean_score)
pools every valid 1-5 score, nothing made up."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helm_mtsamples_ext.scoring.reward import score_note


def ok(accuracy: Any, completeness: Any, clarity: Any) -> dict[str, Any]:
    return {
        "accuracy": {"score": accuracy},
        "completeness": {"score": completeness},
        "clarity": {"score": clarity},
        "status": "ok",
    }


FAILED = {"status": "failed", "failure": "call error: timeout"}

scores = st.one_of(st.none(), st.integers(-2, 8), st.floats(allow_nan=True), st.text(max_size=4), st.booleans())
judge_entries = st.one_of(
    st.builds(ok, scores, scores, scores),
    st.just(FAILED),
    st.dictionaries(st.text(max_size=5), scores, max_size=3),
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["A", "B", "C", "failed_judges", "answer", "z"]), judge_entries, max_size=5))
def test_any_record_gives_a_reward_in_range_or_none_and_consistent_counts(record: dict[str, Any]) -> None:
    """Whatever the record holds, reward is in [0,1] or absent exactly when unjudged; failures <= panel."""
    note = score_note(record, ["A", "B", "C"])
    assert (note.reward is None) == note.unjudged
    assert note.reward is None or 0.0 <= note.reward <= 1.0
    assert 0 <= note.failures <= 3


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
