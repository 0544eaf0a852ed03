"""The Medmarks export of tests/report/medmarks_suite.py, built once per test module that reads it."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from helm_mtsamples_ext.data.custom_manifest import resolve_manifest
from helm_mtsamples_ext.data.example_ids import example_ids
from tests.report.medmarks_suite import PANEL_DIR, build_medmarks_suite, note_env
from tests.report.reports import run_report


def expected_ids(output: Path) -> dict[str, str]:
    """Each note's ``example_id`` as the export must write it: the id rule's (data/example_ids.py) for the suite
    built under ``output``, as a string."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in note_env(output).items():
            patch.setenv(name, value)
        return {name: str(number) for name, number in example_ids(resolve_manifest()).items()}


def export_suite(output: Path, *extra: str) -> Path:
    """Build the suite under ``output``, run the report with ``--export medmarks`` (and ``extra`` arguments) and
    return the panel's export directory (the one ``env_index.json`` is in)."""
    build_medmarks_suite(output)
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(io.StringIO()):
        for name, value in note_env(output).items():
            patch.setenv(name, value)
        assert run_report(output, output / "report", "--export", "medmarks", *extra) == 0
    return output / "report" / "medmarks" / PANEL_DIR
