"""Spreadsheet-safe CSV cells: text from a model, a note, a judge's reply or a judge server (its reported model, a
failure's wording) lands in the report's CSVs, and a spreadsheet runs a cell starting with = + - @ as a formula.

Every text cell the report writes goes through ``neutralise`` (a leading quote, the OWASP rule); numbers are left
alone, so a negative difference stays a number. ``restore`` undoes it for a reader that wants the text back
(ratings.py reads the rating page's export, which applies this same rule in JavaScript).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

_FORMULA = re.compile(r"'*[=+\-@\t\r]")
"""A cell a spreadsheet runs: a leading = + - @ tab or CR, after any leading quotes (so neutralising is undone)."""


def neutralise(cell: str) -> str:
    """``cell`` with a leading quote when a spreadsheet would run it as a formula (templates/rating.html.j2's
    JavaScript applies this same rule)."""
    return "'" + cell if _FORMULA.match(cell) else cell


def restore(cell: str) -> str:
    """``neutralise`` undone: ``restore(neutralise(c)) == c`` for every cell."""
    return cell[1:] if cell.startswith("'") and _FORMULA.match(cell) else cell


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell neutralised; numbers, booleans and blanks as they were."""
    texts = [name for name in frame.columns if frame[name].dtype == object or pd.api.types.is_string_dtype(frame[name])]
    if not texts:
        return frame
    safe = frame.copy()
    for name in texts:
        safe[name] = frame[name].map(lambda v: neutralise(v) if isinstance(v, str) else v)
    return safe


def write_csv(frame: pd.DataFrame, path: Path) -> None:
    """``frame.to_csv`` with its text cells neutralised: every CSV of the report is written here."""
    safe_frame(frame).to_csv(path, index=False)


def safe_rows(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows for csv.DictWriter with their text cells neutralised."""
    return [{k: neutralise(v) if isinstance(v, str) else v for k, v in row.items()} for row in rows]
