"""A joint ranking: our `--export medmarks` and a model judged elsewhere, ranked together by the real
``medarc-eval winrate``.

The model judged elsewhere comes as MedARC's environment writes its rollouts (``results.jsonl``: ``example_id`` the
row index, ``reward``, ``info.judge_feedback`` a list of ``{judges: [{model, raw, error, scores: {dim: {score,
explanation}}, score}], score}``, ``NaN`` for a note no judge scored) and is turned into Medmarks' parquet as
``medarc-eval process`` does: its own row cleaning (``rows.py``) and its own writer (``writer.py``), which merges the
file into the panel's ``env_index.json``, as ``medarc-eval process --output-dir <panel dir>`` would. Nothing of it
goes through our exporter. The writer's one change is ``example_id`` as a string (Medmarks PR #131 as issue 45
describes it; medarc-verifiers 0.1.0 casts it to Int64, and polars refuses to scan an Int64 id beside a string
one).

Both cover the same 131 notes, so the win rate must count 131 notes (an id scheme that numbered the notes apart
would count more), and it must equal the rate computed here by hand from the per-note rewards: over the notes at
least one model judged, a higher reward wins, a tie counts half, a missing reward loses (``missing_policy``
neg-inf).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from medarc_verifiers.cli.process import rows as medarc_rows
from medarc_verifiers.cli.process import writer
from medarc_verifiers.cli.process.aggregate import AggregatedEnvRows

from tests.report.medmarks_suite import note_env, write_notes
from tests.report.reports import run_report
from tests.report.suites import JUDGES, Note, Run, build_suite, failed, ok

pytestmark = pytest.mark.verifiers

ENV_ID = "mtsamples_procedures"
N_NOTES = 131
NOTES = [Note(f"p{i:03d}.txt", "Orthopedic", "PLAN") for i in range(N_NOTES)]
OURS, ELSEWHERE = "acme/ours", "medarc/elsewhere"
PANEL_DIR = "judge-one_judge-two"
DIMENSIONS = ("accuracy", "completeness", "clarity")
BIN = Path(sys.executable).parent
Scores = dict[str, tuple[int, int, int] | None]
"""One note's verdicts: per judge its three scores, or None for a judge that failed."""


def verdicts(seed: int, unjudged: set[int]) -> list[Scores]:
    """Seeded scores 1-5 for each note and judge; the notes in ``unjudged`` failed by every judge."""
    rng = random.Random(seed)
    notes: list[Scores] = []
    for i in range(N_NOTES):
        scores = {j: (rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 5)) for j in JUDGES}
        notes.append(dict.fromkeys(JUDGES) if i in unjudged else dict(scores))
    return notes


def note_reward(scores: Scores) -> float | None:
    """The reward by hand: each judge's mean score / 5, the mean over the judges that scored; None when none did."""
    judged = [sum(s) / 15 for s in scores.values() if s is not None]
    return sum(judged) / len(judged) if judged else None


OUR_SCORES = verdicts(1, unjudged={7, 90})
THEIR_SCORES = verdicts(2, unjudged={7, 40, 111})


def medarc_record(example_id: int, note: Note, scores: Scores) -> dict[str, Any]:
    """One rollout as MedARC's environment writes it into ``results.jsonl``."""
    judges: list[dict[str, Any]] = []
    for judge, values in scores.items():
        if values is None:
            judges.append({"model": judge, "raw": None, "error": "judge call failed", "scores": {}, "score": None})
            continue
        parsed = {dim: {"score": s, "explanation": f"{dim} why"} for dim, s in zip(DIMENSIONS, values, strict=True)}
        raw = json.dumps(parsed)
        judges.append({"model": judge, "raw": raw, "error": None, "scores": parsed, "score": sum(values) / 15})
    reward = note_reward(scores)
    return {
        "example_id": example_id,
        "prompt": [{"role": "user", "content": f"note {note.filename}"}],
        "completion": [{"role": "assistant", "content": "a plan"}],
        "task": "default",
        "answer": "Follow up in two weeks.",
        "info": {
            "filename": note.filename,
            "extracted_section": "PLAN",
            "procedure_note": f"note {note.filename}",
            "reference_plan": "Follow up in two weeks.",
            "judge_feedback": [{"judges": judges, "score": reward}],
        },
        "reward": math.nan if reward is None else reward,  # verifiers keeps a NaN reward as NaN
        "reward_mtsamples": math.nan if reward is None else reward,
    }


def medarc_results_jsonl() -> str:
    """The other model's ``results.jsonl``: ``example_id`` is MedARC's, the row index of its dataset (the notes
    with a section to cut, in the order of its file listing: here all 131, by name)."""
    ordered = sorted(NOTES, key=lambda n: n.filename)
    lines = [json.dumps(medarc_record(i, note, THEIR_SCORES[NOTES.index(note)])) for i, note in enumerate(ordered)]
    return "\n".join(lines) + "\n"


def process_as_medarc_does(results: str, panel: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``results.jsonl`` through medarc-verifiers' own process code: rows cleaned as ``rows.load_rows`` cleans them
    (info, prompt and completion dropped, token usage flattened, the job's fields attached), written by its
    ``write_env_groups`` into the panel directory, which merges them into our ``env_index.json``."""
    at = writer.EXPECTED_ARROW_SCHEMA.get_field_index("example_id")
    monkeypatch.setattr(
        writer, "EXPECTED_ARROW_SCHEMA", writer.EXPECTED_ARROW_SCHEMA.set(at, pa.field("example_id", pa.large_string()))
    )
    monkeypatch.setitem(writer.EXPECTED_POLARS_DTYPES, "example_id", pl.String)
    drop = medarc_rows.DEFAULT_DROP_COLUMNS | medarc_rows.PROMPT_COMPLETION_COLUMNS
    rows = []
    for line in results.splitlines():
        row = medarc_rows._clean_row(json.loads(line), drop=set(drop), extras_keys=set())
        medarc_rows._flatten_token_usage(row)
        row.update(env_id=ENV_ID, job_run_id="job-elsewhere", run_id="run-elsewhere", model_id=ELSEWHERE)
        row.update(rollout_index=0, status="completed", error=None, extras=None)
        rows.append(row)
    group = AggregatedEnvRows(ENV_ID, ENV_ID, ELSEWHERE, rows, tuple(rows[0]), ("job-elsewhere",))
    config = writer.WriterConfig(output_dir=panel, processed_at="2026-12-06T12:00:00+00:00")
    writer.write_env_groups([group], config)


@pytest.fixture(scope="module")
def joint(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Our suite exported, the other model processed into the same panel directory, and the win rates of both."""
    root = tmp_path_factory.mktemp("joint")
    run = Run(
        OURS,
        JUDGES,
        {
            note.filename: {j: ok(*s) if s is not None else failed("judge call failed") for j, s in scores.items()}
            for note, scores in zip(NOTES, OUR_SCORES, strict=True)
        },
    )
    build_suite(root, [run], notes=NOTES)
    write_notes(root, [n.filename for n in NOTES])  # each with a PLAN: MedARC keeps all 131
    with pytest.MonkeyPatch.context() as patch:
        for name, value in note_env(root).items():
            patch.setenv(name, value)
        with contextlib.redirect_stdout(io.StringIO()):
            assert run_report(root, root / "report", "--export", "medmarks") == 0
        panel = root / "report" / "medmarks" / PANEL_DIR
        process_as_medarc_does(medarc_results_jsonl(), panel, patch)
    out = root / "winrates.json"
    done = subprocess.run(
        [str(BIN / "medarc-eval"), "winrate", "--processed-dir", str(panel), "--output", str(out)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {"panel": panel, "winrates": json.loads(out.read_text(encoding="utf-8"))}


def by_hand() -> tuple[float, int, int]:
    """Our win rate over the other model, the notes it counts (at least one judged) and the notes both judged."""
    outcomes, both = [], 0
    for ours, theirs in zip(OUR_SCORES, THEIR_SCORES, strict=True):
        a, b = note_reward(ours), note_reward(theirs)
        if a is None and b is None:
            continue
        both += a is not None and b is not None
        a_value, b_value = -math.inf if a is None else a, -math.inf if b is None else b
        outcomes.append(1.0 if a_value - b_value > 1e-9 else 0.0 if b_value - a_value > 1e-9 else 0.5)
    return sum(outcomes) / len(outcomes), len(outcomes), both


def test_both_files_have_medmarks_schema(joint: dict[str, Any]) -> None:
    panel = joint["panel"]
    ours = pq.read_schema(panel / "acme_ours" / f"{ENV_ID}.parquet")
    theirs = pq.read_schema(panel / "medarc_elsewhere" / f"{ENV_ID}.parquet")
    assert [(f.name, f.type) for f in ours] == [(f.name, f.type) for f in theirs]
    index = json.loads((panel / "env_index.json").read_text(encoding="utf-8"))
    assert sorted(entry["model_id"] for entry in index["files"].values()) == [OURS, ELSEWHERE]


def test_the_notes_pair_by_medarcs_ids_all_131_counted(joint: dict[str, Any]) -> None:
    """The same 131 notes under the same ids: an id scheme of ours apart from MedARC's would count more notes."""
    _, counted, both = by_hand()
    assert (counted, both) == (130, 127)  # note 7 unjudged by both; 90 by us, 40 and 111 elsewhere
    assert joint["winrates"]["datasets"][ENV_ID]["n_questions"] == N_NOTES


def test_the_win_rate_is_the_one_computed_by_hand(joint: dict[str, Any]) -> None:
    rate, _, _ = by_hand()
    models = joint["winrates"]["models"]
    assert models[OURS]["vs"][ELSEWHERE]["per_dataset"][ENV_ID] == pytest.approx(rate, abs=1e-12)
    assert models[ELSEWHERE]["vs"][OURS]["per_dataset"][ENV_ID] == pytest.approx(1 - rate, abs=1e-12)
    for model, scores in ((OURS, OUR_SCORES), (ELSEWHERE, THEIR_SCORES)):
        rewards = [r for r in map(note_reward, scores) if r is not None]
        average = models[model]["avg_reward_per_dataset"][ENV_ID]
        assert average == pytest.approx(sum(rewards) / len(rewards), abs=1e-12), model  # unjudged notes left out
