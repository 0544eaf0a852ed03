"""A judge that does not read the answer is not judging (same_verdict.py): one verdict, word for word, given to
three or more different answers in a run is invalid on every one of those notes."""

from __future__ import annotations

from typing import Any

import pytest

from helm_mtsamples_ext.common.record import NoteRecord
from helm_mtsamples_ext.scoring.reward import score_note
from helm_mtsamples_ext.scoring.same_verdict import (
    MIN_ANSWERS,
    SAME_VERDICT,
    same_verdict_judges,
    without_same_verdicts,
)

PARROT = "The plan is reasonable and clearly written."


def entry(score: int = 4, explanation: str = PARROT, status: str = "ok") -> dict[str, Any]:
    dims = {d: {"score": score, "explanation": explanation} for d in ("accuracy", "completeness", "clarity")}
    return {**dims, "status": status}


def note(answer: str, **judges: dict[str, Any]) -> tuple[str, NoteRecord | None]:
    failed = [name for name, e in judges.items() if e["status"] == "failed"]
    return answer, NoteRecord.from_dict({**judges, "failed_judges": failed})


def copied(notes: list[tuple[str, NoteRecord | None]]) -> list[dict[str, int]]:
    return same_verdict_judges(notes)


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        (["re", "albeit", "Answer:"], [{"p": 3}] * 3),
        (["re", "albeit", "Answer:", "re"], [{"p": 3}] * 4),
        (["re", "albeit"], [{}, {}]),
        (["re", "re", "re"], [{}, {}, {}]),
        (["re", "re ", " re"], [{}, {}, {}]),
    ],
    ids=["three-different", "a-repeat-too", "two-different", "identical-answers", "identical-after-strip"],
)
def test_one_verdict_for_three_or_more_different_answers_is_a_copy(
    answers: list[str], expected: list[dict[str, int]]
) -> None:
    """Identical answers may get identical verdicts; only different answers count, and it takes MIN_ANSWERS."""
    assert MIN_ANSWERS == 3
    assert copied([note(a, p=entry()) for a in answers]) == expected


@pytest.mark.parametrize(
    "differs",
    [
        {"score": 3},
        {"explanation": PARROT + " "},
        {"explanation": "The plan is reasonable and clearly written"},
    ],
    ids=["a-score", "a-trailing-space", "a-full-stop"],
)
def test_any_byte_of_difference_is_another_verdict(differs: dict[str, Any]) -> None:
    """Byte-identical scores and explanations: a verdict that differs anywhere is the judge's reading."""
    notes = [note("re", p=entry()), note("albeit", p=entry()), note("Answer:", p=entry(**differs))]
    assert copied(notes) == [{}, {}, {}]


def test_judges_are_told_apart_and_failed_calls_are_not_verdicts() -> None:
    """A reading judge beside a parrot keeps its scores; a failed call says nothing, so it copies nothing."""
    notes = [
        note(answer, p=entry(), r=entry(explanation=f"Judged {answer} on its merits."), f=entry(status="failed"))
        for answer in ("re", "albeit", "Answer:")
    ]
    assert copied(notes) == [{"p": 3}] * 3


def test_empty_answers_and_missing_records_are_left_alone() -> None:
    notes = [note("re", p=entry()), note("albeit", p=entry()), ("", NoteRecord.empty()), ("x", None)]
    assert copied(notes) == [{}, {}, {}, {}]


def test_a_copied_verdict_counts_for_nothing_and_leaves_the_note_unjudged_with_its_own_reason() -> None:
    """The parrot fails on each note with the reason; the note is unjudged unless another judge scored it."""
    notes = [note(a, p=entry(), r=entry(score=2, explanation=f"Judged {a} on its merits.")) for a in ("a", "b", "c")]
    records = without_same_verdicts(notes)
    for record in records:
        assert record is not None and record.judge_failed("p") and not record.judge_failed("r")
        assert (
            record.failure_of("p") == f"{SAME_VERDICT}: the same scores and explanations given to 3 different "
            "answers in this run"
        )
        assert record.judges["p"].explanations["accuracy"] == PARROT, "the reader still sees what the judge wrote"
        scores = score_note(record, ["p", "r"])
        assert (scores.reward, scores.same_verdict, scores.failures) == (pytest.approx(0.4), 1, 1)
    alone = without_same_verdicts([note(a, p=entry()) for a in ("a", "b", "c")])
    assert all(score_note(r, ["p"]).unjudged for r in alone)


def test_records_without_copies_are_returned_as_they_were() -> None:
    notes = [note("re", p=entry()), note("albeit", p=entry())]
    assert without_same_verdicts(notes) == [record for _, record in notes]
