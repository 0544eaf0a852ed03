"""Failures shown across models for Inspect users: two real ``inspect eval`` runs, one model whose answers make a
judge lose its verdict and one whose answers do not, then ``helm-mtsamples-report --door-results`` on their logs
warns of the first model and that judge (report/door_results.py), as HELM's report does for a suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.doors.inspect.eval_command import eval_command, eval_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.model import ModelServer, default_answer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.inspect

REPORT = str(Path(sys.executable).parent / "helm-mtsamples-report")
MARKER = Behaviour("lost_some").fail_marker


def junk(prompt: str) -> str:
    """Every answer carries the words that make the ``lost_some`` judge give no verdict."""
    return f"{default_answer(prompt)} {MARKER}"


def test_the_logs_of_two_models_show_which_ones_answers_make_a_judge_fail(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    with synthetic_notes.mirror() as mirror, JudgeServer({"ja": "steady", "jb": "lost_some"}) as judges:
        for name, answer in (("junk", junk), ("decent", default_answer)):
            with ModelServer(answer) as model:
                env = eval_env(mirror.env, tmp_path, model.base_url)
                command = eval_command(tmp_path, "-T", "judges=ja+jb", "-T", f"judge_base_url={judges.base_url}")
                command[command.index("openai-api/loop/m")] = f"openai-api/loop/{name}"
                command += ["-T", "max_unjudged=1"]
                done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
                assert done.returncode == 0, done.stderr[-3000:]
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 2
    shown = subprocess.run(
        [REPORT, "--door-results", str(tmp_path / "logs")], capture_output=True, text=True, timeout=120, check=False
    )
    assert shown.returncode == 0, shown.stderr[-3000:]
    lines = shown.stdout.splitlines()
    assert any(line.startswith("  openai-api/loop/junk | 10 |") and line.endswith("| 0% | 100%") for line in lines)
    assert any(line.startswith("  openai-api/loop/decent | 10 |") and line.endswith("| 0% | 0%") for line in lines)
    (warning,) = [line for line in lines if line.startswith("WARNING")]
    assert "model openai-api/loop/junk's answers make judge jb fail: 10 of 10" in warning
