"""outputs.py: the report directory's files, read back from the main suite's report (tests/report/suites.py and
test_cli.py's table of hand-derived scores)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from tests.report.suites import STRONG, WEAK, png_size, read, row


def test_instances_one_row_per_model_note_judge(main_report: tuple[Path, str]) -> None:
    """instances.csv has one row per model x note x judge with normalised scores, rewards and failure reasons."""
    out, _ = main_report
    inst = read(out, "instances")
    assert len(inst) == 2 * 9 * 2
    assert set(inst["panel"]) == {"judge-one+judge-two"}
    # "4" and 3.0 are normalised to 4 and 3: (4+3+2)/15 = 0.6
    n5 = row(inst, model=WEAK, note="n5.txt", judge="judge-one")
    assert (n5["accuracy"], n5["completeness"], n5["clarity"]) == (4, 3, 2)
    assert n5["judge_reward"] == pytest.approx(0.6)
    # an invalid clarity is left out of the judge's reward: (3+3)/10 = 0.6, not (3+3+0)/15
    n8 = row(inst, model=WEAK, note="n8.txt", judge="judge-two")
    assert math.isnan(n8["clarity"]) and n8["judge_reward"] == pytest.approx(0.6) and "clarity" in n8["invalid"]
    failed_call = row(inst, model=WEAK, note="n2.txt", judge="judge-two")
    assert failed_call["status"] == "failed" and failed_call["failure"].startswith("call error: ")
    assert math.isnan(failed_call["judge_reward"])
    assert row(inst, model=WEAK, note="n7.txt", judge="judge-two")["failure"] == "no valid dimension"
    assert (inst["status"] == "failed").sum() == 5
    n3 = row(inst, model=STRONG, note="n3.txt", judge="judge-one")
    assert (n3["specialty"], n3["extracted_section"], n3["note_id"]) == ("Orthopedic", "FINDINGS", "id_n3.txt")
    assert row(inst, model=STRONG, note="n1.txt", judge="judge-two")["output_words"] == 7
    assert row(inst, model=STRONG, note="n2.txt", judge="judge-two")["output_words"] == 5
    parquet = pd.read_parquet(out / "instances.parquet")
    assert len(parquet) == len(inst) and list(parquet.columns) == list(inst.columns)


def test_figure_and_markdown(main_report: tuple[Path, str]) -> None:
    """A real PNG of sensible size is written and embedded in report.md, which summarises every table."""
    out, stdout = main_report
    width, height = png_size(out / "leaderboard.png")
    assert 800 <= width <= 3000 and 200 <= height <= 3000
    md = (out / "report.md").read_text()
    assert "![" in md and "(leaderboard.png)" in md
    assert STRONG in md and WEAK in md and "0.900" in md and "Orthopedic" in md
    assert f"| {STRONG} | {WEAK} | 8 | 0.388 |" in md and "100.0%" in md  # the pairwise row
    # the terminal leaderboard is compact and names both models with their rewards
    assert STRONG in stdout and "0.900" in stdout and "0.500" in stdout and "27.8%" in stdout


def test_a_suite_that_stored_no_families_lists_its_judges_with_blank_self_preference(
    main_report: tuple[Path, str],
) -> None:
    """judge_self_preference.csv is always written; a suite whose run stored no families (an earlier release's)
    lists each judge of its panel with no family and no figures, and the report warns of nothing."""
    out, _ = main_report
    table = read(out, "judge_self_preference")
    assert list(table.columns) == [
        "panel",
        "judge",
        "family",
        "n_own",
        "n_other",
        "n_own_models",
        "n_other_models",
        "self_preference",
        "ci_low",
        "ci_high",
        "reading",
    ]
    assert list(table["judge"]) == ["judge-one", "judge-two"] and (table["n_own"] == 0).all()
    assert table["family"].isna().all() and table["self_preference"].isna().all()
    assert set(table["reading"]) == {"cannot tell: its family is unknown"}
    assert "favours its own family" not in (out / "report.md").read_text()
