"""What clinicians rate: a seeded sample of a suite's answers, each as the review page's rating mode shows it.

A rating round is expensive, so the sample is chosen for what it must measure (pure; no I/O):
- **stratified** over (model, specialty): each stratum gets its share of the sample (largest remainders), so every
  model gets ratings for the human leaderboard and no specialty is left out by chance;
- **weighted toward disagreement** inside a stratum: an answer's chance grows with its judges' reward spread
  (weight 1 + 4 x spread, so a spread of 1 is five times as likely as a spread of 0), because contested answers
  are where clinicians tell the judges apart; uncontested ones still appear;
- an **overlap** share given to every rater (shown first, in one order), so inter-rater agreement (the human
  ceiling) can be measured; the other answers are shown to each rater in an order of their own, so raters who
  stop early still cover different answers.
The same suite and seed give the same sample. Only answers a judge scored are offered (an unjudged answer has
nothing to agree with), and control runs are left out: their answers are built, not written by a model.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

from helm_mtsamples_ext.stats.controls import control_kind

DISAGREEMENT_WEIGHT = 4.0
STRATA = ["model", "specialty"]


@dataclass(frozen=True)
class RatingRound:
    """`--rating-sample N --seed K`: N answers (None: every rateable answer), `overlap` of them shown to every rater."""

    n: int | None = None
    seed: int = 0
    overlap: float = 0.2


EVERY_ANSWER = RatingRound()
"""The page's default: every rateable answer, shown to every rater."""


def answer_key(run: str, instance_id: str, answer: str) -> str:
    """A hash of the run, the note and the answer's text: the browser keeps a rating under it, so a rating
    belongs to the answer the rater read. A suite re-run with new answers, or another project's suite of the
    same name, opens unrated instead of showing (and exporting) old ratings as ratings of new answers."""
    return hashlib.sha256("\0".join((run, instance_id, answer)).encode("utf-8")).hexdigest()[:32]


def answers_table(instances: pd.DataFrame) -> pd.DataFrame:
    """One row per rateable answer (run, note) with its strata and judge spread; unjudged and control answers out."""
    table = instances.groupby(["run", "note_id"], sort=True, as_index=False).agg(
        model=("model", "first"),
        specialty=("specialty", "first"),
        note_reward=("note_reward", "first"),
        high=("judge_reward", "max"),
        low=("judge_reward", "min"),
        judged=("judge_reward", "count"),
    )
    table["spread"] = (table["high"] - table["low"]).where(table["judged"] >= 2, 0.0)
    keep = table["note_reward"].notna() & (table["model"].map(control_kind) == "")
    return table.loc[keep, ["run", "note_id", "model", "specialty", "spread"]].reset_index(drop=True)


def allocate(sizes: pd.Series, total: int, rng: np.random.Generator) -> pd.Series:
    """Split `total` over strata in proportion to their sizes (largest remainder; ties broken at random)."""
    exact = sizes / sizes.sum() * total
    counts = np.floor(exact).astype(int)
    remainder = exact - counts
    order = np.lexsort((rng.random(len(sizes)), -remainder.to_numpy()))
    counts.iloc[order[: total - int(counts.sum())]] += 1
    return counts.clip(upper=sizes)


def _weighted_pick(spreads: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k positions without replacement, chance growing with spread (Efraimidis-Spirakis keys u^(1/w))."""
    weights = 1.0 + DISAGREEMENT_WEIGHT * np.nan_to_num(spreads)
    keys = rng.random(spreads.size) ** (1.0 / weights)
    return np.argsort(-keys, kind="stable")[:k]


def choose(instances: pd.DataFrame, n: int | None, seed: int, overlap: float) -> pd.DataFrame:
    """The sample: (run, note_id, shared) in the order raters see it (shared answers first). n=None: every answer.

    Every answer is shared when n is None (the whole suite is offered to everyone, in one seeded order).
    """
    rng = np.random.default_rng(seed)
    answers = answers_table(instances)
    if n is None or n >= len(answers):
        chosen = answers
    else:
        sizes = answers.groupby(STRATA, sort=True).size()
        counts = allocate(sizes, n, rng)
        picks = []
        for key, rows in answers.groupby(STRATA, sort=True):
            picks.append(rows.iloc[_weighted_pick(rows["spread"].to_numpy(dtype=float), int(counts[key]), rng)])
        chosen = pd.concat(picks) if picks else answers.iloc[:0]
    chosen = chosen.iloc[rng.permutation(len(chosen))].reset_index(drop=True)
    n_shared = len(chosen) if n is None else int(round(overlap * len(chosen)))
    chosen["shared"] = np.arange(len(chosen)) < n_shared
    return chosen[["run", "note_id", "shared"]]
