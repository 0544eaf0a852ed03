"""A Medmarks user's tools read our rollouts as MedARC's (issue 45): each note's ``example_id`` is the row MedARC's own
environment gives it (not its manifest position), ``info["judge_feedback"][-1]["judges"]`` holds MedARC's fields with
MedARC's types, the reward's column is ``reward_mtsamples``; our fields sit beside them under names MedARC never
writes. And what verifiers writes to ``results.jsonl``: strict JSON while every note is judged; ``NaN`` for an
unjudged note's reward, which verifiers itself writes (docs/verifiers.md says how to read it)."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import verifiers as vf

from helm_mtsamples_ext.common.rubric import DIMENSIONS
from helm_mtsamples_ext.data.custom_manifest import MANIFEST_ENV
from helm_mtsamples_ext.scoring.judge_feedback import OURS
from tests.doors.verifiers.door import ENV_ID, FAIL_MARKER, KEY_VAR, answer_for, completion_text
from tests.medarc_rule import medarc_row
from tests.servers.judge import JudgeServer
from tests.servers.model import ModelServer
from tests.synthetic_notes import SyntheticNotes, notes_in

pytestmark = pytest.mark.verifiers

REPO = Path(__file__).resolve().parents[3]

MEDARC_JUDGE = {"model", "raw", "error", "scores", "score"}
"""The keys MedARC's ``reward_mtsamples`` writes in each judge's entry."""


def strict(line: str) -> Any:
    """``json.loads`` refusing ``NaN``/``Infinity``, as ``jq`` and other strict parsers do."""

    def refuse(constant: str) -> Any:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(line, parse_constant=refuse)


def run(judges: dict[str, str], results: Path, n: int = -1) -> list[dict[str, Any]]:
    """The notes through the environment in process, saved by verifiers as ``vf-eval -s`` saves them."""
    with JudgeServer(judges) as server, ModelServer(answer_for) as model:
        env = vf.load_environment(
            ENV_ID, judge_model=list(judges), judge_base_url=server.base_url, judge_api_key="judge-key"
        )
        client = vf.ClientConfig(api_key_var=KEY_VAR, api_base_url=model.base_url, timeout=60, max_retries=0)
        env.evaluate_sync(client=client, model="alpha", num_examples=n, save_results=True, results_path=results)
    return [json.loads(line) for line in (results / "results.jsonl").read_text().splitlines() if line.strip()]


def test_ids_fields_and_names_are_medarcs(
    notes_env: dict[str, str], synthetic_notes: SyntheticNotes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The manifest listed backwards: MedARC still numbers the notes it keeps by name (so the manifest's order
    changes no id), and the two it does not keep (Tonsillectomy, Vasectomy) get 12 + their manifest position."""
    rows = synthetic_notes.manifest.read_text(encoding="utf-8").splitlines()
    backwards = tmp_path / "backwards.tsv"
    backwards.write_text("\n".join([rows[0], *reversed(rows[1:])]) + "\n", encoding="utf-8")
    monkeypatch.setenv(MANIFEST_ENV, str(backwards))
    texts = notes_in(synthetic_notes.directory)
    position = {row.split("\t")[0]: i for i, row in enumerate(reversed(rows[1:]))}
    kept = sorted(name for name, raw in texts.items() if medarc_row(raw.decode("utf-8")))
    expected = {name: kept.index(name) if name in kept else len(texts) + position[name] for name in texts}
    assert len(kept) == 10 and expected != position

    outputs = run({"ja": "steady", "jb": "lost_some"}, tmp_path / "run")
    assert len(outputs) == 10, "our extraction keeps MedARC's ten"
    assert {o["info"]["filename"]: o["example_id"] for o in outputs} == {name: expected[name] for name in kept}
    assert all(o["info"]["manifest_index"] == position[o["info"]["filename"]] for o in outputs)
    one_failed = 0
    for output in outputs:
        info = output["info"]
        assert {"filename", "extracted_section", "procedure_note", "reference_plan"} <= set(info)
        judges = info["judge_feedback"][-1]["judges"]  # as MedARC's readers take it
        for judge in judges:
            assert MEDARC_JUDGE <= set(judge) and set(judge) - MEDARC_JUDGE <= set(OURS)
            assert isinstance(judge["model"], str) and judge["model"] in ("ja", "jb")
            assert judge["raw"] is None or isinstance(judge["raw"], str)
            assert judge["error"] is None or isinstance(judge["error"], str)
            for dim in DIMENSIONS:
                score, explanation = judge["scores"][dim]["score"], judge["scores"][dim]["explanation"]
                assert (score is None or isinstance(score, int)) and (
                    explanation is None or isinstance(explanation, str)
                )
            assert judge["score"] is None or isinstance(judge["score"], float)
            assert (judge["error"] is None) == (judge["score"] is not None)
        assert info["judge_feedback"][-1]["score"] == pytest.approx(output["reward"])
        assert output["metrics"]["reward_mtsamples"] == output["reward"] and output["metrics"]["unjudged"] == 0.0
        one_failed += FAIL_MARKER in completion_text(output)
        assert (info["judge_feedback"][-1]["failures"] == 1) == (FAIL_MARKER in completion_text(output))
    assert one_failed == 3, "jb lost its verdict on the three Obstetrics notes; ja's still made their rewards"
    lines = (tmp_path / "run" / "results.jsonl").read_text().splitlines()
    assert [strict(line)["example_id"] for line in lines if line.strip()], "every note judged: strict JSON"


def test_an_unjudged_notes_reward_is_verifiers_nan_and_nothing_else_is(
    notes_env: dict[str, str], tmp_path: Path
) -> None:
    """verifiers 0.1.11 writes each rollout with ``json.dump`` (``NaN`` allowed) and sums the rewards for its
    average: a missing reward can only be NaN there (None breaks its sum; a number would score the failure). What is
    ours, ``info``, stays strict JSON; ``json.loads`` (the documented reader) reads the line."""
    outputs = run({"jr": "reject"}, tmp_path / "run", n=2)
    lines = [line for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines() if line.strip()]
    for line, output in zip(lines, outputs, strict=True):
        assert math.isnan(output["reward"]) and math.isnan(output["metrics"]["reward_mtsamples"])
        assert output["metrics"]["unjudged"] == 1.0, "the unjudged share verifiers prints beside its NaN average"
        with pytest.raises(ValueError, match="not JSON: NaN"):
            strict(line)
        strict(json.dumps(output["info"], allow_nan=False))
        assert output["info"]["judge_feedback"][-1]["score"] is None
    metadata = json.loads((tmp_path / "run" / "metadata.json").read_text())
    assert math.isnan(metadata["avg_reward"]), "verifiers' plain mean: read the per-note rewards"


def docs_reader() -> Any:
    """The ``rollouts`` reader of docs/verifiers.md's ```python block, as a reader would paste it."""
    (block,) = re.findall(r"```python\n(.*?)```", (REPO / "docs" / "verifiers.md").read_text(encoding="utf-8"), re.S)
    scope: dict[str, Any] = {}
    exec(compile(block, "docs/verifiers.md", "exec"), scope)
    return scope["rollouts"]


def test_the_docs_reader_reads_nan_as_none_and_jq_as_null(notes_env: dict[str, str], tmp_path: Path) -> None:
    outputs = run({"ja": "steady", "jr": "reject"}, tmp_path / "judged", n=1)
    outputs += run({"jr": "reject"}, tmp_path / "unjudged", n=1)
    read = [
        *docs_reader()(tmp_path / "judged" / "results.jsonl"),
        *docs_reader()(tmp_path / "unjudged" / "results.jsonl"),
    ]
    assert [r["reward"] for r in read] == [outputs[0]["reward"], None] and outputs[0]["reward"] > 0
    assert [r["metrics"]["reward_mtsamples"] for r in read] == [outputs[0]["reward"], None]
    for rollout in read:
        strict(json.dumps(rollout, allow_nan=False))
    if shutil.which("jq") is None:
        pytest.skip("no jq here: the docs' jq sentence is not checked")
    jq = subprocess.run(
        ["jq", "-c", ".reward", str(tmp_path / "unjudged" / "results.jsonl")], capture_output=True, text=True
    )
    assert (jq.returncode, jq.stdout.strip()) == (0, "null")
