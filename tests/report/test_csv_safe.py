"""Spreadsheet-safe CSV cells (csv_safe.py): a text a spreadsheet would run gets a leading quote, numbers do not."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helm_mtsamples_ext.report.csv_safe import neutralise, restore, safe_frame
from tests.report.reports import run_report
from tests.report.suites import JUDGES, NOTES, Run, build_suite, ok, read

NEUTRALISED = [
    ('=HYPERLINK("http://x.example","click")', '\'=HYPERLINK("http://x.example","click")'),
    ("+1 day", "'+1 day"),
    ("- missing follow-up", "'- missing follow-up"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tindented", "'\tindented"),
    ("\rreturn", "'\rreturn"),
    ("'=already quoted", "''=already quoted"),
    ("'tis fine", "'tis fine"),
    ("fine = good", "fine = good"),
    ("", ""),
]


@pytest.mark.parametrize(("cell", "exported"), NEUTRALISED)
def test_a_cell_a_spreadsheet_would_run_gets_a_leading_quote_and_restores(cell: str, exported: str) -> None:
    assert neutralise(cell) == exported and restore(exported) == cell


def test_numbers_and_blanks_are_left_as_they_are() -> None:
    frame = pd.DataFrame({"difference": [-0.25, 0.5], "name": ["-x", None], "flag": [True, False]})
    safe = safe_frame(frame)
    assert safe["difference"].tolist() == [-0.25, 0.5] and safe["flag"].tolist() == [True, False]
    assert safe["name"].iloc[0] == "'-x" and pd.isna(safe["name"].iloc[1])


def test_a_judge_server_cannot_plant_a_formula_in_the_reports_csvs(tmp_path: Path) -> None:
    """The model name a judge server reports is its own text: in judge_versions.csv and instances.csv it is quoted."""
    formula = '=HYPERLINK("http://evil.example","x")'
    one, two = JUDGES
    verdicts: dict[str, Any] = {
        note.filename: {one: {**ok(4, 4, 4), "reported_model": formula}, two: ok(3, 3, 3)} for note in NOTES
    }
    build_suite(tmp_path, [Run("acme/m", JUDGES, verdicts)])
    assert run_report(tmp_path, tmp_path / "r") == 0
    for name in ("judge_versions", "instances"):
        cells = set(read(tmp_path / "r", name)["reported_model"].dropna())
        assert "'" + formula in cells and formula not in cells, name
    assert not any(line.startswith("=") or ",=" in line for line in (tmp_path / "r" / "instances.csv").open())


@given(st.text())
def test_neutralising_is_undone_for_every_cell(cell: str) -> None:
    assert restore(neutralise(cell)) == cell
    assert not re.match(r"[=+\-@\t\r]", neutralise(cell))
