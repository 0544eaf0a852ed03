"""The Medmarks export of tests/report/medmarks_suite.py, built once per test module that reads it."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV
from tests.report.medmarks_suite import PANEL_DIR, build_medmarks_suite
from tests.report.reports import run_report


def export_suite(output: Path) -> Path:
    """Build the suite under ``output``, run the report with ``--export medmarks`` and return the panel's
    export directory (the one ``env_index.json`` is in)."""
    manifest = build_medmarks_suite(output)
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()):
        patch.setenv(MANIFEST_ENV, str(manifest))
        assert run_report(output, output / "report", "--export", "medmarks") == 0
    return output / "report" / "medmarks" / PANEL_DIR
