"""The audit beside the ranking (audit_warnings.py): where people look, a panel that cannot tell the clinician's
plan from another patient's, and a model scored above that plan, are said plainly.

A one-judge synthetic suite, by hand (tests/report/blind_suite.py): a blind panel and a model above the
clinician's plan. A second suite adds nothing but a model: no controls, so nothing is audited.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from helm_mtsamples_ext.report.cli import main
from helm_mtsamples_ext.report.figure import ABOVE_CEILING, _draw_panel
from tests.report.blind_suite import CEILING_LINE, JUDGE, NOTES3, PANEL_LINE, RE, blind_suite
from tests.report.suites import STRONG_RUN, Run, build_suite, control_run, ok, read


def report(output: Path) -> tuple[str, Path]:
    """Run helm-mtsamples-report; its stdout and its directory."""
    out = output / "report"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        assert main(["--suite", "v1", "-o", str(output), "--out", str(out), "--bootstrap", "100"]) == 0
    return stdout.getvalue(), out


@pytest.fixture(scope="module")
def blind(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    output = tmp_path_factory.mktemp("blind")
    blind_suite(output)
    return report(output)


@pytest.mark.parametrize("line", [PANEL_LINE, CEILING_LINE], ids=["blind-panel", "above-ceiling"])
def test_stdout_names_the_blind_panel_and_the_model_above_the_ceiling(blind: tuple[str, Path], line: str) -> None:
    stdout, _ = blind
    assert any(printed.startswith(line) for printed in stdout.splitlines()), stdout


def test_report_md_opens_with_the_verdicts(blind: tuple[str, Path]) -> None:
    """Before the figure and the leaderboard: the title, then the same lines as on stdout."""
    lines = (blind[1] / "report.md").read_text().splitlines()
    assert lines[0].startswith("# MTSamples Procedures")
    assert lines[2].startswith(f"> {PANEL_LINE}") and lines[3].startswith(f"> {CEILING_LINE}")
    assert lines.index("## Leaderboard") > 3


def test_leaderboard_csv_carries_the_panels_auroc_beside_each_model(blind: tuple[str, Path]) -> None:
    board = read(blind[1], "leaderboard")
    assert len(board) == 5 and (board["panel_auroc"] == 0.5).all()
    keep = os.environ.get("MTSAMPLES_E2E_SCREENSHOTS")
    if keep:  # docs/report.md's figure of a blind panel
        shutil.copy(blind[1] / "leaderboard.png", Path(keep) / "report_blind.png")


def test_a_suite_without_controls_has_no_auroc_column_and_says_it_was_not_audited(tmp_path: Path) -> None:
    build_suite(tmp_path, [STRONG_RUN])
    stdout, out = report(tmp_path)
    assert "panel_auroc" not in read(out, "leaderboard").columns
    assert "Judge panel judge-one+judge-two: not audited (no control runs under it)" in stdout
    assert "WARNING" not in stdout


def _texts(axes: object) -> list[str]:
    return [text.get_text() for text in axes.texts]  # type: ignore[attr-defined]


def test_the_figure_warns_on_a_blind_panel_and_circles_a_model_above_the_ceiling(blind: tuple[str, Path]) -> None:
    board = read(blind[1], "leaderboard")
    left, right = Figure().subplots(1, 2)
    _draw_panel(left, right, board, JUDGE, 0.5)
    assert "WARNING: judges cannot tell the clinician's plan from another patient's (AUROC 0.50)" in left.get_title(
        loc="left"
    )
    assert ABOVE_CEILING in _texts(left)


def test_the_figure_of_a_sound_panel_has_no_warning() -> None:
    """A model below its ceiling and no AUROC given (the panel discriminates): title and rows as always."""
    board = pd.DataFrame(
        {
            "model": ["mtsamples-control/reference", "acme/m"],
            "reward": [0.8, 0.5],
            "reward_ci_low": [0.7, 0.4],
            "reward_ci_high": [0.9, 0.6],
            "accuracy": [4.0, 2.5],
            "completeness": [4.0, 2.5],
            "clarity": [4.0, 2.5],
        }
    )
    left, right = Figure().subplots(1, 2)
    _draw_panel(left, right, board, "p")
    assert "WARNING" not in left.get_title(loc="left") and ABOVE_CEILING not in _texts(left)


def test_a_panel_whose_control_runs_nobody_judged_is_named_as_unaudited(tmp_path: Path) -> None:
    """Controls under the panel, but every judge failed on their notes: no audit row, and a warning, not the
    "no control runs" line."""
    failed = {n: {JUDGE: None} for n in NOTES3}
    runs = [control_run(kind, failed, judges=[JUDGE]) for kind in ("reference", "shuffled")]
    runs.append(Run(RE, [JUDGE], {n: {JUDGE: ok(4, 4, 4)} for n in NOTES3}))
    build_suite(tmp_path, runs)
    stdout, _ = report(tmp_path)
    assert f"WARNING: Judge panel {JUDGE}: not audited: its judges scored no note of the control runs" in stdout
