"""An answer longer than ``answer_cap`` is judged on its first ``answer_cap`` characters and recorded as cut."""

from __future__ import annotations

import pytest

from helm_mtsamples_ext.common.answer_cap import CutAnswer, judged_answer
from helm_mtsamples_ext.common.record import ANSWER_CUT, NoteRecord
from helm_mtsamples_ext.common.run_entry_args import RunEntryArgs

pytestmark = pytest.mark.helm


@pytest.mark.parametrize(
    ("answer", "cap", "expected"),
    [
        ("abc", 3, CutAnswer("abc")),
        ("abcd", 3, CutAnswer("abc", 4)),
        ("", 3, CutAnswer("")),
        ("x" * 10_000_000, 20_000, CutAnswer("x" * 20_000, 10_000_000)),
    ],
    ids=["at-the-cap", "over-it", "empty", "10-MB"],
)
def test_an_answer_over_the_cap_is_cut_and_says_how_long_it_was(answer: str, cap: int, expected: CutAnswer) -> None:
    assert judged_answer(answer, cap) == expected


def test_the_cap_is_a_run_entry_argument_named_in_the_run_when_set() -> None:
    assert RunEntryArgs().answer_cap == 20_000
    args = RunEntryArgs.parse(answer_cap="5000")
    assert args.answer_cap == 5000
    assert args.non_default() == {"answer_cap": "5000"}
    assert args.annotator_args()["answer_cap"] == 5000
    assert "answer_cap" not in RunEntryArgs().annotator_args(), "earlier runs' run_spec.json stay equal"


@pytest.mark.parametrize("value", ["0", "-3", "2.5", "lots", "inf", "nan"])
def test_a_cap_that_is_no_positive_whole_number_is_one_line(value: str) -> None:
    with pytest.raises(ValueError, match=r"^answer_cap must be a positive whole number of characters, got "):
        RunEntryArgs.parse(answer_cap=value)


def test_the_record_keeps_the_cut_answers_length_and_reads_it_back() -> None:
    record = NoteRecord(answer_cut=10_000_000)
    assert record.to_dict()[ANSWER_CUT] == 10_000_000
    assert NoteRecord.from_dict(record.to_dict()) == record
    assert ANSWER_CUT not in NoteRecord().to_dict(), "a whole answer's record is as before"
