"""What clinicians rate: a seeded sample of a suite's answers, each as the review page's rating mode shows it.

A rating round is expensive, so the sample is chosen for what it must measure (pure; no I/O):
- **stratified** over (model, specialty): each stratum gets its share of the sample (largest remainders), so every
  model gets ratings for the human leaderboard and no specialty is left out by chance;
- **weighted toward disagreement** inside a stratum: an answer's size is 1 + 4 x its judges' reward spread (a
  spread of 1 is five times as likely as a spread of 0), because contested answers are where clinicians tell the
  judges apart; uncontested ones still appear. The draw is systematic PPS in a random order, whose first-order
  inclusion probabilities are known exactly (pi = k x size / sum of sizes, capped at 1), so every chosen answer
  carries its ``inclusion_probability``: the page keeps it with the answer and the rating mode's Export writes it
  into ratings.csv, where the clinician-scale estimate weights each rating by 1/pi (stats/clinician_scale.py);
- an **overlap** share given to every rater (shown first, in one order), so inter-rater agreement (the human
  ceiling) can be measured; the other answers are shown to each rater in an order of their own, so raters who
  stop early still cover different answers.
The same suite and seed give the same sample. The rating plan's draw (``--rating-sample plan``) gives each model
(each run) its quota of answers, stratified over specialties, from the answers not yet rated. Only answers a judge
scored are offered (an unjudged answer has nothing to agree with), and control runs are left out: their answers are
built, not written by a model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Mapping
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
    quotas: tuple[tuple[str, int], ...] | None = None
    """`--rating-sample plan`: (run, answers to draw) from the rating plan, in place of n."""
    rated: frozenset[tuple[str, str]] = frozenset()
    """(run, note_id) of the answers already rated: the plan's draw leaves them out."""

    def chosen(self, instances: pd.DataFrame) -> pd.DataFrame:
        """This round's sample of ``instances`` (choose)."""
        quotas = dict(self.quotas) if self.quotas is not None else None
        return choose(instances, self.n, self.seed, self.overlap, quotas, self.rated)


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


def allocation_chances(sizes: pd.Series | np.ndarray, total: int) -> tuple[np.ndarray, np.ndarray]:
    """Split ``total`` over strata in proportion to their sizes by largest remainder: (floors, chance of one more).

    Exact integer arithmetic, so equal remainders are equal. Strata whose remainder is above the cut get one more for
    sure; those tied at the cut share the units left, each with the same chance (ties are broken at random).
    """
    counts = np.asarray(sizes, dtype=np.int64)
    whole = int(counts.sum())
    floors = counts * total // whole
    remainders = counts * total % whole
    left = total - int(floors.sum())
    chance = np.zeros(counts.size)
    if left > 0:
        cut = np.sort(remainders)[::-1][left - 1]
        above, tied = remainders > cut, remainders == cut
        chance[above] = 1.0
        chance[tied] = (left - int(above.sum())) / int(tied.sum())
    return floors, chance


def allocate(sizes: pd.Series | np.ndarray, total: int, rng: np.random.Generator) -> np.ndarray:
    """Split `total` over strata in proportion to their sizes (largest remainder; ties broken at random)."""
    floors, chance = allocation_chances(sizes, total)
    counts = floors + (chance >= 1.0)
    tied = np.flatnonzero((chance > 0) & (chance < 1.0))
    if tied.size:
        counts[rng.permutation(tied)[: total - int(counts.sum())]] += 1
    return np.minimum(counts, np.asarray(sizes))


def capped_probabilities(weights: np.ndarray, k: int) -> np.ndarray:
    """First-order inclusion probabilities of a k-draw proportional to ``weights``: pi_i = k w_i / sum(w), with the
    units that would exceed 1 taken for sure (pi = 1) and the rest re-scaled over what is left, until none exceeds 1.
    They sum to k."""
    n = weights.size
    pi = np.zeros(n)
    if k <= 0:
        return pi
    if k >= n:
        return np.ones(n)
    certain = np.zeros(n, dtype=bool)
    while True:
        rest = ~certain
        pi[rest] = (k - certain.sum()) * weights[rest] / weights[rest].sum()
        over = rest & (pi >= 1.0)
        if not over.any():
            return pi
        certain |= over
        pi[certain] = 1.0


def systematic_pick(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Positions drawn by systematic PPS in random order: each unit has an interval of length pi_i on a line of
    length k = sum(pi), laid out in a random order; one uniform start u and the points u, u+1, ..., u+k-1 pick the
    units whose intervals they fall in. Unit i is picked with probability exactly pi_i (its interval, at most 1
    long, holds one point with that chance), and exactly k units are picked."""
    k = int(round(pi.sum()))
    if k == 0:
        return np.zeros(0, dtype=int)
    order = rng.permutation(pi.size)
    edges = np.cumsum(pi[order])
    edges *= k / edges[-1]  # the line is exactly k long, so the last point falls on it
    points = rng.random() + np.arange(k)
    return np.sort(order[np.searchsorted(edges, points, side="right")])


def weights_of(spreads: np.ndarray) -> np.ndarray:
    """An answer's size in the draw: 1 + 4 x the judges' reward spread."""
    return 1.0 + DISAGREEMENT_WEIGHT * np.nan_to_num(spreads)


def stratum_probabilities(spreads: np.ndarray, floor: int, chance: float) -> np.ndarray:
    """Each answer's inclusion probability in a stratum given ``floor`` draws, one more with ``chance``."""
    weights = weights_of(spreads)
    pi = (1.0 - chance) * capped_probabilities(weights, floor)
    if chance > 0:
        pi += chance * capped_probabilities(weights, floor + 1)
    return pi


def draw(pool: pd.DataFrame, strata: list[str], total: int, rng: np.random.Generator) -> pd.DataFrame:
    """``total`` answers of ``pool``, stratified over ``strata``, each with its inclusion probability."""
    codes = pool.groupby(strata, sort=True).ngroup().to_numpy()
    sizes = np.bincount(codes)
    floors, chance = allocation_chances(sizes, total)
    counts = allocate(sizes, total, rng)
    spreads = pool["spread"].to_numpy(dtype=float)
    picked, probabilities = [], []
    for stratum in range(len(sizes)):
        rows = np.flatnonzero(codes == stratum)
        pi_now = capped_probabilities(weights_of(spreads[rows]), int(counts[stratum]))
        pi = stratum_probabilities(spreads[rows], int(floors[stratum]), float(chance[stratum]))
        at = systematic_pick(pi_now, rng)
        picked.append(rows[at])
        probabilities.append(pi[at])
    chosen = pool.iloc[np.concatenate(picked)] if picked else pool.iloc[:0]
    return chosen.assign(inclusion_probability=np.concatenate(probabilities) if picked else 1.0)


def choose(
    instances: pd.DataFrame,
    n: int | None,
    seed: int,
    overlap: float,
    quotas: Mapping[str, int] | None = None,
    rated: Collection[tuple[str, str]] = (),
) -> pd.DataFrame:
    """The sample: (run, note_id, shared, inclusion_probability) in the order raters see it (shared answers first).

    n=None: every answer, each shared and with inclusion probability 1. ``quotas`` (the rating plan's draw, in
    place of n): run -> that many answers of the run (one model under one panel), stratified over its specialties,
    drawn from the answers not in ``rated`` (run, note_id); the probabilities are then those of this round's draw
    among the unrated answers.
    """
    rng = np.random.default_rng(seed)
    answers = answers_table(instances)
    if quotas is not None:
        done = set(rated)
        keys = list(zip(answers["run"], answers["note_id"], strict=True))
        pool = answers[[key not in done for key in keys]]
        parts = []
        for run, rows in pool.groupby("run", sort=True):
            quota = min(int(quotas.get(str(run), 0)), len(rows))
            if quota > 0:
                parts.append(draw(rows, ["specialty"], quota, rng))
        chosen = pd.concat(parts) if parts else answers.iloc[:0].assign(inclusion_probability=1.0)
    elif n is None or n >= len(answers):
        chosen = answers.assign(inclusion_probability=1.0)
    else:
        chosen = draw(answers, STRATA, n, rng)
    chosen = chosen.iloc[rng.permutation(len(chosen))].reset_index(drop=True)
    n_shared = len(chosen) if n is None and quotas is None else int(round(overlap * len(chosen)))
    chosen["shared"] = np.arange(len(chosen)) < n_shared
    return chosen[["run", "note_id", "shared", "inclusion_probability"]]
