"""rules_versions.py: a suite whose notes were scored under more than one rules version is warned about."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from helm_mtsamples_ext.report.rules_versions import UNVERSIONED, notes_per_version, rules_warnings
from tests.report.reports import run_report
from tests.report.suites import EMPTY, NOTES, STRONG_RUN, WEAK_RUN, build_suite, read


def instances(*runs: tuple[str, list[object]]) -> pd.DataFrame:
    """Two judges' rows per note: (run, [each note's rules_version])."""
    return pd.DataFrame(
        [
            {"run": run, "note_id": f"n{i}", "judge": judge, "rules_version": version}
            for run, versions in runs
            for i, version in enumerate(versions)
            for judge in ("a", "b")
        ]
    )


def test_notes_are_counted_once_per_run_and_version_newest_first() -> None:
    table = instances(("old", [None, None, None]), ("new", [1, 1]), ("newer", [2]))
    assert notes_per_version(table) == {"rules 2": 1, "rules 1": 2, UNVERSIONED: 3}


@pytest.mark.parametrize(
    "runs",
    [[("x", [1, 1]), ("y", [1])], [("x", [None]), ("y", [None, None])], []],
    ids=["one-version", "all-unversioned", "no-rows"],
)
def test_one_version_or_all_unversioned_gives_no_line(runs: list[tuple[str, list[object]]]) -> None:
    assert rules_warnings(instances(*runs)) == []


def test_a_table_without_the_column_reads_as_unversioned() -> None:
    assert notes_per_version(instances(("x", [1, 1])).drop(columns="rules_version")) == {UNVERSIONED: 2}


def test_the_report_warns_in_stdout_and_report_md_naming_each_version_and_its_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The strong model judged by a release that recorded no version, the weak one by the current rules."""
    weak = replace(WEAK_RUN, rules_version=1)
    build_suite(tmp_path, [STRONG_RUN, weak])
    assert run_report(tmp_path, tmp_path / "r") == 0
    (warning,) = [line for line in capsys.readouterr().out.splitlines() if "rules" in line and "WARNING" in line]
    assert f"rules 1: {len(weak.verdicts)} notes" in warning
    assert f"{UNVERSIONED}: {len(STRONG_RUN.verdicts)} notes" in warning
    assert "Re-run the older runs with the current release" in warning and "zero judge calls" in warning
    assert warning in (tmp_path / "r" / "report.md").read_text()
    table = read(tmp_path / "r", "instances")
    by_model = table.groupby("model")["rules_version"].agg(lambda v: set(v.fillna(0)))
    assert by_model.to_dict() == {STRONG_RUN.model: {0}, weak.model: {1}}
    with (tmp_path / "r" / "instances.csv").open() as f:
        assert {row["rules_version"] for row in csv.DictReader(f)} == {"", "1"}  # whole numbers, blank if none


def test_a_suite_of_one_rules_version_gets_no_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    build_suite(tmp_path, [replace(STRONG_RUN, rules_version=1), replace(WEAK_RUN, rules_version=1)])
    assert run_report(tmp_path, tmp_path / "r") == 0
    assert "version of the rules" not in capsys.readouterr().out
    assert "version of the rules" not in (tmp_path / "r" / "report.md").read_text()


def test_the_leaderboard_schema_notes_carry_the_rules_warning(tmp_path: Path) -> None:
    from helm_mtsamples_ext.schema import suite_audit

    build_suite(tmp_path, [STRONG_RUN, replace(WEAK_RUN, rules_version=1)])
    (warning,) = [line for line in suite_audit(tmp_path / "runs" / "v1") if "version of the rules" in line]
    assert warning.startswith("WARNING: ") and "rules 1:" in warning


def test_an_empty_answers_record_carries_its_version_too(tmp_path: Path) -> None:
    verdicts = {**WEAK_RUN.verdicts, NOTES[0].filename: EMPTY}
    build_suite(tmp_path, [replace(WEAK_RUN, verdicts=verdicts, rules_version=1)])
    assert run_report(tmp_path, tmp_path / "r") == 0
    table = read(tmp_path / "r", "instances")
    assert set(table["rules_version"]) == {1}
