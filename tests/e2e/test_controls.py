"""The shipped audit conf through the real helm-run: the four control models answer as promised and show on the
leaderboard as controls."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from helm_mtsamples_ext.controls_client import DISPLAY_NAMES, ControlIndex
from helm_mtsamples_ext.data.controls import CONTROL_KINDS, control_model_name
from tests.e2e.helm_tools import helm_tool, request_states, stat, user_env
from tests.servers.judge import Behaviour, JudgeServer
from tests.synthetic_notes import SyntheticNotes, notes_in

AUDIT_CONF = Path(__file__).resolve().parents[2] / "run_specs" / "mtsamples_procedures_audit.conf"


def test_audit_conf_runs_the_four_controls_through_helm_run(synthetic_notes: SyntheticNotes, tmp_path: Path) -> None:
    """The shipped conf, with a loopback judge added to each entry, through `helm-run -o out`: each control
    answers as promised, untruncated, the judge is sent each answer, and the client read the notes where
    the scenario cached them (no second download, nothing written to ./benchmark_output)."""
    conf = AUDIT_CONF.read_text()
    scores = {"accuracy": 4, "completeness": 3, "clarity": 5}
    with synthetic_notes.mirror() as mirror, JudgeServer({"steady": Behaviour("steady", scores)}) as judge:
        panel = f",judges=steady,judge_base_url={judge.base_url}"
        with_panel = re.sub(r'(model=mtsamples-control/\w+)"', lambda m: f'{m.group(1)}{panel}"', conf)
        assert with_panel.count(panel) == len(CONTROL_KINDS)
        (tmp_path / "audit.conf").write_text(with_panel)
        env = user_env(**mirror.env)
        args = ["--conf-paths", "audit.conf", "--suite", "audit", "-m", "3", "-o", "out"]
        helm_tool("helm-run", *args, cwd=tmp_path, env=env)
        fetched = mirror.request_count
        judged = judge.prompts_for("steady")

    assert fetched == len(synthetic_notes.names) and not (tmp_path / "benchmark_output").exists()
    runs = {}
    for run in (tmp_path / "out" / "runs" / "audit").iterdir():
        if (run / "run_spec.json").is_file():
            runs[json.loads((run / "run_spec.json").read_text())["adapter_spec"]["model"]] = run
    assert sorted(runs) == sorted(control_model_name(kind) for kind in CONTROL_KINDS)
    assert len(judged) == 3 * len(CONTROL_KINDS)

    index = ControlIndex.from_notes(notes_in(synthetic_notes.directory))
    for kind in CONTROL_KINDS:
        run = runs[control_model_name(kind)]
        states = request_states(run)
        assert len(states) == 3
        for state in states:
            answer, prompt = state["result"]["completions"][0]["text"], state["request"]["prompt"]
            reference = state["instance"]["references"][0]["output"]["text"]
            assert not state["prompt_truncated"] and state["instance"]["input"]["text"] in prompt
            assert answer == index.answer(kind, prompt)
            promise = {
                "reference": answer == reference,
                "shuffled": answer != reference,
                "truncated": reference.startswith(answer) and len(answer) <= len(reference) // 3,
                "padded": answer.startswith(reference) and len(answer) >= 2.5 * len(reference),
            }
            assert promise[kind], f"{kind} broke its promise on {state['instance']['id']}"
            assert sum(answer in p for p in judged) >= 1, "the judge never saw this answer"
        assert stat(run, "mtsamples_procedures_reward")["mean"] == pytest.approx(12 / 15)

    # On the leaderboard they show as controls, with what they are.
    helm_tool("helm-summarize", "--suite", "audit", "-o", "out", "--auto-generate-schema", cwd=tmp_path, env=env)
    models = json.loads((tmp_path / "out" / "runs" / "audit" / "schema.json").read_text())["models"]
    assert {m["name"]: (m["display_name"], m["creator_organization"]) for m in models} == {
        control_model_name(kind): (DISPLAY_NAMES[kind], "mtsamples-control") for kind in CONTROL_KINDS
    }
    assert all("not a model" in m["description"] for m in models)
