"""The suite's judge audit on the leaderboard: the schema command writes it into the run groups' descriptions, and
the real helm-summarize carries it into groups_metadata.json, which helm-server shows above the leaderboard."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helm_mtsamples_ext import schema as schema_module
from tests.e2e.helm_tools import helm_tool, user_env
from tests.report.blind_suite import CEILING_LINE, PANEL_LINE, blind_suite


def test_the_suites_judge_audit_is_in_the_leaderboards_description_through_real_helm_summarize(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A blind panel (AUROC 0.5) and a model above the clinician's plan: helm-summarize's groups_metadata.json,
    which helm-server shows above the leaderboard, carries both warnings under our run groups; stdout stays the
    schema's path alone."""
    blind_suite(tmp_path)
    schema_module.main(["--suite", "v1", "-o", str(tmp_path)])
    captured = capsys.readouterr()
    path = captured.out.strip()
    assert Path(path).is_file() and PANEL_LINE in captured.err
    helm_tool("helm-summarize", "--suite", "v1", "-o", str(tmp_path), "--schema-path", path, cwd=tmp_path,
              env=user_env())  # fmt: skip
    groups = json.loads((tmp_path / "runs" / "v1" / "groups_metadata.json").read_text())
    for group in ("mtsamples_procedures", "mtsamples_procedures_leaderboard"):
        description = groups[group]["description"]
        assert schema_module.AUDIT_HEADING in description
        assert PANEL_LINE in description and CEILING_LINE in description
