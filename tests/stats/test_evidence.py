"""Below a stated minimum of evidence the report says so instead of giving a verdict (stats/evidence.py)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from helm_mtsamples_ext.stats.evidence import MINIMUMS, constant, mostly_tied, too_few


def test_fewer_notes_than_the_minimum_are_too_few_to_tell() -> None:
    assert too_few(2) == "too few notes (2) to tell"
    assert too_few(MINIMUMS.notes_for_verdict - 1) is not None
    assert too_few(MINIMUMS.notes_for_verdict) is None


def test_answers_use_the_agreement_minimum() -> None:
    assert too_few(1, "answers") == "too few answers (1) to tell"
    assert too_few(MINIMUMS.answers_for_agreement, "answers") is None


def test_a_constant_column_gives_no_information() -> None:
    assert constant("bob", [3, 3, 3]) == "bob gave one score to every answer: no information"
    assert constant("judge", [0.1 + 0.2, 0.3]) is not None  # equal after ties.rounded_for_ranks
    assert constant("bob", [3, 4, 3]) is None


def test_a_bootstrap_whose_resamples_mostly_tie_gives_no_interval() -> None:
    assert mostly_tied([1.0] * 9 + [0.5]) == "most bootstrap resamples tie: no interval"
    assert mostly_tied([0.1 + 0.2] * 6 + [0.3] * 0 + [0.1, 0.2, 0.4, 0.5]) is not None
    assert mostly_tied([0.1, 0.2, 0.3, 0.4, 0.5, 0.5]) is None
    assert mostly_tied([0.5] * 4 + [0.1] * 6, point=0.5) is None


def test_the_minimums_are_sensible() -> None:
    assert MINIMUMS.notes_for_verdict >= 3
    assert 0 < MINIMUMS.max_tied_resample_share < 1


def test_the_docs_table_gives_the_same_minimums_as_the_code() -> None:
    """docs/statistics.md's "How much evidence a verdict needs" table lists every threshold with its value."""
    text = (Path(__file__).parents[2] / "docs" / "statistics.md").read_text()
    section = text.split("## How much evidence a verdict needs", 1)[1].split("\n## ", 1)[0]
    documented = {
        cells[1].strip("` "): float(cells[2])
        for cells in (line.split("|") for line in section.splitlines() if line.startswith("| `"))
    }
    assert documented == {field.name: float(getattr(MINIMUMS, field.name)) for field in fields(MINIMUMS)}
