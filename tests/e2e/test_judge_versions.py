"""A hosted judge that changed behind its name, through HELM's real helm-run: a suite judged when the server
said `judge-v1`, extended later when it says `judge-v2`. The first notes replay from HELM's cache with the model
they were judged by; the record keeps both, judge_versions.csv lists both, and the report warns naming the judge.
The server also names the file it loaded (a local server echoes any name): the record keeps that too."""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from tests.e2e.helm_tools import SECRET, P, files_containing, helm_tool, request_states, run_dir, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.e2e

FIXED = {"accuracy": 4, "completeness": 4, "clarity": 4}


def test_a_suite_extended_after_its_judge_changed_records_both_models_and_warns(
    synthetic_notes: SyntheticNotes, tmp_path: Path
) -> None:
    judges = {"steady": Behaviour("steady", FIXED)}
    v1, v2 = "/home/someone/models/judge-v1.Q4_1.gguf", "/home/someone/models/judge-v2.Q4_1.gguf"
    with JudgeServer(judges, reported_model="judge-v1", system_fingerprint="fp_v1", model_file=v1) as judge:
        entry = f"{P}:model=simple/model1,judges=steady,judge_base_url={judge.base_url}"
        env = user_env(**synthetic_notes.env(), JUDGE_API_KEY=SECRET)
        args = ["--run-entries", entry, "--suite", "grown"]
        helm_tool("helm-run", *args, "-m", "3", cwd=tmp_path, env=env)
        assert judge.count() == 3
        # Months later: the same name now serves other weights. HELM samples instances monotonically, so the
        # first three notes of six are the three already judged: they replay from the cache.
        judge.reported_model, judge.system_fingerprint, judge.model_file = "judge-v2", "fp_v2", v2
        helm_tool("helm-run", *args, "-m", "6", cwd=tmp_path, env=env)
        assert judge.count() == 6, "the first three notes replay from HELM's cache"

    records = [s["annotations"][P]["steady"] for s in request_states(run_dir(tmp_path / "benchmark_output", "grown"))]
    served = Counter((r["reported_model"], r["system_fingerprint"], r["loaded_model"]) for r in records)
    assert served == {
        ("judge-v1", "fp_v1", "judge-v1.Q4_1.gguf"): 3,
        ("judge-v2", "fp_v2", "judge-v2.Q4_1.gguf"): 3,
    }, "the loaded file by name only (no user's home), and the replayed notes keep what their live call learned"

    output = helm_tool("helm-mtsamples-report", "--suite", "grown", "--bootstrap", "20", cwd=tmp_path, env=env)
    report = tmp_path / "benchmark_output" / "mtsamples_report" / "grown"
    with (report / "judge_versions.csv").open() as f:
        listed = [
            (r["panel"], r["judge"], r["reported_model"], r["system_fingerprint"], r["loaded_model"], r["n"])
            for r in csv.DictReader(f)
        ]
    assert sorted(listed) == [
        ("steady", "steady", "judge-v1", "fp_v1", "judge-v1.Q4_1.gguf", "3"),
        ("steady", "steady", "judge-v2", "fp_v2", "judge-v2.Q4_1.gguf", "3"),
    ]
    (warning,) = [line for line in output.splitlines() if line.startswith("WARNING: Judge steady ")]
    assert "judge-v1 (3 verdicts), judge-v2 (3 verdicts)" in warning and "fp_v1" in warning
    assert "loaded models" in warning and "judge-v1.Q4_1.gguf (3 verdicts)" in warning
    assert warning in (report / "report.md").read_text()
    assert files_containing(tmp_path / "benchmark_output", SECRET) == []
