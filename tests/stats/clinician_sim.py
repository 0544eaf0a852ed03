"""Simulated rating rounds with a known clinicians' mean, for the clinician-scale tests and sim_calibration.py.

A panel of 4 models answers 131 notes (MTSamples' procedures). An answer's true quality t is the model's level plus
the note's difficulty plus the answer's own part; a clinician's label is t seen through three 1-5 scores with rater
noise (as a rater's reward: the mean of score/5); each of two judges sees `distortion(t)` with its own noise, also
through 1-5 scores. Distortions: judges kinder by a constant 0.1, a monotone one (sqrt: kind in the middle, fair at
the ends), and kinder by 0.1 with an extra 0.1 for one model (model 0). The ratings are drawn by the product's own
rating sample (report/rating_sample.choose: stratified by model and specialty, weighted toward the judges'
disagreement), with its inclusion probabilities where it records them. The clinicians' mean of a model (the target)
is its expected label over notes and raters, computed once by a large Monte Carlo draw.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy import stats

from helm_mtsamples_ext.report.rating_sample import choose

LEVELS = (0.70, 0.65, 0.60, 0.55)
NOTES = 131
NOTE_SD = 0.10
ANSWER_SD = 0.10
RATER_SD = 0.35
"""A rater's noise per 1-5 score."""
SPECIALTIES = ("Orthopedic", "Neurosurgery", "Cardiology")
DISTORTIONS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "kinder by 0.1": lambda t, m: t + 0.1,
    "monotone (sqrt)": lambda t, m: np.sqrt(np.clip(t, 0, 1)),
    "one model kinder by 0.1 more": lambda t, m: t + 0.1 + (0.1 if m == 0 else 0.0),
}


@dataclass(frozen=True)
class Round:
    """One simulated suite's answers and rated labels (one row per answer: panel, model, run, note_id, f, y, pi)."""

    table: pd.DataFrame
    truth: np.ndarray
    """Each model's clinicians' mean (the target)."""


def scores(values: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """A reward seen through three 1-5 scores, each with its own noise: the mean of score/5."""
    drawn = np.rint(np.clip(5 * values[..., None] + rng.normal(0, noise, (*values.shape, 3)), 1, 5))
    return drawn.mean(axis=-1) / 5


def quality(model: int, n: int, rng: np.random.Generator) -> np.ndarray:
    return np.clip(LEVELS[model] + rng.normal(0, NOTE_SD, n) + rng.normal(0, ANSWER_SD, n), 0.2, 1.0)


@lru_cache(maxsize=4)
def truth() -> np.ndarray:
    """Each model's expected clinician label (Monte Carlo over 400,000 answers: standard error about 0.0003)."""
    rng = np.random.default_rng(12345)
    return np.array([scores(quality(m, 400_000, rng), RATER_SD, rng).mean() for m in range(len(LEVELS))])


def simulate(
    distortion: str, share: float, judge_sd: float, rng: np.random.Generator, per_model: int | None = None
) -> Round:
    """A suite, its judges' rewards, and a rating sample of `share` of its answers rated by one clinician each
    (`per_model`: instead, exactly that many answers of each model, uniformly, as the transport check's floor)."""
    difficulty = rng.normal(0, NOTE_SD, NOTES)
    frames = []
    for m in range(len(LEVELS)):
        t = np.clip(LEVELS[m] + difficulty + rng.normal(0, ANSWER_SD, NOTES), 0.2, 1.0)
        seen = np.clip(DISTORTIONS[distortion](t, m), 0, 1)
        judges = [scores(seen, 5 * judge_sd, rng) for _ in range(2)]
        frames.append(pd.DataFrame({
            "panel": "j1+j2", "model": f"m{m}", "run": f"run-m{m}", "note_id": [f"id{j}" for j in range(NOTES)],
            "specialty": [SPECIALTIES[j % 3] for j in range(NOTES)], "j1": judges[0], "j2": judges[1],
            "y_true": scores(t, RATER_SD, rng),
        }))  # fmt: skip
    answers = pd.concat(frames, ignore_index=True)
    answers["f"] = (answers["j1"] + answers["j2"]) / 2
    key = answers["run"] + "/" + answers["note_id"]
    if per_model is not None:
        picks = [m * NOTES + rng.choice(NOTES, per_model, replace=False) for m in range(len(LEVELS))]
        pi = pd.Series(np.nan, index=key[np.concatenate(picks)].to_numpy())
    else:
        long = pd.concat([answers.assign(judge=j, judge_reward=answers[j]) for j in ("j1", "j2")])
        long = long.rename(columns={"f": "note_reward"})
        sample = choose(long, int(round(share * len(answers))), int(rng.integers(1 << 31)), 0.0)
        recorded = sample["inclusion_probability"].to_numpy(float) if "inclusion_probability" in sample else np.nan
        pi = pd.Series(recorded, index=(sample["run"] + "/" + sample["note_id"]).to_numpy(), dtype=float)
    rated = key.isin(pi.index).to_numpy()
    answers["y"] = answers["y_true"].where(rated)
    answers["pi"] = key.map(pi).where(rated)
    return Round(answers[["panel", "model", "run", "note_id", "f", "y", "pi"]], truth())


def records_probabilities() -> bool:
    """Whether rating_sample.choose records inclusion probabilities yet (else the rated answers count as uniform)."""
    rng = np.random.default_rng(0)
    long = pd.DataFrame({"run": ["r"] * 4, "note_id": list("abcd"), "model": "m", "specialty": "s",
                         "note_reward": 0.5, "judge_reward": 0.5})  # fmt: skip
    return "inclusion_probability" in choose(long, 2, int(rng.integers(10)), 0.0)


def raw_covers(f: np.ndarray, target: float) -> bool:
    """The judges' reward's 95% t interval over the model's notes (the leaderboard's bootstrap one is about it)."""
    half = stats.t.ppf(0.975, f.size - 1) * f.std(ddof=1) / np.sqrt(f.size)
    return bool(abs(f.mean() - target) <= half)
