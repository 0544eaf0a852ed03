"""A suite for the rating plan and the page's leaderboard tab: three models x 40 notes x two judges with seeded
verdicts, and a ratings file rating 12 answers of each model, the clinicians' rewards following the judges' (a
little harsher), so a judge-clinician correlation is seen."""

from __future__ import annotations

import random
from pathlib import Path

from helm_mtsamples_ext.report.ratings import COLUMNS
from helm_mtsamples_ext.report.suite import load_suite
from tests.report.suites import Note, Run, build_suite, ok

MODELS = {"acme/top": 4, "acme/second": 3, "acme/third": 2}
"""Each model's typical score (1-5)."""
NOTES = [Note(f"plan-{k:02d}.txt", ("Orthopedic", "Urology", "ENT")[k % 3]) for k in range(40)]
RATED_PER_MODEL = 12


def _score(rng: random.Random, level: int) -> int:
    return max(1, min(5, level + rng.choice((-1, 0, 0, 1))))


def build_plan_suite(output: Path) -> Path:
    """The suite under output/runs/v1; returns the ratings file (12 answers per model)."""
    rng = random.Random(44)
    runs = []
    for model, level in MODELS.items():
        verdicts = {}
        for note in NOTES:
            quality = _score(rng, level)
            verdicts[note.filename] = {
                judge: ok(quality, _score(rng, quality), quality) for judge in ("judge-one", "judge-two")
            }
        runs.append(Run(model, ["judge-one", "judge-two"], verdicts))
    build_suite(output, runs, NOTES)
    instances = load_suite(output / "runs" / "v1").instances
    answers = instances.groupby(["run", "note_id"], as_index=False).agg(
        model=("model", "first"), f=("note_reward", "first")
    )
    lines = [",".join(COLUMNS)]
    for _, rows in answers.groupby("model"):
        for row in rows.head(RATED_PER_MODEL).itertuples(index=False):
            score = max(1, min(5, round(row.f * 5) - 1 + rng.choice((0, 0, 1))))  # clinicians a little harsher
            lines.append(f'"{row.run}",{row.note_id},{row.model},Dr Plan,{score},{score},{score},,0,')
    ratings = output / "ratings.csv"
    ratings.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ratings
