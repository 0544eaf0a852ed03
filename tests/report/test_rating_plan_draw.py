"""The rating plan against the product's own draw: rating_sample.choose's PPS toward disagreement and the report's
estimator weighted by the recorded inclusion probabilities (stats/clinician_scale.ppi_mean). The plan's variance
takes the draw as uniform; leaning toward contested answers narrows the interval where the judges' spread tracks
their error and widens it somewhat where it does not. Seeded simulation with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.report.rating_sample import choose
from helm_mtsamples_ext.stats.clinician_scale import ppi_mean
from helm_mtsamples_ext.stats.rating_plan import rating_plan

N = 400
TARGET = 0.04


def _suite(spread_tracks_error: bool) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, np.ndarray]:
    """(the per-judge table choose reads, f, y, the 20 answers seen rated) of one model's N answers."""
    rng = np.random.default_rng(5)
    f = np.clip(rng.normal(0.6, 0.15, N), 0, 1)
    error = rng.normal(0, 0.1, N)
    y = f - 0.1 + error
    spread = np.clip(np.abs(error) * 3 if spread_tracks_error else rng.uniform(0, 0.3, N), 0, 1)
    rows = [
        {"run": "run:m", "note_id": f"n{k}", "model": "acme/m", "specialty": ("A", "B")[k % 2], "judge": judge,
         "judge_reward": reward, "note_reward": f[k]}
        for k in range(N)
        for judge, reward in (("j1", f[k] - spread[k] / 2), ("j2", f[k] + spread[k] / 2))
    ]  # fmt: skip
    seen = np.zeros(N, dtype=bool)
    seen[rng.choice(N, 20, replace=False)] = True
    return pd.DataFrame(rows), f, y, seen


@pytest.mark.parametrize("spread_tracks_error, low, high", [(True, 0.7, 1.0), (False, 1.0, 1.3)])
def test_the_planned_n_drawn_by_the_rating_sample(spread_tracks_error: bool, low: float, high: float) -> None:
    """At the planned n, drawn by choose and weighted by its probabilities: the interval covers the truth in at least
    93% of 150 draws, and its median half-width is 0.7-1.0 x the target when the judges' spread tracks their error
    (measured 0.86), 1.0-1.3 x when it does not (measured 1.16)."""
    table, f, y, seen = _suite(spread_tracks_error)
    plan_input = pd.DataFrame(
        {
            "panel": "p",
            "model": "acme/m",
            "run": "run:m",
            "note_id": np.arange(N),
            "f": f,
            "y": np.where(seen, y, np.nan),
        }
    )
    n = int(rating_plan(plan_input, TARGET)["rated_for_target"].iloc[0])
    position = {f"n{k}": k for k in range(N)}
    halves, covered = [], []
    for seed in range(150):
        chosen = choose(table, n, seed, 0.0)
        at = chosen["note_id"].map(position).to_numpy()
        found = ppi_mean(f, f[at], y[at], chosen["inclusion_probability"].to_numpy())
        halves.append((found.high - found.low) / 2)
        covered.append(found.low <= y.mean() <= found.high)
    assert np.mean(covered) >= 0.93
    assert low * TARGET <= float(np.median(halves)) <= high * TARGET, (n, np.median(halves))
