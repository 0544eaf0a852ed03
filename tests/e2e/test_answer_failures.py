"""Judge failures a model's answers cause are charged to that model, through HELM's real helm-run,
helm-mtsamples-report, the suite's schema and helm-summarize.

Two models under one panel: the reference control (the clinician's own plan) and the padded control (the same
plan plus generic filler). Judge `b` loses its verdict (a reply with no verdict) whenever the filler is in the
prompt: the padded model's answers make it fail on every note, as an answer carrying a judge's own low-verdict
words did. Judge `a` judges both alike. The padded model is warned, naming it and `b`, on stdout, in report.md and
in the HELM leaderboard's schema notes, with its reward at the scale's minimum for b's lost judgments beside its
reward; the reference model is not warned.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helm_mtsamples_ext.data.controls import PADDING_SENTENCES
from tests.e2e.helm_tools import P, helm_tool, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e

NOTES = 5
A = {"accuracy": 4, "completeness": 4, "clarity": 4}
B = {"accuracy": 2, "completeness": 2, "clarity": 2}
PADDED = "mtsamples-control/padded"
REFERENCE = "mtsamples-control/reference"
SUITE = "charged"


def test_answers_that_make_a_judge_fail_are_warned_and_bounded(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    panel = {"a": Behaviour("steady", A), "b": Behaviour("lost_some", B, fail_marker=PADDING_SENTENCES[0])}
    env = user_env(**synthetic_notes.env())
    with JudgeServer(panel) as judge:
        entries = [f"{P}:model={model},judges=a+b,judge_base_url={judge.base_url}" for model in (REFERENCE, PADDED)]
        helm_tool("helm-run", "--run-entries", *entries, "--suite", SUITE, "-m", str(NOTES), cwd=tmp_path, env=env)

    output = helm_tool("helm-mtsamples-report", "--suite", SUITE, "--bootstrap", "50", cwd=tmp_path, env=env)
    report = tmp_path / "benchmark_output" / "mtsamples_report" / SUITE
    with (report / "leaderboard.csv").open() as f:
        board = {row["model"]: row for row in csv.DictReader(f)}
    padded, reference = board[PADDED], board[REFERENCE]
    # b's verdict (2s = .4) is lost on every padded note: its reward is a's .8 alone, the reference's (.8+.4)/2 = .6.
    # With b's lost judgments at 1/5 the padded model scores (.8+.2)/2 = .5; the reference has none to bound.
    assert float(padded["reward"]) == pytest.approx(0.8) and float(reference["reward"]) == pytest.approx(0.6)
    assert float(padded["reward_failed_at_min"]) == pytest.approx(0.5)
    assert float(reference["reward_failed_at_min"]) == pytest.approx(0.6)
    assert (float(padded["failed_share:b"]), float(padded["failed_share:a"])) == (1.0, 0.0)
    assert float(reference["failed_share:b"]) == 0.0
    header = next(iter((report / "leaderboard.csv").open())).strip().split(",")
    assert header[header.index("reward") + 1] == "reward_failed_at_min"

    # 5 of 5 against 0 of 5: one-sided Fisher p = 1/C(10,5) = 1/252, Holm x4 = .016 < .05.
    warned = [line for line in output.splitlines() if line.startswith("WARNING: model ")]
    assert len(warned) == 1, output[-3000:]
    (warning,) = warned
    assert f"model {PADDED}'s answers make judge b fail: 5 of 5" in warning and "0 of 5" in warning
    assert "not the judge's size" in warning and "0.500" in warning
    assert REFERENCE not in warning
    assert "a judge this small" not in output
    assert warning in (report / "report.md").read_text()

    # The HELM leaderboard: the suite's schema carries the warning into helm-summarize's run group description.
    made = subprocess.run(
        [sys.executable, "-m", "helm_mtsamples_ext.schema", "--suite", SUITE],
        cwd=tmp_path, capture_output=True, text=True, check=True, env=env,
    )  # fmt: skip
    schema = Path(made.stdout.strip())
    groups = yaml.safe_load(schema.read_text())["run_groups"]
    assert any(warning in str(group.get("description")) for group in groups)
    helm_tool("helm-summarize", "--suite", SUITE, "--schema-path", str(schema), cwd=tmp_path, env=env)
    summarized = (tmp_path / "benchmark_output" / "runs" / SUITE / "schema.json").read_text()
    assert any(warning in str(group.get("description")) for group in json.loads(summarized)["run_groups"])
