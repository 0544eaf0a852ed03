"""The golden set through Medmarks' own pipeline: ``medarc-eval bench`` runs the environment for two models (both
answering as the golden model under test), ``medarc-eval process`` turns the runs into its parquet and
``medarc-eval winrate`` ranks them. The unjudged golden note must reach the win rates as a missing reward, never a
0: its parquet reward is NaN, the empty answer's 0, and each model's average is the table's mean over the nine
notes with a reward."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests import golden
from tests.servers.judge import JudgeServer
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes

pytestmark = pytest.mark.verifiers

ENV_ID = "mtsamples_procedures"
MODELS = ("golden-1", "golden-2")
KEY_VAR = "MTSAMPLES_TEST_MODEL_KEY"
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Pipeline:
    rewards: dict[str, dict[str, float]]
    """Per model, each golden note's reward in the parquet ``medarc-eval process`` wrote."""
    winrates: dict[str, Any]
    """What ``medarc-eval winrate`` wrote."""


def medarc_eval(*args: str, cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [str(BIN / "medarc-eval"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, f"medarc-eval {args[0]}: {done.stderr[-3000:]}"


def config(model_url: str, judge_url: str, output: Path) -> dict[str, Any]:
    """A bench config: two models on the loopback model under test, our environment with the golden panel."""
    env_args = {
        "judge_model": list(golden.JUDGES),
        "judge_base_url": judge_url,
        "judge_api_key": "judge-key",
        "judge_timeout": golden.JUDGE_TIMEOUT,
        "judge_max_wait": golden.JUDGE_MAX_WAIT,
    }
    model = {"api_base_url": model_url, "api_key_var": KEY_VAR, "max_retries": 0}
    return {
        "name": "golden",
        "output_dir": str(output),
        "models": {name: {"model": name, **model} for name in MODELS},
        "envs": {ENV_ID: {"module": "helm_mtsamples_ext.verifiers_env", "num_examples": -1, "env_args": env_args}},
        "jobs": [{"model": name, "env": ENV_ID} for name in MODELS],
    }


def notes_by_example_id(raw: Path) -> dict[int, str]:
    """Each example_id's golden note, read from the prompts verifiers saved (``results.jsonl``)."""
    (results, *_) = sorted(raw.rglob("results.jsonl"))
    found = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        note = golden.note_of(row["prompt"][-1]["content"])
        assert note is not None
        found[int(row["example_id"])] = note
    return found


@pytest.fixture(scope="module")
def pipeline(synthetic_notes: SyntheticNotes, tmp_path_factory: pytest.TempPathFactory) -> Pipeline:
    root = tmp_path_factory.mktemp("medarc")
    raw, processed, out = root / "raw", root / "processed", root / "winrates.json"
    with (
        synthetic_notes.mirror(max_lifetime=300) as mirror,
        JudgeServer(dict.fromkeys(golden.JUDGES, "golden"), hold_seconds=golden.JUDGE_MAX_WAIT + 15) as judges,
        ModelServer(golden.answer_for) as model,
    ):
        env = {**os.environ, **mirror.env, "MTSAMPLES_PROCEDURES_CACHE_DIR": str(root / "notes"), KEY_VAR: "k"}
        env.pop("JUDGE_API_KEY", None)
        (root / "config.json").write_text(json.dumps(config(model.base_url, judges.base_url, raw)), encoding="utf-8")
        medarc_eval(
            "bench", "-c", str(root / "config.json"), "--no-auto-resume", "--on-complete", "exit", cwd=root, env=env
        )
    medarc_eval("process", "--runs-dir", str(raw), "--output-dir", str(processed), "--yes", cwd=root, env=env)
    medarc_eval("winrate", "--processed-dir", str(processed), "--output", str(out), cwd=root, env=env)
    notes = notes_by_example_id(raw)
    rewards = {}
    for name in MODELS:
        table = pd.read_parquet(processed / name / f"{ENV_ID}.parquet")
        rewards[name] = {notes[int(i)]: float(r) for i, r in zip(table["example_id"], table["reward"], strict=True)}
    return Pipeline(rewards, json.loads(out.read_text(encoding="utf-8")))


def test_medarcs_parquet_holds_the_tables_rewards_the_unjudged_note_missing(pipeline: Pipeline) -> None:
    for name in MODELS:
        assert sorted(pipeline.rewards[name]) == sorted(golden.CASES)
        for note, reward in pipeline.rewards[name].items():
            expected = golden.EXPECTED[note].reward
            if expected is None:
                assert math.isnan(reward), f"{name} {note}: missing, not {reward}"
            else:
                assert reward == pytest.approx(expected, abs=1e-9), (name, note)


def test_medarcs_win_rates_leave_the_unjudged_note_out_not_count_it_0(pipeline: Pipeline) -> None:
    """Both models answer alike: they tie, and each one's average is the table's mean over the nine notes with a
    reward (with the unjudged note as 0 it would be that sum over ten)."""
    models = pipeline.winrates["models"]
    for name in MODELS:
        assert models[name]["avg_reward_per_dataset"][ENV_ID] == pytest.approx(golden.MEAN_REWARD, abs=1e-9)
        assert models[name]["mean_winrate"]["simple_mean"] == pytest.approx(0.5)
    assert pipeline.winrates["datasets"][ENV_ID]["n_questions"] == len(golden.CASES)
