"""Failures shown across models for Medmarks users: two real ``vf-eval -s`` runs, one model whose answers make a
judge lose its verdict and one whose answers do not, then ``helm-mtsamples-report --door-results`` on their
``outputs/`` warns of the first model and that judge (report/door_results.py), as HELM's report does for a suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.servers.judge import Behaviour, JudgeServer
from tests.servers.model import ModelServer, default_answer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.verifiers

BIN = Path(sys.executable).parent
MARKER = Behaviour("lost_some").fail_marker
KEY_VAR = "MTSAMPLES_TEST_MODEL_KEY"


def junk(prompt: str) -> str:
    """Every answer carries the words that make the ``lost_some`` judge give no verdict."""
    return f"{default_answer(prompt)} {MARKER}"


def test_the_results_of_two_models_show_which_ones_answers_make_a_judge_fail(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    with synthetic_notes.mirror() as mirror, JudgeServer({"ja": "steady", "jb": "lost_some"}) as judges:
        env = {**os.environ, **mirror.env, "MTSAMPLES_PROCEDURES_CACHE_DIR": str(tmp_path / "notes"), KEY_VAR: "k"}
        env.pop("JUDGE_API_KEY", None)
        panel = json.dumps({"judge_model": ["ja", "jb"], "judge_base_url": judges.base_url})
        for name, answer in (("junk", junk), ("decent", default_answer)):
            with ModelServer(answer) as model:
                command = [str(BIN / "vf-eval"), "helm_mtsamples_ext.verifiers_env", "-m", name, "-b", model.base_url]
                command += ["-k", KEY_VAR, "-n", "10", "-r", "1", "-s", "-a", panel]
                done = subprocess.run(
                    command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
                )
                assert done.returncode == 0, done.stderr[-3000:]
    assert len(list((tmp_path / "outputs").rglob("results.jsonl"))) == 2
    shown = subprocess.run(
        [str(BIN / "helm-mtsamples-report"), "--door-results", str(tmp_path / "outputs")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr[-3000:]
    lines = shown.stdout.splitlines()
    assert any(line.startswith("  junk | 10 |") and line.endswith("| 0% | 100%") for line in lines), lines
    assert any(line.startswith("  decent | 10 |") and line.endswith("| 0% | 0%") for line in lines), lines
    (warning,) = [line for line in lines if line.startswith("WARNING")]
    assert "model junk's answers make judge jb fail: 10 of 10" in warning
