"""The main synthetic suite's report (tests/report/suites.py), built once for every test that reads it."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from tests.report.reports import run_report
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
