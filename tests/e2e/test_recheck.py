"""A user's session: a suite judged by the real helm-run, the judge changes behind its name, the recheck sees it.

The judges are a loopback OpenAI-compatible server reached through HELM's own client. The recheck asks each judge
of the panel again, live, about a seeded sample of the suite's answers, each twice (the second reply is the judge's
own noise); it must reach the server exactly 2N times per judge, with the run's own prompts, and leave the suite,
HELM's cache and every record as they were: a later helm-run of the suite still replays the old verdicts with zero
calls.
"""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helm_tools import SECRET, P, files_containing, helm_tool, request_states, run_dir, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e

SUITE = "drift"
NOTES = 4
SAMPLE = 3
THEN = {"accuracy": 4, "completeness": 4, "clarity": 4}
NOW = {"accuracy": 2, "completeness": 4, "clarity": 5}


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` (the suite, HELM's cache, credentials), by its bytes' hash."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()
    }


def scores(out: Path) -> dict[tuple[str, str], dict[str, int]]:
    """{(note, judge): scores} of the suite's record."""
    found = {}
    for state in request_states(run_dir(out, SUITE)):
        record = state["annotations"][P]
        for judge in ("changing", "constant"):
            found[(state["instance"]["id"], judge)] = {d: record[judge][d]["score"] for d in THEN}
    return found


def test_a_recheck_reports_drift_with_n_live_calls_and_changes_nothing(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    panel = {"changing": Behaviour("steady", THEN), "constant": Behaviour("steady")}
    with (
        synthetic_notes.mirror() as mirror,
        JudgeServer(panel, api_key=SECRET, reported_model="judge-v1") as judge,
    ):
        entry = f"{P}:model=simple/model1,judges=changing+constant,judge_base_url={judge.base_url}"
        env = user_env(**mirror.env, JUDGE_API_KEY=SECRET)
        run_args = ["--run-entries", entry, "--suite", SUITE, "-m", str(NOTES)]
        helm_tool("helm-run", *run_args, cwd=tmp_path, env=env)
        out = tmp_path / "benchmark_output"
        judged = scores(out)
        run_prompts = {model: set(judge.prompts_for(model)) for model in panel}
        assert judge.count("changing") == judge.count("constant") == NOTES
        before = snapshot(tmp_path)

        # The judge behind the name changes: other scores, another model reported.
        judge.judges["changing"] = Behaviour("steady", NOW)
        judge.reported_model = "judge-v2"
        recheck = subprocess.run(
            [sys.executable, "-m", "helm_mtsamples_ext.recheck", "--suite", SUITE, "--sample", str(SAMPLE)],
            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        said = recheck.stdout + recheck.stderr
        assert recheck.returncode == 0, said[-4000:]
        assert judge.count("changing") == judge.count("constant") == NOTES + 2 * SAMPLE, "2N live calls per judge"
        for model in panel:  # the run's own prompts, each asked again twice
            asked = judge.prompts_for(model)[NOTES:]
            assert len(set(asked)) == SAMPLE and set(asked) <= run_prompts[model]
            assert all(asked.count(prompt) == 2 for prompt in asked)

        report = out / "mtsamples_report" / SUITE / "judge_drift.csv"
        assert snapshot(tmp_path) == {**before, str(report.relative_to(tmp_path)): snapshot(report.parent)[report.name]}
        with report.open() as f:
            rows = {row["judge"]: row for row in csv.DictReader(f)}
        changing, constant = rows["changing"], rows["constant"]
        assert changing["panel"] == "changing+constant" and changing["n"] == str(SAMPLE)
        assert float(changing["same_verdict_rate"]) == 0.0
        assert float(changing["mean_abs_diff"]) == pytest.approx((2 + 0 + 1) / 3)
        assert (changing["reported_model_before"], changing["reported_model_now"]) == ("judge-v1", "judge-v2")
        assert float(constant["same_verdict_rate"]) == 1.0 and float(constant["mean_abs_diff"]) == 0.0
        # Signed: (2 + 4 + 5) / 15 - 12 / 15 on every answer; both replies of today agree (a deterministic server).
        assert float(changing["reward_change"]) == pytest.approx(-1 / 15)
        assert (
            changing["reading"] == constant["reading"] == f"too few answers ({SAMPLE}) to tell"
        )  # below 5: no verdict
        assert changing["change_ci_low"] == changing["change_ci_high"] == ""
        assert changing["n_repeated"] == str(SAMPLE) and float(changing["repeat_same_verdict_rate"]) == 1.0
        lines = recheck.stdout.splitlines()
        assert sum(line.startswith("changing+constant / ") for line in lines) == 2
        assert f"judge calls:      {2 * 2 * SAMPLE}" in recheck.stdout, "the estimate comes first"

        # A later helm-run of the suite replays the verdicts it recorded: zero calls, the old scores.
        calls = judge.count()
        helm_tool("helm-run", *run_args, cwd=tmp_path, env=env)
        assert judge.count() == calls
        assert scores(out) == judged
        assert {judged[k]["accuracy"] for k in judged if k[1] == "changing"} == {THEN["accuracy"]}

    assert files_containing(tmp_path, SECRET) == [] and SECRET not in said
