"""judge_versions.py: which model each judge's verdicts came from, and a warning naming a judge whose verdicts mix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from helm_mtsamples_ext.report.judge_versions import VERSION_COLUMNS, judge_versions, version_warnings
from tests.report.reports import run_report
from tests.report.suites import JUDGES, NOTES, Run, build_suite, failed, ok, read


def rows(*spec: tuple[Any, ...]) -> pd.DataFrame:
    """Instances rows: (judge, status, reported_model, system_fingerprint[, loaded_model]), all in panel a+b."""
    keys = ("judge", "status", "reported_model", "system_fingerprint", "loaded_model")
    return pd.DataFrame(
        [{"panel": "a+b", "loaded_model": None, **dict(zip(keys[: len(row)], row, strict=True))} for row in spec]
    )


def test_verdicts_are_counted_per_reported_model_and_fingerprint() -> None:
    table = judge_versions(
        rows(
            ("a", "ok", "judge-v1", "fp_1"),
            ("a", "ok", "judge-v2", "fp_2"),
            ("a", "ok", "judge-v2", "fp_2"),
            ("a", "failed", "judge-v3", None),  # not a verdict: not counted
            ("b", "ok", "llama", None),
            ("b", "empty_answer", None, None),
        )
    )
    assert list(table.columns) == VERSION_COLUMNS
    assert table.values.tolist() == [
        ["a+b", "a", "judge-v2", "fp_2", "", 2],
        ["a+b", "a", "judge-v1", "fp_1", "", 1],
        ["a+b", "b", "llama", "", "", 1],
    ]


@pytest.mark.parametrize(
    ("spec", "warned"),
    [
        ([("a", "ok", "judge-v1", None), ("a", "ok", "judge-v2", None)], "reported models: judge-v1 (1 verdicts)"),
        ([("a", "ok", "m", "fp_1"), ("a", "ok", "m", "fp_2")], "system fingerprints: fp_1 (1 verdicts), fp_2"),
        # a local server echoes the asked name: only the file it loaded tells the two models apart
        ([("a", "ok", "m", None, "smol.gguf"), ("a", "ok", "m", None, "qwen7b.gguf")], "loaded models: smol.gguf"),
        ([("a", "ok", "m", "fp_1"), ("a", "ok", "m", "fp_1"), ("b", "ok", "n", None)], None),
        # unknown is not different: a record from before these were kept, or a server that sent nothing
        ([("a", "ok", "m", "fp_1"), ("a", "ok", None, None), ("a", "ok", "m", None)], None),
        # one model per judge, but the two judges differ: nothing mixed
        ([("a", "ok", "m", None), ("b", "ok", "n", None)], None),
    ],
    ids=["two-models", "two-fingerprints", "two-loaded-files", "one-each", "unknown-is-not-different", "judges-differ"],
)
def test_a_judge_is_warned_about_only_when_its_known_versions_are_more_than_one(
    spec: list[tuple[Any, ...]], warned: str | None
) -> None:
    lines = version_warnings(judge_versions(rows(*spec)))
    if warned is None:
        assert lines == []
    else:
        (line,) = lines
        assert line.startswith("WARNING: Judge a (panel a+b): ") and warned in line


def test_a_table_without_the_columns_or_without_verdicts_gives_blank_versions() -> None:
    old = rows(("a", "ok", None, None)).drop(columns=["reported_model", "system_fingerprint", "loaded_model"])
    assert judge_versions(old).values.tolist() == [["a+b", "a", "", "", "", 1]]
    none = judge_versions(rows(("a", "failed", "m", None)))
    assert none.empty and list(none.columns) == VERSION_COLUMNS and version_warnings(none) == []


def test_the_report_writes_judge_versions_csv_and_warns_in_stdout_and_report_md(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A suite extended later: judge-one's first notes from judge-v1, the rest from judge-v2; judge-two steady."""
    one, two = JUDGES
    verdicts: dict[str, Any] = {}
    for i, note in enumerate(NOTES):
        model = "judge-v1" if i < 3 else "judge-v2"
        verdicts[note.filename] = {
            one: {**ok(4, 4, 4), "reported_model": model, "system_fingerprint": f"fp_{model[-1]}"},
            two: {**ok(3, 3, 3), "reported_model": "steady-7b", "loaded_model": "steady.gguf"}
            if i
            else failed("call error: 500"),
        }
    build_suite(tmp_path, [Run("acme/m", JUDGES, verdicts)])
    assert run_report(tmp_path, tmp_path / "r") == 0
    versions = read(tmp_path / "r", "judge_versions").fillna("")
    panel = "+".join(JUDGES)
    assert versions.values.tolist() == [
        [panel, one, "judge-v2", "fp_2", "", len(NOTES) - 3],
        [panel, one, "judge-v1", "fp_1", "", 3],
        [panel, two, "steady-7b", "", "steady.gguf", len(NOTES) - 1],
    ]
    out = capsys.readouterr().out
    (warning,) = [line for line in out.splitlines() if "more than one" in line]  # judge-two's one model: no line
    assert warning.startswith(f"WARNING: Judge {one} (panel {panel})") and "judge-v1 (3 verdicts)" in warning
    assert warning in (tmp_path / "r" / "report.md").read_text()
    instances = read(tmp_path / "r", "instances")
    assert set(instances.loc[instances["judge"] == one, "reported_model"]) == {"judge-v1", "judge-v2"}


def test_the_leaderboard_schema_notes_carry_the_version_warning_as_report_md_does(tmp_path: Path) -> None:
    """schema.suite_audit gives the lines report.md opens with: a judge of two versions is named there too."""
    from helm_mtsamples_ext.schema import suite_audit

    one, two = JUDGES
    verdicts = {
        note.filename: {one: {**ok(4, 4, 4), "reported_model": f"judge-v{1 + (i >= 3)}"}, two: ok(3, 3, 3)}
        for i, note in enumerate(NOTES)
    }
    build_suite(tmp_path, [Run("acme/m", JUDGES, verdicts)])
    (warning,) = [line for line in suite_audit(tmp_path / "runs" / "v1") if "more than one" in line]
    assert warning.startswith(f"WARNING: Judge {one} (panel {'+'.join(JUDGES)})") and "judge-v1 (3 verdicts)" in warning
