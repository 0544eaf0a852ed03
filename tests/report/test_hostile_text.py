"""Text a judge server or a judge wrote, read back from a suite, is data in every output of the report: a lone
surrogate in an explanation neither crashes the report nor empties report.html; a reported model carrying HTML
and terminal escapes is escaped in report.md and stripped on stdout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.report.reports import run_report
from tests.report.suites import JUDGES, NOTES, Run, build_suite, ok

HOSTILE_MODEL = "<img src=x onerror=alert(1)>\x1b[2J\x1b]0;owned\x07**bold** [x](http://e) \u202eevil"


def hostile_suite(output: Path) -> None:
    one, two = JUDGES
    verdicts: dict[str, Any] = {}
    for i, note in enumerate(NOTES):
        first = {**ok(4, 4, 4), "reported_model": HOSTILE_MODEL if i < 3 else "judge-v2"}
        first["accuracy"]["explanation"] = "fine plan \ud800 with a lone surrogate\x00"
        verdicts[note.filename] = {one: first, two: ok(3, 3, 3)}
    build_suite(output, [Run("acme/m", JUDGES, verdicts)])


def test_hostile_judge_text_is_data_in_report_md_stdout_and_the_review_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile_suite(tmp_path)
    out = tmp_path / "r"
    assert run_report(tmp_path, out) == 0
    said = capsys.readouterr()
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "fine plan \ufffd with a lone surrogate\ufffd" in page  # the explanation is on the page, made safe
    assert "2 character(s) no file can hold" not in said.err  # counted over the suite, not per cell
    # two per explanation, three control characters per hostile reported model: named once, with their count
    assert f"{2 * 9 + 3 * 3} character(s) no file can hold" in said.err
    md = (out / "report.md").read_text(encoding="utf-8")
    (line,) = [line for line in md.splitlines() if "more than one" in line]
    assert "&lt;img src=x onerror=alert(1)>" in line and "<img" not in md
    assert "\\*\\*bold\\*\\* \\[x\\](http://e)" in line
    assert "\x1b" not in md and "\u202e" not in md and "\ud800" not in md
    assert "\x1b" not in said.out and "\x07" not in said.out and "\u202e" not in said.out
    assert "<img src=x onerror=alert(1)>\ufffd[2J\ufffd]0;owned\ufffd**bold** [x](http://e) evil" in said.out
