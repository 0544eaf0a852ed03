"""Reading clinicians' ratings.csv files (ratings.py): what is accepted, what is an error, what is named, left out."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.ratings import (
    COLUMNS,
    MAX_BYTES,
    RatingsError,
    human_reward,
    match,
    read_ratings,
)

HEADER = ",".join(COLUMNS)
RUN = "mtsamples_procedures:model=acme_strong"


def write(path: Path, *rows: str, header: str = HEADER) -> Path:
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_a_file_exported_by_the_page_reads_back_row_for_row(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", f'{RUN},id_n1.txt,acme/strong,Dr A,5,4,3,"plan, ""ok"""')
    table = read_ratings([path])
    assert table[["run", "instance_id", "rater", "accuracy", "completeness", "clarity", "comment"]].values.tolist() == [
        [RUN, "id_n1.txt", "Dr A", 5, 4, 3, 'plan, "ok"']
    ]
    assert table["source"].tolist() == [f"{path}:2"]  # line 1 is the header


NOT_INTEGERS = ["4.5", "4.0", "4.9999999999999999", "1e0", "+4", "²", "٤", "５", "four", ""]
"""Not an integer written as one: never rounded, and non-ASCII digits (which str.isdigit accepts) refused."""


@pytest.mark.parametrize("bad", ["0", "6", "-1", *NOT_INTEGERS])
def test_a_score_not_an_integer_1_to_5_is_an_error_naming_file_and_line(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path / "a.csv", f"{RUN},id_n1.txt,m,Dr A,5,4,3,", f"{RUN},id_n2.txt,m,Dr A,5,{bad},3,")
    where = re.escape(f"{tmp_path}/a.csv:3: completeness is {bad!r}, but a rating is an integer 1-5")
    with pytest.raises(RatingsError, match=where):
        read_ratings([path])


def test_a_column_named_twice_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", f"{RUN},id_n1.txt,m,Dr A,5,4,3,,1", header=HEADER + ",accuracy")
    with pytest.raises(RatingsError, match=re.escape(f"{path}:1: column accuracy appears more than once")):
        read_ratings([path])


def test_a_file_over_the_size_limit_or_not_a_regular_file_is_refused_unread(tmp_path: Path) -> None:
    big = write(tmp_path / "big.csv", f"{RUN},id_n1.txt,m,Dr A,5,4,3," + "x" * MAX_BYTES)
    with pytest.raises(RatingsError, match=re.escape(f"{big}: over 10 MB, too large for a ratings file")):
        read_ratings([big])
    for special in (Path("/dev/zero"), tmp_path):
        with pytest.raises(RatingsError, match=re.escape(f"{special}: not a regular file")):
            read_ratings([special])


def test_rater_names_equal_after_trimming_and_case_folding_are_one_rater(tmp_path: Path) -> None:
    one = write(tmp_path / "a.csv", f"{RUN},id_n1.txt,m,Dr Test,5,4,3,", f"{RUN},id_n2.txt,m, dr  TEST ,2,2,2,")
    assert read_ratings([one])["rater"].tolist() == ["Dr Test", "Dr Test"]  # as first written
    twice = write(tmp_path / "b.csv", f"{RUN},id_n1.txt,m,Dr Test,5,4,3,", f"{RUN},id_n1.txt,m,dr test,2,2,2,")
    with pytest.raises(RatingsError, match="rater 'Dr Test' rated id_n1.txt .* more than once"):
        read_ratings([twice])  # one person's double rating, not inter-rater agreement


def test_an_exported_file_with_neutralised_cells_reads_back_as_written(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", f'{RUN},id_n1.txt,m,\'@drtest,5,4,3,"\'=HYPERLINK(""http://x"")"')
    table = read_ratings([path])
    assert table[["rater", "comment"]].values.tolist() == [["@drtest", '=HYPERLINK("http://x")']]


@pytest.mark.parametrize(
    "files, places",
    [
        ({"a.csv": ["n1", "n2", "n1"]}, "a.csv:2, .*a.csv:4"),  # twice in one file
        ({"a.csv": ["n1"], "b.csv": ["n2", "n1"]}, "a.csv:2, .*b.csv:3"),  # the same export given twice
    ],
)
def test_a_rater_rating_one_answer_twice_is_an_error_naming_both_rows(
    tmp_path: Path, files: dict[str, list[str]], places: str
) -> None:
    paths = [
        write(tmp_path / name, *(f"{RUN},id_{n}.txt,m,Dr A,5,4,3," for n in notes)) for name, notes in files.items()
    ]
    with pytest.raises(RatingsError, match=rf"rater 'Dr A' rated id_n1.txt of run {RUN} more than once \(.*{places}\)"):
        read_ratings(paths)


def test_two_raters_rating_one_answer_is_the_overlap_not_a_duplicate(tmp_path: Path) -> None:
    path = write(tmp_path / "a.csv", f"{RUN},id_n1.txt,m,Dr A,5,4,3,", f"{RUN},id_n1.txt,m,Dr B,2,2,2,")
    assert read_ratings([path])["rater"].tolist() == ["Dr A", "Dr B"]


@pytest.mark.parametrize(
    "header, row, message",
    [
        ("run,instance_id,model,rater,accuracy,clarity,comment", f"{RUN},id,m,A,5,3,", "no column completeness"),
        (HEADER, f"{RUN},id_n1.txt,m,,5,4,3,", "a.csv:2: the rater is empty"),
    ],
)
def test_a_file_that_is_not_a_ratings_export_is_an_error(tmp_path: Path, header: str, row: str, message: str) -> None:
    with pytest.raises(RatingsError, match=message):
        read_ratings([write(tmp_path / "a.csv", row, header=header)])


def test_the_human_reward_is_the_mean_of_score_over_5() -> None:
    table = pd.DataFrame({"accuracy": [5, 3], "completeness": [4, 3], "clarity": [3, 3]})
    assert human_reward(table).tolist() == pytest.approx([0.8, 0.6])


def test_rows_of_other_runs_or_notes_are_left_out_and_named(tmp_path: Path) -> None:
    instances = pd.DataFrame({"run": [RUN, RUN], "note_id": ["id_n1.txt", "id_n1.txt"], "judge": ["j1", "j2"]})
    path = write(
        tmp_path / "a.csv",
        f"{RUN},id_n1.txt,m,Dr A,5,5,5,",
        f"{RUN},id_n9.txt,m,Dr A,5,5,5,",
        "mtsamples_procedures:model=other,id_n1.txt,m,Dr A,5,5,5,",
    )
    matched = match(read_ratings([path]), instances)
    assert matched.ratings[["instance_id", "human_reward"]].values.tolist() == [["id_n1.txt", 1.0]]
    assert matched.unmatched == [
        f"{path}:3: note id_n9.txt is not in run {RUN}",
        f"{path}:4: run mtsamples_procedures:model=other is not in the suite",
    ]


OLD_HEADER = "run,instance_id,model,rater,accuracy,completeness,clarity,comment"
"""The header of files exported before the bad-reference flag and the inclusion probability were recorded."""


def test_the_header_ends_with_the_bad_reference_flag_and_the_inclusion_probability() -> None:
    assert HEADER == OLD_HEADER + ",bad_reference,inclusion_probability"


def test_the_flag_and_the_probability_read_as_bool_and_float(tmp_path: Path) -> None:
    path = write(
        tmp_path / "a.csv",
        f"{RUN},id_n1.txt,m,Dr A,5,4,3,,1,0.25",
        f"{RUN},id_n2.txt,m,Dr A,5,4,3,,0,1",
        f"{RUN},id_n3.txt,m,Dr A,5,4,3,,yes,",
        f"{RUN},id_n4.txt,m,Dr A,5,4,3,,,",
    )
    table = read_ratings([path])
    assert table["bad_reference"].tolist() == [True, False, True, False]
    assert table["bad_reference"].dtype == bool and table["inclusion_probability"].dtype == float
    assert table["inclusion_probability"].tolist()[:2] == [0.25, 1.0]
    assert table["inclusion_probability"].iloc[2:].isna().all()


def test_an_older_file_without_the_two_columns_reads_unchanged(tmp_path: Path) -> None:
    old = write(tmp_path / "old.csv", f"{RUN},id_n1.txt,m,Dr A,5,4,3,fine", header=OLD_HEADER)
    table = read_ratings([old])
    assert table[["accuracy", "comment", "bad_reference"]].values.tolist() == [[5, "fine", False]]
    assert table["inclusion_probability"].isna().all()
    instances = pd.DataFrame({"run": [RUN], "note_id": ["id_n1.txt"], "judge": ["j1"]})
    matched = match(table, instances).ratings
    assert matched["bad_reference"].tolist() == [False] and matched["inclusion_probability"].isna().all()


@pytest.mark.parametrize(
    "cells, message",
    [
        ("2,0.5", "bad_reference is '2', but it is 1"),
        ("maybe,0.5", "bad_reference is 'maybe', but it is 1"),
        ("1,0", "inclusion_probability is '0', but it is a number in (0, 1]"),
        ("1,1.5", "inclusion_probability is '1.5', but it is a number in (0, 1]"),
        ("1,nan", "inclusion_probability is 'nan', but it is a number in (0, 1]"),
        ("1,half", "inclusion_probability is 'half', but it is a number in (0, 1]"),
        ("1,\uff10.5", "inclusion_probability is '\uff10.5', but it is a number in (0, 1]"),  # full-width 0
        ("1,0_5", "inclusion_probability is '0_5', but it is a number in (0, 1]"),
    ],
)
def test_a_bad_flag_or_probability_is_one_line_naming_file_line_and_fix(
    tmp_path: Path, cells: str, message: str
) -> None:
    path = write(tmp_path / "a.csv", f"{RUN},id_n1.txt,m,Dr A,5,4,3,,1,0.5", f"{RUN},id_n2.txt,m,Dr A,5,4,3,,{cells}")
    with pytest.raises(RatingsError, match=re.escape(f"{path}:3: {message}")) as raised:
        read_ratings([path])
    assert "\n" not in str(raised.value) and "re-export the file" in str(raised.value)


def test_neutralised_cells_in_the_new_columns_read_back(tmp_path: Path) -> None:
    """The page's Export neutralises every cell; the comment before the two new columns still round-trips."""
    path = write(tmp_path / "a.csv", f'{RUN},id_n1.txt,m,Dr A,5,4,3,"\'=1+1",1,0.5')
    table = read_ratings([path])
    assert table[["comment", "bad_reference", "inclusion_probability"]].values.tolist() == [["=1+1", True, 0.5]]
