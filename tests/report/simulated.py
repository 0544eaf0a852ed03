"""Suites with known truth for the report's verdicts: judges that lean (or not) toward their family, models
that are equal (or not), a judge asked again that changed (or not). Seeded numpy, vectorised; shared by the
simulation tests and benchmarks/sim_verdicts.py.

Rewards are on the report's 0-1 scale: a point on every dimension of the 1-5 scale is 0.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from helm_mtsamples_ext.report.drift import Recheck, Said

FAMILY_NAMES = ["OpenAI", "Anthropic", "Meta", "Google", "Mistral"]


@dataclass(frozen=True)
class Panel:
    """``judges`` judges, judge i of family i; ``models_per_family`` models of each of the first families."""

    judges: int = 3
    models_per_family: tuple[int, ...] = (2, 2, 2)
    notes: int = 131
    lean: float = 0.0
    """How much judge 0 adds to its own family's answers (0.2: a point on every dimension)."""
    affinity: float = 0.0
    """Spread (sd) of each judge's taste for each model, with no family in it."""
    noise: float = 0.1


def self_preference_suite(panel: Panel, rng: np.random.Generator) -> pd.DataFrame:
    """The report's per-judge table (the columns self_preference.py reads) for one simulated suite."""
    families = [FAMILY_NAMES[f] for f, n in enumerate(panel.models_per_family) for _ in range(n)]
    models = [f"{family.lower()}/m{i}" for i, family in enumerate(families)]
    judge_families = FAMILY_NAMES[: panel.judges]
    m, n, k = len(models), panel.notes, panel.judges
    quality = rng.normal(0.6, 0.05, m)[:, None, None]
    hardness = rng.normal(0.0, 0.1, n)[None, :, None]
    severity = rng.normal(0.0, 0.05, k)[None, None, :]
    taste = rng.normal(0.0, panel.affinity, (m, k))[:, None, :] if panel.affinity else 0.0
    own = np.array([[fm == fj for fj in judge_families] for fm in families])[:, None, :]
    lean = np.zeros(k)
    lean[0] = panel.lean
    reward = quality + hardness + severity + taste + own * lean + rng.normal(0.0, panel.noise, (m, n, k))
    return pd.DataFrame(
        {
            "panel": "+".join(f"j{j}" for j in range(k)),
            "model": np.repeat(models, n * k),
            "note": np.tile(np.repeat([f"n{i}" for i in range(n)], k), m),
            "judge": np.tile([f"j{j}" for j in range(k)], m * n),
            "judge_reward": reward.ravel(),
            "status": "ok",
            "judge_family": np.tile(judge_families, m * n),
            "model_family": np.repeat(families, n * k),
        }
    )


def equal_models_notes(models: int, notes: int, rng: np.random.Generator, gap: float = 0.0) -> pd.DataFrame:
    """pairwise.py's note table for ``models`` models of one panel, all equal but the first (``gap`` better):
    each note's reward is its difficulty plus each model's noise."""
    hardness = rng.normal(0.6, 0.1, notes)[None, :]
    reward = hardness + rng.normal(0.0, 0.1, (models, notes))
    reward[0] += gap
    names = [f"org/model-{i:02d}" for i in range(models)]
    return pd.DataFrame(
        {
            "panel": "p",
            "model": np.repeat(names, notes),
            "note": np.tile([f"n{i}" for i in range(notes)], models),
            "reward": reward.ravel(),
        }
    )


def board_of(notes: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard's columns ranks.py reads: each model's mean over its judged notes, ranked by it."""
    board = notes.groupby(["panel", "model"], as_index=False)["reward"].mean()
    board = board.sort_values(["panel", "reward", "model"], ascending=[True, False, True]).reset_index(drop=True)
    return board.assign(rank=board.groupby("panel").cumcount() + 1)[["panel", "rank", "model", "reward"]]


def noisy_rechecks(rng: np.random.Generator, n: int, shift: int = 0, flip: float = 0.3) -> list[Recheck]:
    """A judge that, each time it is asked, moves each score by ±1 with probability ``flip`` (its own noise), and
    today adds ``shift`` to accuracy: then, now and again, per answer."""

    def ask(truth: np.ndarray, add: int) -> tuple[int, ...]:
        noise = rng.choice([-1, 0, 1], size=3, p=[flip / 2, 1 - flip, flip / 2])
        return tuple(int(s) for s in np.clip(truth + noise + [add, 0, 0], 1, 5))

    found = []
    for _ in range(n):
        truth = rng.integers(2, 5, 3)
        found.append(Recheck("p", "j", Said(ask(truth, 0)), Said(ask(truth, shift)), Said(ask(truth, shift))))
    return found
