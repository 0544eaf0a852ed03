"""Reports built once for every test that reads them: the main synthetic suite's (tests/report/suites.py), and the
review pages of one- and three-judge panels (the review's data tests and its browser tests read the same pages)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tests.report.reports import run_report
from tests.report.review_suites import panel_suite
from tests.report.suites import build_main_suite


@pytest.fixture(scope="session")
def main_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """(the report directory, what was printed) of the main suite."""
    output = tmp_path_factory.mktemp("bench")
    build_main_suite(output)
    out = output / "report"
    stdout = io.StringIO()  # capsys is per test; this report is built once
    with contextlib.redirect_stdout(stdout):
        assert run_report(output, out) == 0
    return out, stdout.getvalue()


@pytest.fixture(scope="session")
def one_judge_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of a one-judge panel (review_suites.panel_suite); read, never written, by its tests."""
    return panel_suite(tmp_path_factory.mktemp("one"), ["judge-one"])


@pytest.fixture(scope="session")
def three_judge_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """report.html of a three-judge panel."""
    return panel_suite(tmp_path_factory.mktemp("three"), ["judge-one", "judge-two", "judge-three"])
