"""Bad references (stats/flagged_references.py): a flag is about the note, and the difference between a model's
reward on unflagged notes and on all is ~0 when flags fall at random and detects a shift when the flagged notes are
the ones whose bad references made the models score low (seeded simulations with known truth)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from helm_mtsamples_ext.stats.flagged_references import (
    difference_interval,
    flagged_notes,
    flagged_rewards,
    has_flags,
)
from helm_mtsamples_ext.stats.intervals import BootstrapSettings

SETTINGS = BootstrapSettings(n_resamples=1000, seed=0)
DRAWS = 200
NOTES = 40


def rating(instance_id: str, model: str, rater: str, flag: bool | None) -> dict[str, object]:
    return {"run": f"run-{model}", "instance_id": instance_id, "model": model, "rater": rater, "bad_reference": flag}


def test_a_flag_is_about_the_note_whichever_models_answer_the_rater_saw() -> None:
    ratings = pd.DataFrame(
        [
            rating("id1", "m1", "alice", True),
            rating("id1", "m2", "bob", True),
            rating("id1", "m2", "carol", False),
            rating("id2", "m2", "alice", True),
            rating("id3", "m1", "alice", False),
        ]
    )
    instances = pd.DataFrame(
        {
            "panel": "p",
            "model": ["m1", "m1", "m1", "m2", "m2", "m2"],
            "note": ["n1.txt", "n2.txt", "n3.txt"] * 2,
            "note_id": ["id1", "id2", "id3"] * 2,
        }
    )
    flagged = flagged_notes(ratings, instances)
    assert flagged[["note", "n_raters_flagged", "n_raters"]].values.tolist() == [["n1.txt", 2, 3], ["n2.txt", 1, 1]]
    notes = instances.assign(reward=[0.9, 0.5, 0.7, 0.3, 0.2, 0.4])
    table = flagged_rewards(notes, instances, flagged, SETTINGS).set_index("model")
    # id2 was flagged only on m2's answer: it is left out for m1 too.
    assert table.loc["m1", "reward_unflagged"] == pytest.approx(0.7)
    assert table.loc["m2", "difference"] == pytest.approx(0.4 - 0.3)
    assert (table["n_flagged_notes"] == 2).all()
    assert table["ci_low"].isna().all()  # one unflagged note: no interval


def test_ratings_without_flags_change_nothing() -> None:
    assert not has_flags(None)
    assert not has_flags(pd.DataFrame([rating("id1", "m1", "alice", None)]).drop(columns="bad_reference"))
    assert not has_flags(pd.DataFrame([rating("id1", "m1", "alice", False), rating("id2", "m1", "bob", None)]))
    assert has_flags(pd.DataFrame([rating("id1", "m1", "alice", False), rating("id2", "m1", "bob", True)]))


def test_no_flagged_note_among_a_models_answers_means_no_difference_and_no_interval() -> None:
    rewards = np.random.default_rng(0).uniform(0, 1, NOTES)
    point, low, high = difference_interval(rewards, np.ones(NOTES, dtype=bool), SETTINGS)
    assert point == 0 and math.isnan(low) and math.isnan(high)


def test_random_flags_leave_the_reward_where_it_was() -> None:
    """Flags on a fifth of the notes at random, unrelated to the rewards: the difference's true value is 0, and its
    95% interval covers 0 in about that share of draws (92% of these 200; 94% of 1,000 in the module's note)."""
    rng = np.random.default_rng(1)
    covered, points = 0, []
    for _ in range(DRAWS):
        rewards = np.clip(rng.normal(0.7, 0.15, NOTES), 0, 1)
        unflagged = rng.uniform(size=NOTES) >= 0.2
        point, low, high = difference_interval(rewards, unflagged, SETTINGS)
        covered += low <= 0 <= high
        points.append(point)
    assert 0.92 <= covered / DRAWS <= 0.98
    assert abs(np.mean(points)) < 0.005


def test_flags_on_the_notes_whose_references_are_bad_show_the_shift() -> None:
    """A fifth of the benchmark's 128 references are bad (MedHELM's clinicians flagged 25) and models score 0.25
    lower on those notes; raters flag them (each bad one with probability 0.8, a good one 0.05): the unflagged reward
    is higher by about 0.04, and the interval lies above 0 in at least 90% of draws."""
    rng = np.random.default_rng(2)
    above, points = 0, []
    for _ in range(DRAWS):
        bad = rng.uniform(size=128) < 0.2
        rewards = np.clip(rng.normal(0.7, 0.1, 128) - 0.25 * bad, 0, 1)
        flagged = np.where(bad, rng.uniform(size=128) < 0.8, rng.uniform(size=128) < 0.05)
        point, low, high = difference_interval(rewards, ~flagged, SETTINGS)
        above += low > 0
        points.append(point)
    assert above / DRAWS >= 0.9
    assert 0.03 < np.mean(points) < 0.06
